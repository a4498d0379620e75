"""Mismatches the differential fuzzer (tools/fuzz.py) found, each as a minimal reproducer.

The comment above each test gives the seed that found it (``python tools/fuzz.py --show --seed N``
prints that kernel). A bug not fixed yet is an xfail(strict=True) test naming its issue.
"""
import math

import numpy as np
import pytest

import simt
from conftest import poison

FULL = 0xFFFFFFFF


# seed 104 (and 17 more of seeds 100-299): a vote as an if condition took the wrong branch
# (issue 12, fixed on main by branch warpfix)
@simt.kernel
def vote_as_condition(a, out):
    i = simt.grid(1)
    if simt.any_sync(FULL, a[i] > 0):
        out[i] = 1
    else:
        out[i] = 2


def test_vote_as_if_condition(device):
    rng = np.random.default_rng(0)
    for _ in range(10):                  # on the CPU the wrong lanes vary from run to run
        a = (rng.random(512) < 0.02).astype(np.int32)
        out = np.zeros(512, np.int32)
        vote_as_condition[8, 64](a, out)
        want = np.where(a.reshape(-1, 32).any(axis=1).repeat(32), 1, 2)
        np.testing.assert_array_equal(out, want)


# seed 1092: bool * bool typed int8 (NumPy: bool, logical and), so `| uint64` failed to compile
@simt.kernel
def bool_product(a, b, out):
    i = simt.grid(1)
    both = (a[i] > 0) * (b[i] > 0)
    out[i] = both | np.uint64(4)


def test_bool_times_bool_is_bool(device):
    a = np.array([1, 1, -1, -1], np.int32)
    b = np.array([1, -1, 1, -1], np.int32)
    out = np.zeros(4, np.uint64)
    bool_product[1, 4](a, b, out)
    np.testing.assert_array_equal(out, ((a > 0) * (b > 0)) | np.uint64(4))


# seed 2392: int64 >= uint64 compared through float64 (both round to 2**63); NumPy 2 has exact
# mixed-sign loops ('qQ->?'), so 2**63 - 19 >= 2**63 - 1 is False
@simt.kernel
def mixed_sign_compare(a, b, out):
    i = simt.grid(1)
    out[i] = a[i] >= b[i]


@simt.kernel
def mixed_sign_compares(a, b, c, out):
    i = simt.grid(1)
    out[i, 0] = a[i] < b[i]
    out[i, 1] = b[i] <= a[i]
    out[i, 2] = a[i] == b[i]
    out[i, 3] = b[i] != a[i]
    out[i, 4] = c[i] > b[i]          # int32 with uint64: float64 in NumPy's promotion too
    out[i, 5] = b[i] >= c[i]


def test_int64_uint64_compare_exactly(device):
    a = np.array([2**63 - 19, -1, 5, 2**63 - 1], np.int64)
    b = np.array([2**63 - 1, 2**64 - 1, 5, 2**63], np.uint64)
    out = np.zeros(4, np.bool_)
    mixed_sign_compare[1, 4](a, b, out)
    np.testing.assert_array_equal(out, a >= b)


def test_every_mixed_sign_comparison_is_exact(device, rng):
    n = 64
    big = np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 1, 2**63 + 1, 5, 2**32], np.uint64)
    b = rng.choice(big, n)
    a = np.where(rng.random(n) < 0.5, b.astype(np.int64),
                 rng.choice(np.array([-1, -2**63, 2**63 - 1, 0, 5], np.int64), n))
    c = rng.integers(-2**31, 2**31, n).astype(np.int32)
    out = poison((n, 6), np.bool_)
    mixed_sign_compares[1, n](a, b, c, out)
    want = np.stack([a < b, b <= a, a == b, b != a, c > b, b >= c], axis=1)
    np.testing.assert_array_equal(out, want)


# seed 0: match_all_sync in a partial warp named lanes that do not exist (issue 12, fixed on
# main by branch warpfix)
@simt.kernel
def match_all_partial(out, pred):
    i = simt.grid(1)
    mask, same = simt.match_all_sync(FULL, i // 32)
    out[i] = mask
    pred[i] = same


def test_match_all_in_a_partial_warp(device):
    out, pred = np.zeros(17, np.uint32), np.zeros(17, np.int32)
    match_all_partial[1, 17](out, pred)
    np.testing.assert_array_equal(out, np.full(17, 0x1FFFF, np.uint32))
    np.testing.assert_array_equal(pred, np.ones(17, np.int32))


# seed 10174: float // gave 3102470280810829.5 (not a whole number): (x - fmod(x, y)) / y
# rounds, and NumPy's npy_divmod then floors it (and gives -0.0 for a zero quotient below 0)
@simt.kernel
def float_floordiv(x, y, out):
    i = simt.grid(1)
    out[i] = x[i] // y[i]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_floordiv_is_numpys(device, dtype):
    x = np.array([6.204940561621659e15, 7.0, -7.0, 7.0, -7.0, 0.5, -0.5, 1e300, 3.0, -0.0],
                 dtype)
    y = np.array([2.0, 2.0, 2.0, -2.0, -2.0, 4.0, 4.0, 1e-300, 0.1, 5.0], dtype)
    out = np.full(x.shape, np.nan, dtype)
    float_floordiv[1, len(x)](x, y, out)
    with np.errstate(all="ignore"):
        want = x // y
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(want))


# seed 6 (with ** in the generator): every integer power failed to compile, "Instruction does
# not dominate all uses" (the negative-exponent result was computed after the branch it feeds)
@simt.kernel
def int_power(a, e, out):
    i = simt.grid(1)
    out[i] = a[i] ** e[i]


@pytest.mark.parametrize("dtype", [np.int32, np.uint16, np.int64])
def test_int_power(device, dtype):
    a = np.array([3, 2, 7, 0, 1, 5], dtype)
    e = np.array([0, 5, 3, 2, 9, 1], dtype)
    out = np.zeros(6, dtype)
    int_power[1, 6](a, e, out)
    np.testing.assert_array_equal(out, a ** e)


# seed 73: `v11, v8 = v8, v11` assigned one name after the other (v8 got v8 back); Python
# evaluates the whole right side first
@simt.kernel
def swap(a, b, out):
    i = simt.grid(1)
    x = a[i]
    y = b[i]
    x, y = y, x
    out[0, i] = x
    out[1, i] = y


def test_tuple_assignment_swaps(device):
    a, b = np.arange(4, dtype=np.float64), np.arange(10, 14, dtype=np.float64)
    out = np.zeros((2, 4))
    swap[1, 4](a, b, out)
    np.testing.assert_array_equal(out, np.stack([b, a]))


# float16 in the generator (seeds 19, 40): float64 -> float16 on the CPU device called
# __truncdfhf2, which the JIT cannot resolve: the process died (SIGSEGV)
@simt.kernel
def to_half(x, out):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[i] = x[i]


def halfway_doubles(rng):
    """Doubles that round to float16 in every way: halfway points and their neighbours,
    subnormals, overflow, signed zeros, inf and NaN, and random magnitudes."""
    halves = np.arange(0, 0x7C00, 7, dtype=np.uint16).view(np.float16).astype(np.float64)
    mids = (halves[:-1] + halves[1:]) / 2
    special = np.array([0.0, -0.0, 65504.0, 65520.0, 65519.99, 1e300, -1e300, np.inf, -np.inf,
                        np.nan, 2.0 ** -25, 2.0 ** -25 * 1.0000001, 2.0 ** -26, 1e-320])
    values = [mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf), special,
              rng.standard_normal(2000) * 10.0 ** rng.integers(-8, 6, 2000)]
    values = np.concatenate(values)
    return np.concatenate([values, -values])


def test_float64_to_float16_rounds_once(device, rng):
    x = halfway_doubles(rng)
    out = np.zeros(x.shape, np.float16)
    to_half[(len(x) + 127) // 128, 128](x, out)
    with np.errstate(all="ignore"):
        want = x.astype(np.float16)
    np.testing.assert_array_equal(out.view(np.uint16)[~np.isnan(want)],
                                  want.view(np.uint16)[~np.isnan(want)])
    assert np.isnan(out[np.isnan(want)]).all()


# float16 in the generator (seed 59 and others): %, // and ** on float16 called the double
# versions of fmod and pow with half arguments (garbage, or "half != double" at compile time)
@simt.kernel
def half_mod_pow(x, out):
    i = simt.grid(1)
    out[0, i] = x[i] % np.float16(1.5)
    out[1, i] = x[i] ** 2
    out[2, i] = x[i] // np.float16(0.75)


def test_float16_mod_pow_floordiv(device):
    x = (np.arange(32) / 8 - 2).astype(np.float16)
    out = np.zeros((3, 32), np.float16)
    half_mod_pow[1, 32](x, out)
    np.testing.assert_array_equal(out, np.stack([x % np.float16(1.5), x ** 2,
                                                 x // np.float16(0.75)]))


# H100 run of 2026-11-23, seeds 101915, 102844, 106272 (and others with abs or - of a narrow
# int): abs(int16(-32768)) and -int16(-32768) are -32768 in NumPy (they wrap); PTX's abs.s16
# and neg.s16 followed by a sign extension gave +32768 on the GPU (ptxas assumes they do not
# overflow). backends/cuda/ptxfix.py rewrites them.
@simt.kernel
def narrow_abs(x16, x8, out):
    i = simt.grid(1)
    out[i, 0] = np.int64(abs(x16[i]))
    out[i, 1] = np.int32(abs(x8[i]))
    out[i, 2] = abs(x16[i]) < 0
    out[i, 3] = np.int64(abs(x16[i])) + np.int64(abs(x8[i]))
    out[i, 4] = np.int64(-x16[i])
    out[i, 5] = np.int32(-x8[i])


def test_abs_and_minus_of_the_least_narrow_int_wrap(device, rng):
    n = 64
    x16 = rng.integers(-2**15, 2**15, n).astype(np.int16)
    x8 = rng.integers(-128, 128, n).astype(np.int8)
    x16[::4], x8[::3] = -2**15, -128
    out = poison((n, 6), np.int64)
    narrow_abs[1, n](x16, x8, out)
    a16, a8 = np.abs(x16), np.abs(x8)
    want = np.stack([a16.astype(np.int64), a8.astype(np.int64), a16 < 0,
                     a16.astype(np.int64) + a8.astype(np.int64), (-x16).astype(np.int64),
                     (-x8).astype(np.int64)], axis=1)
    np.testing.assert_array_equal(out, want)


# H100 run of 2026-11-23, seed 107135: ptxas takes the result of PTX's abs.s64 to be
# non-negative, and folded min(abs(x), 0) to 0; for the least int64, abs wraps (NumPy), so
# min(abs(-2**63), 0) - 6 is 2**63 - 6. backends/cuda/ptxfix.py rewrites abs.sN.
@simt.kernel
def wide_abs(x64, x32, out):
    i = simt.grid(1)
    out[i, 0] = min(abs(x64[i]), 0) - 6
    out[i, 1] = min(abs(x32[i]), 0)
    out[i, 2] = abs(x64[i]) < 0
    out[i, 3] = abs(x32[i])


def test_abs_of_the_least_int32_and_int64_wraps(device, rng):
    n = 32
    x64 = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64)
    x32 = rng.integers(-2**31, 2**31 - 1, n).astype(np.int32)
    x64[::3], x32[::4] = -2**63, -2**31
    out = poison((n, 4), np.int64)
    wide_abs[1, n](x64, x32, out)
    with np.errstate(over="ignore"):
        want = np.stack([np.minimum(np.abs(x64), 0) - 6, np.minimum(np.abs(x32), 0),
                         np.abs(x64) < 0, np.abs(x32).astype(np.int64)], axis=1)
    np.testing.assert_array_equal(out, want)


def test_gpu_integer_abs_and_minus_avoid_what_ptxas_misreads():
    """The PTX side of the tests above, on machines without a GPU: no abs.sN (ptxas takes
    its result to be non-negative), no neg.s16 (its -32768 came out +32768)."""
    def ptx_of(kernel, signature):
        ptx = kernel.ptx(signature, arch="sm_90")
        return ptx if isinstance(ptx, str) else ptx.ptx
    text = ptx_of(wide_abs, "void(int64[::1], int32[::1], int64[:, ::1])") + \
        ptx_of(narrow_abs, "void(int16[::1], int8[::1], int64[:, ::1])")
    assert "selp.s64" in text and "selp.s32" in text and "mul.lo.s16" in text
    for bad in ("abs.s16", "abs.s32", "abs.s64", "neg.s16"):
        assert bad not in text, bad


# seeds 400038 and 400414 (issue 33's partial-mask warp kind, CPU run of 2026-12-02): the
# evaluator's fault. The kind's predicate may be an int's truth (``p = np.int16(v)``), and the
# evaluator kept p as a bool, so a later ``p < 9`` was always True there (400038); kept as
# its Python value, ``p = x or y`` was the float x where the kernel has a bool (400414, an
# evaluator TypeError). simt was right both times. Each kernel is checked whole, through the
# fuzzer, on the device under test. Seed 400588: the generator named a record argument
# r3 as a loop variable already was; simt refused the kernel, rightly (a CompileError
# naming both), and record arguments are rec<N> now.
@pytest.mark.parametrize("seed", [400038, 400414, 400588])
def test_partial_mask_predicate_keeps_its_type(device, tmp_path, seed):
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "tools"))
    from fuzz_check import check
    from fuzz_gen import generate
    outcome = check(generate(seed), device, str(tmp_path))
    assert outcome.kind == "ok", outcome.report()


# Fuzz seed 100609 (generator of 2026-11-23), reduced on the H200 (2026-12-02): one branch
# calls libdevice's trig slow path (cos of a huge int32), which ptxas -O2/-O3 let clobber
# the uniform register holding a1's base while the warp's other branch still reads a1
# (an illegal address at a1 + 14). backends/cuda/compile.py inlines libdevice's slow paths.
@simt.device
def _f2(p3):
    if (((~p3) == 5) or (p3 == (p3 // ((p3 & 7) + 2)))):
        return np.bool_(p3)
    return (p3 > (p3 | (p3 ** (p3 & 3))))


@simt.kernel
def _seed100609(a0, a1, a2, acc3, o8, acc9):
    gid = simt.blockIdx.x * simt.blockDim.x + simt.threadIdx.x
    if (min(a0[(gid + 32) % 17], a0[(gid + 0) % 17]) == 1.5):
        simt.atomic.or_(acc3, gid % 5, np.int64(a2[(gid + 33) % 17]))
    elif (a0[(gid + 32) % 17] < min(a0[(gid + 33) % 17], a1[(gid + 33) % 17])):
        v14 = math.cos(a2[(gid + 1) % 17])   # noqa: F841 (the call is what matters)
    elif ((a2[(gid + 0) % 17] if (a0[(gid + 32) % 17] < a1[(gid + 31) % 17])
           else np.int32(a1[(gid + 3) % 17])) == a0[(gid + 3) % 17]):
        for i15 in range((np.int32(min((255 ^ a1[(gid + 0) % 17]), 9)) & 3)):
            o8[gid] = i15
    v24 = ((a2[(gid + 32) % 17] > 2147483647) >> 5)
    v25 = (a2[(gid + 31) % 17] // ((_f2(np.uint16(a2[(gid + 3) % 17])) & 7) + 2))
    simt.atomic.add(acc9, gid, np.uint32((a2[(gid + 1) % 17] if (np.float32(v25) <= max(
        a1[(gid + 33) % 17], v24)) else np.int32(v24))))


def _seed100609_arguments():
    a0 = np.array([-7.0, -4.75, 11.5, 2.0, 5.75, 13.5, 4.5, -9.875, -7.375, 11.0, 14.125,
                   4.375, 0.75, -16.0, 1.5, -9.25, -15.125], np.float32)
    a1 = np.array([0, 19, 139, 15, 0, 1, 190, 13, 12, 49, 0, 0, 16, 13, 212, 0, 0], np.uint8)
    a2 = np.array([-14, -14, 656634106, -1416242189, 1, -17, -902663260, -1073741824, -7, 7,
                   -2147483648, 0, -19, 0, 17, -20, -19], np.int32)
    acc3 = np.array([15, -20, 5, 11, 9], np.int64)
    o8 = poison(17, np.int32)
    acc9 = np.array([3777386255, 1, 1, 3091660982, 918938288, 3478117034, 2779834724, 17, 4,
                     5, 18, 2745473476, 3, 11, 0, 7, 14], np.uint32)
    return [a0, a1, a2, acc3, o8, acc9]


def test_calls_in_divergent_code_keep_the_callers_registers(device):
    """On GPUs this faulted (ptxas's uniform registers across a call in divergent code); the
    result is the cpu device's, which matched the NumPy evaluator on the whole program."""
    want = _seed100609_arguments()
    with simt.use_device("cpu"):
        _seed100609[1, 17](*want)
    got = _seed100609_arguments()
    _seed100609[1, 17](*got)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_ptx_of_libdevice_slow_paths_has_no_calls():
    """The PTX side of the test above, without a GPU: the trig slow path is inlined."""
    ptx = _seed100609.inspect_ptx("void(float32[::1], uint8[::1], int32[::1], int64[::1], "
                                  "int32[::1], uint32[::1])")
    assert "cos" not in ptx and "call" not in ptx
