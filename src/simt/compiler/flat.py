"""Flat element addresses and counted loops, for lowerings that move runs of elements (warp
matrix tiles, asynchronous copies). The CPU backend builds its loops over blocks, threads
and lanes with the same counted loop (compiler/ is below backends/)."""
from llvmlite import ir as ll

from .lltypes import ArrayValue, i64

_FLAT_BLOCKS = ("flat_loop", "flat_body", None, "flat_done")


def flat_address(em, array, offset, label, loc, access=None):
    """Address of flat element ``offset`` of a C-contiguous array, bounds-checked (and in
    checked mode, an ``access``: "read" or "write", checked)."""
    b = em.builder
    size = array.shape[0]
    for extent in array.shape[1:]:
        size = b.mul(size, extent)
    flat = ArrayValue(array.type.with_(ndim=1), array.data, [size], [i64(1)])
    return em.element_address(flat, [offset], label, loc, access)


class counted_loop:
    """``for index in range(start, stop)`` as an LLVM loop; the with block emits the body::

        with counted_loop(em, count) as i:
            ...

    The index has ``stop``'s integer type and lives in a stack slot named ``counter``; ``start``
    is 0 unless given. ``blocks`` is (head, body, step, exit), each a block or the name of a new
    one (new ones are appended in that order when the loop starts, so a caller that wants
    another layout makes the blocks itself). Without a step block the body's end increments
    the index; with one, the body may branch to it (``continue``) and its end falls into it.
    The exit may be an enclosing loop's step block. ``signed`` picks the comparison and
    ``flags`` the increment's (``nuw``/``nsw``). After the with block the builder is at the
    exit, and ``back_edge`` is the branch to the head (for loop metadata)."""

    def __init__(self, em, stop, counter="flat_i", blocks=_FLAT_BLOCKS, *, start=None,
                 signed=True, flags=()):
        self.em, self.stop, self.counter, self.blocks = em, stop, counter, blocks
        self.start = ll.Constant(stop.type, 0) if start is None else start
        self.signed, self.flags = signed, flags
        self.back_edge = None

    def __enter__(self):
        em = self.em
        self.slot = em.alloca(self.stop.type, name=self.counter)
        b = em.builder
        b.store(self.start, self.slot)
        self.head, self.body, self.step, self.exit = (
            em.new_block(blk) if isinstance(blk, str) else blk for blk in self.blocks)
        b.branch(self.head)
        b.position_at_end(self.head)
        self.index = b.load(self.slot, typ=self.stop.type)
        compare = b.icmp_signed if self.signed else b.icmp_unsigned
        b.cbranch(compare("<", self.index, self.stop), self.body, self.exit)
        b.position_at_end(self.body)
        return self.index

    def __exit__(self, kind, value, traceback):
        if kind is not None:
            return False
        b = self.em.builder
        if self.step is not None:
            # an inner loop may have left the builder at this step block, its exit
            if not b.block.is_terminated and b.block is not self.step:
                b.branch(self.step)
            b.position_at_end(self.step)
        one = ll.Constant(self.stop.type, 1)
        b.store(b.add(self.index, one, flags=self.flags), self.slot)
        self.back_edge = b.branch(self.head)
        b.position_at_end(self.exit)
        return False
