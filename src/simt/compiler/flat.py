"""Flat element addresses and counted loops for lowerings that move runs of elements
(warp matrix tiles, asynchronous copies)."""
from .lltypes import I64, ArrayValue, i64


def flat_address(em, array, offset, label, loc):
    """Address of flat element ``offset`` of a C-contiguous array, bounds-checked."""
    b = em.builder
    size = array.shape[0]
    for extent in array.shape[1:]:
        size = b.mul(size, extent)
    flat = ArrayValue(array.type.with_(ndim=1), array.data, [size], [i64(1)])
    return em.element_address(flat, [offset], label, loc)


def counted_loop(em, count, body):
    """``for i in range(count): body(i)``, count and i i64 values (an LLVM loop)."""
    counter = em.alloca(I64, name="flat_i")
    b = em.builder
    b.store(i64(0), counter)
    head, run, done = em.new_block("flat_loop"), em.new_block("flat_body"), em.new_block("flat_done")
    b.branch(head)
    b.position_at_end(head)
    i = b.load(counter, typ=I64)
    b.cbranch(b.icmp_signed("<", i, count), run, done)
    b.position_at_end(run)
    body(i)
    b = em.builder
    b.store(b.add(i, i64(1)), counter)
    b.branch(head)
    b.position_at_end(done)
