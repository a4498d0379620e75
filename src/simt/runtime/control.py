"""Device and kernel settings that change how work runs, not what it computes (issue 35
item 9): kernel attributes (cudaFuncSetAttribute), the cache preference
(cudaDeviceSetCacheConfig), L2 access-policy windows of streams (cudaStreamSetAttribute with
an access policy window) and device reset (cudaDeviceReset). docs/device-control.md.

The cpu and sim devices validate and record each setting; only ``max_dynamic_shared_size``
changes anything there (it caps a launch's dynamic shared memory, as on a GPU)."""
import collections
import numbers
import weakref

from ..errors import CudaError, InvalidConfiguration
from .devices import get_device, lookup

# kernel.set_attribute names -> what the value is
KERNEL_ATTRIBUTES = {
    "max_dynamic_shared_size": "bytes of dynamic shared memory a launch may ask for "
                               "(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)",
    "preferred_shared_carveout": "percent of the L1/shared memory made shared memory, 0 to "
                                 "100, or -1 for the driver's default "
                                 "(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)",
}

CACHE_CONFIGS = ("prefer_none", "prefer_shared", "prefer_l1", "prefer_equal")
ACCESS_PROPERTIES = ("normal", "streaming", "persisting")

AccessPolicy = collections.namedtuple("AccessPolicy", "ptr nbytes hit_ratio hit miss")

_kernels = weakref.WeakSet()      # every Kernel, so reset_device can drop what it loaded


def track(kernel):
    """Remember ``kernel`` (weakly) for reset_device."""
    _kernels.add(kernel)


def _integer(value, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {value!r}")
    return int(value)


def check_kernel_attribute(kernel_name, name, value, device):
    """The value of a kernel attribute, checked as cuFuncSetAttribute checks it."""
    where = f"{kernel_name}.set_attribute({name!r}, ...)"
    if name not in KERNEL_ATTRIBUTES:
        raise ValueError(f"{where}: unknown attribute; the attributes are "
                         + ", ".join(f"{k!r} ({v})" for k, v in KERNEL_ATTRIBUTES.items()))
    value = _integer(value, where)
    if name == "preferred_shared_carveout" and not -1 <= value <= 100:
        raise ValueError(f"{where}: the carveout is a percentage, 0 to 100 (or -1: the "
                         f"default), got {value}")
    if name == "max_dynamic_shared_size":
        limit = device.properties.shared_memory_per_block_optin
        if not 0 <= value <= limit:
            raise InvalidConfiguration(
                f"{where}: {value} bytes; {device.name} allows 0 to {limit} bytes of shared "
                f"memory per block (shared_memory_per_block_optin)")
    return value


def check_dynamic_shared(kernel_name, attributes, shared_bytes):
    """InvalidConfiguration for a launch asking more dynamic shared memory than the kernel's
    max_dynamic_shared_size attribute, where one was set (a GPU refuses that launch)."""
    cap = attributes.get("max_dynamic_shared_size")
    if cap is not None and shared_bytes > cap:
        raise InvalidConfiguration(
            f"launching '{kernel_name}': {shared_bytes} bytes of dynamic shared memory, over "
            f"the kernel's max_dynamic_shared_size of {cap} (cudaErrorInvalidValue on a GPU); "
            f"raise it with {kernel_name}.set_attribute('max_dynamic_shared_size', "
            f"{shared_bytes})")


def set_cache_config(config: str, device=None) -> None:
    """cudaDeviceSetCacheConfig: which way the device should split its L1 and shared
    memory, 'prefer_none', 'prefer_shared', 'prefer_l1' or 'prefer_equal'. A preference
    only, in CUDA too (sm_90 sizes the split per kernel: kernel.set_attribute
    ('preferred_shared_carveout', pct)); the cpu and sim devices record it."""
    if config not in CACHE_CONFIGS:
        raise ValueError(f"set_cache_config: the configurations are "
                         f"{', '.join(map(repr, CACHE_CONFIGS))} (cudaFuncCachePrefer*), got "
                         f"{config!r}")
    lookup(device).backend.set_cache_config(config)


def get_cache_config(device=None) -> str:
    """The preference set_cache_config last set ('prefer_none' until then)."""
    return lookup(device).backend.get_cache_config()


def access_policy(stream, array, hit_ratio, hit, miss):
    """The AccessPolicy of ``stream.set_access_policy(...)``, checked; None clears it."""
    if array is None:
        return AccessPolicy(0, 0, 0.0, "normal", "normal")
    for what, value in (("hit", hit), ("miss", miss)):
        if value not in ACCESS_PROPERTIES:
            raise ValueError(f"set_access_policy: {what} must be one of "
                             f"{', '.join(map(repr, ACCESS_PROPERTIES))}, got {value!r}")
    if isinstance(hit_ratio, bool) or not isinstance(hit_ratio, numbers.Real) or \
            not 0.0 <= float(hit_ratio) <= 1.0:
        raise ValueError(f"set_access_policy: hit_ratio is the fraction of the window's "
                         f"accesses given the hit property, 0.0 to 1.0, got {hit_ratio!r}")
    ptr, nbytes = getattr(array, "ptr", None), getattr(array, "nbytes", None)
    if ptr is None or getattr(array, "device", None) != stream.device:
        raise InvalidConfiguration(
            f"set_access_policy: the window is a device array of {stream.device.name} (the "
            f"stream's device), got {type(array).__name__}")
    window = stream.device.properties.access_policy_max_window_size
    if window and nbytes > window:
        raise InvalidConfiguration(
            f"set_access_policy: a window of {nbytes} bytes; {stream.device.name} allows "
            f"{window} (access_policy_max_window_size): give a slice of the array")
    return AccessPolicy(int(ptr), int(nbytes), float(hit_ratio), hit, miss)


def reset_device(device=None) -> None:
    """cudaDeviceReset: finish the device's work (its pending errors dropped, as a reset
    clears them), forget every kernel loaded on it (the next launch loads it again) and
    give back all its memory. Device arrays, streams and events made before are unusable:
    on a GPU the driver refuses them; the sim device and checked mode report an array of
    before as freed; on the cpu device using one is undefined, as in CUDA. Settings made
    by set_limit, set_cache_config and kernel.set_attribute go back to their defaults."""
    device = lookup(device) if device is not None else get_device()
    backend = device.backend
    try:
        backend.synchronize()
    except CudaError:
        pass                              # a reset clears pending and sticky errors too
    for kernel in list(_kernels):
        kernel.forget_device(device.name)
    backend.reset()
