"""The integer intrinsics of the sim device that values.py's bit counts do not cover:
byte permutes, funnel shifts, sums of absolute differences, halving adds and dot products
of packed bytes, on Python ints, with the semantics of compiler/mathlower.py's lowerings
(the CPU device's and the GPU's). Arguments arrive in their type's range (int32 signed,
uint32 not negative); results are brought into the result's."""

import struct

M32 = 0xFFFFFFFF
_D, _Q = struct.Struct("<d"), struct.Struct("<Q")


def _i32(x):
    return ((x & M32) ^ 0x80000000) - 0x80000000


def byte_perm(x, y, s):
    """Byte i of the result is byte (s >> 4i) & 7 of the 8 bytes y:x."""
    both = (y & M32) << 32 | (x & M32)
    result = 0
    for i in range(4):
        sel = (s >> 4 * i) & 7
        result |= ((both >> 8 * sel) & 0xFF) << 8 * i
    return result


def funnelshift(name, lo, hi, shift):
    """__funnelshift_l/r take the shift modulo 32; the clamp forms (lc, rc) give lo (left)
    or hi (right) for shifts of 32 or more."""
    left = name.startswith("funnelshift_l")
    shift &= M32
    if name.endswith("c") and shift >= 32:
        return lo & M32 if left else hi & M32
    both = (hi & M32) << 32 | (lo & M32)
    k = shift & 31
    return ((both << k) >> 32) & M32 if left else (both >> k) & M32


def sad(x, y, z):
    """|x - y| + z, wrapping at 32 bits (x, y signed for __sad, unsigned for __usad)."""
    return (abs(x - y) + z) & M32


def halving_add(x, y, rounded, signed):
    """(x + y [+ 1]) >> 1 without overflow."""
    total = (x + y + rounded) >> 1
    return _i32(total) if signed else total & M32


def dot(name, unsigned, a, b, c):
    """__dp4a: four byte products; __dp2a_lo/hi: the 16-bit halves of a times bytes 0-1
    (lo) or 2-3 (hi) of b; fields sign-extended unless every argument is unsigned."""
    def part(v, index, bits):
        field = (v >> index * bits) & ((1 << bits) - 1)
        if not unsigned and field >> (bits - 1):
            field -= 1 << bits
        return field
    if name == "dp4a":
        pairs = [(part(a, i, 8), part(b, i, 8)) for i in range(4)]
    else:
        first = 2 if name == "dp2a_hi" else 0
        pairs = [(part(a, i, 16), part(b, first + i, 8)) for i in range(2)]
    total = c + sum(p * q for p, q in pairs)
    return total & M32 if unsigned else _i32(total)


def saturate(x):
    """__saturatef: x clamped to [0, 1]; NaN gives 0."""
    return (x if x < 1.0 else 1.0) if x > 0.0 else 0.0


def double_half(x, high):
    """__double2hiint / __double2loint: a 32-bit half of a float64's bits, as int32."""
    word = _Q.unpack(_D.pack(x))[0]
    return _i32(word >> 32 if high else word)


def halves_double(hi, lo):
    """__hiloint2double: the float64 whose high and low words are hi and lo."""
    return _D.unpack(_Q.pack((hi & M32) << 32 | (lo & M32)))[0]
