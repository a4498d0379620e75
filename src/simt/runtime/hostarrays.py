"""Host arrays the device can reach: pinned (page-locked, cudaHostAlloc), mapped
(zero-copy, cudaHostAllocMapped) and managed (unified memory, cudaMallocManaged)."""

import math

import numpy as np
from numpy.typing import DTypeLike

from simt.runtime import devices
from simt.runtime.arrays import DeviceArray, Shape, _allocate, _normalize_shape


def pinned_array(shape: Shape, dtype: DTypeLike = np.float64, order: str = "C",
                 portable: bool = False, write_combined: bool = False) -> np.ndarray:
    """A NumPy array in page-locked host memory (cudaHostAlloc): fast, async-capable copies.

    ``portable=True`` is cudaHostAllocPortable: page-locked for every device's context,
    not only the current one. On GPUs simt allocates all pinned memory that way, so both
    values give the same memory (CUDA's non-portable default only ever makes copies from
    another device slower); on the CPU device the option has nothing to change.
    ``write_combined=True`` is cudaHostAllocWriteCombined: the CPU writes it without
    caching (reading it from the CPU is very slow), and a GPU reads it across the bus
    without snooping the CPU's caches, much faster for mapped memory (CUDA by Example's
    zero-copy dot: 5x on an H100). On the CPU device it is ordinary memory.
    """
    buffer = _allocate(devices.get_device(), _nbytes(shape, dtype), "alloc_pinned",
                       write_combined)
    return _shaped(buffer, shape, dtype, order)


def mapped_array(shape: Shape, dtype: DTypeLike = np.float64, order: str = "C",
                 write_combined: bool = False) -> np.ndarray:
    """A host array mapped into the device's address space (zero-copy, cudaHostAllocMapped).

    Returns a ``MappedArray``: a NumPy array whose ``device_ptr`` kernels can use.
    ``write_combined``: as for pinned_array (for memory kernels only read, as CUDA by
    Example's zero-copy inputs).
    """
    device = devices.get_device()
    buffer, device_ptr = _allocate(device, _nbytes(shape, dtype), "alloc_mapped",
                                   write_combined)
    array = _shaped(buffer, shape, dtype, order).view(MappedArray)
    array.device, array.base_device_ptr = device, device_ptr
    return array


def managed_array(shape: Shape, dtype: DTypeLike = np.float64,
                  order: str = "C") -> "DeviceArray":
    """A DeviceArray in unified memory (cudaMallocManaged): kernels use it, and
    ``np.asarray(array)`` on the host reads and writes the same memory."""
    device = devices.get_device()
    alloc = _allocate(device, _nbytes(shape, dtype), "alloc_managed")
    alloc.managed = True
    return DeviceArray(shape, dtype, order=order, alloc=alloc, device=device)


class MappedArray(np.ndarray):
    """A NumPy array in mapped host memory; ``device_ptr`` is its element 0 on the device."""

    device = None
    base_device_ptr = None    # device address of the first byte of the mapping

    def __array_finalize__(self, obj):
        self.device = getattr(obj, "device", None)
        self.base_device_ptr = getattr(obj, "base_device_ptr", None)
        self._host_base = getattr(obj, "_host_base", self.__array_interface__["data"][0])

    @property
    def device_ptr(self):
        """The device address of element 0 (the host address, with unified addressing)."""
        delta = self.__array_interface__["data"][0] - self._host_base
        return self.base_device_ptr + delta


def _nbytes(shape, dtype):
    return math.prod(_normalize_shape(shape)) * np.dtype(dtype).itemsize


def _shaped(buffer, shape, dtype, order):
    """A uint8 host buffer (from alloc_pinned or alloc_mapped) as an array of shape and dtype."""
    shape, dtype = _normalize_shape(shape), np.dtype(dtype)
    return buffer[:_nbytes(shape, dtype)].view(dtype).reshape(shape, order=order)
