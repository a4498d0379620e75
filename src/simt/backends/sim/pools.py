"""Memory pools of the sim device: the CPU device's pools (backends/hostpools.py), with
the sim's two differences. Work runs when it is queued, so a block freed in a stream is
free at once; and what a block holds is tracked for the uninitialized-read check: each
allocation from a pool starts unwritten (a block handed out again holds what its last
owner left there, which CUDA leaves undefined), and its record goes with the block."""
from ..hostpools import HostPool


def _address(buffer):
    # not ndarray.ctypes: put() also runs from finalizers (device.py's release says why)
    return buffer.__array_interface__["data"][0]


class SimPool(HostPool):
    """A memory pool of the sim device (the backend object behind a simt.MemoryPool)."""

    def alloc(self, nbytes, stream):
        allocation = super().alloc(nbytes, stream)
        self.backend.track(allocation.ptr, allocation.keepalive.size)
        return allocation

    def put(self, buffer, size):
        self.backend.written.pop(_address(buffer), None)
        super().put(buffer, size)

    def put_after(self, buffer, size, stream):
        """The work queued in ``stream`` before the free is done: free now."""
        self.put(buffer, size)
