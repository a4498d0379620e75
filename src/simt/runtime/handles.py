"""IPC handles (guide 3.2.9): what one process gives another so that it can open a GPU
array or event of the first (runtime/ipc.py opens them). A handle is plain data (the
driver's 64 bytes plus the array's layout), so it pickles: send it through a
multiprocessing queue or pipe.

GPU only; on Linux, as CUDA's IPC. Memory from a memory pool cannot be shared this way
(CUDA shares pools through their own export API), and a process cannot open its own
handle (use the array itself).
"""
import dataclasses
import os

import numpy as np

from . import devices
from ..errors import NotSupportedError


@dataclasses.dataclass(frozen=True)
class IpcHandle:
    """What ``DeviceArray.ipc_handle()`` gives: open it with ``simt.open_ipc_handle``."""

    handle: bytes            # cudaIpcMemHandle_t
    offset: int              # bytes from the allocation's start to element 0
    shape: tuple
    strides: tuple
    dtype: str               # np.dtype(...).str, or the descr of a structured dtype
    device: str              # where the memory lives, e.g. 'cuda:0'
    pid: int                 # the process that made the handle

    @property
    def np_dtype(self):
        return np.dtype(self.dtype if isinstance(self.dtype, str) else list(self.dtype))


@dataclasses.dataclass(frozen=True)
class IpcEventHandle:
    """What ``Event.ipc_handle()`` gives: open it with ``simt.Event.from_ipc_handle``."""

    handle: bytes            # cudaIpcEventHandle_t
    device: str
    pid: int


def _dtype_of(dtype):
    return dtype.str if dtype.names is None else [tuple(f) for f in dtype.descr]


def array_handle(array):
    """The IpcHandle of a DeviceArray (cudaIpcGetMemHandle)."""
    if hasattr(array.alloc.keepalive, "free_async"):
        raise NotSupportedError("ipc_handle: this array comes from a memory pool "
                                "(device_array(..., stream=)), which cudaIpcGetMemHandle "
                                "cannot share; allocate it with simt.device_array(shape, "
                                "dtype) to share it")
    handle, base_offset = array.device.backend.ipc_handle(array.alloc.ptr)
    return IpcHandle(bytes(handle), base_offset + array.offset, array.shape, array.strides,
                     _dtype_of(array.dtype), array.device.name, os.getpid())


def event_handle(event):
    """The IpcEventHandle of an Event(interprocess=True) (cudaIpcGetEventHandle)."""
    if not event.interprocess:
        raise ValueError("only an Event(interprocess=True) has an IPC handle")
    return IpcEventHandle(bytes(event.impl.ipc_handle()), event.device.name, os.getpid())


def not_own(handle, what):
    """ValueError for a handle made by this process, which CUDA cannot open."""
    if handle.pid == os.getpid():
        raise ValueError(f"this {what} was made by this process (pid {handle.pid}); CUDA "
                         "opens IPC handles only in other processes: use the original here")


def open_event(cls, handle):
    """An Event over another process's interprocess event (cudaIpcOpenEventHandle)."""
    if not isinstance(handle, IpcEventHandle):
        raise TypeError(f"Event.from_ipc_handle takes what Event.ipc_handle() returns, not "
                        f"{type(handle).__name__}")
    not_own(handle, "event handle")
    device = devices.get_device()
    event = cls.__new__(cls)
    event.device, event.timing, event.interprocess = device, False, True
    event.impl = device.backend.open_ipc_event(handle.handle)
    return event
