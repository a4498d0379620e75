"""Memory pools of the host devices (CPU, sim): the stream-ordered allocator with host memory.

A pool keeps freed blocks, by size, for the next allocation of that size; a block freed
in a stream goes back once the work queued there before the free is done (a queue item,
as CUDA orders cudaFreeAsync), and meanwhile only an allocation in that same stream may
take it, since that allocation's work follows the free there (CUDA's pools reuse memory
the same way). As in CUDA, freed memory above the release threshold is
handed back to the system at the next synchronizing call (CpuBackend.trim_pools).
"""
import threading

from ..errors import NotSupportedError
from ..runtime.backend import Allocation

GRANULE = 512          # sizes round up to this, so near sizes share blocks (as CUDA's do)


class Block:
    """One allocation's memory: goes back to its pool once, by free_async or when it dies."""

    def __init__(self, pool, buffer, size):
        self.pool, self.buffer, self.size = pool, buffer, size
        self.freed = False

    def free_async(self, stream):
        if stream is not None and stream.capture is not None:
            raise NotSupportedError("the 'cpu' device does not support freeing pool memory "
                                    "in a stream under capture (a graph memory node); free "
                                    "it outside the capture")
        self.freed = True
        if stream is None:
            self.pool.backend.drain_blocking()
            self.pool.put(self.buffer, self.size)
        else:
            self.pool.put_after(self.buffer, self.size, stream)

    def __del__(self):
        if not getattr(self, "freed", True):
            self.pool.put(self.buffer, self.size)


class HostPool:
    """A memory pool of a host device (the backend object behind a simt.MemoryPool)."""

    def __init__(self, backend):
        self.backend = backend
        self.lock = threading.RLock()       # put() runs from __del__, on any thread
        self.blocks = {}                    # size -> [free buffers]
        self.pending = {}                   # (stream, size) -> [[buffer]] freed there, not reached
        self.threshold = 0
        self.counts = {"used": 0, "reserved": 0, "used_high": 0, "reserved_high": 0}
        backend.pools.add(self)

    def alloc(self, nbytes, stream):
        if stream is not None and stream.capture is not None:
            raise NotSupportedError("the 'cpu' device does not support allocating pool "
                                    "memory in a stream under capture (a graph memory "
                                    "node); allocate it before the capture")
        size = -(-max(nbytes, 1) // GRANULE) * GRANULE
        with self.lock:
            freed_here = self.pending.get((stream, size)) if stream is not None else None
            if freed_here:                  # stream order makes it free for this stream
                buffer = freed_here.pop()[0]
                self.counts["used"] -= size
            else:
                free = self.blocks.get(size)
                buffer = free.pop() if free else None
        if buffer is None:
            buffer = self.backend._buffer(size, 64)
            self._count("reserved", size)
        self._count("used", size)
        return Allocation(buffer.ctypes.data, nbytes, self.backend,
                          keepalive=Block(self, buffer, size))

    def _count(self, name, delta):
        with self.lock:
            counts = self.counts
            counts[name] += delta
            counts[name + "_high"] = max(counts[name + "_high"], counts[name])

    def put(self, buffer, size):
        with self.lock:
            self.blocks.setdefault(size, []).append(buffer)
            self.counts["used"] -= size

    def put_after(self, buffer, size, stream):
        """Free ``buffer`` once ``stream`` reaches this point; until then an allocation
        in ``stream`` may take it."""
        if not stream.worker.busy():        # nothing queued before the free: it is reached
            self.put(buffer, size)
            return
        entry = [buffer]
        with self.lock:
            self.pending.setdefault((stream, size), []).append(entry)

        def reached():
            with self.lock:
                waiting = self.pending.get((stream, size), [])
                for i, other in enumerate(waiting):
                    if other is entry:        # not taken by an allocation in the stream
                        del waiting[i]
                        self.put(buffer, size)
                        break
                if not waiting:
                    self.pending.pop((stream, size), None)
        stream.enqueue(reached, "free")

    def trim(self, keep_bytes):
        """Hand free blocks back until the pool holds at most keep_bytes."""
        with self.lock:
            for size, free in self.blocks.items():
                while free and self.counts["reserved"] > keep_bytes:
                    free.pop()
                    self.counts["reserved"] -= size

    def attribute(self, name):
        return self.threshold if name == "release_threshold" else self.counts[name]

    def set_release_threshold(self, nbytes):
        self.threshold = nbytes
