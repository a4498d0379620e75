"""TMA (lang/tma.py) on the GPU: inline PTX, in the forms bench/cuda/hopper_gemm.cu runs.
Shared-memory operands are 32-bit shared addresses; the tensor map is the generic address
of its grid-constant kernel parameter (params.py). Coordinates go innermost first (NumPy's
order reversed). Loads and bulk copies are preceded by ``fence.proxy.async.shared::cta``, so
that the barrier's initialization (generic proxy) is seen by the copy engine (async proxy),
as CUDA's TMA example fences after ``init``; stores by the same fence, so that the block's
writes to the source (ordered before by a syncthreads) are."""
from llvmlite import ir as ll

from ....compiler.lltypes import I32, I64, ptr
from ....lang.tma import ALIGN, commit_group, copy, load, store, wait_group
from ....lang.registry import declare_target, lowering
from ....lang.sync import fence_proxy_async

TARGET = declare_target("cuda")

FENCE = "fence.proxy.async.shared::cta;"


def _asm(em, text, constraints, args):
    fnty = ll.FunctionType(ll.VoidType(), [a.type for a in args])
    clobbers = ",".join(filter(None, [constraints, "~{memory}"]))
    em.builder.call(ll.InlineAsm(fnty, text, clobbers, side_effect=True), args)


def _shared_address(em, value, swizzle=None):
    """The 32-bit shared-memory address of an array value's data (or a barrier's words). A
    static shared array gets the alignment of a box of that swizzle (dynamic shared memory
    and views are the program's to align)."""
    data = em.expr(value).data
    variable = _variable(em, data) if swizzle is not None else None
    if variable is not None:
        variable.align = max(variable.align or 16, ALIGN[swizzle])
    shared = em.target.addrspace("shared")
    if data.type.addrspace != shared:
        data = em.builder.addrspacecast(data, ptr(shared))
    return em.builder.ptrtoint(data, I32)


def _variable(em, data):
    """The shared global variable a static array's data pointer names (lltypes.static_array
    wraps it in a constant), or None."""
    if isinstance(data, ll.GlobalVariable):
        return data
    text = getattr(data, "constant", None)
    for variable in em.module.global_values:
        if isinstance(variable, ll.GlobalVariable) and variable.get_reference() == text:
            return variable
    return None


def _coords(n, first):
    """'{$k, ...}' for n coordinates from operand first, innermost first."""
    return "{" + ", ".join(f"${first + n - 1 - i}" for i in range(n)) + "}"


@lowering(load, target=TARGET)
def _load_gpu(em, e):
    rank, multicast = e.attrs["rank"], e.attrs["multicast"]
    swizzle = e.args[1].type.swizzle
    dst, tmap, bar = _shared_address(em, e.args[0], swizzle), em.expr(e.args[1]), \
        _shared_address(em, e.args[2])
    args = [dst, tmap, bar]
    constraints = "r,l,r"
    first = 3
    suffix = ""
    if multicast:
        args.append(em.expr(e.args[3]))
        constraints += ",h"
        first, suffix = 4, ".multicast::cluster"
    coords = [em.expr(c) for c in e.args[first:]]
    mask = ", $3" if multicast else ""
    text = (f"{FENCE}\n\tcp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::"
            f"complete_tx::bytes{suffix} [$0], [$1, {_coords(rank, first)}], [$2]{mask};")
    _asm(em, text, constraints + ",r" * rank, args + coords)


@lowering(store, target=TARGET)
def _store_gpu(em, e):
    rank = e.attrs["rank"]
    src, tmap = _shared_address(em, e.args[0], e.args[1].type.swizzle), em.expr(e.args[1])
    coords = [em.expr(c) for c in e.args[2:]]
    text = (f"{FENCE}\n\tcp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group "
            f"[$1, {_coords(rank, 2)}], [$0];")
    _asm(em, text, "r,l" + ",r" * rank, [src, tmap] + coords)


@lowering(fence_proxy_async, target=TARGET)
def _fence_proxy_gpu(em, e):
    _asm(em, FENCE, "", [])


@lowering(commit_group, target=TARGET)
def _commit_gpu(em, e):
    _asm(em, "cp.async.bulk.commit_group;", "", [])


@lowering(wait_group, target=TARGET)
def _wait_gpu(em, e):
    read = ".read" if e.attrs["read"] else ""
    _asm(em, f"cp.async.bulk.wait_group{read} {int(e.attrs['n'])};", "", [])


@lowering(copy, target=TARGET)
def _copy_gpu(em, e):
    dst, bar = _shared_address(em, e.args[0], "none"), _shared_address(em, e.args[3])
    src = em.builder.ptrtoint(em.expr(e.args[1]).data, I64)
    nbytes = em.expr(e.args[2])
    _asm(em, f"{FENCE}\n\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
         "[$0], [$1], $2, [$3];", "r,l,r,r", [dst, src, nbytes, bar])
