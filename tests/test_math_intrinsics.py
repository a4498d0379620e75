"""The floating-point and integer intrinsics (guide F.2, B.15): rounding-mode arithmetic and
conversions exact against Python's fractions on random inputs, the integer intrinsics
against Python ints, bit reinterpretations, fast intrinsics and fastmath=True."""
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import simt
from conftest import poison
from kernelsource import kernel_from_lines
from simt.backends.cpu.compile import compile_kernel as compile_cpu
from simt.backends.cuda.compile import compile_kernel as compile_ptx
from simt.compiler.options import CompileOptions
from simt.ir import types as T

MODES = ("rn", "rz", "ru", "rd")
F_OPS = {"fadd": 2, "fsub": 2, "fmul": 2, "fdiv": 2, "fmaf": 3, "frcp": 1, "fsqrt": 1}
D_OPS = {"dadd": 2, "dsub": 2, "dmul": 2, "ddiv": 2, "fma": 3, "drcp": 1, "dsqrt": 1}


def neighbours(value, dtype):
    """(lower, upper): the floats of dtype just below-or-at and at-or-above Fraction value."""
    c = dtype(float(value))
    while Fraction(float(c)) > value:
        c = np.nextafter(c, dtype(-np.inf))
    while Fraction(float(np.nextafter(c, dtype(np.inf)))) <= value:
        c = np.nextafter(c, dtype(np.inf))
    upper = c if Fraction(float(c)) == value else np.nextafter(c, dtype(np.inf))
    return c, upper


def round_to(value, mode, dtype, above_mid=None):
    """Fraction ``value`` rounded to dtype by ``mode``; ``above_mid(m)`` says whether the
    value lies above a midpoint m, for values known only by comparisons (square roots)."""
    lower, upper = value
    if lower == upper:
        return lower
    if mode == "rd":
        return lower
    if mode == "ru":
        return upper
    if mode == "rz":
        return lower if lower >= 0 else upper
    mid = (Fraction(float(lower)) + Fraction(float(upper))) / 2
    if above_mid(mid) is None:
        even = int(np.array(lower).view(np.int32 if dtype == np.float32 else np.int64)) % 2 == 0
        return lower if even else upper
    return upper if above_mid(mid) else lower


def exact(op, args, mode, dtype):
    """The correctly rounded result of op on dtype values."""
    a = [Fraction(float(v)) for v in args]
    if op in ("sqrt", "rsqrt"):
        x = a[0]
        guess = math.sqrt(float(x)) if op == "sqrt" else 1 / math.sqrt(float(x))
        c = dtype(guess)
        inside = (lambda f: f * f <= x) if op == "sqrt" else (lambda f: f * f * x <= 1)
        while not inside(Fraction(float(c))):
            c = np.nextafter(c, dtype(-np.inf))
        while inside(Fraction(float(np.nextafter(c, dtype(np.inf))))):
            c = np.nextafter(c, dtype(np.inf))
        cf = Fraction(float(c))
        upper = c if (cf * cf == x if op == "sqrt" else cf * cf * x == 1) else \
            np.nextafter(c, dtype(np.inf))
        above = (lambda m: None if m * m == x else m * m < x) if op == "sqrt" else \
            (lambda m: m * m * x < 1)
        return round_to((c, upper), mode, dtype, above)
    value = {"add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1],
             "mul": lambda: a[0] * a[1], "div": lambda: a[0] / a[1],
             "fma": lambda: a[0] * a[1] + a[2], "rcp": lambda: 1 / a[0]}[op]()
    return round_to(neighbours(value, dtype), mode, dtype, lambda m: None if value == m
                    else value > m)


def random_floats(rng, n, dtype, spread):
    """Signed values over many binades, some close to each other (cancellation)."""
    v = rng.standard_normal(n) * 10.0 ** rng.integers(-spread, spread, n)
    v[: n // 4] = 1 + rng.standard_normal(n // 4) * 1e-7
    return v.astype(dtype)


@pytest.fixture(scope="module")
def rounding_kernels(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rounding")
    kernels = {}
    for name, ops in (("f", F_OPS), ("d", D_OPS)):
        lines, rows = [], []
        for op, nargs in ops.items():
            for mode in MODES:
                args = ", ".join(f"a[{j}, i]" for j in range(nargs))
                lines.append(f"out[{len(rows)}, i] = simt.math.{op}_{mode}({args})")
                rows.append((op, mode))
        if name == "f":
            lines.append(f"out[{len(rows)}, i] = simt.math.frsqrt_rn(a[0, i])")
            rows.append(("frsqrt", "rn"))
        kernels[name] = (kernel_from_lines(folder, f"rounded_{name}", "a, out", lines), rows)
    return kernels


OP_NAMES = {"fadd": "add", "fsub": "sub", "fmul": "mul", "fdiv": "div", "fmaf": "fma",
            "frcp": "rcp", "fsqrt": "sqrt", "frsqrt": "rsqrt", "dadd": "add", "dsub": "sub",
            "dmul": "mul", "ddiv": "div", "fma": "fma", "drcp": "rcp", "dsqrt": "sqrt"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_rounding_mode_arithmetic_is_exact(device, rng, rounding_kernels, dtype):
    kernel, rows = rounding_kernels["f" if dtype == np.float32 else "d"]
    n = 96
    a = np.stack([random_floats(rng, n, dtype, 12) for _ in range(3)])
    a[:, :8] = np.array([[1.0, -1.0, 3.0, 1e-30, 0.1, 2.0, 7.0, -0.1]] * 3, dtype)
    out = poison((len(rows), n), dtype)
    kernel[1, n](a, out)
    for k, (name, mode) in enumerate(rows):
        op = OP_NAMES[name]
        nargs = 3 if op == "fma" else 1 if op in ("rcp", "sqrt", "rsqrt") else 2
        for i in range(n):
            args = a[:nargs, i]
            if op in ("sqrt", "rsqrt"):
                args = np.abs(args)
            if op in ("sqrt", "rsqrt") and a[0, i] < 0:
                continue                    # the kernel took the root of a negative number
            want = exact(op, args, mode, dtype)
            assert out[k, i] == want, (f"{name}_{mode}{tuple(float(v) for v in args)} = "
                                       f"{out[k, i]!r}, exact rounding gives {want!r}")


CONVERSIONS = [("float2int", np.float32, np.int32), ("float2uint", np.float32, np.uint32),
               ("float2ll", np.float32, np.int64), ("float2ull", np.float32, np.uint64),
               ("double2int", np.float64, np.int32), ("double2uint", np.float64, np.uint32),
               ("double2ll", np.float64, np.int64), ("double2ull", np.float64, np.uint64)]
TO_FLOAT = [("int2float", np.int32, np.float32), ("uint2float", np.uint32, np.float32),
            ("ll2float", np.int64, np.float32), ("ull2float", np.uint64, np.float32),
            ("ll2double", np.int64, np.float64), ("ull2double", np.uint64, np.float64),
            ("double2float", np.float64, np.float32)]
ROUND = {"rn": np.rint, "rz": np.trunc, "ru": np.ceil, "rd": np.floor}


@pytest.fixture(scope="module")
def conversion_kernels(tmp_path_factory):
    folder = tmp_path_factory.mktemp("conversions")
    srcs = {np.int32: "i32", np.uint32: "u32", np.int64: "i64", np.uint64: "u64",
            np.float32: "f", np.float64: "d"}
    to_int, to_float = [], []
    for table, lines in ((CONVERSIONS, to_int), (TO_FLOAT, to_float)):
        for name, src, _ in table:
            for mode in MODES:
                lines.append(f"out[{len(lines)}, i] = simt.math.{name}_{mode}({srcs[src]}[i])")
    return (kernel_from_lines(folder, "to_int", "f, d, out", to_int),
            kernel_from_lines(folder, "to_float", "i32, u32, i64, u64, d, out", to_float))


def test_conversions_round_and_saturate(device, rng, conversion_kernels, request):
    if device.kind == "cuda":        # seen on an H100: float->int32 NaN is 0, double->int32
        request.applymarker(pytest.mark.xfail(    # and float->int64 NaN the sign bit; the
            reason="NaN in the unsigned conversions is not yet checked on a GPU",  # rest
            strict=False))                                                       # unseen
    to_int, to_float = conversion_kernels
    n = 64
    d = rng.standard_normal(n) * 10.0 ** rng.integers(0, 12, n)
    d[:10] = [0.5, 1.5, 2.5, -0.5, -2.5, np.nan, np.inf, -np.inf, 3e9, -3e19]
    f = d.astype(np.float32)
    out = poison((len(CONVERSIONS) * 4, n), np.float64)
    to_int[1, n](f, d, out)
    k = 0
    for name, src, dst in CONVERSIONS:
        values = f if src == np.float32 else d
        info = np.iinfo(dst)
        for mode in MODES:
            with np.errstate(invalid="ignore"):
                whole = ROUND[mode](values.astype(np.float64))
            sign_bit = info.bits == 64 or (src == np.float64 and info.min < 0)
            nan = (1 << (info.bits - 1)) if sign_bit else 0   # NaN as the H100 converts it
            nan = nan - (1 << info.bits) if sign_bit and info.min < 0 else nan
            want = [nan if math.isnan(w) else min(max(w, info.min), info.max) for w in whole]
            got = [int(v) if math.isfinite(v) else v for v in out[k]]
            # out is float64: compare the nearest float64 of the exact integer
            assert got == [int(np.float64(w)) for w in want], f"{name}_{mode}"
            k += 1
    ints = {np.int32: rng.integers(-2 ** 31, 2 ** 31, n), np.uint32: rng.integers(0, 2 ** 32, n),
            np.int64: rng.integers(-2 ** 63, 2 ** 63, n, dtype=np.int64),
            np.uint64: rng.integers(0, 2 ** 64, n, dtype=np.uint64)}
    arrays = {t: np.asarray(v).astype(t) for t, v in ints.items()}
    wide = d * 1e-3 + rng.standard_normal(n) * 1e-30
    out2 = poison((len(TO_FLOAT) * 4, n), np.float64)
    to_float[1, n](arrays[np.int32], arrays[np.uint32], arrays[np.int64], arrays[np.uint64],
                   wide, out2)
    k = 0
    for name, src, dst in TO_FLOAT:
        values = wide if src == np.float64 else arrays[src]
        for mode in MODES:
            for i in range(n):
                v = values[i]
                if src == np.float64 and not math.isfinite(v):
                    k_ok = np.isnan(out2[k, i]) if math.isnan(v) else out2[k, i] == v
                    assert k_ok, (name, mode, v)
                    continue
                value = Fraction(float(v)) if src == np.float64 else Fraction(int(v))
                want = round_to(neighbours(value, dst), mode, dst,
                                lambda m: None if value == m else value > m)
                assert out2[k, i] == want, f"{name}_{mode}({v!r}) = {out2[k, i]!r}, not {want!r}"
            k += 1


@simt.kernel
def int_kernel(a, b, c, s, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[0, i] = simt.math.byte_perm(a[i], b[i], s[i])
        out[1, i] = simt.math.funnelshift_l(a[i], b[i], s[i])
        out[2, i] = simt.math.funnelshift_lc(a[i], b[i], s[i])
        out[3, i] = simt.math.funnelshift_r(a[i], b[i], s[i])
        out[4, i] = simt.math.funnelshift_rc(a[i], b[i], s[i])
        out[5, i] = simt.math.sad(np.int32(a[i]), np.int32(b[i]), c[i])
        out[6, i] = simt.math.usad(a[i], b[i], c[i])
        out[7, i] = simt.math.hadd(np.int32(a[i]), np.int32(b[i]))
        out[8, i] = simt.math.rhadd(np.int32(a[i]), np.int32(b[i]))
        out[9, i] = simt.math.uhadd(a[i], b[i])
        out[10, i] = simt.math.urhadd(a[i], b[i])
        out[11, i] = simt.math.dp4a(np.int32(a[i]), np.int32(b[i]), np.int32(c[i]))
        out[12, i] = simt.math.dp4a(a[i], b[i], c[i])
        out[13, i] = simt.math.dp2a_lo(np.int32(a[i]), np.int32(b[i]), np.int32(c[i]))
        out[14, i] = simt.math.dp2a_hi(a[i], b[i], c[i])
        out[15, i] = simt.math.popcll(np.int64(a[i]) << 32 | np.int64(b[i]))
        out[16, i] = simt.math.clzll(np.uint64(a[i]))
        out[17, i] = simt.math.ffsll(np.uint64(b[i]) << np.uint64(32))
        out[18, i] = simt.math.brevll(np.uint64(a[i]))
        out[19, i] = simt.math.mul64hi(np.int64(a[i]) << 31, np.int64(b[i]) << 30)
        out[20, i] = simt.math.umul64hi(np.uint64(a[i]) << np.uint64(32),
                                        np.uint64(b[i]) << np.uint64(31))


def _signed(v, bits=32):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _bytes(v, signed):
    return [(_signed((v >> (8 * k)) & 0xFF, 8) if signed else (v >> (8 * k)) & 0xFF)
            for k in range(4)]


def _halves(v, signed):
    return [(_signed((v >> (16 * k)) & 0xFFFF, 16) if signed else (v >> (16 * k)) & 0xFFFF)
            for k in range(2)]


def test_integer_intrinsics_against_python(device, rng):
    n = 64
    a, b, c = (rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    s = rng.integers(0, 64, n).astype(np.uint32)
    s[:4] = [0, 31, 32, 40]
    out = poison((21, n), np.uint64)
    int_kernel[1, n](a, b, c, s, out)
    for i in range(n):
        x, y, z, sh = int(a[i]), int(b[i]), int(c[i]), int(s[i])
        both = y << 32 | x
        perm = sum(((both >> (8 * ((sh >> (4 * k)) & 7))) & 0xFF) << (8 * k) for k in range(4))
        m32, m64 = (1 << 32) - 1, (1 << 64) - 1
        sx, sy, sz = _signed(x), _signed(y), _signed(z)
        want = [
            perm,
            ((both << (sh & 31)) >> 32) & m32, ((both << min(sh, 32)) >> 32) & m32,
            (both >> (sh & 31)) & m32, (both >> min(sh, 32)) & m32,
            (abs(sx - sy) + z) & m32, (abs(x - y) + z) & m32,
            ((sx + sy) >> 1) & m32, ((sx + sy + 1) >> 1) & m32,
            (x + y) >> 1, (x + y + 1) >> 1,
            (sum(p * q for p, q in zip(_bytes(x, True), _bytes(y, True))) + sz) & m32,
            (sum(p * q for p, q in zip(_bytes(x, False), _bytes(y, False))) + z) & m32,
            (sum(p * q for p, q in zip(_halves(x, True), _bytes(y, True)[:2])) + sz) & m32,
            (sum(p * q for p, q in zip(_halves(x, False), _bytes(y, False)[2:])) + z) & m32,
            bin(((_signed(x) << 32) | y) & m64).count("1"), 64 - x.bit_length(),
            ((y << 32) & -(y << 32)).bit_length() if y else 0,
            int(format(x, "064b")[::-1], 2),
            ((_signed(x << 31, 64) * _signed(y << 30, 64)) >> 64) & m64,
            (((x << 32) * (y << 31)) >> 64) & m64,
        ]
        got = [int(v) for v in out[:, i]]
        for k, (g, w) in enumerate(zip(got, want)):
            width = 64 if k in (19, 20, 18) else 32
            assert g & ((1 << width) - 1) == w & ((1 << width) - 1), (k, x, y, z, sh, g, w)


@simt.kernel
def bits_kernel(d, hi, lo, out_i, out_d, f, out_f):
    i = simt.grid(1)
    if i < d.shape[0]:
        out_i[0, i] = simt.double2hiint(d[i])
        out_i[1, i] = simt.double2loint(d[i])
        out_d[i] = simt.hiloint2double(hi[i], lo[i])
        out_f[0, i] = simt.math.saturatef(f[i])
        s, c = simt.math.fast_sincos(f[i])
        out_f[1, i] = s
        out_f[2, i] = c


def test_bit_intrinsics_saturate_and_fast_sincos(device, rng):
    n = 32
    d = rng.standard_normal(n) * 1e10
    hi, lo = (rng.integers(-2 ** 31, 2 ** 31, n).astype(np.int32) for _ in range(2))
    f = rng.uniform(-2, 2, n).astype(np.float32)
    f[:3] = [np.nan, -0.5, 1.5]
    out_i, out_d = poison((2, n), np.int32), poison(n, np.float64)
    out_f = poison((3, n), np.float32)
    bits_kernel[1, n](d, hi, lo, out_i, out_d, f, out_f)
    words = d.view(np.int64)
    np.testing.assert_array_equal(out_i[0], (words >> 32).astype(np.int32))
    np.testing.assert_array_equal(out_i[1], (words & 0xFFFFFFFF).astype(np.uint32).view(np.int32))
    np.testing.assert_array_equal(out_d.view(np.int64), (hi.astype(np.int64) << 32) |
                                  lo.view(np.uint32).astype(np.int64))
    np.testing.assert_array_equal(out_f[0], np.where(np.isnan(f), 0, np.clip(f, 0, 1)))
    # __sinf: absolute error 2**-21.41 on [-pi, pi] (the CPU computes sinf exactly)
    np.testing.assert_allclose(out_f[1], np.sin(f.astype(np.float64)), atol=2 ** -21.41)
    np.testing.assert_allclose(out_f[2], np.cos(f.astype(np.float64)), atol=2 ** -21.19)


def fast_kernel(x, y, out):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[i] = math.sin(x[i]) / y[i] + math.sqrt(y[i]) + math.exp(x[i]) + x[i] ** y[i]


F32 = T.Array(np.dtype(np.float32), 1, "C")


def test_fastmath_ptx_uses_approximate_instructions():
    """--use_fast_math on the GPU: float32 sin, exp, pow, division and sqrt become the
    approximate instructions, with denormals flushed; without it they stay IEEE."""
    fn = simt.kernel(fast_kernel).typed_ir([F32, F32, F32])
    fast = compile_ptx(fn, CompileOptions(fastmath=True), "sm_90").ptx
    plain = compile_ptx(fn, CompileOptions(), "sm_90").ptx
    for instruction in ("sin.approx.ftz.f32", "div.approx.ftz.f32", "sqrt.approx.ftz.f32",
                        "ex2.approx.ftz.f32", "lg2.approx.ftz.f32"):
        assert instruction in fast
    assert "div.rn.f32" in plain and "sqrt.rn.f32" in plain
    assert "sin.approx" not in plain and "div.approx" not in plain


def test_fastmath_cpu_sets_fast_math_flags():
    fn = simt.kernel(fast_kernel).typed_ir([F32, F32, F32])
    fast = compile_cpu(fn, CompileOptions(boundscheck=True, fastmath=True)).stages["llvm_ir"]
    plain = compile_cpu(fn, CompileOptions(boundscheck=True)).stages["llvm_ir"]
    assert "fdiv reassoc nsz arcp contract afn float" in fast
    assert "reassoc" not in plain


@pytest.mark.parametrize("fastmath", [False, True])
def test_fastmath_kernel_option(device, rng, fastmath):
    kernel = simt.kernel(fastmath=fastmath)(fast_kernel)
    x = rng.uniform(0.1, 2, 256).astype(np.float32)
    y = rng.uniform(0.5, 2, 256).astype(np.float32)
    out = poison(256, np.float32)
    kernel[2, 128](x, y, out)
    d = [v.astype(np.float64) for v in (x, y)]
    want = np.sin(d[0]) / d[1] + np.sqrt(d[1]) + np.exp(d[0]) + d[0] ** d[1]
    np.testing.assert_allclose(out, want, rtol=2e-5 if fastmath else 2e-6)


def test_rounding_ptx_instructions():
    """The rounding-mode intrinsics and integer intrinsics are single PTX instructions."""
    @simt.kernel
    def k(f, u, out, uo):
        out[0] = simt.math.fadd_rz(f[0], f[1]) + simt.math.fmul_ru(f[0], f[1]) + \
            simt.math.fmaf_rd(f[0], f[1], f[2]) + simt.math.fsqrt_ru(f[0])
        uo[0] = simt.math.float2int_rn(f[0]) + simt.math.popc(u[0]) + simt.math.brev(u[1]) + \
            simt.math.byte_perm(u[0], u[1], u[2]) + simt.math.funnelshift_l(u[0], u[1], u[2]) + \
            simt.math.dp4a(u[0], u[1], u[2])
    u32 = T.Array(np.dtype(np.uint32), 1, "C")
    ptx = compile_ptx(k.typed_ir([F32, u32, F32, u32]), CompileOptions(), "sm_90").ptx
    for instruction in ("add.rz.f32", "mul.rp.f32", "fma.rm.f32", "sqrt.rp.f32",
                        "cvt.rni.s32.f32", "popc.b32", "brev.b32", "prmt.b32", "shf.l.wrap.b32",
                        "dp4a.u32.u32"):
        assert instruction in ptx, instruction


@simt.kernel
def fns_kernel(mask, base, offset, out):
    i = simt.grid(1)
    if i < mask.shape[0]:
        out[i] = simt.math.fns(mask[i], base[i], offset[i])


def _fns_reference(mask, base, offset):
    """PTX's fns.b32 as the PTX ISA's pseudocode writes it."""
    if offset == 0:
        return base if mask >> base & 1 else 0xFFFFFFFF
    pos, count, step = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if mask >> pos & 1:
            if count == 0:
                return pos
            count -= 1
        pos += step
    return 0xFFFFFFFF


def test_fns_finds_the_nth_set_bit_from_base(device, rng):
    n = 256
    mask = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    mask[:8] = [0xAAAAAAAA] * 4 + [0, 0xFFFFFFFF, 1, 0x80000000]
    base = rng.integers(0, 32, n).astype(np.uint32)
    base[:8] = [3, 3, 2, 2, 5, 31, 0, 31]
    offset = rng.integers(-34, 35, n).astype(np.int32)
    offset[:8] = [1, -1, 1, -1, 1, -32, 0, 0]
    out = poison(n, np.uint32)
    fns_kernel[2, 128](mask, base, offset, out)
    want = [_fns_reference(int(m), int(b), int(o)) for m, b, o in zip(mask, base, offset)]
    np.testing.assert_array_equal(out, np.array(want, np.uint32))
    assert list(out[:4]) == [3, 3, 3, 1]            # the PTX ISA's own examples
    assert list(out[4:8]) == [0xFFFFFFFF, 0, 0, 31]


# ---------------------------------------------------------------- on the sim device
# CI runs the suite on the cpu device: these run the tests above on the sim device as well
# (its exact rounding in sim/exact.py, its integer intrinsics in sim/intbits.py).
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_sim_rounding_mode_arithmetic_is_exact(rng, rounding_kernels, dtype):
    with simt.use_device("sim") as sim:
        test_rounding_mode_arithmetic_is_exact(sim, rng, rounding_kernels, dtype)


def test_sim_conversions_round_and_saturate(rng, conversion_kernels, request):
    with simt.use_device("sim") as sim:
        test_conversions_round_and_saturate(sim, rng, conversion_kernels, request)


def test_sim_integer_and_bit_intrinsics(rng):
    with simt.use_device("sim") as sim:
        test_integer_intrinsics_against_python(sim, rng)
        test_bit_intrinsics_saturate_and_fast_sincos(sim, rng)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_sim_rounding_special_values_as_the_cpu_device(rng, rounding_kernels, dtype):
    """Signed zeros, infinities, NaN, subnormals and overflow, in every combination of
    three operands: the sim device's results are the cpu device's (its FPU's), bit for bit."""
    kernel, rows = rounding_kernels["f" if dtype == np.float32 else "d"]
    fi = np.finfo(dtype)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, fi.max, fi.smallest_subnormal,
              -fi.tiny, 3.0]
    a = np.array(list(itertools.product(values, repeat=3)), dtype).T.copy()
    a[:, ::7] = rng.standard_normal((3, a[:, ::7].shape[1])) * 1e30    # some finite overflow
    results = []
    for name in ("cpu", "sim"):
        out = poison((len(rows), a.shape[1]), dtype)
        with simt.use_device(name):
            kernel[(a.shape[1] + 127) // 128, 128](a, out)
        results.append(out)
    cpu, sim = results
    bits = np.int32 if dtype == np.float32 else np.int64
    same = (cpu.view(bits) == sim.view(bits)) | (np.isnan(cpu) & np.isnan(sim))
    for r, i in zip(*np.nonzero(~same)):
        pytest.fail(f"{rows[r]}{tuple(a[:, i])}: cpu {cpu[r, i]!r}, sim {sim[r, i]!r}")


@simt.kernel
def exact_math_kernel(x, y, n, out, out_i):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[0, i] = simt.math.nearbyint(x[i])
        out[1, i] = simt.math.logb(x[i])
        out[2, i] = simt.math.nextafter(x[i], y[i])
        out[3, i] = simt.math.ldexp(x[i], n[i])
        out[4, i] = simt.math.scalbn(x[i], n[i])
        f, w = simt.math.modf(x[i])
        out[5, i] = f
        out[6, i] = w
        m, e = simt.math.frexp(x[i])
        out[7, i] = m
        s, c = simt.math.sincos(x[i])
        out[8, i] = s
        out[9, i] = c
        out_i[0, i] = simt.math.ilogb(x[i])
        out_i[1, i] = simt.math.lrint(x[i])
        out_i[2, i] = simt.math.llround(x[i])
        out_i[3, i] = e


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_sim_math_functions_with_exact_results_as_the_cpu_device(rng, dtype):
    """The math functions whose results are exact (or, sincos, rounded from float64) on
    the sim device: the cpu device's bits, special values and out-of-range included."""
    n = 256
    fi = np.finfo(dtype)
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(dtype)
    x[:12] = [0, -0.0, np.inf, -np.inf, np.nan, 2.5, -2.5, 0.5, fi.smallest_subnormal,
              fi.max, -fi.max, 1e30]
    y = rng.standard_normal(n).astype(dtype)
    y[:3] = [np.inf, -1, np.nan]
    e = rng.integers(-300, 300, n).astype(np.int32)
    e[:4] = [2 ** 31 - 1, -2 ** 31, 1000, -1000]
    results = []
    for name in ("cpu", "sim"):
        out, out_i = poison((10, n), dtype), poison((4, n), np.int64)
        with simt.use_device(name):
            exact_math_kernel[2, 128](x, y, e, out, out_i)
        results.append((out, out_i))
    (cpu, cpu_i), (sim, sim_i) = results
    bits = np.int32 if dtype == np.float32 else np.int64
    same = (cpu.view(bits) == sim.view(bits)) | (np.isnan(cpu) & np.isnan(sim))
    assert same[:8].all(), [(r, x[i], cpu[r, i], sim[r, i]) for r, i in zip(*np.nonzero(~same[:8]))]
    np.testing.assert_array_equal(cpu_i, sim_i)
    # sin and cos: float64's rounded on the sim, float32 libm's on the cpu: one ulp apart
    finite = np.isfinite(x)
    for row, fn in ((8, np.sin), (9, np.cos)):
        want = fn(x[finite].astype(np.float64))
        np.testing.assert_allclose(sim[row][finite], want, rtol=np.finfo(dtype).eps, atol=0)
