"""CUDA arrays, textures and surfaces on the CPU device: texels in host buffers
(HostArray, backends/hosttexels.py, shared with the sim device), and the (data, extent,
strides) descriptors kernels read (args.TextureDescriptor; backends/cpu/textures.py lowers
the reads). runtime/textures.py owns the user-facing objects and reaches these through the
backend's texture hooks."""
import numpy as np

from ..hostmem import byte_rows, row_spans  # noqa: F401  (device.py's 2-D/3-D copies)
from ..hosttexels import HostArray


class HostMipmap:
    """A MipmappedArray's levels (HostArrays) and the table of their descriptors a
    mipmapped texture reads: one row (address, extent[4], byte strides[4]) per level,
    the layout of textures.TEX_STRUCT."""

    def __init__(self, backend, mipmap):
        self.backend, self.levels = backend, [None] * mipmap.levels
        self._table = None

    def level(self, index, array):
        self.levels[index] = HostArray(self.backend, array)
        return self.levels[index]

    def table(self):
        if self._table is None:
            rows = np.zeros((len(self.levels), 9), np.int64)
            for l, level in enumerate(self.levels):
                data, extent, strides = level.descriptor()
                rows[l] = [data] + list(extent) + list(strides)
            self._table = rows
        return self._table


class HostTexture:
    """A texture or surface: the descriptor of what it reads (a CudaArray, or a 1D or
    pitched 2D device array, ``kind`` 'array', 'linear' or 'pitch2d')."""

    def __init__(self, source, kind, mipmap_levels=None):
        self.source, self.kind, self.mipmap_levels = source, kind, mipmap_levels

    def descriptor(self):
        source = self.source
        if self.kind == "array":
            return source._impl.descriptor()
        if self.kind == "mipmap":
            # data: the level table; extent: level 0's; strides: the level count and the
            # bias and clamps as float32 bits (textures.py _mipmap_lod reads them)
            table = source._impl.table()
            bits = np.array(self.mipmap_levels, np.float32).view(np.uint32).astype(np.int64)
            return (table.ctypes.data, [int(n) for n in table[0, 1:5]],
                    [len(table)] + [int(b) for b in bits])
        if self.kind == "linear":
            return source.ptr, [source.shape[0], 1, 1, 1], [source.itemsize, 0, 0, 0]
        return (source.ptr, [source.shape[1], source.shape[0], 1, 1],
                [source.strides[1], source.strides[0], 0, 0])
