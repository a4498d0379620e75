"""Scalar semantics of the sim device: the helpers generated kernels call so that every
dtype wraps, rounds and converts exactly as the compiled devices do (compiler/ops.py):
wrapping integers, Python's // and % with no trap on division by zero, saturating float
to int conversion, float32 and float16 rounding after each operation.

Values are Python ints, floats, complexes and bools; a float32 is a Python float that
``f32`` rounded. Launches run one at a time (device.py), so the rounding buffers are
module state."""
import math
import re
import struct

import numpy as np

from ...lang.float8 import decode_value as fp8_decode, encode_value as fp8_encode  # noqa: F401

_F32 = memoryview(bytearray(4)).cast("f")
_F16 = struct.Struct("e")
NAN = math.nan
INF = math.inf


def f32(x):
    """x rounded to float32 (to nearest even; overflow gives inf)."""
    _F32[0] = x
    return _F32[0]


def f16(x):
    """x rounded to float16, through float32 rounded to odd as compiler/ops.py does."""
    try:
        return _F16.unpack(_F16.pack(float(np.float16(x))))[0]
    except OverflowError:
        return math.copysign(INF, x)


def c64(z):
    """A complex64 value: both parts rounded to float32."""
    return complex(f32(z.real), f32(z.imag))


_U32, _F32BITS = struct.Struct("<I"), struct.Struct("<f")


def bf16_decode(code):
    """A bfloat16 (its 16 bits, as the sim holds it) as a Python float, exactly."""
    return _F32BITS.unpack(_U32.pack((code & 0xFFFF) << 16))[0]


def bf16_encode(x):
    """A number rounded to bfloat16 (its bits) as compiler/ops.py does: to float32 rounded
    to odd (exact for a float32), then to nearest even; NaN stays a quiet NaN."""
    x = float(x)
    r = f32(x)
    bits = _U32.unpack(_F32BITS.pack(r))[0]
    if r != x and x == x:                      # inexact: toward zero, then odd
        if abs(r) > abs(x):
            bits -= 1
        bits |= 1
    if x != x:
        return (bits >> 16) | 0x40
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


ROUND = {"float32": f32, "float16": f16, "complex64": c64}


def wrapper(dtype):
    """The function that brings a Python int into the range of integer ``dtype``."""
    bits = dtype.itemsize * 8
    mask = (1 << bits) - 1
    if dtype.kind == "u":
        return lambda x: x & mask
    half = 1 << (bits - 1)
    return lambda x: ((x + half) & mask) - half


def int_limits(dtype):
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def float_to_int(lo, hi):
    """Saturating conversion (NaN gives 0), as LLVM's fpto[su]i.sat."""
    def convert(x):
        if x != x:
            return 0
        if x <= lo:
            return lo
        if x >= hi:
            return hi
        return int(x)
    return convert


def int_to_f32(x):
    """An int rounded once to float32 (float(x) would round twice above 2**53)."""
    return f32(x) if -(1 << 53) <= x <= 1 << 53 else float(np.float32(x))


def int_floordiv(wrap):
    def floordiv(x, y):
        if y == 0:
            return -1
        return wrap(x // y)         # MIN // -1 wraps
    return floordiv


def int_mod(x, y):
    return x if y == 0 else x % y


def shifter(bits, signed, wrap):
    """lshift and rshift as compiler/ops.py: an amount >= bits (unsigned compare) gives 0,
    or the sign for a signed right shift."""
    mask = (1 << bits) - 1

    def lshift(x, y):
        return 0 if y & mask >= bits or y < 0 else wrap(x << y)

    def rshift(x, y):
        if y < 0 or y >= bits:
            return (-1 if x < 0 else 0) if signed else 0
        return x >> y
    return lshift, rshift


def int_pow(wrap):
    def power(x, y):
        if y < 0:
            return 1 if x == 1 else ((-1 if y & 1 else 1) if x == -1 else 0)
        return wrap(pow(x, y, 1 << 64)) if y > 64 else wrap(x ** y)
    return power


def truediv(x, y):
    try:
        return x / y
    except ZeroDivisionError:
        if x != x or x == 0:
            return NAN
        return math.copysign(INF, x) * math.copysign(1.0, y)


def float_floordiv(x, y):
    try:
        return x // y
    except ZeroDivisionError:
        return truediv(x, y)


def float_mod(x, y):
    try:
        return x % y
    except ZeroDivisionError:
        return NAN


def float_pow(x, y):
    try:
        return math.pow(x, y)
    except (ValueError, OverflowError):
        return float(np.power(np.float64(x), np.float64(y)))


def complex_div(x, y):
    re, im = y.real, y.imag
    den = re * re + im * im
    return complex(truediv(x.real * re + x.imag * im, den), truediv(x.imag * re - x.real * im, den))


def complex_pow(x, y):
    """x ** y as the compiled devices compute it (compiler/ops._complex_pow)."""
    if x == 0:
        return complex(1.0 if y == 0 else 0.0, 0.0)
    with np.errstate(all="ignore"):
        lr, li = np.log(np.hypot(x.real, x.imag)), np.arctan2(x.imag, x.real)
        er, ei = y.real * lr - y.imag * li, y.real * li + y.imag * lr
        mag = np.exp(er)
        return complex(mag * np.cos(ei), mag * np.sin(ei))


def safe(fn, ufunc):
    """A math function with IEEE results where Python's raises (sqrt(-1) is NaN)."""
    def call(*args):
        try:
            return fn(*args)
        except (ValueError, OverflowError, ZeroDivisionError):
            with np.errstate(all="ignore"):
                return float(ufunc(*[np.float64(a) for a in args]))
    return call


def _rint(x):
    return float(np.rint(x)) if math.isfinite(x) else x


def _round_half_away(x):
    if not math.isfinite(x):
        return x
    return math.copysign(math.floor(abs(x) + 0.5), x)


MATH = {
    "sqrt": safe(math.sqrt, np.sqrt), "exp": safe(math.exp, np.exp), "log": safe(math.log, np.log),
    "log2": safe(math.log2, np.log2), "log10": safe(math.log10, np.log10),
    "log1p": safe(math.log1p, np.log1p), "expm1": safe(math.expm1, np.expm1),
    "sin": safe(math.sin, np.sin), "cos": safe(math.cos, np.cos), "tan": safe(math.tan, np.tan),
    "asin": safe(math.asin, np.arcsin), "acos": safe(math.acos, np.arccos),
    "atan": math.atan, "sinh": safe(math.sinh, np.sinh), "cosh": safe(math.cosh, np.cosh),
    "tanh": math.tanh, "asinh": math.asinh, "acosh": safe(math.acosh, np.arccosh),
    "atanh": safe(math.atanh, np.arctanh), "erf": math.erf, "erfc": math.erfc,
    "lgamma": safe(math.lgamma, lambda x: np.float64(np.inf)),
    "tgamma": safe(math.gamma, lambda x: np.float64(np.nan if x < 0 or x != x else np.inf)),
    "cbrt": safe(lambda x: math.copysign(abs(x) ** (1.0 / 3.0), x) if math.isfinite(x) and x
                 else x, np.cbrt),
    "exp2": safe(lambda x: 2.0 ** x, np.exp2), "exp10": safe(lambda x: 10.0 ** x,
                                                                lambda x: np.power(10.0, x)),
    "rsqrt": safe(lambda x: 1.0 / math.sqrt(x), lambda x: 1.0 / np.sqrt(x)),
    "fabs": abs, "rint": _rint, "floor": safe(lambda x: float(math.floor(x)), np.floor),
    "ceil": safe(lambda x: float(math.ceil(x)), np.ceil),
    "trunc": safe(lambda x: float(math.trunc(x)), np.trunc), "round": _round_half_away,
    "atan2": math.atan2, "pow": float_pow, "hypot": math.hypot, "copysign": math.copysign,
    "fmod": safe(math.fmod, np.fmod), "fmin": lambda x, y: float(np.fmin(x, y)),
    "fmax": lambda x, y: float(np.fmax(x, y)), "fdim": lambda x, y: x - y if x > y else
    (0.0 if x == x and y == y else NAN), "remainder": safe(math.remainder, np.remainder),
    "isnan": math.isnan, "isinf": math.isinf, "isfinite": math.isfinite,
    "signbit": lambda x: math.copysign(1.0, x) < 0, "fma": lambda x, y, z: _fma(x, y, z),
    "div": truediv,
}


def _fma(x, y, z):
    """x * y + z rounded once (exact through Python's rationals where finite)."""
    if math.isfinite(x) and math.isfinite(y) and math.isfinite(z):
        from fractions import Fraction
        return float(Fraction(x) * Fraction(y) + Fraction(z))
    return x * y + z


def popc(x, bits):
    return bin(x & ((1 << bits) - 1)).count("1")


def clz(x, bits):
    x &= (1 << bits) - 1
    return bits - x.bit_length()


def ffs(x, bits):
    x &= (1 << bits) - 1
    return (x & -x).bit_length()


def brev(x, bits, wrap):
    x &= (1 << bits) - 1
    return wrap(int(format(x, f"0{bits}b")[::-1], 2))


def mulhi(x, y, bits, wrap):
    return wrap((x * y) >> bits)


def mul24(x, y, signed, wrap):
    if signed:
        x = ((x & 0xFFFFFF) ^ 0x800000) - 0x800000
        y = ((y & 0xFFFFFF) ^ 0x800000) - 0x800000
    else:
        x, y = x & 0xFFFFFF, y & 0xFFFFFF
    return wrap(x * y)


def fns(mask, n):
    """Position of the n-th (from 0) set bit of a uint32 mask, or -1."""
    for pos in range(32):
        if mask >> pos & 1:
            if n == 0:
                return pos
            n -= 1
    return -1


def fns_from(mask, base, offset):
    """__fns (PTX fns.b32): the |offset|-th set bit of a uint32 mask from bit base up
    (offset > 0) or down (offset < 0); offset 0: base if set; else 0xFFFFFFFF."""
    base &= 31
    if offset == 0:
        return base if mask >> base & 1 else 0xFFFFFFFF
    step, count = (1 if offset > 0 else -1), abs(offset)
    for pos in range(base, 32 if step > 0 else -1, step):
        if mask >> pos & 1:
            count -= 1
            if count == 0:
                return pos
    return 0xFFFFFFFF


SIMD = {"vadd": lambda p, q: p + q, "vsub": lambda p, q: p - q,
        "vabsdiff": lambda p, q: abs(p - q), "vmax": max, "vmin": min}


def simd(op, width, a, b):
    """__vadd4 ... __vmin2: ``op`` on each unsigned ``width``-bit lane of uint32 a and b,
    wrapping within the lane."""
    mask, result = (1 << width) - 1, 0
    for shift in range(0, 32, width):
        lane = SIMD[op](a >> shift & mask, b >> shift & mask)
        result |= (lane & mask) << shift
    return result


def bitcast(value, src, dst):
    return np.array(value, src).view(dst).item()


def printf(fmt, args):
    """A kernel's print: the C format the front end made, done by Python's %."""
    text = fmt.replace("%lld", "%d").replace("%llu", "%d") % tuple(args)
    print(text, end="", flush=True)


_CONVERSION = re.compile(r"%([-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*)?)?)(?:hh|h|ll|l|z|j|t)?"
                         r"([diouxXcfFeEgGaAs%])")


def cprintf(fmt, slots, values):
    """simt.printf: C's format done by Python's % (lengths dropped, %a as float.hex);
    returns the number of values, as CUDA's printf."""
    values = iter(values)
    items = [text if kind == "str" else next(values) for kind, text in slots]
    hexes = []

    def convert(m):
        flags, kind = m.groups()
        if kind in "aA":
            hexes.append(len(hexes))
            return "%" + flags + "s"
        return "%" + flags + {"i": "d", "u": "d", "F": "f"}.get(kind, kind)
    text = _CONVERSION.sub(convert, fmt)
    if hexes:
        items = [float(v).hex() if isinstance(v, float) else v for v in items]
    print(text % tuple(items), end="", flush=True)
    return len(slots)
