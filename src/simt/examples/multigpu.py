"""CUDA by Example, chapter 11: the dot product over zero-copy host memory (11.2), split
over two GPUs by two host threads (11.3), and over portable pinned memory that both
GPUs map (11.4). On a machine with one device both halves run on it, and the program
says so."""
import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from ._common import Example
from .book import EventTimer, end_thread, mapped_device_view, start_thread

N = 33 * 1024 * 1024
THREADS_PER_BLOCK = 256
BLOCKS_PER_GRID = min(32, (N + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK)


@simt.kernel
def dot(size, a, b, c):
    cache = simt.shared.array(THREADS_PER_BLOCK, np.float32)
    tid = threadIdx.x + blockIdx.x * blockDim.x
    cache_index = threadIdx.x
    temp = np.float32(0)
    while tid < size:
        temp += a[tid] * b[tid]
        tid += blockDim.x * gridDim.x
    cache[cache_index] = temp
    simt.syncthreads()
    i = blockDim.x // 2
    while i != 0:
        if cache_index < i:
            cache[cache_index] += cache[cache_index + i]
        simt.syncthreads()
        i //= 2
    if cache_index == 0:
        c[blockIdx.x] = cache[0]


def exact(n):
    """sum(i * 2i) for i < n, in float64 (the book prints the float result only)."""
    x = n - 1
    return 2 * x * (x + 1) * (2 * x + 1) / 6


def _fill(a, b, offset=0):
    a[:] = np.arange(offset, offset + a.size, dtype=np.float32)
    b[:] = a * np.float32(2)


def _warm_up():
    """Compile the kernel before the timing starts, as nvcc would have."""
    one = simt.zeros(THREADS_PER_BLOCK, np.float32)
    dot[1, THREADS_PER_BLOCK](np.int32(1), one, one, simt.zeros(1, np.float32))
    simt.synchronize()


# -- 11.2 zero-copy --------------------------------------------------------------------------


def malloc_test(size):
    a, b = np.empty(size, np.float32), np.empty(size, np.float32)          # malloc
    dev_a, dev_b = simt.device_array(size, np.float32), simt.device_array(size, np.float32)
    dev_partial_c = simt.device_array(BLOCKS_PER_GRID, np.float32)
    _fill(a, b)
    timer = EventTimer()
    dev_a.copy_from(a)
    dev_b.copy_from(b)
    dot[BLOCKS_PER_GRID, THREADS_PER_BLOCK](np.int32(size), dev_a, dev_b, dev_partial_c)
    partial_c = dev_partial_c.copy_to_host()
    elapsed = timer.elapsed_ms()
    c = float(partial_c.sum(dtype=np.float32))
    print(f"Value calculated:  {c:f}")
    return elapsed, c


def cuda_host_alloc_test(size):
    # cudaHostAllocWriteCombined | cudaHostAllocMapped, as the book: the GPU reads them
    # across the bus without snooping the CPU's caches
    a = simt.mapped_array(size, np.float32, write_combined=True)
    b = simt.mapped_array(size, np.float32, write_combined=True)
    partial_c = simt.mapped_array(BLOCKS_PER_GRID, np.float32)
    _fill(a, b)
    dev_a, dev_b = mapped_device_view(a), mapped_device_view(b)   # cudaHostGetDevicePointer
    dev_partial_c = mapped_device_view(partial_c)
    timer = EventTimer()
    dot[BLOCKS_PER_GRID, THREADS_PER_BLOCK](np.int32(size), dev_a, dev_b, dev_partial_c)
    simt.synchronize()                                              # cudaThreadSynchronize
    elapsed = timer.elapsed_ms()
    c = float(np.asarray(partial_c).sum(dtype=np.float32))
    print(f"Value calculated:  {c:f}")
    return elapsed, c


def zero_copy_dot(device=None, out_dir=None, size=N):
    if not simt.get_device().properties.can_map_host_memory:
        print("Device cannot map memory.")
        return None
    _warm_up()
    elapsed, c_malloc = malloc_test(size)
    print(f"Time using cudaMalloc:  {elapsed:3.1f} ms")
    elapsed, c_mapped = cuda_host_alloc_test(size)
    print(f"Time using cudaHostAlloc:  {elapsed:3.1f} ms")
    return c_malloc, c_mapped


# -- 11.3 and 11.4: two devices, two host threads ----------------------------------------------


class DataStruct:
    def __init__(self, device, size, a, b, offset=0):
        self.device, self.size, self.a, self.b, self.offset = device, size, a, b, offset
        self.return_value = None


def _partial_dot(dev_a, dev_b, size):
    dev_partial_c = simt.device_array(BLOCKS_PER_GRID, np.float32)
    dot[BLOCKS_PER_GRID, THREADS_PER_BLOCK](np.int32(size), dev_a, dev_b, dev_partial_c)
    return float(dev_partial_c.copy_to_host().sum(dtype=np.float32))


def routine(data):
    """11.3: on this thread's device, copy the half in, run dot, sum the partials."""
    with simt.use_device(data.device):                    # cudaSetDevice(data->deviceID)
        dev_a, dev_b = simt.to_device(data.a), simt.to_device(data.b)
        data.return_value = _partial_dot(dev_a, dev_b, data.size)


def routine_mapped(data):
    """11.4: map the portable buffers into this thread's device and offset into them."""
    with simt.use_device(data.device):
        half = slice(data.offset, data.offset + data.size)    # dev_a += data->offset
        dev_a = mapped_device_view(data.a[half], data.device)
        dev_b = mapped_device_view(data.b[half], data.device)
        data.return_value = _partial_dot(dev_a, dev_b, data.size)


def two_devices():
    """The two devices the halves run on: two GPUs when there are, else the current device
    twice (which the caller reports)."""
    gpus = [d for d in simt.devices() if d.kind == "cuda"]
    if len(gpus) >= 2:
        return gpus[0], gpus[1]
    print(f"We need at least two compute 1.0 or greater devices, but only found {len(gpus)}; "
          f"running both halves on {simt.get_device().name}")
    return simt.get_device(), simt.get_device()


def _run_halves(routine_fn, data):
    thread = start_thread(routine_fn, data[0])
    routine_fn(data[1])
    end_thread(thread, data[0])
    return data[0].return_value + data[1].return_value


def multidevice(device=None, out_dir=None, size=N):
    first, second = two_devices()
    a, b = np.empty(size, np.float32), np.empty(size, np.float32)
    _fill(a, b)
    half = size // 2
    data = [DataStruct(first, half, a[:half], b[:half]),
            DataStruct(second, size - half, a[half:], b[half:])]
    value = _run_halves(routine, data)
    print(f"Value calculated:  {value:f}")
    return value


def portable_pinned(device=None, out_dir=None, size=N):
    first, second = two_devices()
    for i, dev in enumerate((first, second)):
        if not dev.properties.can_map_host_memory:
            print(f"Device {i} cannot map memory.")
            return None
    with simt.use_device(first):
        # cudaHostAllocWriteCombined | cudaHostAllocPortable | cudaHostAllocMapped: simt's
        # mapped memory is always portable (every context sees it), and has no write-combining
        a, b = simt.mapped_array(size, np.float32), simt.mapped_array(size, np.float32)
    _fill(a, b)
    half = size // 2
    data = [DataStruct(first, half, a, b, offset=0),
            DataStruct(second, size - half, a, b, offset=half)]
    value = _run_halves(routine_mapped, data)
    print(f"Value calculated:  {value:f}")
    return value


EXAMPLES = [
    Example("zero_copy_dot", "11.2", "dot product from cudaMalloc'd against zero-copy mapped "
            "memory, timed (11.2)", zero_copy_dot),
    Example("multidevice", "11.3", "dot product split over two GPUs by two host threads (11.3)",
            multidevice),
    Example("portable_pinned", "11.4", "dot product over portable pinned memory mapped by two "
            "GPUs (11.4)", portable_pinned),
]
