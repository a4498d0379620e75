"""Page-locked host memory as NumPy arrays (cuMemHostAlloc), freed when the array dies."""

import numpy as np

from simt.backends.cuda.driver import api, call


class _HostBuffer:
    """Owns one cuMemHostAlloc block; NumPy arrays made from it keep it alive."""

    def __init__(self, ptr, nbytes, backend):
        self.ptr = ptr
        self.nbytes = nbytes
        self.backend = backend
        self.__array_interface__ = {
            "shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3,
        }

    def __del__(self):
        try:
            self.backend.free(self.ptr, "cuMemFreeHost")
        except Exception:
            pass   # interpreter shutdown or a dead context: the process is ending anyway


def host_alloc(backend, nbytes, flags):
    """A uint8 NumPy array of ``nbytes`` over new page-locked memory, and its pointer."""
    driver = api()
    backend.make_current()
    ptr = int(call(driver.cuMemHostAlloc, max(nbytes, 1), flags, request=nbytes))
    with backend.held_lock:
        backend.held[ptr] = nbytes
    array = np.asarray(_HostBuffer(ptr, nbytes, backend))
    return array, ptr


def _combined(driver, write_combined):
    return driver.CU_MEMHOSTALLOC_WRITECOMBINED if write_combined else 0


def alloc_pinned(backend, nbytes, write_combined=False):
    """Page-locked host memory (cudaHostAlloc) as a uint8 NumPy array.

    Always portable (cudaHostAllocPortable): page-locked in every context, so any
    device's async copies can use it; simt.pinned_array(portable=...) relies on this.
    """
    driver = api()
    flags = driver.CU_MEMHOSTALLOC_PORTABLE | _combined(driver, write_combined)
    return host_alloc(backend, nbytes, flags)[0]


def alloc_mapped(backend, nbytes, write_combined=False):
    """Zero-copy memory: (uint8 NumPy array, device pointer to the same bytes)."""
    driver = api()
    flags = driver.CU_MEMHOSTALLOC_DEVICEMAP | driver.CU_MEMHOSTALLOC_PORTABLE | \
        _combined(driver, write_combined)
    array, ptr = host_alloc(backend, nbytes, flags)
    device_ptr = int(call(driver.cuMemHostGetDevicePointer, ptr, 0))
    return array, device_ptr
