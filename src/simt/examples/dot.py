"""Dot product with shared memory (CUDA by Example, chapter 5): each block
reduces its partial sums in shared memory with a syncthreads tree; the host
adds the per-block results."""
import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx

NAME = "dot"
SECTION = "5.3.1"
DESCRIPTION = "dot product with a shared-memory reduction (5.3.1)"
N = 33 * 1024
THREADS_PER_BLOCK = 256
BLOCKS_PER_GRID = min(32, (N + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK)


@simt.kernel
def dot(a, b, c):
    cache = simt.shared.array(THREADS_PER_BLOCK, np.float32)
    tid = threadIdx.x + blockIdx.x * blockDim.x
    cache_index = threadIdx.x
    temp = np.float32(0)
    while tid < a.shape[0]:
        temp += a[tid] * b[tid]
        tid += blockDim.x * gridDim.x
    cache[cache_index] = temp
    simt.syncthreads()
    i = blockDim.x // 2                       # threads per block must be a power of 2
    while i != 0:
        if cache_index < i:
            cache[cache_index] += cache[cache_index + i]
        simt.syncthreads()
        i //= 2
    if cache_index == 0:
        c[blockIdx.x] = cache[0]


def run(n=N):
    """The book's inputs: a[i] = i, b[i] = 2i. Returns (result, exact value)."""
    a = np.arange(n, dtype=np.float32)
    b = (2 * np.arange(n)).astype(np.float32)
    partial = simt.device_array(BLOCKS_PER_GRID, np.float32)
    dot[BLOCKS_PER_GRID, THREADS_PER_BLOCK](simt.to_device(a), simt.to_device(b), partial)
    result = float(partial.copy_to_host().astype(np.float64).sum())
    exact = 2 * sum_squares(n - 1)
    return result, exact


def sum_squares(x):
    return x * (x + 1) * (2 * x + 1) / 6


def main(device=None, out_dir=None):
    result, exact = run()
    print(f"Does GPU value {result:.6g} = {exact:.6g}?")
    return abs(result - exact) <= 1e-5 * exact
