"""Virtual memory management (guide appendix E): a device array that grows in place.

``VirtualMemory(reserve_bytes)`` reserves a range of the GPU's address space; each
``grow(nbytes)`` creates physical memory and maps it at the end of what is mapped, and
returns a DeviceArray over the whole mapped range, which starts at the same address
every time: pointers into it, kernels' included, stay valid as it grows. GPU only.
"""
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import DTypeLike

from . import devices

if TYPE_CHECKING:
    from .arrays import DeviceArray


class VirtualMemory:
    """An address range of ``reserve_bytes`` (rounded up to the allocation granularity)
    on the current device (or ``device``)."""

    def __init__(self, reserve_bytes, device=None):
        if int(reserve_bytes) <= 0:
            raise ValueError(f"VirtualMemory reserves a positive number of bytes, not "
                             f"{reserve_bytes}")
        self.device = devices.lookup(device)
        self.impl = self.device.backend.virtual_memory(int(reserve_bytes))

    granularity = property(lambda self: self.impl.granularity,
                           doc="Bytes physical memory is created and mapped in.")
    reserved = property(lambda self: self.impl.reserved, doc="Bytes of address space reserved.")
    mapped = property(lambda self: self.impl.mapped, doc="Bytes mapped so far.")
    ptr = property(lambda self: self.impl.base, doc="The range's start address.")

    def grow(self, nbytes: int, dtype: DTypeLike = np.uint8) -> "DeviceArray":
        """Map ``nbytes`` more (rounded up to the granularity) and return the whole mapped
        range as a 1-D DeviceArray of ``dtype``; its address does not change. The memory
        stays until this object and every array over it are gone, or ``free()``."""
        if int(nbytes) <= 0:
            raise ValueError(f"grow takes a positive number of bytes, not {nbytes}")
        self.impl.grow(int(nbytes))
        return self.array(dtype)

    def array(self, dtype: DTypeLike = np.uint8) -> "DeviceArray":
        """The mapped range as a 1-D DeviceArray of ``dtype``."""
        from .arrays import DeviceArray
        from .backend import Allocation
        dtype = np.dtype(dtype)
        alloc = Allocation(self.impl.base, self.impl.mapped, self.device.backend,
                           keepalive=self.impl)
        return DeviceArray((self.impl.mapped // dtype.itemsize,), dtype, alloc=alloc,
                           device=self.device)

    def free(self) -> None:
        """Unmap and release the memory and the range now (after the device's work);
        arrays over it must not be used afterwards (CUDA does not catch that)."""
        self.impl.release()

    def __repr__(self):
        return (f"<simt VirtualMemory on {self.device.name}: {self.mapped} of {self.reserved} "
                "bytes mapped>")
