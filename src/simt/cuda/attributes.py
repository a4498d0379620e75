"""numba's device attribute names (``dev.MAX_BLOCK_DIM_X``, ``dev.MULTIPROCESSOR_COUNT``):
the driver's ``CU_DEVICE_ATTRIBUTE_<NAME>`` read from simt's DeviceProperties, so they
answer on the cpu and sim devices too. On a GPU the driver is asked first (any name it
knows); this table is what every device answers. Values are ints, as the driver's are
(flags 0 or 1; what a device does not know, such as the cpu's L2 size, reads 0)."""


def _field(name, index=None):
    def read(props):
        value = getattr(props, name)
        value = value[index] if index is not None else value
        return int(value or 0)
    return read


def _pci(part):
    """A part of the PCI address 'DDDD:BB:DD.F' (domain, bus, device), 0 when unknown."""
    def read(props):
        if not props.pci_bus_id:
            return 0
        domain, bus, rest = props.pci_bus_id.split(":")
        return int({"domain": domain, "bus": bus, "device": rest.split(".")[0]}[part], 16)
    return read


NAMES = {
    "MAX_THREADS_PER_BLOCK": _field("max_threads_per_block"),
    **{f"MAX_BLOCK_DIM_{axis}": _field("max_block_dim", i) for i, axis in enumerate("XYZ")},
    **{f"MAX_GRID_DIM_{axis}": _field("max_grid_dim", i) for i, axis in enumerate("XYZ")},
    "MAX_SHARED_MEMORY_PER_BLOCK": _field("shared_memory_per_block"),
    "SHARED_MEMORY_PER_BLOCK": _field("shared_memory_per_block"),
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": _field("shared_memory_per_block_optin"),
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": _field("shared_memory_per_multiprocessor"),
    "TOTAL_CONSTANT_MEMORY": _field("total_constant_memory"),
    "WARP_SIZE": _field("warp_size"),
    "MAX_PITCH": _field("max_pitch"),
    "MAX_REGISTERS_PER_BLOCK": _field("max_registers_per_block"),
    "REGISTERS_PER_BLOCK": _field("max_registers_per_block"),
    "MAX_REGISTERS_PER_MULTIPROCESSOR": _field("registers_per_multiprocessor"),
    "CLOCK_RATE": _field("clock_rate"),
    "MEMORY_CLOCK_RATE": _field("memory_clock_rate"),
    "GLOBAL_MEMORY_BUS_WIDTH": _field("memory_bus_width"),
    "L2_CACHE_SIZE": _field("l2_cache_size"),
    "TEXTURE_ALIGNMENT": _field("texture_alignment"),
    "MULTIPROCESSOR_COUNT": _field("multiprocessor_count"),
    "MAX_THREADS_PER_MULTIPROCESSOR": _field("max_threads_per_multiprocessor"),
    "MAX_BLOCKS_PER_MULTIPROCESSOR": _field("max_blocks_per_multiprocessor"),
    "ASYNC_ENGINE_COUNT": _field("async_engine_count"),
    "GPU_OVERLAP": lambda props: int(bool(props.async_engine_count)),
    "INTEGRATED": _field("integrated"),
    "CAN_MAP_HOST_MEMORY": _field("can_map_host_memory"),
    "CONCURRENT_KERNELS": _field("concurrent_kernels"),
    "ECC_ENABLED": _field("ecc_enabled"),
    "UNIFIED_ADDRESSING": _field("unified_addressing"),
    "MANAGED_MEMORY": _field("managed_memory"),
    "CONCURRENT_MANAGED_ACCESS": _field("concurrent_managed_access"),
    "COOPERATIVE_LAUNCH": _field("cooperative_launch"),
    "COMPUTE_CAPABILITY_MAJOR": _field("compute_capability", 0),
    "COMPUTE_CAPABILITY_MINOR": _field("compute_capability", 1),
    "KERNEL_EXEC_TIMEOUT": lambda props: 0,
    "COMPUTE_MODE": lambda props: {"default": 0, "prohibited": 2,
                                   "exclusive_process": 3}[props.compute_mode],
    "MAX_PERSISTING_L2_CACHE_SIZE": _field("persisting_l2_cache_max_size"),
    "MAX_ACCESS_POLICY_WINDOW_SIZE": _field("access_policy_max_window_size"),
    "STREAM_PRIORITIES_SUPPORTED": _field("stream_priorities_supported"),
    "CLUSTER_LAUNCH": _field("cluster_launch"),
    "TEXTURE_PITCH_ALIGNMENT": _field("texture_pitch_alignment"),
    "SURFACE_ALIGNMENT": _field("surface_alignment"),
    "MAXIMUM_TEXTURE1D_WIDTH": _field("max_texture_1d"),
    "MAXIMUM_TEXTURE2D_WIDTH": _field("max_texture_2d", 0),
    "MAXIMUM_TEXTURE2D_HEIGHT": _field("max_texture_2d", 1),
    **{f"MAXIMUM_TEXTURE3D_{part}": _field("max_texture_3d", i)
       for i, part in enumerate(("WIDTH", "HEIGHT", "DEPTH"))},
    "PCI_DOMAIN_ID": _pci("domain"),
    "PCI_BUS_ID": _pci("bus"),
    "PCI_DEVICE_ID": _pci("device"),
}


def read(device, name):
    """numba's ``Device.<name>`` of a simt Device; AttributeError for a name neither the
    driver nor this table knows."""
    value = device.backend.device_attribute(name) if name.isupper() else None
    if value is not None:
        return value
    if name in NAMES:
        return NAMES[name](device.properties)
    if name.isupper() and hasattr(device.properties, name.lower()):   # simt's own fields
        return getattr(device.properties, name.lower())
    raise AttributeError(
        f"numba's Device has no attribute {name!r} on simt's {device.name!r} device: "
        f"it reads CUDA's CU_DEVICE_ATTRIBUTE_<NAME> (on the cpu and sim devices: "
        f"{', '.join(sorted(NAMES)[:6])}, ... docs/coming-from-numba.md)")
