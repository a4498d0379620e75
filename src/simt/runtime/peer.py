"""Several GPUs (guide 3.2.7, 3.2.8): peer access between GPUs, and the check that a
kernel is given only memory its device can reach.

With unified addressing every GPU's memory has its own range of one address space, so
a pointer says where the memory is; a kernel on GPU a may read and write GPU b's memory
once a has been let in (``enable_peer_access``, from a's context). The CPU device's
memory is host memory: a GPU kernel never gets it as device memory, and the CPU device
has no peers (``can_access_peer`` answers False between a CPU and a GPU).
"""
import threading
from typing import Any

from . import devices
from ..errors import InvalidConfiguration, NotSupportedError

_enabled = set()          # (device name, peer name): kernels on device reach peer's memory
_lock = threading.Lock()


def _gpu(device):
    return devices.backend_class(device.kind).cuda_pointers


def can_access_peer(dev_a: Any, dev_b: Any) -> bool:
    """Whether kernels on ``dev_a`` can be let into ``dev_b``'s memory
    (cudaDeviceCanAccessPeer). A device reaches its own memory (True, where CUDA answers
    0 because there is nothing to enable); a CPU and a GPU are never peers (False)."""
    a, b = devices.lookup(dev_a), devices.lookup(dev_b)
    if a == b:
        return True
    if not (_gpu(a) and _gpu(b)):
        return False
    return bool(a.backend.can_access_peer(b.backend))


def enable_peer_access(peer: Any, device: Any = None) -> None:
    """Let kernels on the current device (or ``device``) read and write ``peer``'s memory
    (cudaDeviceEnablePeerAccess from the current device's context). Enabling it twice
    is not an error here (CUDA's cudaErrorPeerAccessAlreadyEnabled is absorbed)."""
    current, other = devices.lookup(device), devices.lookup(peer)
    if not (_gpu(current) and _gpu(other)):
        raise NotSupportedError(f"peer access is between two GPUs; {current.name} and "
                                f"{other.name} are not (the CPU device's memory is host "
                                "memory: copy arrays between it and a GPU)")
    if current == other:
        raise ValueError(f"{current.name} reaches its own memory; peer access is for another "
                         "GPU's memory (simt.enable_peer_access('cuda:1') while cuda:0 is "
                         "current)")
    if not current.backend.can_access_peer(other.backend):
        raise NotSupportedError(f"{current.name} cannot access {other.name}'s memory (no "
                                "NVLink or PCIe peer path between them: "
                                "simt.can_access_peer says so); copy arrays between them "
                                "with copy_to_device")
    with _lock:
        if (current.name, other.name) not in _enabled:
            current.backend.enable_peer_access(other.backend)
            _enabled.add((current.name, other.name))


def peer_enabled(device, peer):
    """Whether enable_peer_access(peer) was called with ``device`` current."""
    return (devices.lookup(device).name, devices.lookup(peer).name) in _enabled


def check_reachable(array, device, where):
    """InvalidConfiguration when a kernel on ``device`` is given ``array`` whose memory it
    cannot reach: another GPU's without peer access, or one device kind's on another."""
    home = array.device
    if home == device:
        return
    both_gpus = _gpu(home) and _gpu(device)
    if both_gpus and (getattr(array.alloc, "managed", False)
                      or (device.name, home.name) in _enabled):
        return                        # unified memory, or a peer let in
    if both_gpus:
        raise InvalidConfiguration(
            f"{where}: the array lives on {home.name} and the kernel runs on {device.name}, "
            f"which has no peer access to it. Enable it first (with {device.name} current: "
            f"simt.enable_peer_access('{home.name}'); simt.can_access_peer('{device.name}', "
            f"'{home.name}') says whether the GPUs can), or copy the array to "
            f"{device.name} with copy_to_device")
    raise InvalidConfiguration(
        f"{where}: the array lives on {home.name} and the kernel runs on {device.name}; "
        f"copy it there first (simt.to_device(array.copy_to_host(), device='{device.name}'))")


def check_args(args, device, name):
    """check_reachable for each DeviceArray among a launch's arguments."""
    for i, value in enumerate(args):
        home = getattr(value, "device", None)
        if home is not None and home != device and hasattr(value, "alloc"):
            check_reachable(value, device, f"launching '{name}', argument {i}")
