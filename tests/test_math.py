"""Math in kernels: Python's math module, simt.math extras, integer intrinsics, bit casts."""

import math

import numpy as np
import pytest

import simt
from conftest import poison

UNARY = ["sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
         "lgamma", "fabs"]
BINARY = ["atan2", "pow", "hypot", "copysign", "fmod"]


@simt.kernel
def unary(x, out):
    i = simt.grid(1)
    if i < x.shape[0]:
        v = x[i]
        out[0, i] = math.sqrt(v)
        out[1, i] = math.exp(v)
        out[2, i] = math.log(v)
        out[3, i] = math.log2(v)
        out[4, i] = math.log10(v)
        out[5, i] = math.log1p(v)
        out[6, i] = math.expm1(v)
        out[7, i] = math.sin(v)
        out[8, i] = math.cos(v)
        out[9, i] = math.tan(v)
        out[10, i] = math.asin(v)
        out[11, i] = math.acos(v)
        out[12, i] = math.atan(v)
        out[13, i] = math.sinh(v)
        out[14, i] = math.cosh(v)
        out[15, i] = math.tanh(v)
        out[16, i] = math.asinh(v)
        out[17, i] = math.acosh(v + 1)
        out[18, i] = math.atanh(v)
        out[19, i] = math.erf(v)
        out[20, i] = math.erfc(v)
        out[21, i] = math.lgamma(v)
        out[22, i] = math.fabs(-v)


@simt.kernel
def binary(x, y, out):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[0, i] = math.atan2(x[i], y[i])
        out[1, i] = math.pow(x[i], y[i])
        out[2, i] = math.hypot(x[i], y[i])
        out[3, i] = math.copysign(x[i], -y[i])
        out[4, i] = math.fmod(x[i] * 7, y[i])


def reference(name, x, *rest):
    fn = getattr(math, name)
    if name == "acosh":
        return np.array([fn(v + 1) for v in x.astype(np.float64)])
    if name == "fabs":
        return np.abs(x.astype(np.float64))
    if name == "fmod":
        return np.fmod((x * x.dtype.type(7)).astype(np.float64), rest[0])
    if name == "copysign":
        return np.copysign(x, -rest[0]).astype(np.float64)
    return np.array([fn(*vals) for vals in zip(*(a.astype(np.float64).tolist()
                                                  for a in (x,) + rest))])


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-6), (np.float64, 1e-14)],
                         ids=["float32", "float64"])
def test_math_functions(device, rng, dtype, rtol):
    x = rng.uniform(0.05, 0.95, 40).astype(dtype)
    y = rng.uniform(0.5, 2.0, 40).astype(dtype)
    out = poison((len(UNARY), 40), dtype)
    unary[2, 32](x, out)
    for k, name in enumerate(UNARY):
        np.testing.assert_allclose(out[k], reference(name, x), rtol=rtol, err_msg=name)
    out2 = poison((len(BINARY), 40), dtype)
    binary[2, 32](x, y, out2)
    for k, name in enumerate(BINARY):
        np.testing.assert_allclose(out2[k], reference(name, x, y), rtol=rtol, err_msg=name)


@simt.kernel
def precision(x, n, out, ints):
    out[0] = math.sqrt(x[0])          # float32 in, float32 result
    out[1] = math.sqrt(n)             # int in: float64
    ints[0] = math.floor(-x[0])       # floor/ceil/trunc give int64, as in Python
    ints[1] = math.ceil(x[0])
    ints[2] = math.trunc(-x[0])


def test_math_keeps_precision_and_rounds_to_int(device):
    out, ints = poison(2, np.float64), poison(3, np.int64)
    precision[1, 1](np.array([2.5], np.float32), 2, out, ints)
    assert out[0] == np.float64(np.sqrt(np.float32(2.5)))
    assert out[1] == math.sqrt(2)
    np.testing.assert_array_equal(ints, [-3, 3, -2])


@simt.kernel
def extras(x, y, z, out, flags):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[0, i] = simt.math.fma(x[i], y[i], z[i])
        out[1, i] = simt.math.rsqrt(y[i])
        out[2, i] = simt.math.exp2(x[i])
        out[3, i] = simt.math.exp10(x[i])
        out[4, i] = simt.math.cbrt(z[i])
        out[5, i] = simt.math.fmin(x[i], z[i])
        out[6, i] = simt.math.fmax(x[i], z[i])
        out[7, i] = simt.math.fdim(x[i], z[i])
        out[8, i] = simt.math.fast_exp(x[i])
        out[9, i] = simt.math.fdividef(x[i], y[i])
        out[10, i] = simt.math.tgamma(y[i])
        out[11, i] = simt.math.rint(z[i] * 3)
        flags[0, i] = simt.math.isnan(x[i] / x[i] * 0.0 + z[i] / 0.0 * 0.0)
        flags[1, i] = simt.math.isinf(z[i] / 0.0)
        flags[2, i] = simt.math.signbit(z[i])
        flags[3, i] = simt.math.isfinite(x[i])


def test_simt_math_extras(device, rng):
    x = rng.uniform(0.1, 1.0, 32).astype(np.float32)
    y = rng.uniform(0.5, 2.0, 32).astype(np.float32)
    z = rng.uniform(-2.0, 2.0, 32).astype(np.float32)
    out, flags = poison((12, 32), np.float32), poison((4, 32), np.bool_)
    flags[:] = False
    extras[1, 32](x, y, z, out, flags)
    d = [v.astype(np.float64) for v in (x, y, z)]
    expect = [d[0] * d[1] + d[2], 1 / np.sqrt(d[1]), 2 ** d[0], 10 ** d[0], np.cbrt(d[2]),
              np.fmin(x, z), np.fmax(x, z), np.maximum(x - z, 0), np.exp(d[0]), d[0] / d[1],
              [math.gamma(v) for v in d[1]], np.rint(z * np.float32(3))]
    for k, e in enumerate(expect):
        np.testing.assert_allclose(out[k], np.asarray(e, np.float32), rtol=3e-6, atol=1e-7,
                                   err_msg=str(k))
    np.testing.assert_array_equal(flags, [np.ones(32, bool), np.ones(32, bool), z < 0,
                                          np.ones(32, bool)])


@simt.kernel
def int_intrinsics(a, b, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[0, i] = simt.math.popc(a[i])
        out[1, i] = simt.math.clz(a[i])
        out[2, i] = simt.math.ffs(a[i])
        out[3, i] = simt.math.brev(a[i])
        out[4, i] = simt.math.mulhi(a[i], b[i])


def bits_of(v, width):
    return int(v) & ((1 << width) - 1)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64], ids=lambda d: d.__name__)
def test_integer_intrinsics(device, rng, dtype):
    width = np.dtype(dtype).itemsize * 8
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    a[:3] = [0, 1, info.max]
    b = rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    out = poison((5, 40), np.int64)
    int_intrinsics[2, 32](a, b, out)
    u = [bits_of(v, width) for v in a]
    np.testing.assert_array_equal(out[0], [bin(v).count("1") for v in u])
    np.testing.assert_array_equal(out[1], [width - v.bit_length() for v in u])
    np.testing.assert_array_equal(out[2], [(v & -v).bit_length() for v in u])
    brev = [int(format(v, f"0{width}b")[::-1], 2) for v in u]
    np.testing.assert_array_equal(out[3], np.array(brev, dtype=np.uint64).astype(dtype)
                                  .astype(np.int64))
    hi = [(int(x) * int(y)) >> width for x, y in zip(a, b)]
    np.testing.assert_array_equal(out[4], np.array(hi, dtype=object).astype(dtype)
                                  .astype(np.int64))


@simt.kernel
def bitcasts(f, d, i32, i64, out_i, out_l, out_f, out_d):
    k = simt.grid(1)
    if k < f.shape[0]:
        out_i[0, k] = simt.float_as_int(f[k])
        out_i[1, k] = simt.float_as_uint(f[k])
        out_l[k] = simt.double_as_longlong(d[k])
        out_f[0, k] = simt.int_as_float(i32[k])
        out_f[1, k] = simt.uint_as_float(i32[k])
        out_d[k] = simt.longlong_as_double(i64[k])


def test_bit_casts(device, rng):
    f = rng.standard_normal(16).astype(np.float32)
    d = rng.standard_normal(16)
    i32 = rng.integers(0, 2 ** 30, 16).astype(np.int32)
    i64 = rng.integers(0, 2 ** 62, 16).astype(np.int64)
    out_i, out_l = poison((2, 16), np.int64), poison(16, np.int64)
    out_f, out_d = poison((2, 16), np.float32), poison(16, np.float64)
    bitcasts[1, 16](f, d, i32, i64, out_i, out_l, out_f, out_d)
    np.testing.assert_array_equal(out_i[0], f.view(np.int32))
    np.testing.assert_array_equal(out_i[1], f.view(np.uint32))
    np.testing.assert_array_equal(out_l, d.view(np.int64))
    np.testing.assert_array_equal(out_f[0].view(np.int32), i32)
    np.testing.assert_array_equal(out_f[1].view(np.int32), i32)
    np.testing.assert_array_equal(out_d.view(np.int64), i64)
