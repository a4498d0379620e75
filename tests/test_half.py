"""float16, bfloat16, half2 and bfloat162 (lang/half.py, lang/bfloat16.py): arithmetic with
one rounding per operation, CUDA's conversions, paired operations, the half math
functions, bit casts, kernel arguments, and the GPU's half instructions in the PTX."""
import math
import re

import numpy as np
import pytest

import simt
from simt.backends.cuda.compile import compile_kernel
from simt.compiler.options import CompileOptions
from simt.ir import types as T
from conftest import poison


def bf16(x):
    """x (float32 arithmetic's correctly rounded result) rounded once to bfloat16, as float32."""
    return simt.from_bfloat16(simt.to_bfloat16(np.asarray(x, np.float32)))


def halves(rng, shape, low=-4, high=4):
    return rng.uniform(low, high, shape).astype(np.float16)


@simt.kernel
def half_ops(a, b, out, k):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[0, i] = a[i] + b[i]
        out[1, i] = (a[i] - b[i]) * k          # no product feeds a sum: the GPU may fuse those
        out[2, i] = a[i] / b[i]
        out[3, i] = simt.hfma(a[i], b[i], k)
        out[4, i] = simt.float2half(simt.half2float(a[i]) * 3.0)
        out[5, i] = simt.hneg(simt.habs(a[i])) if a[i] < b[i] else simt.hmax(a[i], b[i])
        out[6, i] = simt.hdiv(simt.hsub(a[i], b[i]), simt.hmul(a[i], simt.hadd(b[i], k)))


def test_float16_arithmetic_rounds_once(device, rng):
    n = 100
    a, b = halves(rng, n), halves(rng, n, 0.25, 4)
    out = poison((7, n), np.float16)
    k = np.float16(1.5)
    half_ops[4, 32](a, b, out, k)
    A, B, K = (x.astype(np.float64) for x in (a, b, k))
    h = np.float16
    want = [A + B, (A - B).astype(h) * K, A / B, A * B + K, (A * 3).astype(np.float32),
            np.where(A < B, -np.abs(A), np.maximum(A, B)),
            (A - B).astype(h) / (A * (B + K).astype(h)).astype(h)]
    np.testing.assert_array_equal(out, np.array(want).astype(h))


@simt.kernel
def pair_ops(p, q, out, s):
    i = simt.grid(1)
    if i < p.shape[0]:
        out[0, i] = p[i] + q[i]
        out[1, i] = simt.hsub2(p[i], q[i]) * s
        out[2, i] = simt.h2div(p[i], q[i])
        out[3, i] = simt.hfma2(p[i], q[i], simt.half2half2(s.y))
        out[4, i] = simt.lowhigh2highlow(-p[i])
        out[5, i] = simt.floats2half2_rn(simt.low2float(p[i]) * 2, simt.high2half(q[i]))
        f = simt.half22float2(p[i])
        out[6, i] = simt.float22half2_rn(simt.make_float2(f.y, f.x + 1))


def test_half2_lane_by_lane(device, rng):
    n = 70
    p = simt.half2.view(halves(rng, (n, 2)))
    q = simt.half2.view(halves(rng, (n, 2), 0.5, 3))
    out = poison((7, n), simt.half2.dtype)
    s = simt.make_half2(-1.25, 0.75)
    pair_ops[3, 32](p, q, out, s)
    h = np.float16
    P, Q = (np.stack([x["x"], x["y"]], -1).astype(np.float64) for x in (p, q))
    S = np.array([-1.25, 0.75])
    want = [P + Q, (P - Q).astype(h) * S, P / Q, P * Q + 0.75, -P[:, ::-1],
            np.stack([P[:, 0] * 2, Q[:, 1]], -1), np.stack([P[:, 1], P[:, 0] + 1], -1)]
    got = np.stack([out["x"], out["y"]], -1)
    np.testing.assert_array_equal(got, np.array(want).astype(h))


@simt.kernel
def bf16_ops(a, b, out, k, p, q, pout):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[0, i] = a[i] * b[i]
        out[1, i] = a[i] + b[i] / k
        out[2, i] = simt.float2bfloat16(simt.bfloat162float(a[i]) - 1.0)
        out[3, i] = -a[i] if a[i] > b[i] else simt.hmin(a[i], b[i])
        pout[0, i] = p[i] * q[i] - p[i]
        pout[1, i] = simt.hadd2(simt.hneg2(p[i]), simt.floats2bfloat162_rn(k, 2))


def test_bfloat16_computes_in_float32_and_rounds_once(device, rng):
    n = 64
    a = simt.to_bfloat16(rng.uniform(-3, 3, n))
    b = simt.to_bfloat16(rng.uniform(0.5, 3, n))
    p = simt.bfloat162.view(simt.to_bfloat16(rng.uniform(-3, 3, (n, 2))))
    q = simt.bfloat162.view(simt.to_bfloat16(rng.uniform(-3, 3, (n, 2))))
    out, pout = poison((4, n), simt.bfloat16), poison((2, n), simt.bfloat162.dtype)
    k = simt.bfloat16(1.75)
    bf16_ops[2, 32](a, b, out, k, p, q, pout)
    A, B = simt.from_bfloat16(a), simt.from_bfloat16(b)
    want = [bf16(A * B), bf16(A + bf16(B / np.float32(1.75))), bf16(A - 1),
            np.where(A > B, -A, np.minimum(A, B))]
    np.testing.assert_array_equal(simt.from_bfloat16(out), np.array(want))
    P, Q = (simt.from_bfloat16(np.stack([x["x"], x["y"]], -1)) for x in (p, q))
    pwant = [bf16(bf16(P * Q) - P), bf16(-P + np.float32([1.75, 2]))]
    got = simt.from_bfloat16(np.stack([pout["x"], pout["y"]], -1))
    np.testing.assert_array_equal(got, np.array(pwant))


@simt.kernel
def bf16_builtins(a, out):
    s = simt.shared.array(64, simt.bfloat16)
    i = simt.threadIdx.x
    s[i] = a[i]
    simt.syncthreads()
    x, y = s[i], s[(i + 1) % 64]
    out[0, i] = max(x, y)
    out[1, i] = min(x, y, 1.5)
    out[2, i] = abs(x)
    out[3, i] = round(x)
    out[4, i] = max(math.sqrt(abs(x)), y) ** 2
    out[5, i] = min(x, y) ** 2


def test_bfloat16_builtins_take_bfloat16_values(device, rng):
    """max, min, abs and round of bfloat16 values (its bits in code, an i16) compute on
    the values, and mix with math.sqrt and ** (the CPU device emitted fcmp and fpext of
    the i16)."""
    a = simt.to_bfloat16(rng.uniform(-3, 3, 64))
    out = poison((6, 64), simt.bfloat16)
    bf16_builtins[1, 64](a, out)
    x = simt.from_bfloat16(a)
    y = np.roll(x, -1)
    want = [np.maximum(x, y), np.minimum(np.minimum(x, y), 1.5), np.abs(x), np.round(x),
            bf16(np.maximum(np.sqrt(np.abs(x)), y) ** 2), bf16(np.minimum(x, y) ** 2)]
    np.testing.assert_array_equal(simt.from_bfloat16(out), np.array(want))


FUNCS = {"hsqrt": np.sqrt, "hrsqrt": lambda x: 1 / np.sqrt(x), "hrcp": lambda x: 1 / x,
         "hexp": np.exp, "hexp2": np.exp2, "hexp10": lambda x: 10 ** x, "hlog": np.log,
         "hlog2": np.log2, "hlog10": np.log10, "hsin": np.sin, "hcos": np.cos,
         "hfloor": np.floor, "hceil": np.ceil, "htrunc": np.trunc, "hrint": np.rint}


@simt.kernel
def every_function(x, p, out, pout):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[0, i] = simt.hsqrt(x[i])
        out[1, i] = simt.hrsqrt(x[i])
        out[2, i] = simt.hrcp(x[i])
        out[3, i] = simt.hexp(x[i])
        out[4, i] = simt.hexp2(x[i])
        out[5, i] = simt.hexp10(x[i])
        out[6, i] = simt.hlog(x[i])
        out[7, i] = simt.hlog2(x[i])
        out[8, i] = simt.hlog10(x[i])
        out[9, i] = simt.hsin(x[i])
        out[10, i] = simt.hcos(x[i])
        out[11, i] = simt.hfloor(x[i])
        out[12, i] = simt.hceil(x[i])
        out[13, i] = simt.htrunc(x[i])
        out[14, i] = simt.hrint(x[i])
        pout[0, i] = simt.h2sqrt(p[i])
        pout[1, i] = simt.h2exp(p[i])
        pout[2, i] = simt.h2log(p[i])
        pout[3, i] = simt.h2sin(p[i])
        pout[4, i] = simt.h2rint(p[i])


def test_half_math_functions_within_one_ulp(device, rng):
    n = 100
    x = halves(rng, n, 0.01, 4)
    p = simt.half2.view(halves(rng, (n, 2), 0.01, 4))
    out, pout = poison((15, n), np.float16), poison((5, n), simt.half2.dtype)
    every_function[4, 32](x, p, out, pout)
    for row, (name, fn) in enumerate(FUNCS.items()):
        want = fn(x.astype(np.float64)).astype(np.float16)
        ulps = np.abs(out[row].astype(np.float64) - want) / np.spacing(want)
        assert ulps.max() <= 1, (name, ulps.max())
        if name in ("hsqrt", "hrcp", "hfloor", "hceil", "htrunc", "hrint"):
            np.testing.assert_array_equal(out[row], want, err_msg=name)   # correctly rounded
    P = np.stack([p["x"], p["y"]], -1).astype(np.float64)
    for row, fn in enumerate((np.sqrt, np.exp, np.log, np.sin, np.rint)):
        want = fn(P).astype(np.float16)
        got = np.stack([pout[row]["x"], pout[row]["y"]], -1)
        assert (np.abs(got - want) / np.spacing(want)).max() <= 1


@simt.kernel
def bit_casts(h, u, out_u, out_h, out_b):
    i = simt.grid(1)
    if i < h.shape[0]:
        out_u[0, i] = simt.half_as_ushort(h[i])
        out_u[1, i] = simt.bfloat16_as_short(simt.ushort_as_bfloat16(u[i]))
        out_h[i] = simt.ushort_as_half(u[i])
        out_b[i] = simt.hisnan(simt.short_as_half(u[i])) or simt.hisinf(simt.ushort_as_bfloat16(u[i]))


def test_bit_casts_and_predicates(device, rng):
    n = 64
    h = halves(rng, n)
    u = rng.integers(0, 2 ** 16, n).astype(np.uint16)
    u[:4] = [0x7C00, 0xFC01, 0x7F80, 0xFF80]     # half inf, half nan, bf16 inf, bf16 -inf
    out_u, out_h, out_b = poison((2, n), np.uint16), poison(n, np.float16), poison(n, np.bool_)
    bit_casts[2, 32](h, u, out_u, out_h, out_b)
    np.testing.assert_array_equal(out_u[0], h.view(np.uint16))
    np.testing.assert_array_equal(out_u[1], u)
    np.testing.assert_array_equal(out_h.view(np.uint16), u)
    want = np.isnan(u.view(np.float16)) | np.isinf(simt.from_bfloat16(u))
    np.testing.assert_array_equal(out_b, want)


# ------------------------------------------------------------------ host side
def test_host_bfloat16_rounds_to_nearest_even():
    assert simt.from_bfloat16(simt.to_bfloat16(1 + 2 ** -8)) == 1            # a tie: to even
    assert simt.from_bfloat16(simt.to_bfloat16(1 + 3 * 2 ** -8)) == 1 + 2 ** -6
    assert simt.from_bfloat16(simt.to_bfloat16(1 + 2 ** -8 + 2 ** -20)) == 1 + 2 ** -7
    assert np.isnan(simt.from_bfloat16(simt.to_bfloat16(np.nan)))
    a = np.zeros(3, simt.bfloat16)
    assert a.dtype.itemsize == 2 and T.typeof(a).element == T.BFLOAT16
    assert T.typeof(simt.bfloat16(2.5)) == T.BFLOAT16
    assert T.promote(T.BFLOAT16, T.Scalar(np.float16)) == T.FLOAT32
    assert T.promote(T.BFLOAT16, T.WEAK_FLOAT) == T.BFLOAT16
    assert T.promote(T.BFLOAT16, T.Scalar(np.int8)) == T.BFLOAT16


# ------------------------------------------------------------------ the GPU's instructions
def ptx(kernel, types):
    return compile_kernel(kernel.typed_ir(types), CompileOptions(boundscheck=False),
                          "sm_90").ptx


def test_gpu_half_instructions():
    h = T.Array(np.dtype(np.float16), 1, "C")
    text = ptx(half_ops, [h, h, T.Array(np.dtype(np.float16), 2, "C"), T.Scalar(np.float16)])
    assert re.search(r"\badd(\.rn)?\.f16\b", text) and re.search(r"\bfma\.rn\.f16\b", text)
    assert re.search(r"\bcvt\.rn\.f16\.f32\b", text) and re.search(r"\bcvt\.f32\.f16\b", text)
    p = T.Array(simt.half2.dtype, 1, "C")
    text = ptx(pair_ops, [p, p, T.Array(simt.half2.dtype, 2, "C"), T.Vector("f2", 2)])
    assert re.search(r"\badd(\.rn)?\.f16x2\b", text) and re.search(r"\bfma\.rn\.f16x2\b", text)


@simt.kernel
def wrong_pair(a, out):
    out[0] = simt.hadd2(a[0], a[1])


def test_errors_name_the_types(device):
    with pytest.raises(simt.CompileError, match="simt.hadd2 takes half2 or bfloat162 values "
                       "of one type, got float2, float2"):
        wrong_pair[1, 1](np.zeros(2, simt.float2), np.zeros(1, simt.float2))


@simt.kernel
def accumulate(h, b, p, x):
    i = simt.grid(1)
    if i < x.shape[0]:
        simt.atomic.add(h, i % 4, x[i])
        simt.atomic.add(b, i % 4, x[i])
        simt.atomic.add(p, i % 4, simt.float2half2_rn(x[i]))


def test_atomic_add_on_16_bit_floats(device, rng):
    """Small integers: every order of the additions gives the same sums."""
    x = rng.integers(-4, 5, 256).astype(np.float16)
    h = np.full(4, 1, np.float16)
    b = simt.to_bfloat16(np.full(4, -2.0))
    p = simt.half2.view(np.full((4, 2), 0.5, np.float16))
    accumulate[2, 128](h, b, p, x)
    sums = x.astype(np.float64).reshape(-1, 4).sum(0)
    np.testing.assert_array_equal(h, sums + 1)
    np.testing.assert_array_equal(simt.from_bfloat16(b), sums - 2)
    np.testing.assert_array_equal(p["x"], sums + 0.5)
    np.testing.assert_array_equal(p["y"], sums + 0.5)
