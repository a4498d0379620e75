"""Asynchronous copies on the sim device, complete at once in the thread that issues them,
element by element through the arrays' checked accesses (memory.py), with the CPU device's
semantics: simt.memcpy_async (backends/cpu/lower/asynccopy.py) and TMA (lang/tma.py,
backends/cpu/lower/tma.py: the same swizzle, out-of-bounds elements filled on loads and
not written by stores, the box's bytes counted off the barrier). Generated code calls these
as ``_k_cp``."""
import itertools
import math

from . import mbarrier

SWIZZLE_BITS = {"none": 0, "32B": 1, "64B": 2, "128B": 3}


class SimTensorMap:
    """A tensor map as sim kernels get it: the whole array (a checked SimArray of the map's
    shape) and the map's type (box, swizzle, fill)."""

    __slots__ = ("array", "box", "swizzle", "fill", "item")

    def __init__(self, array, t):
        self.array, self.box, self.swizzle = array, t.box, SWIZZLE_BITS[t.swizzle]
        self.item = t.dtype.itemsize
        nan = t.oob_fill == "nan" and t.dtype.kind == "f"
        self.fill = math.nan if nan else 0.0 if t.dtype.kind == "f" else 0


def flat(array):
    """A C-contiguous array as one dimension (the flat index's bounds checked as on the CPU
    device: against the whole size)."""
    if len(array.shape) == 1:
        return array
    return array.reshaped(array.off, (math.prod(array.shape),), (array.est[-1],))


def memcpy_async(dst, di, src, si, count, dst_site, src_site):
    """simt.memcpy_async: count elements src[si:] -> dst[di:] (flat indices), at once."""
    dst, src = flat(dst), flat(src)
    for k in range(count):
        dst.st(dst_site, src.ld(src_site, si + k), di + k)


def _box(tmap, coords):
    """(flat shared index after the swizzle, global index or None when outside) per box
    element, in the box's C order."""
    shape, item, bits = tmap.array.shape, tmap.item, tmap.swizzle
    mask = (1 << bits) - 1
    for k, rel in enumerate(itertools.product(*map(range, tmap.box))):
        at = tuple(c + r for c, r in zip(coords, rel))
        inside = all(0 <= i < n for i, n in zip(at, shape))
        offset = k * item
        if bits:
            offset ^= ((offset >> 7) & mask) << 4
        yield offset // item, at if inside else None


def tma_load(th, dst, tmap, coords, barrier, site):
    dst = flat(dst)
    src, fill = tmap.array, tmap.fill
    for j, at in _box(tmap, coords):
        dst.st(site, fill if at is None else src.ld(site, *at), j)
    mbarrier.complete_tx(th, barrier, math.prod(tmap.box) * tmap.item)


def tma_store(src, tmap, coords, site):
    src = flat(src)
    dst = tmap.array
    for j, at in _box(tmap, coords):
        if at is not None:
            dst.st(site, src.ld(site, j), *at)


def tma_copy(th, dst, src, nbytes, barrier, dst_site, src_site):
    """simt.tma.copy: nbytes of src -> dst (arrays of one element size), then the bytes
    counted off the barrier."""
    memcpy_async(dst, 0, src, 0, nbytes // dst.dtype.itemsize, dst_site, src_site)
    mbarrier.complete_tx(th, barrier, nbytes)
