"""``Device.properties``: the whole of cudaDeviceProp, in Python names.

Every field of CUDA 13's cudaDeviceProp that the driver reports (cuDeviceGetAttribute,
cuDeviceGetUuid) has a snake_case field here; multi-dimensional limits are tuples in
cudaDeviceProp's order (width, height, depth / layers: x first, as ``max_block_dim``).
Sizes are in bytes, clock rates in kHz. The defaults are an sm_90 GPU's (H100/H200) limits,
which the cpu and sim devices keep, as they run kernels under CUDA's limits; ``None`` is
unknown. docs/runtime.md lists what the cpu and sim devices report.
"""
import dataclasses

COMPUTE_MODES = ("default", "exclusive_process", "prohibited")    # CU_COMPUTEMODE_*


@dataclasses.dataclass
class DeviceProperties:
    """What ``Device.properties`` reports (cudaGetDeviceProperties)."""

    name: str = "unknown"
    kind: str = "abstract"
    uuid: "str | None" = None                  # 'xxxxxxxx-xxxx-...' (nvidia-smi adds 'GPU-')
    compute_capability: tuple = (0, 0)
    compute_mode: str = "default"              # one of COMPUTE_MODES
    multiprocessor_count: int = 1
    warp_size: int = 32
    max_threads_per_block: int = 1024
    max_block_dim: tuple = (1024, 1024, 64)
    max_grid_dim: tuple = (2**31 - 1, 65535, 65535)
    max_threads_per_multiprocessor: int = 2048
    max_blocks_per_multiprocessor: int = 32
    shared_memory_per_block: int = 48 * 1024
    shared_memory_per_block_optin: int = 227 * 1024
    shared_memory_per_multiprocessor: int = 228 * 1024
    reserved_shared_memory_per_block: int = 1024
    total_memory: int = 0
    total_constant_memory: int = 65536
    max_registers_per_block: int = 65536
    registers_per_multiprocessor: int = 65536
    l2_cache_size: "int | None" = None
    persisting_l2_cache_max_size: int = 0
    access_policy_max_window_size: int = 0
    clock_rate: "int | None" = None
    memory_clock_rate: "int | None" = None
    memory_bus_width: "int | None" = None
    single_to_double_precision_perf_ratio: "int | None" = None
    # textures and surfaces (cudaDeviceProp's maxTexture*, maxSurface*)
    texture_alignment: int = 512
    texture_pitch_alignment: int = 32
    surface_alignment: int = 512
    max_pitch: int = 2**31 - 1
    max_texture_1d: int = 131072
    max_texture_1d_mipmap: int = 32768
    max_texture_1d_linear: int = 2**28
    max_texture_2d: tuple = (131072, 65536)
    max_texture_2d_mipmap: tuple = (32768, 32768)
    max_texture_2d_linear: tuple = (131072, 65000, 2097120)     # width, height, pitch bytes
    max_texture_2d_gather: tuple = (32768, 32768)
    max_texture_3d: tuple = (16384, 16384, 16384)
    max_texture_3d_alt: tuple = (8192, 8192, 32768)
    max_texture_cubemap: int = 32768
    max_texture_1d_layered: tuple = (32768, 2048)               # width, layers
    max_texture_2d_layered: tuple = (32768, 32768, 2048)
    max_texture_cubemap_layered: tuple = (32768, 2046)
    max_surface_1d: int = 32768
    max_surface_2d: tuple = (131072, 65536)
    max_surface_3d: tuple = (16384, 16384, 16384)
    max_surface_1d_layered: tuple = (32768, 2048)
    max_surface_2d_layered: tuple = (32768, 32768, 2048)
    max_surface_cubemap: int = 32768
    max_surface_cubemap_layered: tuple = (32768, 2046)
    # engines, features and memory
    async_engine_count: int = 0
    device_overlap: bool = False
    kernel_exec_timeout_enabled: bool = False
    concurrent_kernels: bool = True
    cooperative_launch: bool = True
    cluster_launch: bool = True
    stream_priorities_supported: bool = True
    global_l1_cache_supported: bool = True
    local_l1_cache_supported: bool = True
    compute_preemption_supported: bool = True
    unified_addressing: bool = True
    unified_function_pointers: bool = True
    managed_memory: bool = True
    concurrent_managed_access: bool = True   # host and device may touch managed memory at once
    direct_managed_mem_access_from_host: bool = False
    pageable_memory_access: bool = False
    pageable_memory_access_uses_host_page_tables: bool = False
    can_map_host_memory: bool = True
    can_use_host_pointer_for_registered_mem: bool = True
    host_register_supported: bool = True
    host_register_read_only_supported: bool = True
    host_native_atomic_supported: bool = False
    memory_pools_supported: bool = True
    memory_pool_supported_handle_types: int = 0
    sparse_cuda_array_supported: bool = False
    deferred_mapping_cuda_array_supported: bool = False
    timeline_semaphore_interop_supported: bool = False
    ipc_event_supported: bool = False
    gpu_direct_rdma_supported: bool = False
    gpu_direct_rdma_flush_writes_options: int = 0
    gpu_direct_rdma_writes_ordering: int = 0
    integrated: bool = False
    is_multi_gpu_board: bool = False
    multi_gpu_board_group_id: int = 0
    ecc_enabled: bool = False
    tcc_driver: bool = False
    mps_enabled: bool = False
    numa_config: int = 0                       # 0: the device's memory is no NUMA node
    numa_id: int = -1
    host_numa_id: int = -1
    pci_bus_id: "str | None" = None            # 'DDDD:BB:DD.F'
    pci_domain_id: int = 0
    pci_device_id: int = 0
    driver_version: "str | None" = None

    def as_dict(self):
        """The properties as a plain dict, in declaration order."""
        return dataclasses.asdict(self)
