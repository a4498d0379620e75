"""``__host__ __device__`` (API.md section 11): a @simt.device function called from host
Python computes what it computes in a kernel (compiled for the CPU device)."""
import math

import numpy as np
import pytest

import simt
from conftest import poison, random_array


@simt.device
def lerp(a, b, t):
    return a + (b - a) * t


@simt.device
def wrap_mul(x, y):
    return x * y + 1


@simt.device
def norm3(x, y, z):
    return math.sqrt(x * x + y * y + z * z)


@simt.device
def is_inside(x, lo, hi):
    return lo <= x and x < hi


@simt.device
def scale_in_place(a, s):
    for i in range(a.shape[0]):
        a[i] = a[i] * s


@simt.device
def accumulate(a):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i]
    return acc


@simt.device
def divmod_pair(a, b):
    return a // b, a % b


@simt.kernel
def in_kernel(x, y, t, out_lerp, out_norm, out_mul, ints):
    i = simt.grid(1)
    if i < x.shape[0]:
        out_lerp[i] = lerp(x[i], y[i], t[i])
        out_norm[i] = norm3(x[i], y[i], t[i])
        out_mul[i] = wrap_mul(ints[i], ints[i])


def test_host_calls_match_the_kernel(device, rng):
    n = 64
    x, y, t = (random_array(rng, n, np.float32) for _ in range(3))
    ints = rng.integers(2**20, 2**30, n).astype(np.int32)
    got = [poison(n, np.float32), poison(n, np.float32), poison(n, np.int32)]
    in_kernel[1, n](x, y, t, *got, ints)
    simt.synchronize()
    for i in range(n):
        value = lerp(x[i], y[i], t[i])
        assert isinstance(value, np.float32) and value == got[0][i]
        assert norm3(x[i], y[i], t[i]) == got[1][i]
        assert wrap_mul(ints[i], ints[i]) == got[2][i]      # int32 wraps, as in the kernel
    np.testing.assert_allclose(got[0], x + (y - x) * t, rtol=1e-5, atol=1e-6)   # fma
    np.testing.assert_array_equal(got[2], ints * ints + np.int32(1))


def test_host_calls_type_as_kernel_arguments(device):
    assert wrap_mul(3, 4) == 13 and isinstance(wrap_mul(3, 4), np.int64)
    assert isinstance(lerp(1.0, 3.0, 0.25), np.float64) and lerp(1.0, 3.0, 0.25) == 1.5
    assert is_inside(np.float32(2.5), 1.0, 3.0) is np.True_
    assert is_inside(5, 1, 3) is np.False_


def test_host_calls_with_arrays(device, rng):
    a = random_array(rng, 20, np.float64)
    expected = a * 2.5
    assert scale_in_place(a, 2.5) is None                    # returns nothing
    np.testing.assert_array_equal(a, expected)
    total = 0.0
    for v in expected:                                        # the device function's order
        total += v
    assert accumulate(a) == total


def test_host_call_errors(device):
    with pytest.raises(TypeError, match="positional arguments only"):
        lerp(1.0, 2.0, t=0.5)
    with pytest.raises(simt.CompileError):
        lerp(1.0, 2.0)                                        # a missing argument
    with pytest.raises(simt.NotSupportedError, match="'divmod_pair' returns .*call it from "
                                                     "a kernel"):
        divmod_pair(7, 2)
    with pytest.raises(simt.NotSupportedError, match="at most 6"):
        lerp(*range(7))
