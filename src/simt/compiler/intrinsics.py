"""Lowerings of registry entries (lang/) to LLVM IR, registered against the entries.

What every target shares is here; what differs is asked of the target
(special registers, libm versus libdevice names, fences). Entries may also
carry their own lowerings in their lang/ module (lang/timers.py does)."""
from llvmlite import ir as ll

from . import ops
from ..errors import NotSupportedError
from ..ir import types as T
from ..lang import half
from ..lang import python as pylang
from ..lang import heap
from ..lang import textures as tex
from ..lang.atomics import RMW_ENTRIES
from ..lang.groups import fns
from ..lang.indices import blockDim, blockIdx, gridDim, threadIdx, warpSize
from ..lang.mathlib import BITCASTS, FAST_FUNCS, INT_FUNCS, MATH_FUNCS
from ..lang.registry import lowering
from ..lang.sync import threadfence, threadfence_block, threadfence_system
from ..lang.warp import laneid
from .lltypes import I1, I32, I64, ArrayValue, const, i64, scalar
from . import asynccopy, cluster, mbarrier, wmma  # noqa: F401  (register their lowerings)

# math functions that are LLVM intrinsics on every target
LLVM_MATH = {"sqrt": "llvm.sqrt", "fabs": "llvm.fabs", "floor": "llvm.floor", "ceil": "llvm.ceil",
             "trunc": "llvm.trunc", "rint": "llvm.rint", "round": "llvm.round",
             "copysign": "llvm.copysign", "fma": "llvm.fma", "fmin": "llvm.minnum",
             "fmax": "llvm.maxnum"}

ATOMIC_OPS = {"add": ("add", "fadd"), "sub": ("sub", "fsub"), "exch": ("xchg", "xchg"),
              "min": ("min", "fmin"), "max": ("max", "fmax"), "inc": ("uinc_wrap", None),
              "dec": ("udec_wrap", None), "and": ("and", None), "or": ("or", None),
              "xor": ("xor", None)}


def lower_intrinsic(em, e):
    """The value of intrinsic node e, by its entry's lowering for this target."""
    entry, target = e.entry, em.target.name
    lower = entry.lowering_for(target)
    if lower is None:
        why = entry.unsupported.get(target, "it has no lowering for this device")
        where = f" ({e.loc.filename}:{e.loc.line})" if e.loc else ""
        raise NotSupportedError(f"{entry.python_name} is not supported on {target} devices: "
                                f"{why}{where}")
    return lower(em, e)


@lowering(*[getattr(d, axis) for d in (threadIdx, blockIdx, blockDim, gridDim) for axis in "xyz"])
def _special(em, e):
    return em.target.special(em, e.op)


@lowering(warpSize)
def _warp_size(em, e):
    return const(I32, 32)


@lowering(threadfence_block, threadfence, threadfence_system)
def _fence(em, e):
    em.target.emit_fence(em, e.attrs["scope"])
    return None


@lowering(*RMW_ENTRIES)
def _atomic(em, e):
    b = em.builder
    array = em.expr(e.args[0])
    kind = e.attrs["op"]
    scope, order = e.attrs.get("scope", "device"), e.attrs.get("order", "relaxed")
    nvalues = 2 if kind == "cas" else 1
    values = [em.expr(a) for a in e.args[1:1 + nvalues]]
    indices = [em.expr(i) for i in e.args[1 + nvalues:]]
    address = em.element_address(array, indices, e.attrs.get("label", "array"), e.loc,
                                 access="atomic")
    t = e.type
    if kind == "cas":
        cmp, new = values
        if t.kind == "f":
            it = ll.IntType(t.bits)
            old = em.target.atomic_cas(em, address, b.bitcast(cmp, it), b.bitcast(new, it),
                                       scope, order)
            return b.bitcast(old, scalar(t))
        return em.target.atomic_cas(em, address, cmp, new, scope, order)
    if kind == "add" and half.is_half_type(t) and t != half.HALF:
        return half.atomic_add(em, address, values[0], t)     # bfloat16, half2, bfloat162
    int_op, float_op = ATOMIC_OPS[kind]
    if t.kind == "f":
        name = float_op
    elif t.kind == "u" and kind in ("min", "max"):
        name = "u" + int_op
    else:
        name = int_op
    return em.target.atomic_rmw(em, name, address, values[0], t, scope, order)


@lowering(*MATH_FUNCS)
def _math(em, e):
    name = e.op.split(".", 1)[1]
    args = [em.expr(a) for a in e.args]
    t = e.type
    if name in ("isnan", "isinf", "isfinite", "signbit"):
        return _predicate(em, name, args[0], e.args[0].type)
    if t.dtype.itemsize == 2:                       # half: compute in float32, as CUDA does
        wide = [em.builder.fpext(a, scalar(T.FLOAT32)) for a in args]
        result = _math_value(em, name, T.FLOAT32, wide)
        return em.builder.fptrunc(result, scalar(t))
    return _math_value(em, name, t, args)


def _math_value(em, name, t, args):
    b = em.builder
    if name in LLVM_MATH:
        # explicit fnty: llvmlite would declare a one-argument fma/minnum/copysign
        fn = b.module.declare_intrinsic(LLVM_MATH[name], [args[0].type],
                                        ll.FunctionType(args[0].type, [a.type for a in args]))
        return b.call(fn, args)
    if name == "rsqrt" and not em.target.has_rsqrt:
        fn = b.module.declare_intrinsic("llvm.sqrt", [args[0].type])
        return b.fdiv(const(args[0].type, 1.0), b.call(fn, args))
    return em.target.math_call(em, name, t, args)


def _predicate(em, name, x, t):
    b = em.builder
    if name == "isnan":
        return b.fcmp_unordered("uno", x, x)
    if name == "signbit":
        bits = b.bitcast(x, ll.IntType(t.bits))
        return b.icmp_signed("<", bits, const(bits.type, 0))
    fabs = b.call(b.module.declare_intrinsic("llvm.fabs", [x.type]), [x])
    inf = const(x.type, float("inf"))
    if name == "isinf":
        return b.fcmp_ordered("==", fabs, inf)
    return b.fcmp_ordered("<", fabs, inf)


@lowering(*FAST_FUNCS)
def _fast(em, e):
    args = [em.expr(a) for a in e.args]
    return em.target.fast_math(em, e.op.split(".", 1)[1], args)


@lowering(*INT_FUNCS)
def _int(em, e):
    b = em.builder
    name = e.op.split(".", 1)[1]
    args = [em.expr(a) for a in e.args]
    x = args[0]
    ty = x.type
    if name == "abs":
        if e.args[0].type.kind == "u":
            return x
        return b.select(b.icmp_signed("<", x, const(ty, 0)), b.sub(const(ty, 0), x), x)
    if name == "popc":
        return _to_i32(b, b.call(b.module.declare_intrinsic("llvm.ctpop", [ty]), [x]))
    if name == "clz":
        fn = b.module.declare_intrinsic("llvm.ctlz", [ty, I1])
        return _to_i32(b, b.call(fn, [x, const(I1, 0)]))
    if name == "ffs":
        fn = b.module.declare_intrinsic("llvm.cttz", [ty, I1])
        tz = b.add(b.call(fn, [x, const(I1, 0)]), const(ty, 1))
        return _to_i32(b, b.select(b.icmp_unsigned("==", x, const(ty, 0)), const(ty, 0), tz))
    if name == "brev":
        return b.call(b.module.declare_intrinsic("llvm.bitreverse", [ty]), [x])
    if name in ("mul24", "umul24"):
        y = args[1]
        if name == "mul24":
            x = b.ashr(b.shl(x, const(ty, 8)), const(ty, 8))
            y = b.ashr(b.shl(y, const(ty, 8)), const(ty, 8))
        else:
            mask = const(ty, 0xFFFFFF)
            x, y = b.and_(x, mask), b.and_(y, mask)
        return b.mul(x, y)
    if name in ("mulhi", "umulhi"):
        wide = ll.IntType(ty.width * 2)
        ext = b.sext if e.type.kind == "i" else b.zext
        product = b.mul(ext(x, wide), ext(args[1], wide))
        return b.trunc(b.lshr(product, const(wide, ty.width)), ty)
    raise NotImplementedError(name)


def _to_i32(b, v):
    if v.type.width > 32:
        return b.trunc(v, I32)
    return v


@lowering(*BITCASTS)
def _bitcast(em, e):
    return em.builder.bitcast(em.expr(e.args[0]), scalar(e.type))


@lowering(pylang.complex_real, pylang.complex_imag, pylang.complex_conj, pylang.complex_make,
          pylang.complex_abs)
def _complex(em, e):
    b = em.builder
    name = e.op.split(".", 1)[1]
    args = [em.expr(a) for a in e.args]
    if name == "real":
        return b.extract_value(args[0], 0)
    if name == "imag":
        return b.extract_value(args[0], 1)
    if name == "conj":
        return b.insert_value(args[0], b.fneg(b.extract_value(args[0], 1)), 1)
    if name == "make":
        return ops.make_complex(b, scalar(e.type), args[0], args[1])
    if name == "abs":
        re, im = b.extract_value(args[0], 0), b.extract_value(args[0], 1)
        return em.target.math_call(em, "hypot", e.type, [re, im])
    raise NotImplementedError(name)


@lowering(tex.fetch, tex.tex1D, tex.tex2D, tex.tex3D, tex.tex1DLayered, tex.tex2DLayered,
          tex.tex2Dgather, tex.surf1Dread, tex.surf2Dread, tex.surf3Dread, tex.surf1Dwrite,
          tex.surf2Dwrite, tex.surf3Dwrite)
def _texture(em, e):
    """Texture fetches and surface reads/writes: wholly the target's (appendix H on the
    CPU, texture instructions on the GPU)."""
    return em.target.texture_op(em, e)


@lowering(laneid)
def _laneid(em, e):
    return em.target.laneid(em)


@lowering(fns)
def _fns(em, e):
    """Position of the n-th (from 0) set bit of a uint32 mask, or -1 (PTX fns): a
    five-step binary search on population counts, the same code on every target."""
    b = em.builder
    mask, n = (em.expr(a) for a in e.args)
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


@lowering(heap.malloc)
def _malloc(em, e):
    """A 1-d array over the heap's block; empty when the heap had no room (a negative
    count asks for more bytes than any heap has)."""
    b = em.builder
    count = em.expr(e.args[0])
    data = em.target.heap_malloc(em, b.mul(count, i64(e.type.dtype.itemsize)))
    null = b.icmp_unsigned("==", b.ptrtoint(data, I64), i64(0))
    return ArrayValue(e.type, data, [b.select(null, i64(0), count)], [i64(1)])


@lowering(heap.free)
def _free(em, e):
    em.target.heap_free(em, em.expr(e.args[0]).data, e.loc)


@lowering(heap.trap)
def _trap(em, e):
    em.target.emit_trap(em, e.loc)
    em.builder.position_at_end(em.new_block("after_trap"))     # unreachable code may follow
