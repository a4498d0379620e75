"""A CudaArray's texels in a host buffer, for the devices that keep them on the host: the
cpu device (cpu/texmem.py: its kernels read the descriptor) and the sim device
(sim/textures.py: its kernels read the NumPy array)."""
import numpy as np


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
