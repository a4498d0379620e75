"""CUDA arrays, textures and surfaces on the CPU device: texels in host buffers, and
the (data, extent, strides) descriptors kernels read (args.TextureDescriptor;
backends/cpu/textures.py lowers the reads). runtime/textures.py owns the
user-facing objects and reaches these through the backend's texture hooks."""
import numpy as np

from ..hostmem import byte_rows, row_spans  # noqa: F401  (device.py's 2-D/3-D copies)


class HostArray:
    """A CudaArray's texels: a host array of its ``host_shape`` (channels last)."""

    def __init__(self, backend, array):
        self.backend = backend
        self.lead, self.ndim = array.lead_axes, array.ndim
        self.host = np.zeros(array.host_shape, array.dtype)
        self._descriptor = None

    def copy_from_host(self, host):
        self.host[...] = host

    def copy_from_device(self, source):
        self.host[...] = source.copy_to_host()

    def copy_to_host(self, out):
        self.backend.synchronize()          # kernels may still be writing through surfaces
        out[...] = self.host

    def descriptor(self):
        """(address, extent, byte strides): x first, then y, z, and the layer last (made
        once: the texels stay in one buffer, and ``ndarray.ctypes`` costs microseconds)."""
        if self._descriptor is None:
            self._descriptor = self._describe()
        return self._descriptor

    def _describe(self):
        host = self.host
        spatial = list(range(self.lead, self.lead + self.ndim))
        extent, strides = [1, 1, 1, 1], [0, 0, 0, 0]
        for d, axis in enumerate(reversed(spatial)):
            extent[d], strides[d] = host.shape[axis], host.strides[axis]
        if self.lead:          # layers, faces or (layer, face): one run of layer-faces
            extent[3] = int(np.prod(host.shape[:self.lead]))
            strides[3] = host.strides[self.lead - 1]
        return host.ctypes.data, extent, strides


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
