"""Memory pools on a GPU: CUmemoryPool handles (cuMemPoolCreate,
cuDeviceGetDefaultMemPool), allocation and free in stream order (cuMemAllocFromPoolAsync,
cuMemFreeAsync) and the pool's attributes (cuMemPoolGet/SetAttribute, cuMemPoolTrimTo)."""
from .driver import api, call, destroy
from ...runtime.backend import Allocation

_ATTRIBUTES = {"release_threshold": "RELEASE_THRESHOLD", "used": "USED_MEM_CURRENT",
               "reserved": "RESERVED_MEM_CURRENT", "used_high": "USED_MEM_HIGH",
               "reserved_high": "RESERVED_MEM_HIGH"}


class Block:
    """One allocation from a pool: freed once, by free_async or, when it dies, in the
    order of the legacy default stream (after the work of every blocking stream)."""

    def __init__(self, backend, ptr):
        self.backend, self.ptr = backend, ptr
        self.freed = False

    def free_async(self, stream):
        self.backend.make_current()
        call(api().cuMemFreeAsync, self.ptr, 0 if stream is None else stream)
        self.freed = True

    def __del__(self):
        if not getattr(self, "freed", True):
            destroy("cuMemFreeAsync", self.ptr, 0, backend=self.backend)


class GpuPool:
    """A CUmemoryPool of one GPU (the backend object behind a simt.MemoryPool)."""

    def __init__(self, backend, handle=None):
        d = api()
        backend.make_current()
        self.backend = backend
        self.owned = handle is None          # the default pool is never destroyed
        if handle is None:
            props = d.CUmemPoolProps()
            props.allocType = d.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
            props.location.type = d.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
            props.location.id = backend.index
            handle = call(d.cuMemPoolCreate, props)
        self.handle = handle

    def alloc(self, nbytes, stream):
        self.backend.make_current()
        ptr = int(call(api().cuMemAllocFromPoolAsync, max(nbytes, 1), self.handle,
                       0 if stream is None else stream, request=nbytes))
        return Allocation(ptr, nbytes, self.backend, keepalive=Block(self.backend, ptr))

    def _attr(self, name):
        return getattr(api().CUmemPool_attribute, "CU_MEMPOOL_ATTR_" + _ATTRIBUTES[name])

    def attribute(self, name):
        return int(call(api().cuMemPoolGetAttribute, self.handle, self._attr(name)))

    def set_release_threshold(self, nbytes):
        call(api().cuMemPoolSetAttribute, self.handle, self._attr("release_threshold"),
             api().cuuint64_t(nbytes))

    def trim(self, keep_bytes):
        call(api().cuMemPoolTrimTo, self.handle, keep_bytes)

    def __del__(self):
        if getattr(self, "owned", False):
            destroy("cuMemPoolDestroy", self.handle, backend=self.backend)
