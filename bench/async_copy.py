"""Double-buffered tiled matmul with simt.pipeline / simt.memcpy_async (cp.async) against the
plain tiled one, in simt and in CUDA C (bench/gpu/async_matmul.cu, built by nvcc in the same
run), 4096^2 float32, 16x16 tiles. Prints a table and writes JSON.

    python bench/async_copy.py [out.json]       # GPU (cc 8.0+) and nvcc
    python bench/async_copy.py --check          # CPU device, n = 64: both kernels are right
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

import simt

TILE = 16


@simt.kernel
def plain(a, b, c):
    sa = simt.shared.array(TILE * TILE, np.float32)
    sb = simt.shared.array(TILE * TILE, np.float32)
    tx, ty = simt.threadIdx.x, simt.threadIdx.y
    row, col = simt.blockIdx.y * TILE + ty, simt.blockIdx.x * TILE + tx
    n = np.int32(a.shape[1])
    acc = np.float32(0)
    for s in range(n // TILE):
        sa[ty * TILE + tx] = a[row, s * TILE + tx]
        sb[ty * TILE + tx] = b[s * TILE + ty, col]
        simt.syncthreads()
        for k in range(TILE):
            acc += sa[ty * TILE + k] * sb[k * TILE + tx]
        simt.syncthreads()
    c[row, col] = acc


@simt.kernel
def pipelined(a, b, c):
    sa = simt.shared.array(2 * TILE * TILE, np.float32)
    sb = simt.shared.array(2 * TILE * TILE, np.float32)
    pipe = simt.pipeline()
    tx, ty = simt.threadIdx.x, simt.threadIdx.y
    row, col = simt.blockIdx.y * TILE + ty, simt.blockIdx.x * TILE + tx
    n = np.int32(a.shape[1])
    steps = n // TILE
    acc = np.float32(0)
    for s in range(steps + 1):
        if s < steps:
            stage = (s % 2) * TILE * TILE
            pipe.producer_acquire()
            if tx < 4:
                simt.memcpy_async(sa, stage + ty * TILE + 4 * tx, a, row * n + s * TILE + 4 * tx,
                                  4, pipe)
            simt.memcpy_async(sb, stage + ty * TILE + tx, b, (s * TILE + ty) * n + col, 1, pipe)
            pipe.producer_commit()
        if s > 0:
            pipe.consumer_wait()
            simt.syncthreads()
            stage = ((s - 1) % 2) * TILE * TILE
            for k in range(TILE):
                acc += sa[stage + ty * TILE + k] * sb[stage + k * TILE + tx]
            pipe.consumer_release()
            simt.syncthreads()
    c[row, col] = acc


KERNELS = {"plain": plain, "pipelined": pipelined}


def inputs(n):
    i = np.arange(n * n, dtype=np.int64).reshape(n, n)
    return ((i % 17 - 8) / 8).astype(np.float32), ((i % 13 - 6) / 8).astype(np.float32)


def check(n=64):
    simt.set_device("cpu")
    a, b = inputs(n)
    for name, kernel in KERNELS.items():
        c = np.full((n, n), np.nan, np.float32)
        kernel[(n // TILE, n // TILE), (TILE, TILE)](a, b, c)
        assert np.allclose(c, a.astype(np.float64) @ b, rtol=1e-5), name
        print(f"{name}: matches NumPy on the CPU device")


def gpu(n=4096):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpu_timing import event_times
    simt.set_device("cuda:0")
    ha, hb = inputs(n)
    a, b = simt.to_device(ha), simt.to_device(hb)
    result = {"device": simt.get_device().properties.name, "n": n,
              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "simt": {}, "check": {}}
    rows = np.random.default_rng(0).integers(0, n, 4)
    ref = ha[rows].astype(np.float64) @ hb
    for name, kernel in KERNELS.items():
        c = simt.to_device(np.full((n, n), np.nan, np.float32))
        grid = (n // TILE, n // TILE)
        result["simt"][name] = float(np.median(event_times(
            lambda: kernel[grid, (TILE, TILE)](a, b, c), 20)))
        result["check"][name] = bool(np.allclose(c.copy_to_host()[rows], ref, rtol=1e-5,
                                                 atol=1e-2))
    here = os.path.dirname(os.path.abspath(__file__))
    exe = "/tmp/async_matmul_cu"
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-o", exe,
                    os.path.join(here, "gpu", "async_matmul.cu")], check=True)
    result["nvcc"] = json.loads(subprocess.run([exe], check=True, capture_output=True,
                                               text=True).stdout)
    print(f"{'4096^2 f32':12} {'simt ms':>9} {'nvcc ms':>9} {'simt/nvcc':>10}")
    for name in KERNELS:
        s, v = result["simt"][name], result["nvcc"][f"{name}_ms"]
        result[f"{name}_simt_over_nvcc"] = s / v
        print(f"{name:12} {s:9.3f} {v:9.3f} {s / v:10.2f}")
    result["simt_pipelined_over_plain"] = result["simt"]["pipelined"] / result["simt"]["plain"]
    print(f"pipelined / plain: simt {result['simt_pipelined_over_plain']:.2f}, nvcc "
          f"{result['nvcc']['pipelined_ms'] / result['nvcc']['plain_ms']:.2f}")
    return result


if __name__ == "__main__":
    from common import gpu_script
    gpu_script(check, gpu)
