"""Arithmetic and conversions in a chosen rounding mode on the sim device (__fadd_rz,
__dsqrt_ru, __float2int_rd, __ull2float_rz ...), exact as the GPU's instructions are:
the exact result as a Python Fraction (a square root as one bracketed by a sticky bit),
rounded to float32 or float64 by the mode. Results are Python floats (a float32 one is
exact in a double) and ints; special values (NaN, infinities, signed zeros) follow
IEEE-754 as the CPU device's FPU gives them (backends/cpu/rounding.py)."""
import math
from fractions import Fraction

import numpy as np

# float format -> (significand bits, least normal exponent, greatest exponent)
FORMATS = {"F": (24, -126, 127), "D": (53, -1022, 1023)}
_INF = math.inf


def round_fraction(q, fmt, mode):
    """Fraction q (nonzero) rounded to float format fmt ('F' or 'D') by mode (rn rz ru rd)."""
    p, emin, emax = FORMATS[fmt]
    negative = q < 0
    mag = -q if negative else q
    num, den = mag.numerator, mag.denominator
    e = num.bit_length() - den.bit_length()      # 2**e <= mag < 2**(e+2)
    if (num << max(0, -e)) < (den << max(0, e)):
        e -= 1                                   # now 2**e <= mag < 2**(e+1)
    quantum = max(e, emin) - (p - 1)             # the value of the last significand bit
    if quantum >= 0:
        n, rest = divmod(num, den << quantum)
        rest = Fraction(rest, den << quantum)
    else:
        n, rest = divmod(num << -quantum, den)
        rest = Fraction(rest, den)
    if rest:
        if mode == "rn":
            up = rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n & 1)
        else:
            up = mode == ("rd" if negative else "ru")
        n += up
    if n.bit_length() + quantum > emax + 1:      # beyond the greatest finite value
        toward_inf = mode == "rn" or mode == ("rd" if negative else "ru")
        value = _INF if toward_inf else math.ldexp((1 << p) - 1, emax - p + 1)
    else:
        value = math.ldexp(n, quantum)
    return -value if negative else value


def _zero_sum(x, y, mode):
    """The sign of an exact zero sum x + y (IEEE: -0 only for -0 + -0, or rounding down)."""
    if x == 0 and y == 0 and math.copysign(1, x) == math.copysign(1, y):
        return x
    return -0.0 if mode == "rd" else 0.0


def _sqrt_fraction(q, fmt):
    """sqrt(q) of a positive Fraction, exactly, or a value strictly between two numbers
    2**-k apart that bracket it (no rounding boundary of fmt lies between them), which
    rounds as the square root does in every mode."""
    p, emin, _ = FORMATS[fmt]
    k = p - emin + 4 + max(0, q.denominator.bit_length() - q.numerator.bit_length())
    scaled = q * 4 ** k
    whole = scaled.numerator // scaled.denominator
    root = math.isqrt(whole)
    if root * root == scaled:
        return Fraction(root, 2 ** k)
    return Fraction(2 * root + 1, 2 ** (k + 1))


def arith(op, mode, fmt, *args):
    """__{f,d}{add,sub,mul,div,fma,rcp,sqrt}_{mode} and __frsqrt_rn on Python floats."""
    if op == "rcp":
        op, args = "div", (1.0,) + args
    if not all(math.isfinite(a) for a in args):
        return _special(op, args)
    if op == "sqrt" or op == "rsqrt":
        x = args[0]
        if x < 0:
            return math.nan
        if x == 0:
            return x if op == "sqrt" else math.copysign(_INF, x)
        q = Fraction(x) if op == "sqrt" else 1 / Fraction(x)
        return round_fraction(_sqrt_fraction(q, fmt), fmt, mode)
    a = [Fraction(v) for v in args]
    if op == "div":
        if args[1] == 0:
            if args[0] == 0:
                return math.nan
            return math.copysign(_INF, args[0]) * math.copysign(1, args[1])
        q = a[0] / a[1]
        zero = math.copysign(0.0, args[0]) * math.copysign(1, args[1])
    elif op == "mul":
        q = a[0] * a[1]
        zero = math.copysign(0.0, args[0]) * math.copysign(1, args[1])
    elif op == "fma":
        q = a[0] * a[1] + a[2]
        product = math.copysign(0.0, args[0]) * math.copysign(1, args[1])
        zero = _zero_sum(product if a[0] * a[1] == 0 else 1.0, args[2], mode)
    else:
        y = args[1] if op == "add" else -args[1]
        q = a[0] + Fraction(y)
        zero = _zero_sum(args[0], y, mode)
    return zero if q == 0 else round_fraction(q, fmt, mode)


def _special(op, args):
    """An operation with a NaN or an infinity among its operands: Python's float
    arithmetic gives IEEE's answer (no rounding is involved) where it does not raise."""
    x = args[0]
    if op == "add":
        return x + args[1]
    if op == "sub":
        return x - args[1]
    if op == "mul":
        return x * args[1]
    if op == "fma":                              # a finite product is exact: z decides
        y, z = args[1], args[2]
        return z if math.isfinite(x) and math.isfinite(y) else x * y + z
    if op == "div":
        y = args[1]
        if y == 0:
            return math.nan if x != x else math.copysign(_INF, x) * math.copysign(1, y)
        return x / y
    if op == "sqrt":
        return x if x != x or x > 0 else math.nan
    return 0.0 if x > 0 else math.nan            # rsqrt of inf, -inf, NaN


def to_int(x, mode, bits, signed, nan_sign):
    """A float rounded to an integer by mode and saturated to the type (backends/cpu/
    rounding.py's convert): NaN gives the sign bit alone when ``nan_sign``, else 0."""
    if x != x:
        return -(1 << (bits - 1)) if nan_sign and signed else (1 << (bits - 1)) if nan_sign \
            else 0
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if math.isinf(x):
        return hi if x > 0 else lo
    if mode == "rn":
        n = round(x)                             # ties to even
    else:
        n = {"rz": math.trunc, "ru": math.ceil, "rd": math.floor}[mode](x)
    return min(max(n, lo), hi)


def to_float(x, mode, fmt):
    """An int, or a double to float ('F'), rounded to fmt by mode."""
    if isinstance(x, float) and not math.isfinite(x):
        return x
    if x == 0:
        return x if isinstance(x, float) else 0.0
    return round_fraction(Fraction(x), fmt, mode)


# ---------------------------------------------------------------- exact math functions
_INT64_MIN = -(1 << 63)


def ldexp(x, n, fmt):
    """x * 2**n rounded once (to nearest) to fmt; n beyond any float's range is clamped."""
    if not math.isfinite(x) or x == 0:
        return x
    n = max(-2200, min(2200, n))
    return round_fraction(Fraction(x) * Fraction(2) ** n, fmt, "rn")


def logb(x):
    """The unbiased exponent of x as a float (subnormals: their true exponent)."""
    if x != x or math.isinf(x):
        return abs(x)
    if x == 0:
        return -_INF
    return float(math.frexp(x)[1] - 1)


def ilogb(x):
    """The unbiased exponent of x as an int32: 0 and NaN give INT_MIN, infinities INT_MAX."""
    if x != x or x == 0:
        return -(1 << 31)
    if math.isinf(x):
        return (1 << 31) - 1
    return math.frexp(x)[1] - 1


def to_int64(x, mode):
    """lrint (mode 'rn', ties to even) and lround ('away'): NaN and values out of range
    give INT64_MIN, as the CPU's cvtsd2si does."""
    if not math.isfinite(x):
        return _INT64_MIN
    n = round(x) if mode == "rn" else int(math.copysign(math.floor(abs(x) + 0.5), x))
    return n if -(1 << 63) <= n < (1 << 63) else _INT64_MIN


def nextafter(x, y, fmt):
    """The next float of fmt after x toward y."""
    if x != x or y != y:
        return math.nan
    if fmt == "D":
        return math.nextafter(x, y)
    return float(np.nextafter(np.float32(x), np.float32(y)))
