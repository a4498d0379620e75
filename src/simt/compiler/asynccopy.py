"""What the lowerings of simt.memcpy_async (lang/pipeline.py) share on every LLVM target:
the operands and the copy as a loop of loads and stores, complete at once (always on the
CPU device: backends/cpu/lower/asynccopy.py; on the GPU when cp.async cannot be used:
backends/cuda/lower/asynccopy.py)."""
from .flat import counted_loop, flat_address
from .lltypes import memory


def element_loop(em, e, dst, di, src, si, count):
    elem = memory(e.args[0].type.element)

    with counted_loop(em, count) as k:
        b = em.builder
        value = b.load(flat_address(em, src, b.add(si, k), e.attrs["src"], e.loc), typ=elem)
        b = em.builder
        address = flat_address(em, dst, b.add(di, k), e.attrs["dst"], e.loc)
        em.builder.store(value, address)


def operands(em, e):
    """dst, dst_index, src, src_index, count (a barrier's storage, if any, is not read)."""
    return [em.expr(a) for a in e.args[:5]]
