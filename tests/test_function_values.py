"""Device functions as values (issue 35 item 2): passed to device functions, bound to names
and held in tuples, each use specialised for the function; and chosen at run time (a
switch over the functions a value may hold)."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from conftest import poison, random_array


@simt.device
def add(a, b):
    return a + b


@simt.device
def mul(a, b):
    return a * b


@simt.device
def apply(f, a, b):
    return f(a, b)


@simt.device
def fold(ops, a, b):
    return ops[1](ops[0](a, b), b)


@simt.kernel
def use_values(x, sums, products, folded):
    i = simt.grid(1)
    if i < x.shape[0]:
        sums[i] = apply(add, x[i], np.float32(2))
        g = mul
        products[i] = apply(g, x[i], np.float32(3))
        ops = (add, mul)
        folded[i] = fold(ops, x[i], np.float32(2)) + ops[0](x[i], x[i])


def test_device_functions_passed_bound_and_in_tuples(device, rng):
    x = random_array(rng, 50, np.float32)
    sums, products, folded = (poison(50, np.float32) for _ in range(3))
    use_values[2, 32](x, sums, products, folded)
    np.testing.assert_allclose(sums, x + np.float32(2), rtol=1e-6)
    np.testing.assert_allclose(products, x * np.float32(3), rtol=1e-6)
    np.testing.assert_allclose(folded, (x + 2) * 2 + (x + x), rtol=1e-6)


@simt.device
def sub(a, b):
    return a - b


@simt.device
def neg(a):
    return -a


@simt.device
def as_int(a, b):
    return np.int64(a)


@simt.kernel
def chosen_at_run_time(x, sel, out):
    i = simt.grid(1)
    if i < x.shape[0]:
        f = add if sel[i] > 0 else mul              # a conditional expression
        out[i, 0] = f(x[i], 2.0)
        ops = (add, mul, sub)
        out[i, 1] = ops[sel[i] % 3](x[i], 3.0)      # a tuple indexed at run time
        g = add
        if sel[i] == 2:                              # a name assigned on one path only
            g = sub
        out[i, 2] = apply(g, x[i], 5.0)             # passed on to a device function
        out[i, 3] = apply(f, x[i], 7.0)


RUN_TIME = "void(float64[::1], int32[::1], float64[:, ::1])"


def test_functions_chosen_at_run_time(device, rng):
    x = random_array(rng, 50, np.float64)
    sel = rng.integers(0, 4, 50).astype(np.int32)
    out = poison((50, 4), np.float64)
    chosen_at_run_time[2, 32](x, sel, out)
    positive = sel > 0
    expected = np.stack([
        np.where(positive, x + 2.0, x * 2.0),
        np.choose(sel % 3, [x + 3.0, x * 3.0, x - 3.0]),
        np.where(sel == 2, x - 5.0, x + 5.0),
        np.where(positive, x + 7.0, x * 7.0)], axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-15)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_run_time_choice_compiles_for_the_gpu(tmp_path):
    with simt.use_device("cpu"):
        ptx = str(chosen_at_run_time.inspect_ptx(RUN_TIME))
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@simt.kernel
def different_arity(x, out):
    i = simt.grid(1)
    f = add if x[0] > 0 else neg
    out[i] = f(x[i], 1.0)


@simt.kernel
def different_returns(x, out):
    i = simt.grid(1)
    f = add
    if x[0] > 0:
        f = as_int
    out[i] = f(x[i], 1.0)


def test_incompatible_functions_in_one_variable():
    with pytest.raises(simt.CompileError, match=r"(?s)may hold device functions of different "
                       r"signatures: 'add' \(2 parameters\), 'neg' \(1 parameters\).*"
                       r"f = add if x\[0\] > 0 else neg"):
        different_arity.compile("void(float64[::1], float64[::1])")
    with pytest.raises(simt.CompileError, match=r"(?s)'f' may hold device functions that "
                       r"return different types here: 'add' returns float64, 'as_int' "
                       r"returns int64.*out\[i\] = f\(x\[i\], 1.0\)"):
        different_returns.compile("void(float64[::1], float64[::1])")
