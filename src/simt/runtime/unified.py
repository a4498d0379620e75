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
