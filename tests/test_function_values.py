"""Device functions as values (issue 35 item 2): passed to device functions, bound to names
and held in tuples, each use specialised for the function; and chosen at run time (a
switch over the functions a value may hold)."""
import re
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


def _ptxas(tmp_path, ptx):
    path = tmp_path / "k.ptx"
    path.write_text(str(ptx))
    done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- lambdas
@simt.device
def apply1(f, a):
    return f(a)


@simt.device
def twice_then(f, g, a):
    h = lambda v: g(f(f(v)))          # a lambda in a device function, capturing its parameters
    return h(a)


@simt.kernel
def lambdas(x, sel, s, out):
    i = simt.grid(1)
    if i < x.shape[0]:
        sq = lambda v: v * v
        scale = s * 2.0
        affine = lambda v: v * scale + x[0]     # captures a local, and an array parameter
        scale = 0.0                              # captured by value: affine keeps 2 * s
        out[i, 0] = sq(x[i])
        out[i, 1] = affine(x[i])
        out[i, 2] = apply1(affine, x[i])         # passed to a device function
        out[i, 3] = apply1(lambda v: v - 1.0, x[i])
        ops = (sq, affine, lambda v: -v)
        out[i, 4] = ops[sel[i] % 3](x[i]) + ops[0](2.0)      # a tuple, indexed at run time
        g = sq if sel[i] > 0 else affine                      # chosen at run time, passed on
        out[i, 5] = apply1(g, x[i])
        out[i, 6] = twice_then(sq, lambda v: v + scale + s, x[i])
        k = 3.0
        nested = lambda v: (lambda w: w * k + v)(v)           # a lambda in a lambda
        out[i, 7] = nested(x[i]) + apply1(lambda v: add(v, k), x[i])   # calls a device fn
        out[i, 8] = scale


LAMBDAS = "void(float64[::1], int32[::1], float64, float64[:, ::1])"


def test_lambdas_capture_by_value_and_are_function_values(device, rng):
    x = random_array(rng, 50, np.float64)
    sel = rng.integers(0, 4, 50).astype(np.int32)
    s = 1.25
    out = poison((50, 9), np.float64)
    lambdas[2, 32](x, sel, s, out)
    affine = x * (2 * s) + x[0]
    expected = np.stack([
        x * x, affine, affine, x - 1.0,
        np.choose(sel % 3, [x * x, affine, -x]) + 4.0,
        np.where(sel > 0, x * x, affine),
        (x * x) ** 2 + 0.0 + s,
        x * 3.0 + x + (x + 3.0),
        np.zeros(50)], axis=1)
    # rtol: the GPU contracts x * (2 * s) + x[0] into one fma (as nvcc does)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_lambdas_compile_for_the_gpu(tmp_path):
    with simt.use_device("cpu"):
        _ptxas(tmp_path, lambdas.inspect_ptx(LAMBDAS))


@simt.kernel
def lambda_defaults(x, out):
    f = lambda v, w=2.0: v * w
    out[0] = f(x[0])


@simt.kernel
def lambda_reads_shared(x, out):
    tile = simt.shared.array(32, np.float64)
    f = lambda v: v + tile[0]
    out[0] = f(x[0])


@simt.kernel
def lambda_reads_later(x, out):
    f = lambda v: v + later
    later = 2.0
    out[0] = f(x[0])


@simt.device
def make_lambda(v):
    return lambda w: w + v


@simt.kernel
def lambda_returned(x, out):
    out[0] = make_lambda(x[0])(x[0])


@pytest.mark.parametrize("kernel, pattern", [
    (lambda_defaults, r"(?s)a lambda in a kernel takes plain positional parameters.*"
     r"lambda_defaults'.*:\d+:9.*f = lambda v, w=2.0: v \* w.*remove \*args"),
    (lambda_reads_shared, r"(?s)the lambda reads 'tile', a shared or local array.*"
     r"f = lambda v: v \+ tile\[0\].*pass 'tile' to the lambda as an argument"),
    (lambda_reads_later, r"(?s)'later' is read before it is assigned.*f = lambda v: v \+ "
     r"later.*a lambda copies the variables it reads where it is made"),
    (lambda_returned, r"(?s)the device function '<lambda at line \d+:12 in 'make_lambda'>' "
     r"is used here as a number.*return lambda w: w \+ v.*cannot be returned"),
])
def test_lambda_mistakes_name_the_line(kernel, pattern):
    with pytest.raises(simt.CompileError, match=pattern):
        kernel.compile("void(float64[::1], float64[::1])")


# ---------------------------------------------------------------- kernel arguments
@simt.device
def square(v):
    return v * v


@simt.device
def cube(v):
    return v * v * v


@simt.kernel
def map_with(f, x, out):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[i, 0] = f(x[i])
        out[i, 1] = apply1(f, x[i])                          # passed on
        out[i, 2] = apply1(lambda v: f(v) + 1.0, x[i])       # captured by a lambda


def test_device_functions_passed_to_kernels(device, rng):
    x = random_array(rng, 40, np.float64)
    for fn, reference in ((square, x * x), (cube, x * x * x), (square, x * x)):
        out = poison((40, 3), np.float64)
        map_with[2, 32](fn, x, out)
        np.testing.assert_allclose(out, np.stack([reference, reference, reference + 1.0],
                                                 axis=1), rtol=1e-15)
    dx, dout = simt.to_device(x), simt.device_array((40, 3), np.float64)
    for _ in range(3):                                       # the launch path met again
        map_with[2, 32](cube, dx, dout)
    np.testing.assert_allclose(dout.copy_to_host()[:, 0], x * x * x, rtol=1e-15)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_kernel_specialised_on_a_function_compiles_for_the_gpu(tmp_path):
    from simt.ir import types as T
    vector, matrix = T.Array(np.float64, 1, "C"), T.Array(np.float64, 2, "C")
    with simt.use_device("cpu"):
        ptx = map_with.inspect_ptx([cube, vector, matrix])
        plain = map_cube.inspect_ptx([vector, matrix])
    entry = re.compile(r"\.param [^\n]*_param_\d+")
    assert len(entry.findall(ptx)) == len(entry.findall(plain))    # nothing for the function
    assert "prototype" not in ptx                                   # and no indirect call
    _ptxas(tmp_path, ptx)


@simt.kernel
def map_cube(x, out):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[i, 0] = cube(x[i])


@simt.kernel
def calls_its_argument(f, x):
    x[0] = f(x[0])


def test_what_a_kernel_cannot_be_passed_as_a_function():
    x = np.ones(1)
    with pytest.raises(TypeError, match=r"kernel 'calls_its_argument', argument 'f': the "
                       r"Python function '<lambda>' cannot be passed to a kernel: decorate "
                       r"it with @simt.device"):
        calls_its_argument[1, 1](lambda v: v, x)
    with pytest.raises(TypeError, match=r"argument 'f': a tuple holding the device function "
                       r"'square' cannot be passed to a kernel"):
        calls_its_argument[1, 1]((square, cube), x)


HELPER_SCALE = 3.0


@simt.device
def helper(v):
    return v * HELPER_SCALE


@simt.kernel
def lambda_calls_helper(x):
    x[0] = apply1(lambda v: helper(v), x[0])


def test_what_a_lambda_reads_is_in_the_disk_cache_key():
    """The lambda is called in apply1, yet what it reads (helper, and what helper reads)
    is read by the kernel that holds it: the disk cache's key has both."""
    from simt.runtime import cache
    fn = lambda_calls_helper.typed_ir(simt.ir.types.parse_signature("void(float64[::1])"))
    deps = {(path, name): value for path, name, value in cache.dependencies(fn)}
    assert deps[(), "helper"] is helper
    assert deps[("helper",), "HELPER_SCALE"] == 3.0


def test_kernels_specialised_on_functions_stay_out_of_the_disk_cache(tmp_path, monkeypatch):
    from simt.config import config
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(config, "cache", True)
    x = np.ones(4)
    with simt.use_device("cpu"):
        calls_its_argument[1, 1](square, x)
        lambda_calls_helper[1, 1](x)
    names = sorted(p.name.split("-")[0] for p in tmp_path.iterdir())
    assert names == ["lambda_calls_helper"]
