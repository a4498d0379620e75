"""256-bin histogram of bytes (CUDA by Example, ch. 9) with atomics on global
memory, and on a shared per-block histogram merged into global at the end.
Each block takes a contiguous chunk (the book strides over the whole grid; a
chunk keeps the GPU's loads coalesced and the CPU's in cache)."""
import numpy as np

import simt
from simt import blockIdx, gridDim, threadIdx
from .base import Case

THREADS = 256


@simt.kernel
def histo_global(buf, histo):
    n = np.int32(buf.shape[0])
    chunk = (n + gridDim.x - 1) // gridDim.x
    start = blockIdx.x * chunk
    end = min(start + chunk, n)
    for i in range(start + threadIdx.x, end, THREADS):
        simt.atomic.add(histo, buf[i], 1)


@simt.kernel
def histo_shared(buf, histo):
    temp = simt.shared.array(256, np.int32)
    temp[threadIdx.x] = 0
    simt.syncthreads()
    n = np.int32(buf.shape[0])
    chunk = (n + gridDim.x - 1) // gridDim.x
    start = blockIdx.x * chunk
    end = min(start + chunk, n)
    for i in range(start + threadIdx.x, end, THREADS):
        simt.atomic.add(temp, buf[i], 1)
    simt.syncthreads()
    simt.atomic.add(histo, threadIdx.x, temp[threadIdx.x])


def make(size, rng):
    blocks = size["blocks"] if size["kind"] == "cpu" else size["per_sm"] * size["sms"]
    return {"buf": rng.integers(0, 256, size["n"], dtype=np.uint8),
            "histo": np.zeros(256, np.int32), "blocks": blocks}


def case(name, kernel, per_sm):
    def launch(d, size):
        globals()[kernel.__name__][d["blocks"], THREADS](d["buf"], d["histo"])

    return Case(
        name=name, workload="histogram",
        sizes={"gpu": {"n": 1 << 28, "per_sm": per_sm}, "cpu": {"n": 1 << 25, "blocks": 64}},
        make=make, outputs=["histo"], launch=launch,
        reference=lambda h, s: {"histo": np.bincount(h["buf"], minlength=256).astype(np.int32)},
        arrays=["buf", "histo"], ints=["n", "blocks"], work=lambda s: (s["n"], 0),
        kernels=[(kernel, "void(uint8[::1], int32[::1])")],
        cupy=lambda c, s: c["cp"].bincount(c["buf"], minlength=256), zero=["histo"])


CASES = [case("histogram_global", histo_global, 32), case("histogram_shared", histo_shared, 8)]
