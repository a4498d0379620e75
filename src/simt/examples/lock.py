"""CUDA by Example, appendix A.1: a mutex built from atomicCAS (lock.h), and the dot
product whose blocks add their results into one float under that lock (A.1.2).

Fixes to the printed lock.h: ``unlock`` wrote 1 where it must write 0 (as printed, the
second block to arrive spins forever); and the memory orders below, which the book leaves
out: with relaxed atomics a block may read a stale ``*c`` or publish its sum after
releasing the lock, since such atomics order nothing else. Locking is an acquiring CAS,
unlocking a releasing exchange (PTX ``atom.acquire`` / ``atom.release``), which order what
the critical section reads and writes as the two ``__threadfence()`` calls did, for less.
"""
import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from ._common import Example

N = 33 * 1024 * 1024
THREADS_PER_BLOCK = 256
BLOCKS_PER_GRID = min(32, (N + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK)


class Lock:
    """lock.h's struct Lock: one int in device memory, 0 when free (cudaMalloc + copy 0).

    Kernels take ``lock.mutex`` and call ``lock(mutex, i)`` / ``unlock(mutex, i)``:
    index i picks one lock of an array of them (the hash table has one per bucket).
    ``spread=True`` puts each lock on its own 128-byte line, as the book's array of Lock
    structs has them (each mutex its own cudaMalloc): ``mutex`` is then a strided view.
    Packed 4 bytes apart, 32 locks share a line, and the GPU's L2 serializes atomics
    on one line even when they are to different locks.
    """

    def __init__(self, count=1, spread=False):
        step = LINE // 4 if spread else 1
        self.mutex = simt.zeros(count * step, np.int32)[::step]


LINE = 128          # bytes: a cache line of the GPU's L2


@simt.device
def lock(mutex, i):
    # acquire: later reads see what the last holder wrote
    while simt.atomic.cas(mutex, i, 0, 1, order="acquire") != 0:
        pass


@simt.device
def unlock(mutex, i):
    # release: our writes are visible before the lock is free. The book prints
    # atomicExch(mutex, 1): a deadlock
    simt.atomic.exch(mutex, i, 0, order="release")


@simt.kernel
def dot(mutex, a, b, c):
    cache = simt.shared.array(THREADS_PER_BLOCK, np.float32)
    tid = threadIdx.x + blockIdx.x * blockDim.x
    cache_index = threadIdx.x
    temp = np.float32(0)
    while tid < a.shape[0]:
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
        lock(mutex, 0)
        c[0] += cache[0]
        unlock(mutex, 0)


def sum_squares(x):
    return x * (x + 1) * (2 * x + 1) / 6


def run(n=N):
    """Returns (GPU value, exact value)."""
    a = np.arange(n, dtype=np.float32)
    b = a * np.float32(2)
    dev_c = simt.zeros(1, np.float32)             # cudaMemcpy of c = 0
    dot[BLOCKS_PER_GRID, THREADS_PER_BLOCK](Lock().mutex, simt.to_device(a), simt.to_device(b),
                                            dev_c)
    return float(dev_c.copy_to_host()[0]), 2 * sum_squares(float(n - 1))


def dot_atomic_lock(device=None, out_dir=None, n=N):
    c, expected = run(n)
    print(f"Does GPU value {c:.6g} = {expected:.6g}?")
    return c, expected


EXAMPLES = [
    Example("dot_atomic_lock", "A.1.2", "dot product whose blocks add into one float under an "
            "atomic lock (A.1.2)", dot_atomic_lock),
]
