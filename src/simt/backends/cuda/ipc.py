"""IPC on the driver: memory and event handles of 64 bytes another process opens
(cuIpcGetMemHandle / cuIpcOpenMemHandle, cuIpcGetEventHandle / cuIpcOpenEventHandle)."""
from .driver import api, call, context_dead
from .streams import Event
from simt.runtime.backend import Allocation


def _bytes(reserved):
    """The 64 bytes of a CUipc*Handle's ``reserved`` field (bytes, or a list of chars)."""
    if isinstance(reserved, (bytes, bytearray)):
        return bytes(reserved)
    return bytes(b & 0xFF for b in reserved)


def mem_handle(backend, ptr):
    """(handle bytes, bytes from the driver allocation's start to ``ptr``)."""
    backend.make_current()
    driver = api()
    base, _ = call(driver.cuMemGetAddressRange, ptr)
    handle = call(driver.cuIpcGetMemHandle, base)
    return _bytes(handle.reserved), int(ptr) - int(base)


class _Opened:
    """Another process's memory mapped here: unmapped (cuIpcCloseMemHandle) when the last
    Allocation over it dies."""

    def __init__(self, backend, ptr):
        self.backend, self.ptr = backend, ptr

    def __del__(self):
        if context_dead(self.backend.index):
            return
        try:
            self.backend.set_current()
            call(api().cuIpcCloseMemHandle, self.ptr)
        except Exception:
            pass        # interpreter shutdown: the mapping goes with the process


def open_mem_handle(backend, data, nbytes):
    backend.make_current()
    driver = api()
    handle = driver.CUipcMemHandle()
    handle.reserved = bytes(data)
    flag = int(driver.CUipcMem_flags.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
    ptr = int(call(driver.cuIpcOpenMemHandle, handle, flag))
    return Allocation(ptr, nbytes, backend, keepalive=_Opened(backend, ptr))


class IpcEvent(Event):
    """An interprocess event: made here (no timing) or opened from another process's
    handle; destroyed as any event (cuEventDestroy)."""

    def __init__(self, handle):
        self.handle = handle

    def ipc_handle(self):
        return _bytes(call(api().cuIpcGetEventHandle, self.handle).reserved)


def create_event(backend):
    backend.make_current()
    driver = api()
    flags = driver.CUevent_flags
    return IpcEvent(call(driver.cuEventCreate, int(flags.CU_EVENT_DISABLE_TIMING)
                         | int(flags.CU_EVENT_INTERPROCESS)))


def open_event(backend, data):
    backend.make_current()
    driver = api()
    handle = driver.CUipcEventHandle()
    handle.reserved = bytes(data)
    return IpcEvent(call(driver.cuIpcOpenEventHandle, handle))
