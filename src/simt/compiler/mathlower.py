"""Lowerings of the math library and the intrinsics (lang/mathlib.py, intrinsics_fp.py,
intrinsics_int.py) to LLVM IR.

What every LLVM target shares is here: LLVM intrinsics (sqrt, floor, fma, ctpop, fshl ...),
the predicates, integer intrinsics written out in IR, one lowering per entry. The math
library is target data (``math_call``: libm and CPU code of its own, or libdevice; fast
versions: ``fast_math``). A device's own lowerings are registered from its folder:
rounding-mode arithmetic and conversions (``register_rounding``) and the integer
intrinsics a GPU has instructions for (backends/cuda/lower/math.py)."""
from llvmlite import ir as ll

from ..ir import types as T
from ..lang import bfloat16
from ..lang.intrinsics_fp import BITCASTS, CONVERSION_OPS, ENTRIES as FP_ENTRIES, ROUNDED_OPS
from ..lang.intrinsics_int import BY_NAME as INT, SIMD_ENTRIES, int_abs
from ..lang.mathlib import MATH_FUNCS, PREDICATES
from ..lang.registry import lowering
from . import ops
from .lltypes import I1, I32, I64, const, scalar
from .target import struct_of

# math functions that are LLVM intrinsics on every target
LLVM_MATH = {"sqrt": "llvm.sqrt", "fabs": "llvm.fabs", "floor": "llvm.floor", "ceil": "llvm.ceil",
             "trunc": "llvm.trunc", "rint": "llvm.rint", "round": "llvm.round",
             "nearbyint": "llvm.nearbyint", "copysign": "llvm.copysign", "fma": "llvm.fma",
             "fmin": "llvm.minnum", "fmax": "llvm.maxnum"}
# fastmath=True: float32 functions that become their fast intrinsic (nvcc's Table 9)
FASTMATH = ("exp", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "pow")
# results returned through pointers: name -> (C return, pointer outputs) as simt types
OUTPUTS = {"sincos": (None, ("f", "f")), "sincospi": (None, ("f", "f")),
           "modf": ("f", ("f",)), "frexp": ("f", (T.INT32,)), "remquo": ("f", (T.INT32,))}
INT_RESULTS = {"ilogb": I32, "lrint": I64, "llrint": I64, "lround": I64, "llround": I64}


def llvm_intrinsic(b, name, args, flags=()):
    """Call LLVM intrinsic ``name`` overloaded on the first argument's type."""
    t = args[0].type
    fn = b.module.declare_intrinsic(name, [t], ll.FunctionType(t, [a.type for a in args]))
    return b.call(fn, args, fastmath=flags)


def float_flags(em):
    """Fast-math flags of the kernel's float arithmetic (fastmath=True: docs/math.md)."""
    return ops.FAST_FLAGS if em.options.fastmath else ()


def function_name(entry):
    """The library function a math entry computes (math.sin, fast.sin: sin)."""
    return entry.op.partition(".")[2]


def _math(name):
    def lower(em, e):
        args = [em.expr(a) for a in e.args]
        if name in PREDICATES:
            return _predicate(em, name, args[0], e.args[0].type)
        ft = next(a.type for a in e.args if a.type.kind == "f")
        if name == "fma" and e.attrs.get("contracted") and em.target.fma_by_flags:
            return _contracted(em.builder, *args, e.attrs["contracted"] == "alone")
        if ft.dtype.itemsize == 2:      # float16, bfloat16: in float32, as CUDA computes
            wide = [bfloat16.to_float(em.builder, a, ft) if x.type == ft else a
                    for a, x in zip(args, e.args)]
            return bfloat16.from_float(em.builder, math_value(em, name, T.FLOAT32, wide), ft)
        return math_value(em, name, ft, args)
    return lower


def _contracted(b, x, y, z, alone):
    """An fma the typed IR made of ``x * y + z`` (compiler/contract.py), on a target with
    ``fma_by_flags`` (the GPU), which NVPTX writes as the same ``fma.rn`` as llvm.fma.
    Where the kernel rounds some product (``alone`` false): ``llvm.fmuladd``. A
    contract-flagged fmul + fadd there was merged by LLVM with the same product rounded
    elsewhere, the flag dropped, and the GPU rounded where the other devices fuse
    (raytrace, julia; H200 2026-12-02). Where nothing is rounded (``alone``) the
    contract-flagged pair, which nothing can merge with: LLVM's unroller costs it as two
    instructions, fmuladd as one, and spmv's loop unrolled 8x instead of 4x ran 1.10 of
    nvcc against 0.99 (bench/NOTES.md)."""
    if alone:
        return b.fadd(b.fmul(x, y, flags=("contract",)), z, flags=("contract",))
    fmuladd = b.module.declare_intrinsic("llvm.fmuladd", [x.type],
                                         ll.FunctionType(x.type, [x.type] * 3))
    return b.call(fmuladd, [x, y, z])


for _entry in MATH_FUNCS:
    lowering(_entry)(_math(function_name(_entry)))


def math_value(em, name, t, args):
    """Function ``name`` of float type ``t`` (a tuple's struct for sincos, frexp ...)."""
    b = em.builder
    if em.options.fastmath and t == T.FLOAT32 and name in FASTMATH:
        fast = em.target.fast_math(em, name, args)
        if fast is not None:
            return fast
    if name in LLVM_MATH:
        flags = ops.sqrt_flags(em.options, t) if name == "sqrt" else ()
        return llvm_intrinsic(b, LLVM_MATH[name], args, flags)
    if name == "scalbln":                           # no libdevice scalbln: clamp n, scalbn
        n = args[1]
        n = b.select(b.icmp_signed(">", n, const(I64, 1 << 16)), const(I64, 1 << 16), n)
        n = b.select(b.icmp_signed("<", n, const(I64, -(1 << 16))), const(I64, -(1 << 16)), n)
        return em.target.math_call(em, "scalbn", t, [args[0], b.trunc(n, I32)])
    if name in OUTPUTS:
        ret, outs = OUTPUTS[name]
        ft = scalar(t)
        lltypes = [ft if o == "f" else scalar(o) for o in outs]
        values = em.target.math_call(em, name, t, args, ret=ft if ret else ll.VoidType(),
                                     outs=lltypes)
        return struct_of(b, values if ret else values[1:])
    return em.target.math_call(em, name, t, args, ret=INT_RESULTS.get(name))


def _predicate(em, name, x, t):
    b = em.builder
    if name == "isnan":
        return b.fcmp_unordered("uno", x, x)
    if name == "signbit":
        bits = b.bitcast(x, ll.IntType(t.bits))
        return b.icmp_signed("<", bits, const(bits.type, 0))
    fabs = llvm_intrinsic(b, "llvm.fabs", [x])
    inf = const(x.type, float("inf"))
    if name == "isinf":
        return b.fcmp_ordered("==", fabs, inf)
    return b.fcmp_ordered("<", fabs, inf)


# ---------------------------------------------------------------- floating-point intrinsics
FAST_ENTRIES = [e for e in FP_ENTRIES if e.op.startswith("fast.") and e.op != "fast.saturate"]


def _fast(name):
    def lower(em, e):
        args = [em.expr(a) for a in e.args]
        fast = em.target.fast_math(em, name, args)
        if fast is not None:
            return fast
        if name == "div":
            return em.builder.fdiv(args[0], args[1], flags=float_flags(em))
        return math_value(em, name, T.FLOAT32, args)
    return lower


for _entry in FAST_ENTRIES:
    lowering(_entry)(_fast(function_name(_entry)))


@lowering(next(e for e in FP_ENTRIES if e.op == "fast.saturate"))
def _saturate(em, e):
    b = em.builder
    x = em.expr(e.args[0])
    zero, one = const(x.type, 0.0), const(x.type, 1.0)
    return b.select(b.fcmp_ordered(">", x, zero),
                    b.select(b.fcmp_ordered("<", x, one), x, one), zero)


def register_rounding(rounded, convert, target):
    """Register a device's rounded arithmetic, ``rounded(em, op, mode, t, args)`` (op: add sub
    mul div fma rcp sqrt rsqrt of float32 or float64 ``t``, mode: rn rz ru rd, exactly), and
    conversions, ``convert(em, name, mode, src, dst, value)`` (name as float2int; float to
    int saturates, NaN gives 0), as the lowerings of __fadd_rz, __float2int_rn and friends."""
    for entry, (op, mode) in ROUNDED_OPS.items():
        lowering(entry, target=target)(
            lambda em, e, op=op, mode=mode: rounded(em, op, mode, e.type,
                                                    [em.expr(a) for a in e.args]))
    for entry, (name, mode) in CONVERSION_OPS.items():
        lowering(entry, target=target)(
            lambda em, e, name=name, mode=mode: convert(em, name, mode, e.args[0].type, e.type,
                                                        em.expr(e.args[0])))


CASTS = {function_name(e): e for e in BITCASTS}


@lowering(*(e for name, e in CASTS.items()
            if name not in ("hiloint2double", "double2hiint", "double2loint")))
def _bitcast(em, e):
    return em.builder.bitcast(em.expr(e.args[0]), scalar(e.type))


@lowering(CASTS["hiloint2double"])
def _hiloint2double(em, e):
    b = em.builder
    args = [em.expr(a) for a in e.args]
    hi, lo = (b.zext(a, I64) for a in args)
    word = b.or_(b.shl(hi, const(I64, 32)), lo)
    return b.bitcast(word, scalar(e.type))


@lowering(CASTS["double2hiint"])
def _double2hiint(em, e):
    b = em.builder
    bits = b.bitcast(em.expr(e.args[0]), I64)
    return b.trunc(b.lshr(bits, const(I64, 32)), I32)


@lowering(CASTS["double2loint"])
def _double2loint(em, e):
    return em.builder.trunc(em.builder.bitcast(em.expr(e.args[0]), I64), I32)


# ---------------------------------------------------------------- integer intrinsics
# Each entry's lowering, written out in IR; a device with an instruction of its own
# registers it from its folder (backends/cuda/lower/math.py: prmt, sad, hadd, dp4a ...).
def _args(em, e):
    return [em.expr(a) for a in e.args]


@lowering(int_abs)
def _abs(em, e):
    b = em.builder
    x = em.expr(e.args[0])
    if e.args[0].type.kind == "u":
        return x
    zero = const(x.type, 0)
    return b.select(b.icmp_signed("<", x, zero), b.sub(zero, x), x)


@lowering(INT["popc"], INT["popcll"])
def _popc(em, e):
    b, x = em.builder, em.expr(e.args[0])
    return _to_i32(b, b.call(b.module.declare_intrinsic("llvm.ctpop", [x.type]), [x]))


@lowering(INT["clz"], INT["clzll"])
def _clz(em, e):
    b, x = em.builder, em.expr(e.args[0])
    fn = b.module.declare_intrinsic("llvm.ctlz", [x.type, I1])
    return _to_i32(b, b.call(fn, [x, const(I1, 0)]))


@lowering(INT["ffs"], INT["ffsll"])
def _ffs(em, e):
    b, x = em.builder, em.expr(e.args[0])
    ty = x.type
    fn = b.module.declare_intrinsic("llvm.cttz", [ty, I1])
    tz = b.add(b.call(fn, [x, const(I1, 0)]), const(ty, 1))
    return _to_i32(b, b.select(b.icmp_unsigned("==", x, const(ty, 0)), const(ty, 0), tz))


@lowering(INT["brev"], INT["brevll"])
def _brev(em, e):
    b, x = em.builder, em.expr(e.args[0])
    return b.call(b.module.declare_intrinsic("llvm.bitreverse", [x.type]), [x])


def _mul24(signed):
    def lower(em, e):
        b = em.builder
        x, y = _args(em, e)
        ty = x.type
        if signed:
            x = b.ashr(b.shl(x, const(ty, 8)), const(ty, 8))
            y = b.ashr(b.shl(y, const(ty, 8)), const(ty, 8))
        else:
            mask = const(ty, 0xFFFFFF)
            x, y = b.and_(x, mask), b.and_(y, mask)
        return b.mul(x, y)
    return lower


lowering(INT["mul24"])(_mul24(signed=True))
lowering(INT["umul24"])(_mul24(signed=False))


@lowering(INT["mulhi"], INT["umulhi"], INT["mul64hi"], INT["umul64hi"])
def _mulhi(em, e):
    b = em.builder
    x, y = _args(em, e)
    ty = x.type
    wide = ll.IntType(ty.width * 2)
    ext = b.sext if e.type.kind == "i" else b.zext
    product = b.mul(ext(x, wide), ext(y, wide))
    return b.trunc(b.lshr(product, const(wide, ty.width)), ty)


def _halving_add(signed, rounded):
    def lower(em, e):
        b = em.builder
        x, y = _args(em, e)
        ext = b.sext if signed else b.zext
        total = b.add(ext(x, I64), ext(y, I64))
        if rounded:
            total = b.add(total, const(I64, 1))
        return b.trunc(b.ashr(total, const(I64, 1)), I32)
    return lower


lowering(INT["hadd"])(_halving_add(signed=True, rounded=False))
lowering(INT["rhadd"])(_halving_add(signed=True, rounded=True))
lowering(INT["uhadd"])(_halving_add(signed=False, rounded=False))
lowering(INT["urhadd"])(_halving_add(signed=False, rounded=True))


def _sad(signed):
    def lower(em, e):
        b = em.builder
        x, y, z = _args(em, e)
        less = b.icmp_signed("<", x, y) if signed else b.icmp_unsigned("<", x, y)
        return b.add(b.select(less, b.sub(y, x), b.sub(x, y)), z)
    return lower


lowering(INT["sad"])(_sad(signed=True))
lowering(INT["usad"])(_sad(signed=False))


@lowering(INT["byte_perm"])
def _byte_perm_entry(em, e):
    return _byte_perm(em.builder, *_args(em, e))


for _name in ("funnelshift_l", "funnelshift_lc", "funnelshift_r", "funnelshift_rc"):
    lowering(INT[_name])(lambda em, e, name=_name: _funnelshift(em.builder, name, *_args(em, e)))
for _name in ("dp4a", "dp2a_lo", "dp2a_hi"):
    lowering(INT[_name])(
        lambda em, e, name=_name: _dot(em.builder, name, e.type.kind == "u", *_args(em, e)))


@lowering(*SIMD_ENTRIES)
def _simd(em, e):
    """__vadd4 ... __vmin2: the uint32 operands as vectors of unsigned i8 (``4``) or i16
    (``2``) lanes, one vector instruction per operation, the same IR for the CPU and the
    GPU (NVPTX splits or packs it; LLVM's vector ops wrap within each lane)."""
    b = em.builder
    name = e.entry.python_name.rsplit(".", 1)[1]
    lanes = ll.VectorType(ll.IntType(32 // int(name[-1])), int(name[-1]))
    x, y = (b.bitcast(v, lanes) for v in _args(em, e))
    op = name[:-1]
    if op == "vadd":
        value = b.add(x, y)
    elif op == "vsub":
        value = b.sub(x, y)
    elif op == "vabsdiff":
        value = b.select(b.icmp_unsigned(">", x, y), b.sub(x, y), b.sub(y, x))
    else:
        value = b.select(b.icmp_unsigned(">" if op == "vmax" else "<", x, y), x, y)
    return b.bitcast(value, I32)


@lowering(INT["fns"])
def _fns(em, e):
    """__fns as PTX's fns.b32 defines it: from bit ``base`` up (offset > 0) or down
    (offset < 0), the |offset|-th set bit; offset 0: base itself if set. Upwards that is the
    (offset - 1)-th set bit of the bits at or above base; downwards the (count - |offset|)-th
    of the bits at or below it. ``base`` is taken modulo 32 (PTX leaves larger ones
    undefined)."""
    b = em.builder
    mask, base, offset = _args(em, e)
    zero, ones = const(I32, 0), const(I32, -1)
    base = b.and_(base, const(I32, 31))
    above = b.and_(mask, b.shl(ones, base))
    below = b.and_(mask, b.lshr(ones, b.sub(const(I32, 31), base)))
    popc = b.module.declare_intrinsic("llvm.ctpop", [I32])
    up = b.icmp_signed(">", offset, zero)
    rank = b.select(up, b.sub(offset, const(I32, 1)), b.add(b.call(popc, [below]), offset))
    found = nth_set_bit(b, b.select(up, above, below), rank)
    own = b.select(b.trunc(b.lshr(mask, base), I1), base, ones)
    return b.select(b.icmp_signed("==", offset, zero), own, found)


def nth_set_bit(b, mask, n):
    """Position of the n-th (from 0) set bit of a uint32 mask, or -1: a five-step binary
    search on population counts (n as unsigned: a negative n finds none)."""
    popc = b.module.declare_intrinsic("llvm.ctpop", [I32])
    total, wanted = b.call(popc, [mask]), n
    pos = const(I32, 0)
    for width in (16, 8, 4, 2, 1):
        low = b.and_(b.lshr(mask, pos), const(I32, (1 << width) - 1))
        count = b.call(popc, [low])
        up = b.icmp_unsigned(">=", n, count)
        n = b.select(up, b.sub(n, count), n)
        pos = b.select(up, b.add(pos, const(I32, width)), pos)
    return b.select(b.icmp_unsigned("<", wanted, total), pos, const(I32, -1))


def _to_i32(b, v):
    return b.trunc(v, I32) if v.type.width > 32 else v


def _funnelshift(b, name, lo, hi, shift):
    """__funnelshift_l/r: LLVM's fshl/fshr take the shift modulo 32, as the wrap forms;
    the clamp forms (lc, rc) give lo (left) or hi (right) for shifts of 32 or more."""
    left = name.startswith("funnelshift_l")
    fn = b.module.declare_intrinsic("llvm.fshl" if left else "llvm.fshr", [I32],
                                    ll.FunctionType(I32, [I32] * 3))
    value = b.call(fn, [hi, lo, shift])
    if name.endswith("c"):
        value = b.select(b.icmp_unsigned(">=", shift, const(I32, 32)), lo if left else hi, value)
    return value


def _byte_perm(b, x, y, s):
    """Byte i of the result is byte s[4i:4i+3] of the 8 bytes y:x."""
    both = b.or_(b.shl(b.zext(y, I64), const(I64, 32)), b.zext(x, I64))
    result = const(I32, 0)
    for i in range(4):
        sel = b.and_(b.lshr(s, const(I32, 4 * i)), const(I32, 7))
        byte = b.and_(b.trunc(b.lshr(both, b.zext(b.mul(sel, const(I32, 8)), I64)), I32),
                      const(I32, 0xFF))
        result = b.or_(result, b.shl(byte, const(I32, 8 * i)))
    return result


def _dot(b, name, unsigned, a, bb, c):
    """__dp4a: four byte products; __dp2a_lo/hi: 16-bit halves of a times bytes 0-1 / 2-3
    of b. Sign-extended unless unsigned."""
    def part(v, index, bits):
        field = b.trunc(b.lshr(v, const(I32, index * bits)), ll.IntType(bits))
        return b.zext(field, I32) if unsigned else b.sext(field, I32)
    if name == "dp4a":
        pairs = [(part(a, i, 8), part(bb, i, 8)) for i in range(4)]
    else:
        first = 2 if name == "dp2a_hi" else 0
        pairs = [(part(a, i, 16), part(bb, first + i, 8)) for i in range(2)]
    total = c
    for p, q in pairs:
        total = b.add(total, b.mul(p, q))
    return total
