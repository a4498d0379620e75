"""Virtual memory management on the driver (guide appendix E): an address range reserved
once (cuMemAddressReserve), physical memory created in granularity-sized pieces
(cuMemCreate) and mapped at its end (cuMemMap, cuMemSetAccess), so an array over the
range keeps its address as it grows."""
from .driver import api, call, context_dead
from simt.errors import OutOfMemoryError


def _round_up(n, step):
    return -(-n // step) * step


class VirtualRange:
    """One reserved range of ``backend``'s address space and the memory mapped into it."""

    def __init__(self, backend, reserve_bytes):
        backend.make_current()
        driver = api()
        self.backend = backend
        prop = driver.CUmemAllocationProp()
        prop.type = driver.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
        prop.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        prop.location.id = backend.index
        self.prop = prop
        self.granularity = int(call(
            driver.cuMemGetAllocationGranularity, prop,
            driver.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM))
        self.reserved = _round_up(max(int(reserve_bytes), 1), self.granularity)
        self.base = int(call(driver.cuMemAddressReserve, self.reserved, 0, 0, 0))
        self.mapped = 0
        self.pieces = []          # (physical handle, address, bytes), in mapping order

    def grow(self, nbytes):
        """Map ``nbytes`` (rounded up to the granularity) more at the end of the range."""
        size = _round_up(int(nbytes), self.granularity)
        if self.mapped + size > self.reserved:
            raise OutOfMemoryError(
                f"VirtualMemory: growing by {nbytes} bytes ({size} mapped, a multiple of the "
                f"{self.granularity}-byte granularity) passes the {self.reserved} bytes "
                f"reserved ({self.mapped} mapped); reserve more: "
                f"simt.VirtualMemory({self.mapped + size})")
        self.backend.make_current()
        driver = api()
        handle = call(driver.cuMemCreate, size, self.prop, 0, request=size)
        address = self.base + self.mapped
        try:
            call(driver.cuMemMap, address, size, 0, handle, 0)
        except Exception:
            call(driver.cuMemRelease, handle)
            raise
        self.pieces.append((handle, address, size))
        access = driver.CUmemAccessDesc()
        access.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        access.location.id = self.backend.index
        access.flags = driver.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        call(driver.cuMemSetAccess, address, size, [access], 1)
        self.mapped += size

    def release(self):
        """Unmap and release every piece, then free the range (after the device's work)."""
        pieces, self.pieces = self.pieces, []
        if context_dead(self.backend.index) or self.base is None:
            return
        self.backend.set_current()
        driver = api()
        if pieces:
            call(driver.cuCtxSynchronize)       # kernels may still use the memory
        for handle, address, size in pieces:
            call(driver.cuMemUnmap, address, size)
            call(driver.cuMemRelease, handle)
        call(driver.cuMemAddressFree, self.base, self.reserved)
        self.base, self.mapped = None, 0

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass        # interpreter shutdown: the range goes with the process
