"""Lowerings of registry entries (lang/) to LLVM IR, registered against the entries.

What every LLVM target shares is here (and in mathlower.py, and in the lang/ module of
an entry whose lowering is target-neutral, as lang/vectors.py); what a device does its
own way is registered from its folder (backends/<device>/lower/), or asked of the
target when many lowerings share it (special registers, memory, fences, the math
library: the Target interface)."""
from llvmlite import ir as ll

from . import mathlower, ops  # noqa: F401  (mathlower registers the math lowerings)
from ..errors import NotSupportedError
from ..lang import half
from ..lang import python as pylang
from ..lang import heap
from ..lang import textures as tex
from ..lang.atomics import RMW_ENTRIES
from ..lang.groups import fns
from ..lang.indices import blockDim, blockIdx, gridDim, threadIdx, warpSize
from ..lang.registry import lowering
from ..lang.sync import threadfence, threadfence_block, threadfence_system
from ..lang.warp import LANEMASKS, laneid
from .lltypes import I32, I64, ArrayValue, const, i64, scalar
from . import devlaunch  # noqa: F401  (registers the device-side launch)

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
        name = e.attrs.get("called", entry.python_name)     # declare_device: the function
        raise NotSupportedError(f"{name} is not supported on {target} devices: "
                                f"{why}{where}")
    return lower(em, e)


@lowering(*[getattr(d, axis) for d in (threadIdx, blockIdx, blockDim, gridDim) for axis in "xyz"])
def _special(em, e):
    return em.target.special(em, e.op)


@lowering(warpSize)
def _warp_size(em, e):
    return const(I32, em.target.warp.size)


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
                                 access="atomic", order=order, scope=scope)
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


lowering(pylang.complex_real)(lambda em, e: em.builder.extract_value(em.expr(e.args[0]), 0))
lowering(pylang.complex_imag)(lambda em, e: em.builder.extract_value(em.expr(e.args[0]), 1))


@lowering(pylang.complex_conj)
def _conj(em, e):
    b, z = em.builder, em.expr(e.args[0])
    return b.insert_value(z, b.fneg(b.extract_value(z, 1)), 1)


@lowering(pylang.complex_make)
def _make_complex(em, e):
    re, im = (em.expr(a) for a in e.args)
    return ops.make_complex(em.builder, scalar(e.type), re, im)


@lowering(pylang.complex_abs)
def _complex_abs(em, e):
    b, z = em.builder, em.expr(e.args[0])
    re, im = b.extract_value(z, 0), b.extract_value(z, 1)
    return em.target.math_call(em, "hypot", e.type, [re, im])


@lowering(tex.fetch, tex.tex1D, tex.tex2D, tex.tex3D, tex.tex1DLayered, tex.tex2DLayered,
          tex.tex2Dgather, tex.surf1Dread, tex.surf2Dread, tex.surf3Dread, tex.surf1Dwrite,
          tex.surf2Dwrite, tex.surf3Dwrite, tex.tex1DLod, tex.tex2DLod, tex.tex3DLod,
          tex.tex2DGrad, tex.texCubemap, tex.texCubemapLayered, tex.surf2DLayeredread,
          tex.surf2DLayeredwrite, tex.surfCubemapread, tex.surfCubemapwrite,
          tex.surfCubemapLayeredread, tex.surfCubemapLayeredwrite)
def _texture(em, e):
    """Texture fetches and surface reads/writes: wholly the target's (appendix H on the
    CPU, texture instructions on the GPU)."""
    return em.target.texture_op(em, e)


@lowering(laneid)
def _laneid(em, e):
    return em.target.laneid(em)


def lanemask(b, kind, lane):
    """%lanemask_<kind> from the lane id: the bits below the lane (lt), through it (le) ..."""
    one = const(I32, 1)
    below = b.sub(b.shl(one, lane), one)
    through = b.sub(b.shl(const(I32, 2), lane), one)     # lane 31: 2 << 31 wraps to 0
    return {"lt": below, "le": through, "eq": b.shl(one, lane), "ge": b.not_(below),
            "gt": b.not_(through)}[kind]


for _kind, _entry in LANEMASKS.items():
    lowering(_entry)(lambda em, e, kind=_kind: lanemask(em.builder, kind, em.target.laneid(em)))


@lowering(fns)
def _fns(em, e):
    """Position of the n-th (from 0) set bit of a uint32 mask, or -1: the same code on every
    target (coalesced groups' ranks)."""
    return mathlower.nth_set_bit(em.builder, *(em.expr(a) for a in e.args))


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
