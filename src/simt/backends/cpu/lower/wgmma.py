"""The warpgroup MMA (lang/wgmma.py) on the CPU device. A descriptor is the byte offset of
its operand from the block's shared memory; the tile's layout is in its type. At
``mma_async`` each thread computes its own accumulator registers (the (row, column) pairs
of the PTX ISA's layout) from the shared tiles, reading each element where the layout and
the swizzle put it: the tiles were written before a barrier in a correct program, so this is
what the GPU computes (products exact, sums in float32, or in int32 wrapping for 8-bit
integers). A register fragment of A is read from the lanes of the thread's warp that hold
its two rows, through the ``exchange`` warp operation before the call (as mma.sync's are,
backends/cpu/lower/mma.py). Fence, commit and wait order nothing on the CPU: they are
no-ops."""
from llvmlite import ir as ll

from ....compiler import wgmma as shared   # noqa: F401  (the shared lowerings: zero, store)
from ....compiler.flat import counted_loop
from ....compiler.lltypes import F32, I8, I32, I64, i32, i64, memory
from ....compiler.wgmma import operand_offset, register_type, thread_place
from ....ir import types as T
from ....lang import float8
from ....lang.registry import declare_target, lowering
from ....lang.wgmma import KINDS, STORAGE, SWIZZLES, commit_group, descriptor, fence, \
    fragment_source, mma_async, wait_group
from .mma import _lanes, _source
from .wmma import _widen

TARGET = declare_target("cpu")
FP8 = {"e4m3": float8.E4M3, "e5m2": float8.E5M2}


@lowering(descriptor, target=TARGET)
def _descriptor(em, e):
    array, row, k = e.args
    b = em.builder
    start = b.sub(b.ptrtoint(em.expr(array).data, I64), b.ptrtoint(em.shared_base, I64))
    return b.add(start, operand_offset(b, e.type, em.expr(row), em.expr(k)))


def _multiplicand(b, value, kind):
    """An element as the tensor core multiplies it: float32, or i32 for 8-bit integers."""
    if kind in FP8:
        return float8.decode_ir(b, value, FP8[kind])
    return _widen(b, value, kind)


def _element(em, desc, t, row, k):
    """Element (row, k) of a descriptor's operand (i64 row and k), widened; row is the M
    (or N) index."""
    b = em.builder
    size = t.element_bytes
    along_k = b.mul(k, i64(size))
    chunks = SWIZZLES[t.swizzle] // 16 - 1
    if t.major == "mn":            # rows along K, M (N) contiguous in chunks lbo apart
        per_row = t.row_bytes // size
        offset = b.add(desc, b.add(b.mul(b.udiv(row, i64(per_row)), i64(t.lbo)),
                                   b.mul(b.urem(row, i64(per_row)), i64(size))))
        offset = b.add(offset, b.add(b.mul(b.lshr(k, i64(3)), i64(t.sbo)),
                                     b.mul(b.and_(k, i64(7)), i64(t.row_bytes))))
        offset = b.xor(offset, b.shl(b.and_(b.lshr(offset, i64(7)), i64(chunks)), i64(4)))
    elif t.swizzle:                # contiguous along the row, then the address's XOR
        offset = b.add(b.add(desc, b.mul(b.lshr(row, i64(3)), i64(t.sbo))),
                       b.mul(b.and_(row, i64(7)), i64(t.row_bytes)))
        offset = b.add(offset, along_k)
        offset = b.xor(offset, b.shl(b.and_(b.lshr(offset, i64(7)), i64(chunks)), i64(4)))
    else:                          # 16-byte core-matrix rows, lbo apart along k
        offset = b.add(b.add(desc, b.mul(b.lshr(row, i64(3)), i64(t.sbo))),
                       b.mul(b.and_(row, i64(7)), i64(t.row_bytes)))
        offset = b.add(offset, b.add(b.mul(b.lshr(along_k, i64(4)), i64(t.lbo)),
                                     b.and_(along_k, i64(15))))
    elem = memory(T.element_type(STORAGE[t.precision]))
    value = b.load(b.gep(em.shared_base, [offset], source_etype=I8), typ=elem)
    return _multiplicand(b, value, t.precision)


def _fragment_rows(em, e, kind, elem):
    """This thread's two rows of A (g and g + 8 of its warp's 16), gathered from the
    register fragments of its warp's lanes: a slot of 2 x K widened elements."""
    steps = KINDS[kind][0]
    rows = em.alloca(ll.ArrayType(elem, 2 * steps), name="wgmma_a_rows")
    lanes = _lanes(em, e)
    quad = em.builder.shl(em.builder.lshr(lanes.lane, i32(2)), i32(2))   # 4 * g
    for half in range(2):
        for k in range(steps):
            lane, index = fragment_source(8 * half, k, kind)     # row g: lane 4g + ...
            b = em.builder
            source = _source(lanes, b.add(quad, i32(lane)))
            value = _multiplicand(b, lanes.arg(1 + index, source), kind)
            em.builder.store(value, em.builder.gep(rows, [i64(half * steps + k)],
                                                   source_etype=elem))
    return rows


def _a_reader(em, e, row0, elem):
    """A function (half, k) -> element (row0 + 8 * half, k) of A, widened (i64 arguments)."""
    a = e.args[1]
    kind = e.attrs["kinds"][0]
    if e.attrs.get("exchange") is not None:
        rows = _fragment_rows(em, e, kind, elem)
        steps = KINDS[kind][0]

        def from_fragments(half, k):
            b = em.builder
            at = b.add(b.mul(half, i64(steps)), k)
            return b.load(b.gep(rows, [at], source_etype=elem), typ=elem)
        return from_fragments
    desc = em.expr(a)

    def from_tile(half, k):
        row = em.builder.add(row0, em.builder.mul(half, i64(8)))
        return _element(em, desc, a.type, row, k)
    return from_tile


@lowering(mma_async, target=TARGET)
def _mma(em, e):
    acc, _, b_node, scale, rank = e.args
    elem = register_type(acc.type)
    integer = elem == I32
    data = em.expr(acc).data
    db, keep = em.expr(b_node), em.expr(scale)
    row0, col0 = thread_place(em.builder, em.expr(rank))
    a_element = _a_reader(em, e, row0, elem)
    total = em.alloca(elem, name="wgmma_sum")
    with counted_loop(em, i64(acc.type.registers)) as i:
        b = em.builder
        half = b.lshr(b.and_(i, i64(3)), i64(1))
        col = b.add(b.add(col0, b.mul(b.lshr(i, i64(2)), i64(8))), b.and_(i, i64(1)))
        register = b.gep(data, [i], source_etype=elem)
        old = b.load(register, typ=elem)
        b.store(b.select(b.icmp_signed("!=", keep, keep.type(0)), old, elem(0)), total)
        with counted_loop(em, i64(KINDS[e.attrs["kinds"][0]][0])) as k:
            x = a_element(half, k)
            y = _element(em, db, b_node.type, col, k)
            b = em.builder
            product = b.mul(x, y) if integer else b.fmul(x, y)
            old = b.load(total, typ=elem)
            b.store(b.add(old, product) if integer else b.fadd(old, product), total)
        em.builder.store(em.builder.load(total, typ=elem), register)


@lowering(fence, commit_group, wait_group, target=TARGET)
def _ordering(em, e):
    """Nothing to order: each mma_async has finished when it returns."""
