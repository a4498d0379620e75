"""CUDA by Example, chapter 3: hello world, a kernel call, kernel parameters,
querying devices and choosing one by its properties."""
import numpy as np

import simt
from simt.errors import CudaError
from ._common import Example


def hello_world(device=None, out_dir=None):
    """3.2.1: CUDA C is C; nothing runs on the device."""
    print("Hello, World!")


@simt.kernel
def kernel():
    pass


def simple_kernel(device=None, out_dir=None):
    """3.2.2: an empty kernel, kernel<<<1,1>>>()."""
    kernel[1, 1]()
    simt.synchronize()
    print("Hello, World!")


@simt.kernel
def add(a, b, c):
    c[0] = a + b


def simple_kernel_params(device=None, out_dir=None, a=2, b=7):
    """3.2.3: add<<<1,1>>>(2, 7, dev_c); the sum comes back with a device-to-host copy."""
    dev_c = simt.device_array(1, np.int32)          # cudaMalloc(&dev_c, sizeof(int))
    add[1, 1](np.int32(a), np.int32(b), dev_c)
    c = int(dev_c.copy_to_host()[0])                 # cudaMemcpy(&c, dev_c, ..., DeviceToHost)
    print(f"{a} + {b} = {c}")
    return c


def _enabled(flag):
    return "unknown" if flag is None else "Enabled" if flag else "Disabled"


def _print_properties(i, prop):
    print(f"   --- General Information for device {i} ---")
    print(f"Name:  {prop.name}")
    print("Compute capability:  %d.%d" % tuple(prop.compute_capability))
    print(f"Clock rate:  {prop.clock_rate}")
    # deviceOverlap: a copy engine beside the kernel engine (cudaDeviceProp.asyncEngineCount > 0)
    print(f"Device copy overlap:  {_enabled(prop.async_engine_count > 0)}")
    print(f"Kernel execution timeout :  "
          f"{_enabled(getattr(prop, 'kernel_exec_timeout', None))}")
    print(f"   --- Memory Information for device {i} ---")
    print(f"Total global mem:  {prop.total_memory}")
    print(f"Total constant Mem:  {prop.total_constant_memory}")
    print(f"Max mem pitch:  {prop.max_pitch}")
    print(f"Texture Alignment:  {prop.texture_alignment}")
    print(f"   --- MP Information for device {i} ---")
    print(f"Multiprocessor count:  {prop.multiprocessor_count}")
    print(f"Shared mem per mp:  {prop.shared_memory_per_block}")
    print(f"Registers per mp:  {prop.max_registers_per_block}")
    print(f"Threads in warp:  {prop.warp_size}")
    print(f"Max threads per block:  {prop.max_threads_per_block}")
    print("Max thread dimensions:  (%d, %d, %d)" % tuple(prop.max_block_dim))
    print("Max grid dimensions:  (%d, %d, %d)" % tuple(prop.max_grid_dim))
    print()


def enum_gpu(device=None, out_dir=None):
    """3.3: cudaGetDeviceCount, then cudaGetDeviceProperties for each device.

    simt's devices are the GPUs, then the CPU device (and 'sim' where it is built);
    a device whose properties cannot be read says why.
    """
    found = simt.devices()
    for i, dev in enumerate(found):
        try:
            _print_properties(i, dev.properties)
        except CudaError as exc:
            print(f"   --- device {i} ({dev.name}) unavailable: {exc}\n")
    return len(found)


def choose_device(major, minor):
    """cudaChooseDevice: the index of the device whose compute capability is closest to
    (major, minor), preferring GPUs; the CPU device when no GPU is present."""
    candidates = []
    for i, dev in enumerate(simt.devices()):
        try:
            cc = tuple(dev.properties.compute_capability)
        except CudaError:
            continue
        distance = abs((cc[0] * 10 + cc[1]) - (major * 10 + minor))
        candidates.append((dev.kind != "cuda", distance, i))
    return min(candidates)[2]


def set_gpu(device=None, out_dir=None):
    """3.4: cudaGetDevice; cudaChooseDevice for compute capability 1.3; cudaSetDevice."""
    found = simt.devices()
    current = found.index(simt.get_device()) if simt.get_device() in found else 0
    print(f"ID of current CUDA device:  {current}")
    dev = choose_device(1, 3)                        # double precision needs 1.3 or later
    print(f"ID of CUDA device closest to revision 1.3:  {dev}")
    simt.set_device(found[dev])
    return dev


EXAMPLES = [
    Example("hello_world", "3.2.1", "Hello, World! (CUDA by Example 3.2.1)", hello_world),
    Example("simple_kernel", "3.2.2", "an empty kernel launched <<<1,1>>> (3.2.2)", simple_kernel),
    Example("simple_kernel_params", "3.2.3", "add<<<1,1>>>(2, 7, dev_c): 2 + 7 = 9 (3.2.3)",
            simple_kernel_params),
    Example("enum_gpu", "3.3", "query every device's properties (3.3)", enum_gpu),
    Example("set_gpu", "3.4", "choose the device closest to compute capability 1.3 (3.4)",
            set_gpu),
]
