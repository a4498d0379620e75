"""TMA (lang/tma.py) on the CPU device: each copy happens at once, element by element, in
the thread that issues it. A load reads the box from global memory (out-of-bounds elements
filled), writes it to shared memory through the map's swizzle and counts the box's bytes off
the barrier (cpu/lower/mbarrier.py ``complete_tx``); a store writes the in-bounds elements
back; commit_group and wait_group have nothing to wait for.

The swizzle is CUTLASS's ``Swizzle<B, 4, 3>`` on the byte offset in the shared array (the
GPU applies it to the shared address, hence tma.load's alignment rule): bits 4..4+B (the
16-byte chunk) are XORed with bits 7..7+B (the 128-byte row), B = 1, 2, 3 for the 32B, 64B
and 128B modes."""
from llvmlite import ir as ll

from ....compiler.lltypes import I8, I32, I64, i64
from ....errors import NotSupportedError
from ....lang.tma import commit_group, copy, load, store, wait_group
from ....lang.registry import declare_target, lowering
from ....lang.sync import fence_proxy_async
from ....compiler.flat import counted_loop
from .mbarrier import complete_tx

TARGET = declare_target("cpu")

SWIZZLE_BITS = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
NAN_BITS = {2: 0x7E00, 4: 0x7FC00000, 8: 0x7FF8000000000000}
BF16_NAN = 0x7FC0


class _Barrier:
    """The barrier operand as mbarrier.py's helpers read it (``e.args[0]``)."""

    def __init__(self, storage):
        self.args = [storage]


def swizzle(b, offset, mode):
    """The swizzled byte offset (i64) of a byte offset in the box."""
    bits = SWIZZLE_BITS[mode]
    if not bits:
        return offset
    row = b.and_(b.lshr(offset, i64(7)), i64((1 << bits) - 1))
    return b.xor(offset, b.shl(row, i64(4)))


def _box_element(em, t, tmap, coords, k):
    """(in bounds, global byte address) of flat box element k (an i64)."""
    b = em.builder
    base, shape, strides = (b.extract_value(tmap, i) for i in range(3))
    inside, address = ll.Constant(ll.IntType(1), 1), b.ptrtoint(base, I64)
    step = 1
    for d in range(t.ndim - 1, -1, -1):
        index = b.urem(b.udiv(k, i64(step)), i64(t.box[d]))
        step *= t.box[d]
        where = b.add(b.sext(coords[d], I64), index)
        extent = b.extract_value(shape, d)
        inside = b.and_(inside, b.icmp_unsigned("<", where, extent))
        address = b.add(address, b.mul(where, b.extract_value(strides, d)))
    return inside, b.inttoptr(address, base.type)


def _element_copies(em, e, shared_arg, tmap_arg, coord_args, body):
    t = e.args[tmap_arg].type
    tmap = em.expr(e.args[tmap_arg])
    shared = em.expr(e.args[shared_arg]).data
    coords = [em.expr(c) for c in e.args[coord_args:]]
    item = t.dtype.itemsize
    count = 1
    for extent in t.box:
        count *= extent
    with counted_loop(em, i64(count), counter="tma_element") as k:
        inside, address = _box_element(em, t, tmap, coords, k)
        offset = swizzle(em.builder, em.builder.mul(k, i64(item)), t.swizzle)
        local = em.builder.gep(shared, [offset], source_etype=I8)
        body(em.builder, inside, address, local, ll.IntType(8 * item), t)


def _fill(t, element):
    if t.oob_fill == "zero" or t.dtype.kind not in "fV":
        return ll.Constant(element, 0)
    return ll.Constant(element, BF16_NAN if t.dtype.kind == "V" else NAN_BITS[t.dtype.itemsize])


@lowering(load, target=TARGET)
def _load_cpu(em, e):
    if e.attrs.get("multicast"):
        raise NotSupportedError("simt.tma.load with multicast is not emulated on the cpu "
                                "device yet: run it on a GPU (sm_90)")

    def body(b, inside, address, local, element, t):
        b.store(_fill(t, element), local)
        read, done = em.new_block("tma_load_element"), em.new_block("tma_load_next")
        b.cbranch(inside, read, done)
        b.position_at_end(read)
        b.store(b.load(address, typ=element), local)
        b.branch(done)
        b.position_at_end(done)
    _element_copies(em, e, 0, 1, 3, body)
    complete_tx(em, _Barrier(e.args[2]), ll.Constant(I32, e.args[1].type.box_bytes))


@lowering(store, target=TARGET)
def _store_cpu(em, e):
    def body(b, inside, address, local, element, t):
        write, done = em.new_block("tma_store_element"), em.new_block("tma_store_next")
        b.cbranch(inside, write, done)
        b.position_at_end(write)
        b.store(b.load(local, typ=element), address)
        b.branch(done)
        b.position_at_end(done)
    _element_copies(em, e, 0, 1, 2, body)


@lowering(copy, target=TARGET)
def _copy_cpu(em, e):
    b = em.builder
    dst, src = em.expr(e.args[0]).data, em.expr(e.args[1]).data
    nbytes = em.expr(e.args[2])
    memcpy = em.module.declare_intrinsic("llvm.memcpy", [dst.type, src.type, I64])
    b.call(memcpy, [dst, src, b.sext(nbytes, I64), ll.Constant(ll.IntType(1), 0)])
    complete_tx(em, _Barrier(e.args[3]), nbytes)


@lowering(commit_group, target=TARGET)
def _commit_cpu(em, e):
    return None                    # the stores are done


@lowering(wait_group, target=TARGET)
def _wait_cpu(em, e):
    return None


@lowering(fence_proxy_async, target=TARGET)
def _fence_proxy_cpu(em, e):
    return None                    # a copy here reads shared memory as any load does
