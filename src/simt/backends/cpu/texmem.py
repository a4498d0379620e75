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
        self.layered, self.ndim = array.layered, array.ndim
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
        spatial = list(range(int(self.layered), int(self.layered) + self.ndim))
        extent, strides = [1, 1, 1, 1], [0, 0, 0, 0]
        for d, axis in enumerate(reversed(spatial)):
            extent[d], strides[d] = host.shape[axis], host.strides[axis]
        if self.layered:
            extent[3], strides[3] = host.shape[0], host.strides[0]
        return host.ctypes.data, extent, strides


class HostTexture:
    """A texture or surface: the descriptor of what it reads (a CudaArray, or a 1D or
    pitched 2D device array, ``kind`` 'array', 'linear' or 'pitch2d')."""

    def __init__(self, source, kind):
        self.source, self.kind = source, kind

    def descriptor(self):
        source = self.source
        if self.kind == "array":
            return source._impl.descriptor()
        if self.kind == "linear":
            return source.ptr, [source.shape[0], 1, 1, 1], [source.itemsize, 0, 0, 0]
        return (source.ptr, [source.shape[1], source.shape[0], 1, 1],
                [source.strides[1], source.strides[0], 0, 0])
