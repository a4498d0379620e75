"""simt.memcpy_async and the pipeline's commit and wait (lang/pipeline.py) on the GPU:
cp.async.shared.global through NVVM's intrinsics when the destination is shared and
the source global memory, in the widest chunk (16, 8 or 4 bytes) the element count allows and
both addresses are aligned to, checked at run time; otherwise (and always on the CPU) the
copy is a loop of loads and stores, complete at once. 16-byte chunks take cp.async.cg (L2
only, as CUDA's memcpy_async does for them: the data goes to shared memory, so caching it in
L1 as well only evicts other lines; the pipelined matmul ran 1.28x nvcc's with .ca, whose
SASS was LDGSTS.E.128 where nvcc's is LDGSTS.E.BYPASS.128); 8 and 4 bytes can only be .ca."""
from llvmlite import ir as ll

from ....compiler.asynccopy import element_loop, operands
from ....compiler.flat import counted_loop, flat_address
from ....compiler.lltypes import I32, I64, i32, i64, ptr
from ....lang.pipeline import MAX_IN_FLIGHT, commit, memcpy_async, wait
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cuda")


def _track(em, e):
    """A copy tied to a barrier: the barrier's phase also waits for this thread's cp.async
    copies so far (the .noinc-less form counts one more arrival and makes it when they land,
    so the phase still expects the thread's own arrive)."""
    if len(e.args) == 6:
        data = em.expr(e.args[5]).data
        shared = em.target.addrspace("shared")
        if data.type.addrspace != shared:
            data = em.builder.addrspacecast(data, ptr(shared))
        fn = em.module.declare_intrinsic("llvm.nvvm.cp.async.mbarrier.arrive.shared",
                                         fnty=ll.FunctionType(ll.VoidType(), [ptr(shared)]))
        em.builder.call(fn, [data])


def _chunk(e):
    """The widest cp.async size the compile-time byte count allows (None: not known)."""
    itemsize = e.args[0].type.dtype.itemsize
    count = e.attrs.get("count")
    total = count * itemsize if count is not None else itemsize
    for size in (16, 8, 4):
        if total % size == 0 and (count is not None or itemsize % size == 0):
            return size
    return None


@lowering(memcpy_async, target=TARGET)
def _copy_gpu(em, e):
    dst, di, src, si, count = operands(em, e)
    size = _chunk(e)
    shared, glob = em.target.addrspace("shared"), em.target.addrspace("global")
    if size is None or e.args[0].type.space != "shared" or e.args[2].type.space != "global":
        element_loop(em, e, dst, di, src, si, count)
        return None                # no cp.async: the copy is complete, nothing to track
    b = em.builder
    itemsize = e.args[0].type.dtype.itemsize
    nonempty = b.icmp_signed(">", count, i64(0))
    start_bb, fast_bb, slow_bb, done_bb = (em.new_block(n) for n in (
        "cp_async", "cp_async_fast", "cp_async_slow", "cp_async_done"))
    b.cbranch(nonempty, start_bb, done_bb)
    b.position_at_end(start_bb)
    to = flat_address(em, dst, di, e.attrs["dst"], e.loc)
    frm = flat_address(em, src, si, e.attrs["src"], e.loc)
    last = em.builder.sub(count, i64(1))
    flat_address(em, dst, em.builder.add(di, last), e.attrs["dst"], e.loc)  # bounds
    flat_address(em, src, em.builder.add(si, last), e.attrs["src"], e.loc)
    b = em.builder
    if size <= itemsize and e.args[0].type.align is None and e.args[2].type.align is None:
        b.branch(fast_bb)          # chunks no wider than an element: aligned like the arrays
    else:
        bits = b.or_(b.ptrtoint(to, I64), b.ptrtoint(frm, I64))
        aligned = b.icmp_unsigned("==", b.and_(bits, i64(size - 1)), i64(0))
        b.cbranch(aligned, fast_bb, slow_bb)
    b.position_at_end(fast_bb)
    fn = em.module.declare_intrinsic(
        f"llvm.nvvm.cp.async.{'cg' if size == 16 else 'ca'}.shared.global.{size}", fnty=ll.FunctionType(
            ll.VoidType(), [ptr(shared), ptr(glob)]))
    to_s = b.addrspacecast(to, ptr(shared)) if to.type.addrspace != shared else to
    frm_g = b.addrspacecast(frm, ptr(glob)) if frm.type.addrspace != glob else frm
    chunks = b.udiv(b.mul(count, i64(itemsize)), i64(size))

    with counted_loop(em, chunks) as j:
        bb = em.builder
        offset = bb.mul(j, i64(size))
        bb.call(fn, [bb.gep(to_s, [offset], source_etype=ll.IntType(8)),
                     bb.gep(frm_g, [offset], source_etype=ll.IntType(8))])
    em.builder.branch(done_bb)
    em.builder.position_at_end(slow_bb)
    element_loop(em, e, dst, di, src, si, count)
    em.builder.branch(done_bb)
    em.builder.position_at_end(done_bb)
    _track(em, e)
    return None


@lowering(commit, target=TARGET)
def _commit_gpu(em, e):
    fn = em.module.declare_intrinsic("llvm.nvvm.cp.async.commit.group",
                                     fnty=ll.FunctionType(ll.VoidType(), []))
    em.builder.call(fn, [])


@lowering(wait, target=TARGET)
def _wait_gpu(em, e):
    """cp.async.wait_group N, N the stages younger than the awaited one (an immediate:
    a chain of compares picks it; more than 7 in flight waits until 7 are left)."""
    younger = em.expr(e.args[0])
    fn = em.module.declare_intrinsic("llvm.nvvm.cp.async.wait.group",
                                     fnty=ll.FunctionType(ll.VoidType(), [I32]))
    done = em.new_block("wait_done")
    for n in range(MAX_IN_FLIGHT):
        b = em.builder
        here, next_bb = em.new_block(f"wait_{n}"), em.new_block(f"wait_over_{n}")
        b.cbranch(b.icmp_signed("<=", younger, i32(n)), here, next_bb)
        b.position_at_end(here)
        b.call(fn, [i32(n)])
        b.branch(done)
        b.position_at_end(next_bb)
    em.builder.call(fn, [i32(MAX_IN_FLIGHT)])
    em.builder.branch(done)
    em.builder.position_at_end(done)
