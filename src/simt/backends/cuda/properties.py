"""What a CUDA device is: its name, limits and features, read from the driver.

``device_properties(index)`` returns a plain dict; the runtime wraps it in
``simt.runtime.devices.DeviceProperties``.
"""

from simt.backends.cuda.driver import api, call

# property key -> CU_DEVICE_ATTRIBUTE_<suffix>, for the attributes that are one integer
_SCALAR = {
    "multiprocessor_count": "MULTIPROCESSOR_COUNT",
    "warp_size": "WARP_SIZE",
    "max_threads_per_block": "MAX_THREADS_PER_BLOCK",
    "shared_memory_per_block": "MAX_SHARED_MEMORY_PER_BLOCK",
    "shared_memory_per_block_optin": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "clock_rate": "CLOCK_RATE",                        # kHz
    "memory_clock_rate": "MEMORY_CLOCK_RATE",          # kHz
    "memory_bus_width": "GLOBAL_MEMORY_BUS_WIDTH",     # bits
    "l2_cache_size": "L2_CACHE_SIZE",
    "max_registers_per_block": "MAX_REGISTERS_PER_BLOCK",
    "total_constant_memory": "TOTAL_CONSTANT_MEMORY",
    "async_engine_count": "ASYNC_ENGINE_COUNT",
    "max_threads_per_multiprocessor": "MAX_THREADS_PER_MULTIPROCESSOR",
    "max_shared_memory_per_multiprocessor": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "max_blocks_per_multiprocessor": "MAX_BLOCKS_PER_MULTIPROCESSOR",
    "registers_per_multiprocessor": "MAX_REGISTERS_PER_MULTIPROCESSOR",
    "texture_alignment": "TEXTURE_ALIGNMENT",
    "max_pitch": "MAX_PITCH",
}

# property key -> attribute suffix, for yes/no features
_FLAGS = {
    "concurrent_kernels": "CONCURRENT_KERNELS",
    "unified_addressing": "UNIFIED_ADDRESSING",
    "managed_memory": "MANAGED_MEMORY",
    "concurrent_managed_access": "CONCURRENT_MANAGED_ACCESS",
    "can_map_host_memory": "CAN_MAP_HOST_MEMORY",
    "integrated": "INTEGRATED",
    "cooperative_launch": "COOPERATIVE_LAUNCH",
    "ecc_enabled": "ECC_ENABLED",
}


def _attribute(dev, suffix):
    driver = api()
    attr = getattr(driver.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + suffix)
    return call(driver.cuDeviceGetAttribute, attr, dev)


def _text(raw):
    if isinstance(raw, bytes):
        raw = raw.split(b"\0", 1)[0].decode()
    return raw.rstrip("\0")


def _triple(dev, prefix):
    return tuple(_attribute(dev, f"{prefix}_{axis}") for axis in "XYZ")


def _driver_version():
    """'13.0' for the CUDA version the installed driver supports."""
    version = call(api().cuDriverGetVersion)
    return f"{version // 1000}.{version % 1000 // 10}"


def device_properties(index):
    """A dict of the properties of CUDA device ``index`` (keys as API.md section 4)."""
    driver = api()
    dev = call(driver.cuDeviceGet, index)
    props = {
        "name": _text(call(driver.cuDeviceGetName, 256, dev)),
        "compute_capability": (_attribute(dev, "COMPUTE_CAPABILITY_MAJOR"),
                               _attribute(dev, "COMPUTE_CAPABILITY_MINOR")),
        "max_block_dim": _triple(dev, "MAX_BLOCK_DIM"),
        "max_grid_dim": _triple(dev, "MAX_GRID_DIM"),
        "total_memory": int(call(driver.cuDeviceTotalMem, dev)),
        "pci_bus_id": _text(call(driver.cuDeviceGetPCIBusId, 32, dev)),
        "driver_version": _driver_version(),
    }
    props.update({key: _attribute(dev, suffix) for key, suffix in _SCALAR.items()})
    props.update({key: bool(_attribute(dev, suffix)) for key, suffix in _FLAGS.items()})
    return props
