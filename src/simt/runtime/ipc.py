"""Interprocess communication (guide 3.2.9): opening, in this process, a GPU array
another process made a handle of (runtime/handles.py)."""
from typing import Any

from . import devices
from .arrays import DeviceArray, _span
from .handles import IpcHandle, not_own


def open_ipc_handle(handle: IpcHandle, device: Any = None) -> DeviceArray:
    """A DeviceArray over another process's GPU memory (cudaIpcOpenMemHandle), on the
    current device (or ``device``: with peer access it may differ from the one the memory
    lives on). The memory is closed when the array and its views are gone; the other
    process must keep its array alive while this one is in use."""
    if not isinstance(handle, IpcHandle):
        raise TypeError(f"open_ipc_handle takes what DeviceArray.ipc_handle() returns, not "
                        f"{type(handle).__name__}")
    not_own(handle, "IPC handle")
    device = devices.lookup(device)
    dtype = handle.np_dtype
    _, high = _span(handle.shape, handle.strides, dtype.itemsize)
    alloc = device.backend.open_ipc_handle(handle.handle, handle.offset + high)
    return DeviceArray(handle.shape, dtype, handle.strides, alloc=alloc,
                       offset=handle.offset, device=device)
