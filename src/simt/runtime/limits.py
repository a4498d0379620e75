"""Device limits: cudaDeviceSetLimit / cudaDeviceGetLimit for the current device."""
import numpy as np

from .devices import get_device

LIMITS = {
    "malloc_heap_size": "bytes of the heap simt.malloc allocates from (default 8 MiB)",
    "printf_fifo_size": "bytes of the GPU's printf buffer (default 1 MiB)",
    "stack_size": "bytes of stack per thread for recursive device functions (GPU: the "
                  "driver's CU_LIMIT_STACK_SIZE; cpu device: host stack bytes, 256 KiB by "
                  "default, at most 1 MiB)",
    "dev_runtime_pending_launch_count": "launches inside kernels that may wait to run at "
                                        "once (default 2048; a count, not bytes)",
    "persisting_l2_cache_size": "bytes of L2 set aside for persisting accesses "
                                "(stream.set_access_policy; default 0, at most "
                                "properties.persisting_l2_cache_max_size on a GPU; the cpu and "
                                "sim devices record it: they have no L2 to set aside)",
}


def _check(name):
    if name not in LIMITS:
        raise ValueError(f"unknown limit {name!r}; the limits are "
                         + ", ".join(f"{k!r} ({v})" for k, v in LIMITS.items()))


def set_limit(name: str, value: int) -> None:
    """Set a limit of the current device (cudaDeviceSetLimit); ``value`` in bytes.
    'malloc_heap_size' must be set before the first launch of a kernel that calls
    simt.malloc. NotSupportedError on a device without that limit."""
    _check(name)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"set_limit({name!r}, value): value must be a number of bytes >= 0, "
                         f"got {value!r}")
    get_device().backend.set_limit(name, int(value))


def get_limit(name: str) -> int:
    """A limit of the current device in bytes (cudaDeviceGetLimit)."""
    _check(name)
    return get_device().backend.get_limit(name)
