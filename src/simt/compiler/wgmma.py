"""What the lowerings of the warpgroup MMA (lang/wgmma.py) share on every LLVM target:
zeroing an accumulator, storing it (each thread its own registers, at their (row, column) of
the PTX ISA's layout), and where a tile's elements lie. The devices' own:
backends/cuda/lower/wgmma.py (descriptor bits, inline PTX) and backends/cpu/lower/wgmma.py
(each thread computes its registers from the shared tiles).

Every access to an accumulator register uses a constant index, so that LLVM keeps the
accumulator in registers on the GPU."""
from llvmlite import ir as ll

from ..ir import types as T
from ..lang import bfloat16
from ..lang.registry import lowering
from ..lang.wgmma import store, zero
from .flat import flat_address
from .lltypes import F16, F32, I64, i64, memory

ZERO = ll.Constant(F32, 0.0)


def register_address(em, data, i):
    """The address of accumulator register i in its local array."""
    return em.builder.gep(data, [i64(i)], source_etype=F32)


def thread_place(b, rank):
    """(first row, first column) of a thread's registers, from its rank in the block (i32):
    16 * warp + lane // 4 and 2 * (lane % 4), as i64."""
    rank = b.zext(rank, I64)
    lane, warp = b.and_(rank, i64(31)), b.and_(b.lshr(rank, i64(5)), i64(3))
    row = b.add(b.mul(warp, i64(16)), b.lshr(lane, i64(2)))
    return row, b.mul(b.and_(lane, i64(3)), i64(2))


def operand_offset(b, t, row, k):
    """Byte offset, from a tile's start, of the operand at (row, k): row a multiple of 8, k
    of one instruction's K (lang/wgmma.py's layouts; i64 values)."""
    rows = b.mul(b.lshr(row, i64(3)), i64(t.sbo))
    along_k = b.mul(k, i64(t.element_bytes * (1 if t.swizzle else t.lbo // 16)))
    return b.add(rows, along_k)


@lowering(zero)
def _zero(em, e):
    data = em.expr(e.args[0]).data
    for i in range(e.args[0].type.registers):
        em.builder.store(ZERO, register_address(em, data, i))


def _narrow(b, value, dtype):
    if dtype == F32:
        return value
    return b.fptrunc(value, F16) if dtype == F16 else bfloat16.narrow(b, value)


@lowering(store)
def _store(em, e):
    out_node, offset_node, ldm_node, acc_node, rank_node = e.args
    out, offset, ldm = em.expr(out_node), em.expr(offset_node), em.expr(ldm_node)
    data = em.expr(acc_node).data
    b = em.builder
    row0, col0 = thread_place(b, em.expr(rank_node))
    start = b.add(offset, b.add(b.mul(row0, ldm), col0))
    below = b.mul(ldm, i64(8))
    elem = memory(T.element_type(out_node.type.dtype))
    for i in range(acc_node.type.registers):
        b = em.builder
        value = b.load(register_address(em, data, i), typ=F32)
        index = b.add(start, i64(8 * (i // 4) + i % 2))
        if i % 4 >= 2:
            index = b.add(index, below)
        address = flat_address(em, out, index, e.attrs["label"], e.loc)
        em.builder.store(_narrow(em.builder, value, elem), address)
