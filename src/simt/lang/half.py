"""cuda_fp16 and cuda_bf16 in kernels: ``simt.bfloat16``, ``simt.half2`` / ``simt.bfloat162``
(vector types, lang/vectors.py), CUDA's conversions, paired arithmetic and half math.

float16 is a native type (LLVM's half: ``add.f16``, ``fma.rn.f16x2`` on sm_53 and up; the
CPU computes each operation in float32 and rounds, which gives the same correctly rounded
result). bfloat16 is held as its bits and computed in float32, rounded once
(lang/bfloat16.py). The math functions compute in float32 and round to the argument's
type, as cuda_fp16's do.
"""
import numpy as np

from ..ir import nodes as ir
from ..ir import types as T
from .bfloat16 import bits, from_float, to_float, to_float32
from .registry import Intrinsic, lazy_module
from .vectors import MAKERS, TYPES, Maker, arith, get, make, simple, vector_class

ll = lazy_module("llvmlite.ir")

HALF = T.Scalar("f2")
BF16 = T.BFLOAT16
HALF2 = T.Vector("f2", 2)
BF162 = T.Vector(T.BF16_STORAGE, 2)
FLOAT2 = T.Vector("f4", 2)
PAIRS = (HALF2, BF162)
HALVES = (HALF, BF16)


# ------------------------------------------------------------------ the host's bfloat16
try:
    from ml_dtypes import bfloat16             # NumPy's bfloat16, when a program has it
    HOST_BF16 = np.dtype(bfloat16)
except ImportError:
    HOST_BF16 = T.BF16_STORAGE

    class bfloat16:
        """bfloat16 without ml_dtypes: arrays of ``simt.bfloat16`` (np.zeros(n,
        simt.bfloat16)) hold its 16 bits in a one-field struct; fill and read them with
        ``simt.to_bfloat16(x)`` and ``simt.from_bfloat16(a)``. ``pip install ml_dtypes`` makes
        this NumPy's own bfloat16."""

        dtype = T.BF16_STORAGE

        def __new__(cls, value):
            return np.asarray(bits(value), np.uint16).view(T.BF16_STORAGE)[()]


def to_bfloat16(x):
    """An array (or scalar) of ``simt.bfloat16`` from numbers, rounded to nearest even."""
    return np.asarray(bits(x), np.uint16).view(HOST_BF16)


def from_bfloat16(a):
    """float32 values of bfloat16 data (ml_dtypes' or ``simt.bfloat16`` arrays)."""
    return to_float32(a)


TYPES["bfloat162"] = vector_class("bfloat162", BF162, T.vector_dtype(HOST_BF16, 2))
MAKERS["bfloat162"] = Maker("bfloat162", TYPES["bfloat162"])


# ------------------------------------------------------------------ typing helpers
ENTRIES = {}


def _describe(types):
    return " or ".join(t.name if isinstance(t, T.Vector) else repr(t) for t in types)


def _entry(name, n, rule, doc, lowered_as=(ir.Intrinsic, ir.Cast)):
    """Register simt.<name>, whose typing rule is ``rule(fc, values, loc)``."""
    def build(fc, args, kwargs, loc):
        if kwargs or len(args) != n:
            fc.fail(loc, f"simt.{name} takes {n} argument{'s' if n > 1 else ''}, got "
                    f"{len(args) + len(kwargs)}")
        return rule(fc, [fc.expr(a, loc) for a in args], loc, name)
    ENTRIES[name] = Intrinsic(name, f"simt.{name}{doc}", build, lowered_as=lowered_as)
    return ENTRIES[name]


def _real(fc, v, loc, name):
    if not isinstance(v.type, T.Scalar) or v.type.kind == "c":
        fc.fail(loc, f"simt.{name} takes real numbers, got {v.type}")
    return v


def _one_of(fc, values, types, loc, name):
    """The values, which must all have one type of ``types``; that type."""
    t = values[0].type
    if t not in types or any(v.type != t for v in values):
        fc.fail(loc, f"simt.{name} takes {_describe(types)} values of one type, got "
                f"{', '.join(str(v.type) for v in values)}",
                "convert first (simt.float2half, simt.floats2half2_rn, ...)")
    return t


def _cast_to(dst, src=None):
    def rule(fc, values, loc, name):
        if src is not None:
            _one_of(fc, values, (src,), loc, name)
        return fc.cast(_real(fc, values[0], loc, name), dst, loc)
    return rule


def _pair(out, parts):
    def rule(fc, values, loc, name):
        return make(fc, out, parts(fc, values, loc, name), loc)
    return rule


def _splat(src=None):
    def parts(fc, values, loc, name):
        if src is not None:
            _one_of(fc, values, (src,), loc, name)
        v = simple(fc, _real(fc, values[0], loc, name), loc)
        return [v, v]
    return parts


def _both(src=None):
    def parts(fc, values, loc, name):
        if src is not None:
            _one_of(fc, values, (src,), loc, name)
        return [_real(fc, v, loc, name) for v in values]
    return parts


def _lanes(srcs, order=(0, 1)):
    def parts(fc, values, loc, name):
        _one_of(fc, values, srcs, loc, name)
        v = simple(fc, values[0], loc)
        return [get(fc, v, i, loc) for i in order]
    return parts


def _lane(srcs, i, dst=None):
    def rule(fc, values, loc, name):
        _one_of(fc, values, srcs, loc, name)
        lane = get(fc, values[0], i, loc)
        return fc.cast(lane, dst, loc) if dst is not None else lane
    return rule


def _swap(fc, values, loc, name):
    t = _one_of(fc, values, PAIRS, loc, name)
    return make(fc, t, _lanes(PAIRS, (1, 0))(fc, values, loc, name), loc)


# ------------------------------------------------------------------ conversions
for _name, _rule, _doc in [
        ("float2half", _cast_to(HALF), "(x): __float2half, x rounded to the nearest float16"),
        ("float2half_rn", _cast_to(HALF), "(x): __float2half_rn, x rounded to the nearest "
         "float16 (ties to even)"),
        ("double2half", _cast_to(HALF), "(x): __double2half, x rounded once to float16"),
        ("half2float", _cast_to(T.FLOAT32, HALF), "(h): __half2float, exact"),
        ("float2bfloat16", _cast_to(BF16), "(x): __float2bfloat16, x rounded to the nearest "
         "bfloat16"),
        ("float2bfloat16_rn", _cast_to(BF16), "(x): __float2bfloat16_rn, x rounded to the "
         "nearest bfloat16 (ties to even)"),
        ("double2bfloat16", _cast_to(BF16), "(x): __double2bfloat16, x rounded once to "
         "bfloat16"),
        ("bfloat162float", _cast_to(T.FLOAT32, BF16), "(b): __bfloat162float, exact"),
        ("float2half2_rn", _pair(HALF2, _splat()), "(x): __float2half2_rn, (x, x) as half2"),
        ("floats2half2_rn", _pair(HALF2, _both()), "(a, b): __floats2half2_rn, (a, b) as half2"),
        ("float22half2_rn", _pair(HALF2, _lanes((FLOAT2,))), "(f): __float22half2_rn, a float2 "
         "as half2"),
        ("half22float2", _pair(FLOAT2, _lanes((HALF2,))), "(h): __half22float2, a half2 as "
         "float2 (exact)"),
        ("halves2half2", _pair(HALF2, _both(HALF)), "(lo, hi): __halves2half2, a half2 from two "
         "float16"),
        ("half2half2", _pair(HALF2, _splat(HALF)), "(h): __half2half2, (h, h)"),
        ("low2half", _lane((HALF2,), 0), "(h2): __low2half, h2.x"),
        ("high2half", _lane((HALF2,), 1), "(h2): __high2half, h2.y"),
        ("float2bfloat162_rn", _pair(BF162, _splat()), "(x): __float2bfloat162_rn, (x, x) as "
         "bfloat162"),
        ("floats2bfloat162_rn", _pair(BF162, _both()), "(a, b): __floats2bfloat162_rn, (a, b) "
         "as bfloat162"),
        ("float22bfloat162_rn", _pair(BF162, _lanes((FLOAT2,))), "(f): __float22bfloat162_rn, "
         "a float2 as bfloat162"),
        ("bfloat1622float2", _pair(FLOAT2, _lanes((BF162,))), "(b2): __bfloat1622float2, a "
         "bfloat162 as float2 (exact)"),
        ("halves2bfloat162", _pair(BF162, _both(BF16)), "(lo, hi): __halves2bfloat162"),
        ("bfloat162bfloat162", _pair(BF162, _splat(BF16)), "(b): __bfloat162bfloat162, (b, b)"),
        ("low2bfloat16", _lane((BF162,), 0), "(b2): __low2bfloat16, b2.x"),
        ("high2bfloat16", _lane((BF162,), 1), "(b2): __high2bfloat16, b2.y"),
        ("low2float", _lane(PAIRS, 0, T.FLOAT32), "(v): __low2float, v.x of a half2 or "
         "bfloat162 as float32"),
        ("high2float", _lane(PAIRS, 1, T.FLOAT32), "(v): __high2float, v.y as float32"),
        ("lowhigh2highlow", _swap, "(v): __lowhigh2highlow, a half2 or bfloat162 with x and y "
         "swapped")]:
    _entry(_name, 2 if ", " in _doc.split(")")[0] else 1, _rule, _doc + ".")


# ------------------------------------------------------------------ bit casts
def _bitcast(src, dst):
    def rule(fc, values, loc, name):
        v = values[0]
        if src.kind in "iu":
            v = fc.cast(_real(fc, v, loc, name), src, loc)
        else:
            _one_of(fc, values, (src,), loc, name)
        return ENTRIES[name].node(dst, loc, [v])
    return rule


for _h, _t in (("half", HALF), ("bfloat16", BF16)):
    for _i, _it in (("ushort", T.Scalar("u2")), ("short", T.Scalar("i2"))):
        for _name, _src, _dst in ((f"{_h}_as_{_i}", _t, _it), (f"{_i}_as_{_h}", _it, _t)):
            _entry(_name, 1, _bitcast(_src, _dst), f"(v): __{_name}, the 16 bits of a {_src!r} "
                   f"as a {_dst!r}.", lowered_as=None).lowering()(
                lambda em, e: em.builder.bitcast(em.expr(e.args[0]),
                                                 ll.HalfType() if e.type == HALF else
                                                 ll.IntType(16)))


# ------------------------------------------------------------------ arithmetic
def _operator(op, types):
    def rule(fc, values, loc, name):
        t = _one_of(fc, values, types, loc, name)
        if isinstance(t, T.Vector):
            return arith.node(t, loc, values, {"op": op})
        return fc.cast(fc.binop(op, values[0], values[1], loc), t, loc)
    return rule


def _own(types):
    """A rule building this entry's own node, on values of one type of ``types``."""
    def rule(fc, values, loc, name):
        return ENTRIES[name].node(_one_of(fc, values, types, loc, name), loc, values)
    return rule


_CUDA = {"hdiv": "__hdiv", "h2div": "__h2div"}
for _op, _sym in (("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/")):
    _ir_op = "truediv" if _op == "div" else _op
    _entry("h" + _op, 2, _operator(_ir_op, HALVES), f"(a, b): __h{_op}, a {_sym} b for two "
           "float16 or two bfloat16 values, rounded once.")
    _pname = "h2div" if _op == "div" else f"h{_op}2"
    _entry(_pname, 2, _operator(_ir_op, PAIRS), f"(a, b): __{_pname}, a {_sym} b lane by lane for "
           "two half2 or two bfloat162, each lane rounded once.")

_OWN = {
    "hfma": (3, HALVES, "(a, b, c): __hfma, a * b + c with one rounding on the GPU (fma.rn.f16; "
             "bfloat16 and the CPU: a float32 fma rounded to the type, which differs only where "
             "a*b+c is within 2^-24 of a tie)"),
    "hfma2": (3, PAIRS, "(a, b, c): __hfma2, hfma lane by lane"),
    "hneg": (1, HALVES, "(a): __hneg, -a (the sign bit flipped)"),
    "hneg2": (1, PAIRS, "(a): __hneg2, -a lane by lane"),
    "habs": (1, HALVES, "(a): __habs, |a| (the sign bit cleared)"),
    "habs2": (1, PAIRS, "(a): __habs2, |a| lane by lane"),
    "hmax": (2, HALVES, "(a, b): __hmax, the larger; a NaN loses to a number"),
    "hmin": (2, HALVES, "(a, b): __hmin, the smaller; a NaN loses to a number"),
    "hmax2": (2, PAIRS, "(a, b): __hmax2, hmax lane by lane"),
    "hmin2": (2, PAIRS, "(a, b): __hmin2, hmin lane by lane"),
}
for _name, (_n, _types, _doc) in _OWN.items():
    _entry(_name, _n, _own(_types), _doc + ".", lowered_as=None)


def _float_type(t):
    return ll.VectorType(ll.FloatType(), t.n) if isinstance(t, T.Vector) else ll.FloatType()


def _call(b, name, args):
    """LLVM intrinsic ``name`` overloaded on the first argument's type (a vector too)."""
    t = args[0].type
    suffix = f"v{t.count}{t.element.intrinsic_name}" if isinstance(t, ll.VectorType) \
        else t.intrinsic_name
    full = f"{name}.{suffix}"
    fn = b.module.globals.get(full) or ll.Function(
        b.module, ll.FunctionType(t, [a.type for a in args]), full)
    return b.call(fn, args)


def _is_half(t):
    return (t.element if isinstance(t, T.Vector) else t).dtype == np.float16


def is_float16(t):
    """float16 or half2 (not bfloat16)."""
    return _is_half(t)


def fma(em, e, native=False):
    """hfma/hfma2: LLVM's fma on the values (``native``: a device with a half fma instruction
    registers that) or computed in float32 and rounded once more."""
    b = em.builder
    args = [em.expr(a) for a in e.args]
    if native:
        return _call(b, "llvm.fma", args)             # fma.rn.f16 / fma.rn.f16x2
    wide = [to_float(b, a, e.type) for a in args]
    return from_float(b, _call(b, "llvm.fma", wide), e.type)


ENTRIES["hfma"].lowering()(fma)
ENTRIES["hfma2"].lowering()(fma)


def _sign_bits(em, e, op, mask):
    b = em.builder
    x = em.expr(e.args[0])
    i16 = ll.IntType(16)
    it = ll.VectorType(i16, e.type.n) if isinstance(e.type, T.Vector) else i16
    value = b.bitcast(x, it) if _is_half(e.type) else x
    m = ll.Constant(it, [ll.Constant(i16, mask)] * e.type.n) if isinstance(e.type, T.Vector) \
        else ll.Constant(i16, mask)
    value = getattr(b, op)(value, m)
    return b.bitcast(value, x.type) if _is_half(e.type) else value


ENTRIES["hneg"].lowering()(lambda em, e: _sign_bits(em, e, "xor", 0x8000))
ENTRIES["hneg2"].lowering()(lambda em, e: _sign_bits(em, e, "xor", 0x8000))
ENTRIES["habs"].lowering()(lambda em, e: _sign_bits(em, e, "and_", 0x7FFF))
ENTRIES["habs2"].lowering()(lambda em, e: _sign_bits(em, e, "and_", 0x7FFF))


def _minmax(intrinsic):
    def lower(em, e):
        b = em.builder
        wide = [to_float(b, em.expr(a), e.type) for a in e.args]
        return from_float(b, _call(b, intrinsic, wide), e.type)     # exact
    return lower


for _name, _fn in (("hmax", "llvm.maxnum"), ("hmax2", "llvm.maxnum"), ("hmin", "llvm.minnum"),
                   ("hmin2", "llvm.minnum")):
    ENTRIES[_name].lowering()(_minmax(_fn))


# ------------------------------------------------------------------ math
MATH = {"sqrt": "square root", "rsqrt": "1 / sqrt(x)", "rcp": "1 / x", "exp": "e ** x",
        "exp2": "2 ** x", "exp10": "10 ** x", "log": "natural logarithm",
        "log2": "base-2 logarithm", "log10": "base-10 logarithm", "sin": "sine",
        "cos": "cosine", "floor": "floor", "ceil": "ceiling", "trunc": "rounded toward zero",
        "rint": "rounded to nearest even integer"}
_LLVM = {"sqrt": "llvm.sqrt", "floor": "llvm.floor", "ceil": "llvm.ceil", "trunc": "llvm.trunc",
         "rint": "llvm.rint"}


def _math_value(em, name, x):
    """float32 math function ``name`` of x (a float or a vector of floats)."""
    b = em.builder
    if name in _LLVM:
        return _call(b, _LLVM[name], [x])
    if name in ("rsqrt", "rcp"):
        one = ll.Constant(x.type, [ll.Constant(ll.FloatType(), 1.0)] * x.type.count) \
            if isinstance(x.type, ll.VectorType) else ll.Constant(x.type, 1.0)
        return b.fdiv(one, _call(b, "llvm.sqrt", [x]) if name == "rsqrt" else x)
    if not isinstance(x.type, ll.VectorType):
        return em.math_call(name, T.FLOAT32, [x])
    out = ll.Constant(x.type, ll.Undefined)
    for i in range(x.type.count):
        lane = b.extract_element(x, ll.Constant(ll.IntType(32), i))
        out = b.insert_element(out, em.math_call(name, T.FLOAT32, [lane]),
                               ll.Constant(ll.IntType(32), i))
    return out


def _math_lowering(name):
    def lower(em, e):
        b = em.builder
        x = to_float(b, em.expr(e.args[0]), e.type)
        return from_float(b, _math_value(em, name, x), e.type)
    return lower


for _fname, _what in MATH.items():
    _entry("h" + _fname, 1, _own(HALVES), f"(x): h{_fname}, the {_what} of a float16 or bfloat16, "
           "computed in float32 and rounded to the argument's type.",
           lowered_as=None).lowering()(_math_lowering(_fname))
    _entry("h2" + _fname, 1, _own(PAIRS), f"(v): h2{_fname}, h{_fname} lane by lane of a half2 or "
           "bfloat162.", lowered_as=None).lowering()(_math_lowering(_fname))


def _predicate(name, test):
    def rule(fc, values, loc, _):
        _one_of(fc, values, HALVES, loc, name)
        return ENTRIES[name].node(T.BOOL, loc, values)

    def lower(em, e):
        b = em.builder
        x = to_float(b, em.expr(e.args[0]), e.args[0].type)
        return test(b, x)
    return rule, lower


for _name, _test, _doc in (
        ("hisnan", lambda b, x: b.fcmp_unordered("uno", x, x), "(x): __hisnan, whether x is NaN"),
        ("hisinf", lambda b, x: b.fcmp_ordered("==", _call(b, "llvm.fabs", [x]),
                                               ll.Constant(x.type, float("inf"))),
         "(x): __hisinf, whether x is infinite")):
    _rule, _lower = _predicate(_name, _test)
    _entry(_name, 1, _rule, _doc + " (float16 or bfloat16).", lowered_as=None).lowering()(_lower)


# ------------------------------------------------------------------ atomics
def is_half_type(t):
    """float16, bfloat16, half2 or bfloat162: what simt.atomic.add adds with atomic_add."""
    return t in HALVES or t in PAIRS


def atomic_add(em, address, value, t):
    """atomicAdd on float16, bfloat16, half2 and bfloat162 (guide B.14.1.1): a compare-and-
    swap loop on the 16 or 32 bits, each try adding in float32 and rounding once; returns
    the old value. ``value`` is already of type t."""
    b = em.builder
    bits_type = ll.IntType(16 * (t.n if isinstance(t, T.Vector) else 1))
    first = b.load(address, typ=bits_type)
    start, loop, done = b.block, em.new_block("atomic_add"), em.new_block("atomic_add_done")
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(bits_type)
    old.add_incoming(first, start)
    old_value = b.bitcast(old, value.type)
    total = from_float(b, b.fadd(to_float(b, old_value, t), to_float(b, value, t)), t)
    pair = b.cmpxchg(address, old, b.bitcast(total, bits_type), "monotonic", "monotonic")
    old.add_incoming(b.extract_value(pair, 0), loop)
    b.cbranch(b.extract_value(pair, 1), done, loop)
    b.position_at_end(done)
    return old_value
