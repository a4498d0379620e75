"""Sum of float32: each block sums a contiguous chunk (threads stride by the
block size, so loads coalesce), then a shared-memory tree; partial sums per
block, added on the host. A warp-shuffle variant runs once simt has shuffles."""
import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from .base import Case

THREADS = 256


@simt.kernel
def reduce_tree(x, partial):
    cache = simt.shared.array(THREADS, np.float32)
    tid = threadIdx.x
    n = np.int32(x.shape[0])
    chunk = (n + gridDim.x - 1) // gridDim.x
    start = blockIdx.x * chunk
    end = min(start + chunk, n)
    acc = np.float32(0)
    for i in range(start + tid, end, THREADS):
        acc += x[i]
    cache[tid] = acc
    simt.syncthreads()
    s = THREADS // 2
    while s > 0:
        if tid < s:
            cache[tid] += cache[tid + s]
        simt.syncthreads()
        s //= 2
    if tid == 0:
        partial[blockIdx.x] = cache[0]


@simt.kernel
def reduce_warp(x, partial):
    warps = simt.shared.array(THREADS // 32, np.float32)
    tid = threadIdx.x
    n = np.int32(x.shape[0])
    chunk = (n + gridDim.x - 1) // gridDim.x
    start = blockIdx.x * chunk
    end = min(start + chunk, n)
    acc = np.float32(0)
    for i in range(start + tid, end, THREADS):
        acc += x[i]
    offset = 16
    while offset > 0:
        acc += simt.shfl_down_sync(0xFFFFFFFF, acc, offset)
        offset //= 2
    if tid % 32 == 0:
        warps[tid // 32] = acc
    simt.syncthreads()
    if tid < 32:
        acc = warps[tid] if tid < THREADS // 32 else np.float32(0)
        offset = 16
        while offset > 0:
            acc += simt.shfl_down_sync(0xFFFFFFFF, acc, offset)
            offset //= 2
        if tid == 0:
            partial[blockIdx.x] = acc


def make(size, rng):
    blocks = size["blocks"] if size["kind"] == "cpu" else 8 * size["sms"]
    return {"x": rng.random(size["n"], dtype=np.float32),
            "partial": np.empty(blocks, np.float32), "blocks": blocks}


def case(name, kernel, requires=""):
    def launch(d, size):
        globals()[kernel.__name__][d["blocks"], THREADS](d["x"], d["partial"])

    def reference(h, size):
        return {"total": h["x"].astype(np.float64).sum()}

    def check(got, expected):
        total = got["partial"].astype(np.float64).sum()
        return abs(total - expected["total"]) <= 1e-5 * abs(expected["total"])

    return Case(
        name=name, workload="reduction",
        sizes={"gpu": {"n": 1 << 26}, "cpu": {"n": 1 << 24, "blocks": 64}},
        make=make, outputs=["partial"], launch=launch, reference=reference,
        arrays=["x", "partial"], ints=["n", "blocks"], work=lambda s: (4 * s["n"], s["n"]),
        check=check, kernels=[(kernel, "void(float32[::1], float32[::1])")], requires=requires,
        cupy=lambda c, s: c["cp"].sum(c["x"]))


CASES = [case("reduction_tree", reduce_tree), case("reduction_warp", reduce_warp, "shfl_down_sync")]
