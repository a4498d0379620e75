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
from .lltypes import F16, F32, I32, I64, i64, memory


def register_type(acc):
    """The LLVM type of an accumulator's registers (its type ``acc``): float or i32."""
    return I32 if acc.integer else F32


def register_address(em, data, i, elem=F32):
    """The address of accumulator register i in its local array of ``elem``."""
    return em.builder.gep(data, [i64(i)], source_etype=elem)


def thread_place(b, rank):
    """(first row, first column) of a thread's registers, from its rank in the block (i32):
    16 * warp + lane // 4 and 2 * (lane % 4), as i64."""
    rank = b.zext(rank, I64)
    lane, warp = b.and_(rank, i64(31)), b.and_(b.lshr(rank, i64(5)), i64(3))
    row = b.add(b.mul(warp, i64(16)), b.lshr(lane, i64(2)))
    return row, b.mul(b.and_(lane, i64(3)), i64(2))


def operand_offset(b, t, row, k):
    """Byte offset, from a tile's start, of the operand at (row, k): row a multiple of 8, k
    of one instruction's K (lang/wgmma.py's layouts; i64 values). An M- or N-major tile's
    operand starts at array row row + k."""
    if t.major == "mn":
        return b.mul(b.add(row, k), i64(t.row_bytes))
    rows = b.mul(b.lshr(row, i64(3)), i64(t.sbo))
    along_k = b.mul(k, i64(t.element_bytes * (1 if t.swizzle else t.lbo // 16)))
    return b.add(rows, along_k)


@lowering(zero)
def _zero(em, e):
    data = em.expr(e.args[0]).data
    elem = register_type(e.args[0].type)
    for i in range(e.args[0].type.registers):
        em.builder.store(elem(0), register_address(em, data, i, elem))


def _narrow(b, value, dtype):
    if dtype in (F32, I32):                # as it is (int32 goes to int32 only)
        return value
    if dtype != F16:
        return bfloat16.narrow(b, value)
    count = getattr(value.type, "count", None)          # a pair: <2 x float>
    return b.fptrunc(value, ll.VectorType(F16, count) if count else F16)


@lowering(store)
def _store(em, e):
    """Each thread's registers 2i and 2i+1 are neighbours in a row: where the array's
    first element of the thread and its row length keep every pair aligned (the usual case),
    each pair is one store of two elements (the CUDA C twin's half2 stores); otherwise one
    store an element."""
    out_node, offset_node, ldm_node, acc_node, rank_node = e.args
    out, offset, ldm = em.expr(out_node), em.expr(offset_node), em.expr(ldm_node)
    data = em.expr(acc_node).data
    b = em.builder
    row0, col0 = thread_place(b, em.expr(rank_node))
    start = b.add(offset, b.add(b.mul(row0, ldm), col0))
    elem = memory(T.element_type(out_node.type.dtype))
    size = out_node.type.dtype.itemsize
    first = b.add(b.ptrtoint(out.data, I64), b.mul(start, i64(size)))
    spread = b.or_(first, b.mul(ldm, i64(size)))
    aligned = b.icmp_unsigned("==", b.and_(spread, i64(2 * size - 1)), i64(0))
    with b.if_else(aligned) as (paired, single):
        with paired:
            _store_registers(em, e, out, data, start, ldm, elem, size, 2)
        with single:
            _store_registers(em, e, out, data, start, ldm, elem, size, 1)


def _store_registers(em, e, out, data, start, ldm, elem, size, width):
    """Store the accumulator ``width`` registers (1, or 2: an aligned pair) at a time."""
    below = em.builder.mul(ldm, i64(8))
    label, registers = e.attrs["label"], e.args[3].type.registers
    kind = register_type(e.args[3].type)
    for i in range(0, registers, width):
        b = em.builder
        index = b.add(start, i64(8 * (i // 4) + i % 2))
        if i % 4 >= 2:
            index = b.add(index, below)
        values = [b.load(register_address(em, data, i + j, kind), typ=kind)
                  for j in range(width)]
        if width == 1:
            address = flat_address(em, out, index, label, e.loc)
            em.builder.store(_narrow(b, values[0], elem), address)
            continue
        flat_address(em, out, em.builder.add(index, i64(1)), label, e.loc)   # bounds
        address = flat_address(em, out, index, label, e.loc)
        pair = ll.Constant(ll.VectorType(kind, 2), None)
        for j, value in enumerate(values):
            pair = em.builder.insert_element(pair, value, i64(j))
        # narrowed as a pair: one cvt.rn.bf16x2.f32 (or f16x2) on the GPU
        em.builder.store(_narrow(em.builder, pair, elem), address, align=width * size)
