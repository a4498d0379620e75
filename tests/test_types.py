"""The typing rules of API.md section 2, one test per rule."""

import math

import numpy as np
import pytest

import simt
from conftest import poison, random_array
from simt.ir import types as T

NUMERIC = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
           np.float16, np.float32, np.float64, np.complex64, np.complex128]


@simt.kernel
def add_one(a, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[i] = a[i] + 1                # weak literal: stays int32 and wraps


@simt.kernel
def mul(a, b, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[i] = a[i] * b[i]


def test_int32_overflow_wraps(device):
    a = np.array([2147483647, -2147483648, 65536, -7], np.int32)
    out = poison(4, np.int64)
    add_one[1, 32](a, out)
    np.testing.assert_array_equal(out, (a + np.int32(1)).astype(np.int64))
    out32 = poison(4, np.int32)
    with np.errstate(over="ignore"):
        mul[1, 32](a, a, out32)
        np.testing.assert_array_equal(out32, a * a)


@simt.kernel
def f32_arith(a, b, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[0, i] = a[i] + b[i]
        out[1, i] = a[i] - b[i]
        out[2, i] = a[i] * b[i]
        out[3, i] = a[i] / b[i]
        out[4, i] = a[i] / 3.0            # weak float literals take float32
        out[5, i] = math.sqrt(abs(a[i]))


def test_float32_stays_float32(device, rng):
    # each result is stored: a*b+c may contract to an fma, as nvcc's -fmad=true does
    a, b = random_array(rng, 64, np.float32), random_array(rng, 64, np.float32)
    out = poison((6, 64), np.float32)
    f32_arith[2, 32](a, b, out)
    expect = np.stack([a + b, a - b, a * b, a / b, a / np.float32(3.0), np.sqrt(np.abs(a))])
    np.testing.assert_array_equal(out.view(np.uint32), expect.view(np.uint32))


@simt.kernel
def int_division(a, b, q, r, t):
    i = simt.grid(1)
    if i < a.shape[0]:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        t[i] = a[i] / b[i]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.int8])
def test_int_floordiv_mod_truediv_follow_python(device, rng, dtype):
    a, b = random_array(rng, 50, dtype), random_array(rng, 50, dtype)
    q, r, t = poison(50, dtype), poison(50, dtype), poison(50, np.float64)
    int_division[2, 32](a, b, q, r, t)
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)
    np.testing.assert_array_equal(t, a / b)
    assert t.dtype == np.float64


def test_division_by_zero_does_not_crash(device, rng):
    a = random_array(rng, 8, np.int32)
    q, r, t = poison(8, np.int32), poison(8, np.int32), poison(8, np.float64)
    int_division[1, 8](a, np.zeros(8, np.int32), q, r, t)    # values unspecified, as in CUDA
    simt.synchronize()
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(t, a / np.zeros(8, np.int32))
    f = random_array(rng, 8, np.float64)
    out = poison(8, np.float64)
    mul[1, 8](f, np.full(8, np.inf), out)
    np.testing.assert_array_equal(out, f * np.inf)


@simt.kernel
def add_pair(a, b, out):
    out[0] = a[0] + b[0]


@pytest.mark.parametrize("ta, tb, va, vb", [
    (np.int32, np.float32, 16777217, 0.0),        # -> float64: exact
    (np.int8, np.uint8, 100, 200),                # -> int16: no wrap
    (np.uint32, np.int32, 4000000000, 1),         # -> int64
    (np.int64, np.uint64, 2 ** 62, 2 ** 62),      # -> float64
    (np.float16, np.int16, 0.5, 3000),            # -> float32
    (np.float32, np.complex64, 1.5, 2 - 1j),      # -> complex64
    (np.float64, np.complex64, 1.1, 2 - 1j),      # -> complex128
], ids=lambda v: getattr(v, "__name__", None))
def test_mixed_types_promote_as_numpy(device, ta, tb, va, vb):
    a, b = np.array([va], ta), np.array([vb], tb)
    expect = a + b
    out = poison(1, np.complex128 if expect.dtype.kind == "c" else np.float64)
    add_pair[1, 1](a, b, out)
    np.testing.assert_array_equal(out, expect.astype(out.dtype))


@simt.kernel
def literals(x, out, out_f):
    out[0] = 3000000000 * 3           # alone, int literals are int64
    big = x[0] + 2147483647           # with an int32, a literal is int32 and wraps
    out[1] = big
    out_f[0] = 0.1                    # alone, a float literal is float64
    out_f[1] = x[0] * 0.1             # int32 * float literal: float64, as NumPy
    h = simt.float_as_int(np.float32(1.0) * 0.1)   # float32 * weak 0.1 stays float32
    out[2] = h


def test_weak_literals(device):
    out, out_f = poison(3, np.int64), poison(2, np.float64)
    literals[1, 1](np.array([1], np.int32), out, out_f)
    assert out[0] == 9000000000
    assert out[1] == -2147483648
    assert out[2] == np.float32(0.1).view(np.int32)
    np.testing.assert_array_equal(out_f, [0.1, 0.1])


@simt.kernel
def unify(a, b, out_f, out_i):
    acc = 0.0
    for k in range(a.shape[0]):
        acc += a[k]                   # acc becomes float32
    out_f[0] = simt.float_as_int(acc)
    v = 0
    v = b[0]                          # v becomes int32
    out_i[0] = v + 1


def test_variable_unification(device, rng):
    a = random_array(rng, 10, np.float32) * np.float32(0.37)
    out_f, out_i = poison(1, np.int32), poison(1, np.int64)
    unify[1, 1](a, np.array([2147483647], np.int32), out_f, out_i)
    acc = np.float32(0)
    for x in a:
        acc = np.float32(acc + x)
    assert out_f[0] == acc.view(np.int32)
    assert out_i[0] == -2147483648


@simt.kernel
def bad_unify(a, out):
    x = a
    x = 1.5
    out[0] = x


def test_unification_failure_names_both_lines(device):
    with pytest.raises(simt.CompileError) as info:
        bad_unify[1, 1](np.ones(1), poison(1, np.float64))
    line = bad_unify.pyfunc.__code__.co_firstlineno
    message = str(info.value)
    assert f"test_types.py:{line + 3}" in message and f"line {line + 2}" in message


@simt.kernel
def convert(a, out32, out64, out8):
    i = simt.grid(1)
    if i < a.shape[0]:
        out32[i] = a[i]
        out64[i] = int(a[i])
        out8[i] = a[i]


def test_float_to_int_saturates_and_nan_is_zero(device):
    a = np.array([1e20, -1e20, np.nan, np.inf, -np.inf, 2.9, -2.9, 300.0], np.float64)
    out32, out64, out8 = poison(8, np.int32), poison(8, np.int64), poison(8, np.uint8)
    convert[1, 8](a, out32, out64, out8)
    i32, i64 = np.iinfo(np.int32), np.iinfo(np.int64)
    np.testing.assert_array_equal(out32, [i32.max, i32.min, 0, i32.max, i32.min, 2, -2, 300])
    np.testing.assert_array_equal(out64, [i64.max, i64.min, 0, i64.max,
                                          i64.min, 2, -2, 300])
    np.testing.assert_array_equal(out8, [255, 0, 0, 255, 0, 2, 0, 255])


@simt.kernel
def axpy(a, s, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[i] = a[i] * s + a[i]


@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: np.dtype(d).name)
def test_every_numeric_dtype_as_scalar_and_array(device, rng, dtype):
    a = random_array(rng, 20, dtype)
    if np.dtype(dtype).kind in "iu":
        a = (a % 10).astype(dtype)     # keep int8 products in range
    s = dtype(3)
    out = poison(20, dtype)
    axpy[1, 32](a, s, out)
    expect = a * s + a
    assert out.dtype == expect.dtype
    tol = {"float16": 1e-3, "float32": 1e-6, "complex64": 1e-6}.get(np.dtype(dtype).name, 1e-15)
    np.testing.assert_allclose(out, expect, rtol=tol)


@simt.kernel
def bools(a, s, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[i] = a[i] != s


def test_bool_scalar_and_array(device, rng):
    a = random_array(rng, 20, np.bool_)
    out = poison(20, np.bool_)
    bools[1, 32](a, np.bool_(True), out)
    np.testing.assert_array_equal(out, ~a)


@simt.kernel
def index_types(out):
    i = simt.threadIdx.x
    out[i] = (i + 2147483647) // 2       # int32: wraps before the division
    j = simt.grid(1)
    out[i + 4] = (j + 2147483647) // 2   # int64: does not


def test_index_variables_are_int32_grid_is_int64(device):
    out = poison(8, np.int64)
    index_types[1, 4](out)
    t = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(out[:4], (t + np.int32(2147483647)) // 2)
    np.testing.assert_array_equal(out[4:], (t.astype(np.int64) + 2147483647) // 2)


SCALE = 3
SHAPE = (2, 4)


@simt.kernel
def uses_constants(out):
    buf = simt.local.array(SHAPE, np.int32)
    for r in range(SHAPE[0]):
        for c in range(SHAPE[1]):
            buf[r, c] = r * SCALE + c
    for r in range(SHAPE[0]):
        for c in range(SHAPE[1]):
            out[r, c] = buf[r, c]


def test_module_constants_are_compile_time(device):
    out = poison(SHAPE, np.int32)
    uses_constants[1, 1](out)
    np.testing.assert_array_equal(out, np.arange(2)[:, None] * SCALE + np.arange(4))


def test_signatures_name_simts_own_types_without_ml_dtypes():
    """bfloat16 and the FP8 types in a signature string are simt's storage types whether or
    not ml_dtypes was imported (NumPy alone does not know the names); an unknown name is
    an error saying what names there are."""
    a, b, c, x = T.parse_signature("void(bfloat16[::1], float8_e4m3[:, ::1], float8_e5m2[:], "
                                   "bfloat16)")
    assert a.dtype == T.BF16_STORAGE and a.layout == "C"
    assert T.float8_storage(b.dtype) is T.F8E4M3_STORAGE and b.ndim == 2
    assert T.float8_storage(c.dtype) is T.F8E5M2_STORAGE
    assert x.dtype == T.BF16_STORAGE
    with pytest.raises(TypeError, match="unknown type 'floot32'"):
        T.parse_signature("void(floot32[:])")
