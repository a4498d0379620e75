"""Warp-shuffle reduction: simt against nvcc on a GPU, and against a shared-memory tree on
the CPU device (docs/warp.md records the figures).

    python bench/warp.py gpu [out.json]   # 2^28 float32, simt vs bench/gpu/warp_reduce.cu
    python bench/warp.py cpu [out.json]   # 2^24 float32, shuffle vs shared tree, CPU device
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

import simt

THREADS = 256


@simt.kernel
def warp_reduce(a, out):
    """The algorithm of bench/gpu/warp_reduce.cu, line for line."""
    warp_sums = simt.shared.array(32, np.float32)
    n = np.int32(a.shape[0])
    start = simt.blockIdx.x * simt.blockDim.x + simt.threadIdx.x
    stride = simt.blockDim.x * simt.gridDim.x
    acc = np.float32(0)
    # the grid-stride loop with its trip count up front: LLVM then unrolls it as nvcc does
    # the C loop (simt's while loops wrap on overflow, so theirs cannot be counted)
    for k in range((n - start + stride - 1) // stride):
        acc += a[start + k * stride]
    offset = 16
    while offset > 0:
        acc += simt.shfl_down_sync(0xFFFFFFFF, acc, offset)
        offset //= 2
    lane = simt.threadIdx.x & 31
    warp = simt.threadIdx.x >> 5
    if lane == 0:
        warp_sums[warp] = acc
    simt.syncthreads()
    if warp == 0:
        acc = warp_sums[lane] if lane < (simt.blockDim.x >> 5) else np.float32(0)
        offset = 16
        while offset > 0:
            acc += simt.shfl_down_sync(0xFFFFFFFF, acc, offset)
            offset //= 2
        if lane == 0:
            simt.atomic.add(out, 0, acc)


@simt.kernel
def tree_reduce(a, out):
    """The same grid-stride sum, reduced in the block by a shared-memory tree."""
    buf = simt.shared.array(THREADS, np.float32)
    n = np.int32(a.shape[0])
    t = simt.threadIdx.x
    start = simt.blockIdx.x * simt.blockDim.x + t
    stride = simt.blockDim.x * simt.gridDim.x
    acc = np.float32(0)
    for k in range((n - start + stride - 1) // stride):
        acc += a[start + k * stride]
    buf[t] = acc
    s = simt.blockDim.x // 2
    while s > 0:
        simt.syncthreads()
        if t < s:
            buf[t] += buf[t + s]
        s //= 2
    if t == 0:
        simt.atomic.add(out, 0, buf[0])


def data(n):
    return (np.arange(n) % 7 - 3).astype(np.float32)


def gpu_ms(kernel, blocks, a, out, reps=20, batch=10):
    start, end = simt.Event(), simt.Event()
    kernel[blocks, THREADS](a, out)
    simt.synchronize()
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(batch):
            kernel[blocks, THREADS](a, out)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / batch)
    return sorted(times)[len(times) // 2]


def cpu_ms(kernel, blocks, a, out, reps=7):
    kernel[blocks, THREADS](a, out)
    simt.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        kernel[blocks, THREADS](a, out)
        simt.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return min(times)


def gpu():
    simt.set_device("cuda:0")
    n, blocks = 1 << 28, 2048
    host = data(n)
    a, out = simt.to_device(host), simt.zeros(1, np.float32)
    result = {"device": simt.get_device().properties.name, "n": n, "blocks": blocks,
              "threads": THREADS, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    warp_reduce[blocks, THREADS](a, out)
    result["simt_sum"] = float(out.copy_to_host()[0])
    result["expected_sum"] = float(host.astype(np.float64).sum())
    result["simt_ms"] = gpu_ms(warp_reduce, blocks, a, out)
    result["simt_GBps"] = n * 4 / result["simt_ms"] / 1e6
    here = os.path.dirname(os.path.abspath(__file__))
    exe = "/tmp/warp_reduce_cu"
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-o", exe,
                    os.path.join(here, "gpu", "warp_reduce.cu")], check=True)
    cu = json.loads(subprocess.run([exe], check=True, capture_output=True, text=True).stdout)
    result["nvcc"] = cu
    result["ratio_simt_over_nvcc"] = result["simt_ms"] / cu["warp_reduce_ms"]
    result["tree_ms"] = gpu_ms(tree_reduce, blocks, a, out)
    return result


def cpu():
    simt.set_device("cpu", boundscheck=False)
    n, blocks = 1 << 24, 256
    host = data(n)
    a, out = simt.to_device(host), simt.zeros(1, np.float32)
    result = {"device": "cpu", "cores": os.cpu_count(), "n": n, "blocks": blocks,
              "threads": THREADS, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    for name, kernel in (("shuffle", warp_reduce), ("tree", tree_reduce)):
        out.copy_from(np.zeros(1, np.float32))
        kernel[blocks, THREADS](a, out)
        result[f"{name}_sum"] = float(out.copy_to_host()[0])
        result[f"{name}_ms"] = cpu_ms(kernel, blocks, a, out)
    result["expected_sum"] = float(host.astype(np.float64).sum())
    result["ratio_shuffle_over_tree"] = result["shuffle_ms"] / result["tree_ms"]
    return result


if __name__ == "__main__":
    result = {"gpu": gpu, "cpu": cpu}[sys.argv[1]]()
    text = json.dumps(result, indent=1)
    print(text)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write(text)
