"""CUDA by Example, chapter 9: a 256-bin histogram of 100 MiB of random bytes on the
CPU (9.4.1), with global-memory atomics (9.4.2) and with shared-memory atomics whose
per-block results are added to global memory (9.4.2)."""
import time

import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from ._common import Example
from .book import EventTimer, big_random_block

SIZE = 100 * 1024 * 1024


@simt.kernel
def histo_kernel_gmem(buffer, size, histo):
    i = threadIdx.x + blockIdx.x * blockDim.x
    stride = blockDim.x * gridDim.x
    while i < size:
        simt.atomic.add(histo, buffer[i], 1)
        i += stride


@simt.kernel
def histo_kernel_shmem(buffer, size, histo):
    """Needs blockDim.x == 256, one thread per bin."""
    temp = simt.shared.array(256, np.uint32)
    temp[threadIdx.x] = 0
    simt.syncthreads()
    i = threadIdx.x + blockIdx.x * blockDim.x
    offset = blockDim.x * gridDim.x
    while i < size:
        simt.atomic.add(temp, buffer[i], 1)
        i += offset
    simt.syncthreads()
    simt.atomic.add(histo, threadIdx.x, temp[threadIdx.x])


def histogram(kernel, buffer):
    """Copy in, clear the bins (cudaMemset), launch 2 blocks per multiprocessor of 256
    threads, copy the bins back; returns them as uint32."""
    dev_buffer = simt.to_device(buffer)
    dev_histo = simt.zeros(256, np.uint32)
    blocks = simt.get_device().properties.multiprocessor_count
    kernel[blocks * 2, 256](dev_buffer, np.int64(buffer.size), dev_histo)
    return dev_histo.copy_to_host()


def _report(histo, buffer):
    print(f"Histogram Sum:  {int(histo.sum(dtype=np.int64))}")
    # verify that we have the same counts via the CPU (the book decrements each bin)
    left = histo.astype(np.int64) - np.bincount(buffer, minlength=256)
    for i in np.flatnonzero(left):
        print(f"Failure at {i}!")
    return not left.any()


def hist_cpu(device=None, out_dir=None, size=SIZE):
    buffer = big_random_block(size)
    started = time.perf_counter()
    histo = np.bincount(buffer, minlength=256)       # the book's for-loop, vectorized
    print(f"Time to generate:  {(time.perf_counter() - started) * 1e3:3.1f} ms")
    print(f"Histogram Sum:  {int(histo.sum())}")
    return histo


def _hist_gpu(kernel, size):
    buffer = big_random_block(size)
    histogram(kernel, buffer[:4096])           # compile outside the timing, as nvcc does
    timer = EventTimer()
    histo = histogram(kernel, buffer)
    print(f"Time to generate:  {timer.elapsed_ms():3.1f} ms")
    _report(histo, buffer)
    return histo


def hist_gmem_atomics(device=None, out_dir=None, size=SIZE):
    return _hist_gpu(histo_kernel_gmem, size)


def hist_shmem_atomics(device=None, out_dir=None, size=SIZE):
    return _hist_gpu(histo_kernel_shmem, size)


EXAMPLES = [
    Example("hist_cpu", "9.4.1", "histogram of 100 MiB of random bytes on the host (9.4.1)",
            hist_cpu),
    Example("hist_gmem_atomics", "9.4.2", "histogram with global-memory atomics, timed (9.4.2)",
            hist_gmem_atomics),
    Example("hist_shmem_atomics", "9.4.2.1", "histogram with shared-memory atomics, timed "
            "(9.4.2)", hist_shmem_atomics),
]
