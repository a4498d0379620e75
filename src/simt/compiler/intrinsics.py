"""Lowerings of registry entries (lang/) to LLVM IR, registered against the entries.

What every target shares is here; what differs is asked of the target
(special registers, libm versus libdevice names, fences). Entries may also
carry their own lowerings in their lang/ module (lang/timers.py does)."""
from llvmlite import ir as ll

from . import mathlower, ops  # noqa: F401  (mathlower registers the math lowerings)
from ..errors import NotSupportedError
from ..lang import python as pylang
from ..lang import textures as tex
from ..lang.atomics import atomic
from ..lang.groups import fns
from ..lang.indices import blockDim, blockIdx, gridDim, threadIdx, warpSize
from ..lang.registry import lowering
from ..lang.sync import threadfence, threadfence_block, threadfence_system
from ..lang.warp import laneid
from .lltypes import I32, const, scalar

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


@lowering(*atomic.entries())
def _atomic(em, e):
    b = em.builder
    array = em.expr(e.args[0])
    kind = e.attrs["op"]
    nvalues = 2 if kind == "cas" else 1
    values = [em.expr(a) for a in e.args[1:1 + nvalues]]
    indices = [em.expr(i) for i in e.args[1 + nvalues:]]
    address = em.element_address(array, indices, e.attrs.get("label", "array"), e.loc)
    t = e.type
    if kind == "cas":
        cmp, new = values
        if t.kind == "f":
            it = ll.IntType(t.bits)
            cmp, new = b.bitcast(cmp, it), b.bitcast(new, it)
            pair = b.cmpxchg(address, cmp, new, "monotonic", "monotonic")
            return b.bitcast(b.extract_value(pair, 0), scalar(t))
        return b.extract_value(b.cmpxchg(address, cmp, new, "monotonic", "monotonic"), 0)
    int_op, float_op = ATOMIC_OPS[kind]
    if t.kind == "f":
        name = float_op
    elif t.kind == "u" and kind in ("min", "max"):
        name = "u" + int_op
    else:
        name = int_op
    return em.target.atomic_rmw(em, name, address, values[0], t)


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
