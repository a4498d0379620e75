"""Inclusive scan (prefix sum) of int32 in three kernels: each 1024-thread block
scans its 1024 elements in shared memory (Hillis-Steele), one block scans the
block totals (each thread a contiguous run of them), and every block adds the
total of the blocks before it."""
import numpy as np

import simt
from simt import blockDim, blockIdx, threadIdx
from .base import Case

B = 1024


@simt.kernel
def scan_blocks(x, y, sums):
    s = simt.shared.array(B, np.int32)
    tid = threadIdx.x
    i = blockIdx.x * B + tid
    s[tid] = x[i]
    simt.syncthreads()
    off = 1
    while off < B:
        t = np.int32(0)
        if tid >= off:
            t = s[tid - off]
        simt.syncthreads()
        s[tid] += t
        simt.syncthreads()
        off *= 2
    y[i] = s[tid]
    if tid == B - 1:
        sums[blockIdx.x] = s[tid]


@simt.kernel
def scan_sums(sums):
    s = simt.shared.array(B, np.int32)
    tid = threadIdx.x
    per = sums.shape[0] // B
    base = tid * per
    run = np.int32(0)
    for k in range(per):
        run += sums[base + k]
        sums[base + k] = run
    s[tid] = run
    simt.syncthreads()
    off = 1
    while off < B:
        t = np.int32(0)
        if tid >= off:
            t = s[tid - off]
        simt.syncthreads()
        s[tid] += t
        simt.syncthreads()
        off *= 2
    if tid > 0:
        before = s[tid - 1]
        for k in range(per):
            sums[base + k] += before


@simt.kernel
def add_offsets(y, sums):
    if blockIdx.x > 0:
        i = blockIdx.x * blockDim.x + threadIdx.x
        y[i] += sums[blockIdx.x - 1]


def make(size, rng):
    n = size["n"]
    return {"x": rng.integers(-100, 100, n, dtype=np.int32), "y": np.empty(n, np.int32),
            "sums": np.empty(n // B, np.int32)}


def launch(d, size):
    blocks = size["n"] // B
    scan_blocks[blocks, B](d["x"], d["y"], d["sums"])
    scan_sums[1, B](d["sums"])
    add_offsets[blocks, B](d["y"], d["sums"])


def reference(h, size):
    return {"y": np.cumsum(h["x"], dtype=np.int32)}


def check(got, expected):
    return np.array_equal(got["y"], expected["y"])


CASES = [Case(
    name="scan", workload="scan", sizes={"gpu": {"n": 1 << 26}, "cpu": {"n": 1 << 22}},
    make=make, outputs=["y", "sums"], launch=launch, reference=reference, check=check,
    arrays=["x", "y", "sums"], ints=["n"], work=lambda s: (16 * s["n"], s["n"]),
    kernels=[(scan_blocks, "void(int32[::1], int32[::1], int32[::1])"),
             (scan_sums, "void(int32[::1])"), (add_offsets, "void(int32[::1], int32[::1])")],
    cupy=lambda c, s: c["cp"].cumsum(c["x"], out=c["y"]),
    note="n must be a multiple of 1024*1024; bytes count the x read, y written, y read and "
         "written again")]
