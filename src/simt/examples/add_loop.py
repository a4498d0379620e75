"""CUDA by Example, chapters 4 and 5: vector sums on the CPU, with N blocks, with N
threads, and with a grid-stride loop over a vector longer than the grid."""
import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from ._common import Example

N = 10
N_LONG = 33 * 1024


def add_cpu(a, b, c):
    """4.2.1: the CPU version; tid += 1 (a second core would start at 1 and add 2)."""
    tid = 0
    while tid < N:
        c[tid] = a[tid] + b[tid]
        tid += 1


@simt.kernel
def add_blocks(a, b, c):
    """4.2.1, add<<<N,1>>>: one block per element."""
    tid = blockIdx.x
    if tid < N:
        c[tid] = a[tid] + b[tid]


@simt.kernel
def add_threads(a, b, c):
    """5.2.1, add<<<1,N>>>: one thread per element."""
    tid = threadIdx.x
    if tid < N:
        c[tid] = a[tid] + b[tid]


@simt.kernel
def add_long(a, b, c):
    """5.2.1: any length, through a grid-stride loop."""
    tid = threadIdx.x + blockIdx.x * blockDim.x
    while tid < c.shape[0]:
        c[tid] = a[tid] + b[tid]
        tid += blockDim.x * gridDim.x


def _print_sums(a, b, c):
    for i in range(N):
        print(f"{a[i]} + {b[i]} = {c[i]}")


def _on_device(kernel, grid, block, a, b):
    dev_a, dev_b = simt.to_device(a), simt.to_device(b)     # cudaMalloc + cudaMemcpy
    dev_c = simt.device_array(a.shape, np.int32)
    kernel[grid, block](dev_a, dev_b, dev_c)
    return dev_c.copy_to_host()


def add_loop_cpu(device=None, out_dir=None):
    a = -np.arange(N, dtype=np.int32)
    b = np.arange(N, dtype=np.int32) ** 2
    c = np.zeros(N, np.int32)
    add_cpu(a, b, c)
    _print_sums(a, b, c)
    return a, b, c


def add_loop_gpu(device=None, out_dir=None):
    a = -np.arange(N, dtype=np.int32)
    b = np.arange(N, dtype=np.int32) ** 2
    c = _on_device(add_blocks, N, 1, a, b)
    _print_sums(a, b, c)
    return a, b, c


def add_loop_gpu_threads(device=None, out_dir=None):
    a = np.arange(N, dtype=np.int32)
    b = np.arange(N, dtype=np.int32) ** 2
    c = _on_device(add_threads, 1, N, a, b)
    _print_sums(a, b, c)
    return a, b, c


def add_loop_long(device=None, out_dir=None, n=N_LONG):
    a = np.arange(n, dtype=np.int32)
    b = np.arange(n, dtype=np.int32) ** 2
    c = _on_device(add_long, 128, 128, a, b)
    success = True
    for i in np.flatnonzero(a + b != c):
        print(f"Error:  {a[i]} + {b[i]} != {c[i]}")
        success = False
    if success:
        print("We did it!")
    return a, b, c


EXAMPLES = [
    Example("add_loop_cpu", "4.2.1", "vector sum on the CPU, N = 10 (4.2.1)", add_loop_cpu),
    Example("add_loop_gpu", "4.2.1.1", "vector sum with N blocks, add<<<N,1>>> (4.2.1)", add_loop_gpu),
    Example("add_loop_gpu_threads", "5.2.1", "vector sum with N threads, add<<<1,N>>> (5.2.1)",
            add_loop_gpu_threads),
    Example("add_loop_long", "5.2.1.1", "grid-stride vector sum, N = 33*1024, <<<128,128>>> (5.2.1)",
            add_loop_long),
]
