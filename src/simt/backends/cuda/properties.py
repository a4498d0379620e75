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
    "reserved_shared_memory_per_block": "RESERVED_SHARED_MEMORY_PER_BLOCK",
    "persisting_l2_cache_max_size": "MAX_PERSISTING_L2_CACHE_SIZE",
    "access_policy_max_window_size": "MAX_ACCESS_POLICY_WINDOW_SIZE",
    "single_to_double_precision_perf_ratio": "SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO",
    "texture_pitch_alignment": "TEXTURE_PITCH_ALIGNMENT",
    "surface_alignment": "SURFACE_ALIGNMENT",
    "max_texture_1d": "MAXIMUM_TEXTURE1D_WIDTH",
    "max_texture_1d_mipmap": "MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH",
    "max_texture_1d_linear": "MAXIMUM_TEXTURE1D_LINEAR_WIDTH",
    "max_texture_cubemap": "MAXIMUM_TEXTURECUBEMAP_WIDTH",
    "max_surface_1d": "MAXIMUM_SURFACE1D_WIDTH",
    "max_surface_cubemap": "MAXIMUM_SURFACECUBEMAP_WIDTH",
    "memory_pool_supported_handle_types": "MEMPOOL_SUPPORTED_HANDLE_TYPES",
    "gpu_direct_rdma_flush_writes_options": "GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS",
    "gpu_direct_rdma_writes_ordering": "GPU_DIRECT_RDMA_WRITES_ORDERING",
    "multi_gpu_board_group_id": "MULTI_GPU_BOARD_GROUP_ID",
    "numa_config": "NUMA_CONFIG",
    "numa_id": "NUMA_ID",
    "host_numa_id": "HOST_NUMA_ID",
    "pci_domain_id": "PCI_DOMAIN_ID",
    "pci_device_id": "PCI_DEVICE_ID",
}

# property key -> the attribute suffixes of its parts (cudaDeviceProp's order: x first)
_TUPLES = {
    "max_texture_2d": ("MAXIMUM_TEXTURE2D_WIDTH", "MAXIMUM_TEXTURE2D_HEIGHT"),
    "max_texture_2d_mipmap": ("MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH",
                              "MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT"),
    "max_texture_2d_linear": ("MAXIMUM_TEXTURE2D_LINEAR_WIDTH", "MAXIMUM_TEXTURE2D_LINEAR_HEIGHT",
                              "MAXIMUM_TEXTURE2D_LINEAR_PITCH"),
    "max_texture_2d_gather": ("MAXIMUM_TEXTURE2D_GATHER_WIDTH", "MAXIMUM_TEXTURE2D_GATHER_HEIGHT"),
    "max_texture_3d": ("MAXIMUM_TEXTURE3D_WIDTH", "MAXIMUM_TEXTURE3D_HEIGHT",
                       "MAXIMUM_TEXTURE3D_DEPTH"),
    "max_texture_3d_alt": ("MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE", "MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE",
                           "MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE"),
    "max_texture_1d_layered": ("MAXIMUM_TEXTURE1D_LAYERED_WIDTH",
                               "MAXIMUM_TEXTURE1D_LAYERED_LAYERS"),
    "max_texture_2d_layered": ("MAXIMUM_TEXTURE2D_LAYERED_WIDTH",
                               "MAXIMUM_TEXTURE2D_LAYERED_HEIGHT",
                               "MAXIMUM_TEXTURE2D_LAYERED_LAYERS"),
    "max_texture_cubemap_layered": ("MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH",
                                    "MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS"),
    "max_surface_2d": ("MAXIMUM_SURFACE2D_WIDTH", "MAXIMUM_SURFACE2D_HEIGHT"),
    "max_surface_3d": ("MAXIMUM_SURFACE3D_WIDTH", "MAXIMUM_SURFACE3D_HEIGHT",
                       "MAXIMUM_SURFACE3D_DEPTH"),
    "max_surface_1d_layered": ("MAXIMUM_SURFACE1D_LAYERED_WIDTH",
                               "MAXIMUM_SURFACE1D_LAYERED_LAYERS"),
    "max_surface_2d_layered": ("MAXIMUM_SURFACE2D_LAYERED_WIDTH",
                               "MAXIMUM_SURFACE2D_LAYERED_HEIGHT",
                               "MAXIMUM_SURFACE2D_LAYERED_LAYERS"),
    "max_surface_cubemap_layered": ("MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH",
                                    "MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS"),
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
    "cluster_launch": "CLUSTER_LAUNCH",
    "device_overlap": "GPU_OVERLAP",
    "kernel_exec_timeout_enabled": "KERNEL_EXEC_TIMEOUT",
    "stream_priorities_supported": "STREAM_PRIORITIES_SUPPORTED",
    "global_l1_cache_supported": "GLOBAL_L1_CACHE_SUPPORTED",
    "local_l1_cache_supported": "LOCAL_L1_CACHE_SUPPORTED",
    "compute_preemption_supported": "COMPUTE_PREEMPTION_SUPPORTED",
    "unified_function_pointers": "UNIFIED_FUNCTION_POINTERS",
    "direct_managed_mem_access_from_host": "DIRECT_MANAGED_MEM_ACCESS_FROM_HOST",
    "pageable_memory_access": "PAGEABLE_MEMORY_ACCESS",
    "pageable_memory_access_uses_host_page_tables": "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES",
    "can_use_host_pointer_for_registered_mem": "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM",
    "host_register_supported": "HOST_REGISTER_SUPPORTED",
    "host_register_read_only_supported": "READ_ONLY_HOST_REGISTER_SUPPORTED",
    "host_native_atomic_supported": "HOST_NATIVE_ATOMIC_SUPPORTED",
    "memory_pools_supported": "MEMORY_POOLS_SUPPORTED",
    "sparse_cuda_array_supported": "SPARSE_CUDA_ARRAY_SUPPORTED",
    "deferred_mapping_cuda_array_supported": "DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED",
    "timeline_semaphore_interop_supported": "TIMELINE_SEMAPHORE_INTEROP_SUPPORTED",
    "ipc_event_supported": "IPC_EVENT_SUPPORTED",
    "gpu_direct_rdma_supported": "GPU_DIRECT_RDMA_SUPPORTED",
    "is_multi_gpu_board": "MULTI_GPU_BOARD",
    "tcc_driver": "TCC_DRIVER",
    "mps_enabled": "MPS_ENABLED",
}

# CU_COMPUTEMODE_* values -> runtime.properties.COMPUTE_MODES names
_COMPUTE_MODES = {0: "default", 2: "prohibited", 3: "exclusive_process"}


def _attribute(dev, suffix):
    driver = api()
    attr = getattr(driver.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + suffix)
    return call(driver.cuDeviceGetAttribute, attr, dev)


def _optional(dev, suffix):
    """An attribute that older bindings or drivers may not know (added after CUDA 12.0):
    None there, so the field keeps its default."""
    driver = api()
    attr = getattr(driver.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + suffix, None)
    if attr is None:
        return None
    err, value = driver.cuDeviceGetAttribute(attr, dev)
    return int(value) if err == driver.CUresult.CUDA_SUCCESS else None


def _uuid(dev):
    """The device's UUID as text ('xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx'), from cuDeviceGetUuid."""
    import uuid
    raw = call(api().cuDeviceGetUuid, dev)
    return str(uuid.UUID(bytes=bytes(raw.bytes)[:16]))


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
        "uuid": _uuid(dev),
        "compute_mode": _COMPUTE_MODES.get(_attribute(dev, "COMPUTE_MODE"), "default"),
    }
    for key, suffix in _SCALAR.items():
        value = _optional(dev, suffix)
        if value is not None:
            props[key] = value
    for key, suffix in _FLAGS.items():
        value = _optional(dev, suffix)
        if value is not None:
            props[key] = bool(value)
    for key, suffixes in _TUPLES.items():
        parts = [_optional(dev, suffix) for suffix in suffixes]
        if None not in parts:
            props[key] = tuple(parts)
    return props
