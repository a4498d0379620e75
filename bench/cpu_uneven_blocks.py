"""The CPU team's schedule on blocks of uneven cost: grids whose first blocks are heavy and
the rest light, so that with static ranges one member would own all the heavy ones. Compare
a run with N threads against one thread's time / N (the ideal):

    SIMT_CPU_THREADS=1 python bench/cpu_uneven_blocks.py
    SIMT_CPU_THREADS=2 python bench/cpu_uneven_blocks.py

2-core machine, 2026-11-29 (bench/NOTES.md): 4096 blocks, the first 700 heavy: one thread
137.8 ms; two threads 87.5 ms with eight equal chunks per range (1.27x the ideal), 74.0 with
chunks shrinking as a range empties (1.07x)."""
import time

import numpy as np

import simt

@simt.kernel
def work(out, heavy_blocks, iters):
    b = simt.blockIdx.x
    i = b * simt.blockDim.x + simt.threadIdx.x
    n = iters if b < heavy_blocks else 1
    x = np.float32(i) * np.float32(1e-6)
    for k in range(n):
        x = x * np.float32(0.999) + np.float32(0.001)
    out[i] = x

def timed(blocks, heavy, iters, reps=15):
    out = simt.device_array(blocks * 64, np.float32)
    work[blocks, 64](out, heavy, iters); simt.synchronize()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); work[blocks, 64](out, heavy, iters); simt.synchronize()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))

simt.set_device("cpu")
for blocks, heavy in ((64, 32), (64, 24), (96, 40), (4096, 700)):
    iters = max(1, 2_000_000 // heavy)
    t = timed(blocks, heavy, iters)
    print(f"blocks {blocks:5d} heavy {heavy:4d}: {t*1e3:7.2f} ms")
