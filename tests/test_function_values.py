"""Device functions as values (issue 35 item 2, the compile-time part): passed to device
functions, bound to names and held in tuples, each use specialised for the function."""
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


@simt.kernel
def chosen_at_run_time(x, out):
    i = simt.grid(1)
    f = add if x[0] > 0 else mul
    out[i] = f(x[i], 1.0)


def test_a_run_time_choice_says_what_to_write():
    with pytest.raises(simt.CompileError, match=r"(?s)the device function 'add' is used "
                       r"here as a run-time value.*call each function in its own branch"):
        chosen_at_run_time.compile("void(float64[::1], float64[::1])")
