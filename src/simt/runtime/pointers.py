"""Unified addressing (guide 3.2.2 and L): ``simt.pointer_attributes``, what memory an
address or array is (cudaPointerGetAttributes).

A GPU's driver knows every address (cuPointerGetAttributes). The CPU and sim devices have
no driver: there simt answers from the array itself, or, for a bare address or a NumPy
array, from its own records of the memory it allocated (device, managed, pinned and
mapped) and registered (host_register), which memrecords.py keeps.
"""
import dataclasses
from typing import Any, Optional

import numpy as np

from simt.runtime import devices, memrecords
from simt.runtime.arrays import DeviceArray

MEMORY_TYPES = ("unregistered", "host", "device", "managed", "array")

@dataclasses.dataclass(frozen=True)
class PointerAttributes:
    """What ``simt.pointer_attributes`` reports (cudaPointerAttributes).

    ``type``: 'device' (device memory), 'managed' (unified memory), 'host' (page-locked
    or registered host memory, mapped included), 'unregistered' (memory CUDA does not
    know: pageable host memory) or 'array' (a CUDA array); ``device``: the simt Device the
    memory belongs to (None for unregistered memory); ``device_pointer``: the address a
    kernel on that device uses, ``host_pointer``: the address the host uses, None where
    there is none (unregistered memory: the address itself for the host, and for kernels
    of a device with ``pageable_memory_access``). On the CPU and sim devices device memory
    is host memory, so both pointers of device and managed memory are the address
    itself."""

    type: str
    device: Any
    device_pointer: Optional[int]
    host_pointer: Optional[int]

    @property
    def memory_type(self) -> str:
        """The same as ``type`` (cudaPointerAttributes' older name, memoryType)."""
        return self.type

    @property
    def is_managed(self) -> bool:
        """cudaPointerAttributes' isManaged: True for unified (managed) memory."""
        return self.type == "managed"


def pointer_attributes(ptr_or_array: Any) -> PointerAttributes:
    """What memory an address or array is (cudaPointerGetAttributes): its ``type``
    ('device', 'managed', 'host', 'unregistered'), ``device``, ``device_pointer`` and
    ``host_pointer`` (PointerAttributes). Takes an int address, a DeviceArray, a NumPy
    array (pinned, mapped, registered or pageable), a ``simt.Managed`` / ``Global``
    symbol (its storage on the current device) or any object with
    ``__cuda_array_interface__``. A GPU's answer is its driver's; on the CPU and sim
    devices simt answers from the memory it made (docs/memory.md, Unified addressing)."""
    target = ptr_or_array
    if hasattr(target, "device_array") and hasattr(target, "placements"):   # a symbol
        target = target.device_array()
    if isinstance(target, DeviceArray):
        return _of_device_array(target)
    if isinstance(target, np.ndarray):
        return _of_address(target.__array_interface__["data"][0], target)
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        return _of_address(int(target), None)
    interface = getattr(target, "__cuda_array_interface__", None)
    if interface is not None:
        return _of_address(int(interface["data"][0]), None)
    raise TypeError(f"pointer_attributes takes an address (int), a DeviceArray, a NumPy "
                    f"array or a simt.Managed / Global symbol, not {type(target).__name__}")


def _of_device_array(array):
    backend = array.device.backend
    answer = backend.pointer_attributes(array.ptr)
    if answer is not None:
        return _from_driver(answer, array.ptr)
    kind = "managed" if getattr(array.alloc, "managed", False) else "device"
    return PointerAttributes(kind, array.device, array.ptr, array.ptr)


def _of_address(ptr, host_array):
    """An address: the current device's driver, else (host devices) simt's records."""
    device = devices.get_device()
    answer = device.backend.pointer_attributes(ptr)
    if answer is not None:
        return _from_driver(answer, ptr)
    mapped = getattr(host_array, "device_ptr", None)
    if mapped is not None:
        return PointerAttributes("host", host_array.device, mapped, ptr)
    found = memrecords.lookup(ptr)
    if found is None:          # pageable: kernels here reach it where the host does
        reach = ptr if device.properties.pageable_memory_access else None
        return PointerAttributes("unregistered", None, reach, ptr)
    kind, owner = found
    return PointerAttributes(kind, owner, ptr, ptr)


def _from_driver(answer, ptr):
    """PointerAttributes of a backend's dict (its device a name, or None). Unregistered
    memory's host pointer is the address itself, as cudaPointerGetAttributes gives it."""
    device = devices.lookup(answer["device"]) if answer["device"] is not None else None
    host_pointer = answer["host_pointer"]
    if answer["memory_type"] == "unregistered" and host_pointer is None:
        host_pointer = ptr
    return PointerAttributes(answer["memory_type"], device, answer["device_pointer"],
                             host_pointer)
