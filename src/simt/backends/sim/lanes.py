"""Vector values (float4, int2, half2, bfloat162 ...) and the float16/bfloat16 intrinsics on
the sim device, with the CPU device's semantics (lang/vectors.py, lang/half.py).

A vector is a Python tuple of its components, each held as a scalar of its type is (a
float16 a rounded float, a bfloat16 its 16 bits). bfloat16 arithmetic computes in float32
and rounds once, as lang/bfloat16.py does; the half math functions compute in float32 and
round to the argument's type. Generated code calls these as ``_k_h``."""
import math
import struct
from fractions import Fraction

import numpy as np

from .values import MATH, bf16_decode, bf16_encode, f16, f32, truediv

_U16, _I16 = struct.Struct("<H"), struct.Struct("<h")
_F64, _U64 = struct.Struct("<d"), struct.Struct("<Q")


# ---------------------------------------------------------------- float16 / bfloat16 codecs
def widen(x, bf16):
    """A float16 or bfloat16 value as the Python float it is."""
    return bf16_decode(x) if bf16 else x


def narrow(x, bf16):
    """A float32 value rounded to float16 (a float) or bfloat16 (its bits)."""
    return bf16_encode(x) if bf16 else f16(x)


def half_bits(x):
    """The 16 bits of a float16 (``__half_as_ushort``; NumPy keeps a NaN's payload)."""
    return int(np.float16(x).view(np.uint16))


def half_from_bits(bits):
    """The float16 of 16 bits (``__ushort_as_half``)."""
    return float(np.uint16(bits & 0xFFFF).view(np.float16))


def as_short(bits):
    return _I16.unpack(_U16.pack(bits & 0xFFFF))[0]


# ---------------------------------------------------------------- float32 arithmetic
def fma32(x, y, z):
    """x * y + z rounded once to float32: the exact value rounded to double to odd (53 bits
    >= 2 * 24 + 2, so rounding that to float32 rounds once)."""
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        return f32(x * y + z)
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    d = float(exact)
    if Fraction(d) != exact:                  # inexact: toward zero, then the last bit set
        if abs(Fraction(d)) > abs(exact):
            d = math.nextafter(d, 0.0)
        d = _F64.unpack(_U64.pack(_U64.unpack(_F64.pack(d))[0] | 1))[0]
    return f32(d)


def op32(op, x, y):
    """x op y in float32 (op: add, sub, mul, truediv)."""
    if op == "add":
        return f32(x + y)
    if op == "sub":
        return f32(x - y)
    if op == "mul":
        return f32(x * y)
    return f32(truediv(x, y))


def hfma(x, y, z, bf16):
    """__hfma on the CPU device: a float32 fma, rounded to the type."""
    return narrow(fma32(widen(x, bf16), widen(y, bf16), widen(z, bf16)), bf16)


def hneg(x, bf16):
    return x ^ 0x8000 if bf16 else -x


def habs(x, bf16):
    return x & 0x7FFF if bf16 else abs(x)


def hminmax(name, x, y, bf16):
    """hmax/hmin: a NaN loses to a number (LLVM's maxnum/minnum on the float32 values)."""
    a, b = widen(x, bf16), widen(y, bf16)
    if a != a:
        return y
    if b != b:
        return x
    if name == "hmax":
        return x if a >= b else y
    return x if a <= b else y


def hmath(name, x, bf16):
    """A half math function: computed in float32, rounded to the argument's type."""
    v = widen(x, bf16)
    if name == "rcp":
        r = f32(truediv(1.0, v))
    elif name == "rsqrt":
        r = f32(truediv(1.0, f32(MATH["sqrt"](v))))
    else:
        r = f32(MATH[name](v))
    return narrow(r, bf16)


def hisnan(x, bf16):
    return math.isnan(widen(x, bf16))


def hisinf(x, bf16):
    return math.isinf(widen(x, bf16))


# ---------------------------------------------------------------- vectors
def with_component(v, i, x):
    """v with component i replaced by x."""
    return v[:i] + (x,) + v[i + 1:]


def bf16_arith(op, xs, ys):
    """bfloat16 vectors' + - * /: each lane in float32, rounded once."""
    return tuple(bf16_encode(op32(op, bf16_decode(x), bf16_decode(y))) for x, y in zip(xs, ys))


def fdot(xs, ys, rnd):
    """helper_math's dot of float vectors: the products, then their sum in order, each
    operation rounded by ``rnd`` (float32 or float64's identity)."""
    total = rnd(xs[0] * ys[0])
    for x, y in zip(xs[1:], ys[1:]):
        total = rnd(total + rnd(x * y))
    return total


def idot(xs, ys, wrap):
    return wrap(sum(wrap(x * y) for x, y in zip(xs, ys)))


def length(v, rnd):
    return rnd(MATH["sqrt"](fdot(v, v, rnd)))


def normalize(v, rnd):
    norm = length(v, rnd)
    return tuple(rnd(truediv(x, norm)) for x in v)


def cross(a, b, rnd):
    (ax, ay, az), (bx, by, bz) = a, b
    return (rnd(rnd(ay * bz) - rnd(az * by)), rnd(rnd(az * bx) - rnd(ax * bz)),
            rnd(rnd(ax * by) - rnd(ay * bx)))


def identity(x):
    return x
