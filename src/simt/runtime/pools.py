"""Stream-ordered allocation (the guide's appendix on the stream ordered memory
allocator; API.md section 10): memory pools, allocation on a stream, free on a stream.

``simt.device_array(shape, dtype, stream=s)`` takes memory from a pool in the order of
``s`` (cudaMallocAsync; ``pool=`` names the pool, cudaMallocFromPoolAsync), and
``d.free(stream=s)`` gives it back once the work queued in ``s`` before the free is done
(cudaFreeAsync). A pool keeps freed memory for the next allocation, up to its release
threshold, so allocating and freeing in a loop costs little. An array from a pool that
is dropped without ``free`` goes back in the order of the legacy default stream.

The backend supplies the pool (``create_pool``, ``default_pool``): a CUDA memory pool on
a GPU (backends/cuda/pools.py), a host pool with the same behaviour on the CPU
(backends/hostpools.py).
"""
from numbers import Integral
from typing import Any

from . import devices

class MemoryPool:
    """A memory pool (cudaMemPoolCreate) of ``device`` (default: the current one).

    ``release_threshold``: bytes of freed memory the pool keeps (instead of handing it
    back to the system) across synchronizing calls; 0, CUDA's default, hands back all
    freed memory at the next synchronize. ``used_bytes`` and ``reserved_bytes`` (and
    their ``*_high_bytes`` high-water marks) report what the pool holds.
    """

    def __init__(self, device=None, release_threshold=0, _impl=None):
        self.device = devices.lookup(device)
        self.impl = self.device.backend.create_pool() if _impl is None else _impl
        if _impl is None:
            self.release_threshold = release_threshold

    @classmethod
    def default(cls, device: Any = None) -> "MemoryPool":
        """The device's default pool (cudaDeviceGetDefaultMemPool): what
        ``device_array(..., stream=s)`` uses when no pool is named."""
        device = devices.lookup(device)
        backend = device.backend
        pool = getattr(backend, "_simt_default_pool", None)
        if pool is None:
            pool = backend._simt_default_pool = cls(device, _impl=backend.default_pool())
        return pool

    @property
    def release_threshold(self) -> int:
        return self.impl.attribute("release_threshold")

    @release_threshold.setter
    def release_threshold(self, nbytes: int) -> None:
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
            raise ValueError(f"release_threshold is a number of bytes >= 0, got {nbytes!r}")
        self.impl.set_release_threshold(nbytes)

    @property
    def used_bytes(self) -> int:
        """Bytes allocated from the pool and not freed."""
        return self.impl.attribute("used")

    @property
    def reserved_bytes(self) -> int:
        """Bytes the pool holds: in use, and freed but kept."""
        return self.impl.attribute("reserved")

    @property
    def used_high_bytes(self) -> int:
        """The most used_bytes has been."""
        return self.impl.attribute("used_high")

    @property
    def reserved_high_bytes(self) -> int:
        """The most reserved_bytes has been."""
        return self.impl.attribute("reserved_high")

    def trim(self, keep_bytes: int = 0) -> None:
        """Hand freed memory back to the system until the pool holds at most
        ``keep_bytes`` (cudaMemPoolTrimTo); memory in use stays."""
        if isinstance(keep_bytes, bool) or not isinstance(keep_bytes, Integral) or keep_bytes < 0:
            raise ValueError(f"trim() keeps a number of bytes >= 0, got {keep_bytes!r}")
        self.impl.trim(int(keep_bytes))

    def allocation(self, nbytes, stream=None):
        """An Allocation of ``nbytes`` from this pool in the order of ``stream``."""
        handle = devices.stream_handle_of(stream, self.device, "allocating from a pool")
        return self.impl.alloc(nbytes, handle)

    def __repr__(self):
        return (f"<simt MemoryPool on {self.device.name}: {self.used_bytes} bytes used, "
                f"{self.reserved_bytes} reserved>")


def free(array, stream=None):
    """``array.free(stream)``: see DeviceArray.free."""
    alloc = array.alloc
    if getattr(alloc, "freed", False):
        raise ValueError(f"{array!r} was freed already")
    owner = alloc.keepalive
    if hasattr(owner, "free_async"):
        owner.free_async(devices.stream_handle_of(stream, array.device, "DeviceArray.free"))
    elif stream is not None:
        raise ValueError(f"{array!r} does not come from a memory pool, and only pool memory "
                         "is freed in stream order (cudaFreeAsync); allocate it with "
                         "simt.device_array(..., stream=s), or call free() without a stream")
    elif owner is None:
        alloc.backend.free(alloc.ptr)     # cudaFree: after the work that may use it
        alloc.backend = None              # its __del__ has nothing left to free
    # else: host memory of the CPU device, which goes when the last view of it goes
    alloc.freed = True
