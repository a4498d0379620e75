"""Unified memory hints (guide, appendix on unified memory): where managed pages should
be, resolved to a backend (or None for host memory) before the device is asked."""
from . import devices

ADVICE = ("read_mostly", "preferred_location", "accessed_by")


def _target(device):
    """The backend a hint names: the current device for None; None (host memory) for
    'host' and for a device whose memory is host memory (the CPU device)."""
    if isinstance(device, str) and device.strip().lower() == "host":
        return None
    device = devices.lookup(device)
    return device.backend if devices.backend_class(device.kind).cuda_pointers else None


def prefetch(array, ptr, nbytes, device, stream):
    target = _target(device)
    handle = devices.stream_handle_of(stream, array.device, "prefetch")
    array.device.backend.prefetch(ptr, nbytes, target, handle)


def advise(array, ptr, nbytes, advice, device, unset):
    if advice not in ADVICE:
        raise ValueError(f"unknown advice {advice!r}; the advice is one of {', '.join(ADVICE)}")
    target = _target(device)
    array.device.backend.advise(ptr, nbytes, advice, target, bool(unset))


ATTACH = ("single", "host", "global")        # cudaMemAttachSingle, Host, Global


def attach(stream, array, flags):
    """Stream.attach_mem: checked here, then the device attaches it."""
    if flags not in ATTACH:
        raise ValueError(f"attach_mem: flags is one of {', '.join(map(repr, ATTACH))} "
                         f"(cudaMemAttachSingle, Host, Global), not {flags!r}")
    if hasattr(array, "device_array") and hasattr(array, "placements"):     # a symbol
        array = array.device_array(stream.device)
    if not getattr(getattr(array, "alloc", None), "managed", False):
        raise ValueError(f"attach_mem applies to managed memory (simt.managed_array or a "
                         f"simt.Managed symbol), not {array!r}")
    if array.device != stream.device:
        raise ValueError(f"attach_mem: the array is on {array.device.name}, the stream on "
                         f"{stream.device.name}")
    if flags == "single" and stream.handle is None:
        raise ValueError("attach_mem: 'single' attaches memory to one stream, and the legacy "
                         "default stream is not one (CUDA refuses it: cudaErrorInvalidValue); "
                         "use a simt.Stream(), or flags 'global' or 'host'")
    alloc = array.alloc
    array.device.backend.attach_mem(stream.handle, alloc.ptr, alloc.nbytes, flags)
    alloc.attached = (flags, stream)
