"""The warpgroup MMA (lang/wgmma.py) on the CPU device. A descriptor is the byte offset of
its operand from the block's shared memory; the tile's layout is in its type. At
``mma_async`` each thread computes its own accumulator registers (the (row, column) pairs
of the PTX ISA's layout) from the shared tiles, reading each element where the layout and
the swizzle put it: the tiles were written before a barrier in a correct program, so this is
what the GPU computes (products exact, sums in float32). Fence, commit and wait order
nothing on the CPU: they are no-ops."""
from llvmlite import ir as ll

from ....compiler import wgmma as shared   # noqa: F401  (the shared lowerings: zero, store)
from ....compiler.flat import counted_loop
from ....compiler.lltypes import F32, I8, I64, i64, memory
from ....compiler.wgmma import operand_offset, thread_place
from ....ir import types as T
from ....lang.registry import declare_target, lowering
from ....lang.wgmma import KINDS, STORAGE, SWIZZLES, commit_group, descriptor, fence, mma_async, \
    wait_group
from .wmma import _widen

ZERO = ll.Constant(F32, 0.0)
TARGET = declare_target("cpu")


@lowering(descriptor, target=TARGET)
def _descriptor(em, e):
    array, row, k = e.args
    b = em.builder
    start = b.sub(b.ptrtoint(em.expr(array).data, I64), b.ptrtoint(em.shared_base, I64))
    return b.add(start, operand_offset(b, e.type, em.expr(row), em.expr(k)))


def _element(em, desc, t, row, k):
    """Element (row, k) of a descriptor's operand (i64 row and k), widened to float32; row
    is the M (or N) index."""
    b = em.builder
    size = t.element_bytes
    along_k = b.mul(k, i64(size))
    if t.major == "mn":            # rows along K, M (N) contiguous in chunks lbo apart
        per_row = t.row_bytes // size
        offset = b.add(desc, b.add(b.mul(b.udiv(row, i64(per_row)), i64(t.lbo)),
                                   b.mul(b.urem(row, i64(per_row)), i64(size))))
        offset = b.add(offset, b.add(b.mul(b.lshr(k, i64(3)), i64(t.sbo)),
                                     b.mul(b.and_(k, i64(7)), i64(t.row_bytes))))
        chunks = SWIZZLES[t.swizzle] // 16 - 1
        offset = b.xor(offset, b.shl(b.and_(b.lshr(offset, i64(7)), i64(chunks)), i64(4)))
        elem = memory(T.element_type(STORAGE[t.precision]))
        value = b.load(b.gep(em.shared_base, [offset], source_etype=I8), typ=elem)
        return _widen(b, value, t.precision)
    offset = b.add(b.add(desc, b.mul(b.lshr(row, i64(3)), i64(t.sbo))),
                   b.mul(b.and_(row, i64(7)), i64(t.row_bytes)))
    if t.swizzle:                  # contiguous along the row, then the address's XOR
        offset = b.add(offset, along_k)
        chunks = SWIZZLES[t.swizzle] // 16 - 1
        offset = b.xor(offset, b.shl(b.and_(b.lshr(offset, i64(7)), i64(chunks)), i64(4)))
    else:                          # 16-byte core-matrix rows, lbo apart along k
        offset = b.add(offset, b.add(b.mul(b.lshr(along_k, i64(4)), i64(t.lbo)),
                                     b.and_(along_k, i64(15))))
    elem = memory(T.element_type(STORAGE[t.precision]))
    value = b.load(b.gep(em.shared_base, [offset], source_etype=I8), typ=elem)
    return _widen(b, value, t.precision)


@lowering(mma_async, target=TARGET)
def _mma(em, e):
    acc, a, b_node, scale, rank = e.args
    ta, tb = a.type, b_node.type
    data = em.expr(acc).data
    da, db, keep = em.expr(a), em.expr(b_node), em.expr(scale)
    row0, col0 = thread_place(em.builder, em.expr(rank))
    total = em.alloca(F32, name="wgmma_sum")
    with counted_loop(em, i64(acc.type.registers)) as i:
        b = em.builder
        row = b.add(row0, b.mul(b.lshr(b.and_(i, i64(3)), i64(1)), i64(8)))
        col = b.add(b.add(col0, b.mul(b.lshr(i, i64(2)), i64(8))), b.and_(i, i64(1)))
        register = b.gep(data, [i], source_etype=F32)
        old = b.load(register, typ=F32)
        b.store(b.select(b.icmp_signed("!=", keep, keep.type(0)), old, ZERO), total)
        with counted_loop(em, i64(KINDS[ta.precision][0])) as k:
            x = _element(em, da, ta, row, k)
            y = _element(em, db, tb, col, k)
            b = em.builder
            b.store(b.fadd(b.load(total, typ=F32), b.fmul(x, y)), total)
        em.builder.store(em.builder.load(total, typ=F32), register)


@lowering(fence, commit_group, wait_group, target=TARGET)
def _ordering(em, e):
    """Nothing to order: each mma_async has finished when it returns."""
