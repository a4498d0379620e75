"""CUDA's integer intrinsics (guide B.15 and the CUDA Math API's integer intrinsics):
bit counts, byte permutes, funnel shifts, high halves of products, averages, sums of
absolute differences and dot products of packed bytes. Lowerings: compiler/mathlower.py
(and backends/cuda/lower/math.py for those the GPU has an instruction for)."""
import numpy as np

from ..ir import types as T
from .mathbase import make, signature_rule


def _int_unary(entry, name, result=None, bits=None):
    """A 32- or 64-bit integer by its argument's type (``bits`` forces the width)."""
    entry.arity = 1

    def build(fc, args, kwargs, loc):
        x = fc.expr(fc.one_arg(args, name, loc), loc)
        if not isinstance(x.type, T.Scalar) or x.type.kind not in "iub":
            fc.fail(loc, f"{entry.python_name} needs an integer, got {x.type}")
        t = x.type.strong() if x.type.kind in "iu" and not x.type.weak else T.INT32
        if bits:
            t = T.Scalar(np.dtype(f"{'u' if t.kind == 'u' else ''}int{bits}"))
        if t.bits < 32:
            t = T.INT32
        return entry.node(result or t, loc, [fc.cast(x, t, loc)])
    return build


def _int_binary(entry, name, kind=None):
    entry.arity = 2

    def build(fc, args, kwargs, loc):
        if len(args) != 2:
            fc.fail(loc, f"{entry.python_name} takes 2 arguments, got {len(args)}")
        a, b = (fc.expr(v, loc) for v in args)
        t = T.promote(a.type, b.type).strong()
        if kind == "24":
            t = T.UINT32 if name.startswith("u") else T.INT32
        elif t.bits < 32 or t.kind not in "iu":
            t = T.INT32
        if name.startswith("u") and t.kind == "i":
            t = T.Scalar(np.dtype(f"uint{t.bits}"))
        return entry.node(t, loc, [fc.cast(a, t, loc), fc.cast(b, t, loc)])
    return build


def _packed(entry, name):
    """__dp4a/__dp2a: the unsigned version when every argument is unsigned, else signed."""
    entry.arity = 3

    def build(fc, args, kwargs, loc):
        if len(args) != 3:
            fc.fail(loc, f"{entry.python_name} takes 3 arguments, got {len(args)}")
        values = [fc.expr(v, loc) for v in args]
        unsigned = all(v.type.kind == "u" and not v.type.weak for v in values)
        t = T.UINT32 if unsigned else T.INT32
        return entry.node(t, loc, [fc.cast(v, t, loc) for v in values])
    return build


def _entry(name, doc, rule, *rule_args):
    return make("int." + name, doc, rule, *rule_args, python_name="simt.math." + name)


ENTRIES = [
    _entry("popc", "popc(x): the number of set bits of a 32- or 64-bit integer (__popc, "
           "__popcll), as int32.", _int_unary, "popc", T.INT32),
    _entry("clz", "clz(x): the number of leading zero bits (__clz, __clzll), as int32.",
           _int_unary, "clz", T.INT32),
    _entry("ffs", "ffs(x): the position (from 1) of the lowest set bit, 0 for x == 0 (__ffs, "
           "__ffsll), as int32.", _int_unary, "ffs", T.INT32),
    _entry("brev", "brev(x): the bits of x in reverse order (__brev, __brevll).",
           _int_unary, "brev"),
    _entry("popcll", "popcll(x): __popcll, the set bits of x as a 64-bit integer.",
           _int_unary, "popcll", T.INT32, 64),
    _entry("clzll", "clzll(x): __clzll, leading zeros of x as a 64-bit integer.",
           _int_unary, "clzll", T.INT32, 64),
    _entry("ffsll", "ffsll(x): __ffsll, the lowest set bit of x as a 64-bit integer.",
           _int_unary, "ffsll", T.INT32, 64),
    _entry("brevll", "brevll(x): __brevll, the 64 bits of x reversed.", _int_unary, "brevll",
           None, 64),
    _entry("mul24", "mul24(x, y): __mul24, the product of the low 24 bits (signed), low 32 "
           "bits of it.", _int_binary, "mul24", "24"),
    _entry("umul24", "umul24(x, y): __umul24, the product of the low 24 bits (unsigned).",
           _int_binary, "umul24", "24"),
    _entry("mulhi", "mulhi(x, y): __mulhi (__mul64hi for 64-bit ints), the high half of the "
           "full product.", _int_binary, "mulhi"),
    _entry("umulhi", "umulhi(x, y): __umulhi (__umul64hi for 64-bit ints), the high half of "
           "the full unsigned product.", _int_binary, "umulhi"),
    _entry("mul64hi", "mul64hi(x, y): __mul64hi, the high 64 bits of the 128-bit product.",
           signature_rule, "mul64hi", "ll>l"),
    _entry("umul64hi", "umul64hi(x, y): __umul64hi, the high 64 bits of the unsigned "
           "128-bit product.", signature_rule, "umul64hi", "UU>U"),
    _entry("byte_perm", "byte_perm(x, y, s): __byte_perm, byte i of the result is byte "
           "(s >> 4*i) & 7 of the 8 bytes y:x (x the low word).", signature_rule, "byte_perm",
           "uuu>u"),
    _entry("funnelshift_l", "funnelshift_l(lo, hi, shift): __funnelshift_l, the high 32 bits "
           "of hi:lo << (shift & 31).", signature_rule, "funnelshift_l", "uuu>u"),
    _entry("funnelshift_lc", "funnelshift_lc(lo, hi, shift): __funnelshift_lc, the high 32 "
           "bits of hi:lo << min(shift, 32).", signature_rule, "funnelshift_lc", "uuu>u"),
    _entry("funnelshift_r", "funnelshift_r(lo, hi, shift): __funnelshift_r, the low 32 bits "
           "of hi:lo >> (shift & 31).", signature_rule, "funnelshift_r", "uuu>u"),
    _entry("funnelshift_rc", "funnelshift_rc(lo, hi, shift): __funnelshift_rc, the low 32 "
           "bits of hi:lo >> min(shift, 32).", signature_rule, "funnelshift_rc", "uuu>u"),
    _entry("fns", "fns(mask, base, offset): __fns, the position of the offset-th set bit of "
           "mask counted from bit base (base taken modulo 32) upwards for offset > 0, downwards "
           "for offset < 0; offset 0 gives base if that bit is set. 0xFFFFFFFF when there is "
           "none.", signature_rule, "fns", "uui>u"),
    _entry("sad", "sad(x, y, z): __sad, |x - y| + z for int32 x, y and uint32 z.",
           signature_rule, "sad", "iiu>u"),
    _entry("usad", "usad(x, y, z): __usad, |x - y| + z on uint32.", signature_rule, "usad",
           "uuu>u"),
    _entry("hadd", "hadd(x, y): __hadd, (x + y) >> 1 on int32 without overflow.",
           signature_rule, "hadd", "ii>i"),
    _entry("rhadd", "rhadd(x, y): __rhadd, (x + y + 1) >> 1 on int32 without overflow.",
           signature_rule, "rhadd", "ii>i"),
    _entry("uhadd", "uhadd(x, y): __uhadd, (x + y) >> 1 on uint32 without overflow.",
           signature_rule, "uhadd", "uu>u"),
    _entry("urhadd", "urhadd(x, y): __urhadd, (x + y + 1) >> 1 on uint32 without overflow.",
           signature_rule, "urhadd", "uu>u"),
    _entry("dp4a", "dp4a(a, b, c): __dp4a, the dot product of the four bytes of a and b "
           "plus c (unsigned bytes when all three are uint32, else signed).", _packed, "dp4a"),
    _entry("dp2a_lo", "dp2a_lo(a, b, c): __dp2a_lo, the two 16-bit halves of a times the low "
           "two bytes of b, plus c.", _packed, "dp2a_lo"),
    _entry("dp2a_hi", "dp2a_hi(a, b, c): __dp2a_hi, the two 16-bit halves of a times the high "
           "two bytes of b, plus c.", _packed, "dp2a_hi"),
]

# SIMD video intrinsics (guide B.34): unsigned bytes (``4``) or halfwords (``2``) of uint32
# operands, each lane on its own; add and subtract wrap around within the lane, as __vadd4
# and __vsub4 do and PTX's vadd4 without .sat (the saturating and signed forms are not
# offered).
SIMD_OPS = {"vadd": "the sum, wrapping around", "vsub": "a - b, wrapping around",
            "vabsdiff": "|a - b|", "vmax": "the larger", "vmin": "the smaller"}
SIMD_LANES = {"4": "byte", "2": "16-bit halfword"}
SIMD_ENTRIES = [
    _entry(op + n, f"{op}{n}(a, b): __{op}{n}, per unsigned {lane} of the uint32 operands "
           f"{what} (PTX {op}{n}.u32.u32.u32).", signature_rule, op + n, "uu>u")
    for n, lane in SIMD_LANES.items() for op, what in SIMD_OPS.items()]
ENTRIES += SIMD_ENTRIES
BY_NAME = {e.python_name.rsplit(".", 1)[1]: e for e in ENTRIES}     # popc -> its entry
int_abs = make("int.abs", "abs(x) of an integer (built by abs()).", lambda entry: None,
               public=False)
