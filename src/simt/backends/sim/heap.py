"""The device heap on the sim device: ``simt.malloc`` and ``simt.free`` (guide B.30).

One buffer of ``malloc_heap_size`` bytes per device, made at the first malloc, whose
blocks heapblocks.Blocks hands out (first fit, 16-byte aligned) as the cpu device's heap
does; like it (and the GPU's) it outlives launches. A malloc'd array is an array of the
launch over that buffer (launch.global_array), checked as any: its elements start
unwritten (reading one nothing wrote is an ``UninitializedReadError``, whatever its last
owner left there), and a free marks them ``FREED`` in every Shadow over them, so that an
access after the free is a use after free (``IllegalAddressError``). Freeing what malloc
did not hand out, or freeing twice, stops the launch as on the cpu device.
"""
from types import SimpleNamespace

import numpy as np

import simt.fault as fault

from ...errors import CudaError
from ..heapblocks import ALIGN, Blocks
from .memory import FREED
from .schedule import Fault, fault_record


class SimHeap(Blocks):
    """The device's heap: Blocks over one buffer (``base``: its aligned address)."""

    def __init__(self, size):
        super().__init__(size)
        self.size = size
        self.buffer = np.zeros(size + ALIGN, np.uint8)
        self.base = self.buffer.ctypes.data + (-self.buffer.ctypes.data) % ALIGN


def check_size(heap, value):
    """set_limit('malloc_heap_size') once the heap is in use: refused as on the cpu device."""
    if heap is not None and value != heap.size:
        raise CudaError("set_limit('malloc_heap_size') after a kernel called simt.malloc on "
                        "the 'sim' device: the heap's size is fixed once it is in use (CUDA's "
                        "cudaErrorInvalidValue); set it before the first such launch")


def malloc(launch, th, site, count, dtype):
    """``simt.malloc(count, dtype)`` by thread th: a new array, or an empty one (CUDA's
    null) when the heap has no block that large. Each block is an allocation of its own
    for the checks (device.track): its elements start unwritten."""
    memory = launch.memory
    heap = memory.device_heap()
    label = launch.sites[site].label or "simt.malloc array"
    offset = heap.take(count * dtype.itemsize if count > 0 else 0)
    if offset is None:
        return launch.null_array(dtype, label)
    address = heap.base + offset
    memory.track(address, heap.used[offset])
    for key in [key for key in launch.shadows if key[0] == address]:
        del launch.shadows[key]           # an earlier block's here, freed: its own arrays keep it
    t = SimpleNamespace(dtype=dtype)
    value = SimpleNamespace(ptr=address, shape=(count,), strides=(dtype.itemsize,))
    return launch.global_array(t, launch.span(t, value, label), True, label)


def free(launch, th, site, array):
    """``simt.free(array)`` by thread th: its block back to the heap, its elements freed
    for the checks; an empty array of a failed malloc is ignored."""
    heap = launch.memory.device_heap()
    where = launch.addresses.get(id(array.data))
    if where is None and not array.shadow and 0 in array.shape:
        return                                 # null
    if where is not None:
        root, item = where                     # root: its block (device.track), or not the heap
        address = root + array.off * item
        size = heap.give(address - heap.base) if address - heap.base in heap.used else None
        if size is not None:
            for key, shadow in launch.shadows.items():
                if key[0] == address:
                    shadow.w[:] = [FREED] * len(shadow.w)
                    if shadow.r is not None:
                        shadow.r[:] = [None] * len(shadow.r)
            launch.memory.written.pop(address, None)
            return
    where = launch.sites[site]
    raise Fault(fault.decode(fault_record(fault.BAD_FREE, where, th),
                             launch.report._binary(where), launch.binary.name))


def use_after_free(launch, site, idx, th, write):
    """An access of an element that simt.free released (memory.Shadow finds it)."""
    where = launch.sites[site]
    return fault.checked_error(fault.USE_AFTER_FREE, launch.binary.name,
                               fault.Thread(th.bid, th.tid, where.file, where.line),
                               array=where.label or "array",
                               index=idx if isinstance(idx, tuple) else (idx,),
                               accesses=(fault.WRITE if write else fault.READ, 0))
