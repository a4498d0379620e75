"""Sum of 2^26 float32 on the GPU: block-only (one atomicAdd per block) against clusters of 4
(the cluster's partial sums gathered through distributed shared memory, one atomicAdd per
cluster), in simt and in CUDA C (bench/gpu/cluster_reduce.cu, built by nvcc in the same run).
Prints a table and writes JSON.

    python bench/cluster_reduce.py [out.json]     # GPU of compute capability 9.0, and nvcc
    python bench/cluster_reduce.py --check        # CPU device, 2^14 elements
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

import simt
from simt import cg

THREADS, CLUSTER = 256, 4


@simt.device
def block_sum(a, part):
    """The block's grid-stride sum into part[0] (a shared tree)."""
    buf = simt.shared.array(THREADS, np.float32)
    t = simt.threadIdx.x
    n = np.int32(a.shape[0])
    stride = simt.gridDim.x * THREADS
    acc = np.float32(0)
    for i in range(simt.blockIdx.x * THREADS + t, n, stride):
        acc += a[i]
    buf[t] = acc
    s = THREADS // 2
    while s > 0:
        simt.syncthreads()
        if t < s:
            buf[t] += buf[t + s]
        s //= 2
    if t == 0:
        part[0] = buf[0]


@simt.kernel
def blocks_only(a, out):
    part = simt.shared.array(1, np.float32)
    block_sum(a, part)
    if simt.threadIdx.x == 0:
        simt.atomic.add(out, 0, part[0])


@simt.kernel
def clustered(a, out):
    part = simt.shared.array(1, np.float32)
    cluster = cg.this_cluster()
    block_sum(a, part)
    cluster.sync()
    if cluster.block_rank() == 0 and simt.threadIdx.x == 0:
        total = np.float32(0)
        for r in range(cluster.num_blocks()):
            total += cluster.map_shared_rank(part, r)[0]
        simt.atomic.add(out, 0, total)
    cluster.sync()


def run(kernel, a, out, blocks):
    if kernel is clustered:
        kernel[blocks, THREADS, 0, None, (CLUSTER, 1, 1)](a, out)
    else:
        kernel[blocks, THREADS](a, out)


def check(n=1 << 14, blocks=16):
    simt.set_device("cpu")
    a = (np.arange(n) % 7 - 3).astype(np.float32)
    for kernel in (blocks_only, clustered):
        out = np.zeros(1, np.float32)
        run(kernel, a, out, blocks)
        assert out[0] == a.astype(np.float64).sum(), kernel.__name__
        print(f"{kernel.__name__}: right on the CPU device")


def gpu(n=1 << 26, blocks=1024):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpu_timing import event_times
    simt.set_device("cuda:0")
    host = (np.arange(n) % 7 - 3).astype(np.float32)
    a, out = simt.to_device(host), simt.zeros(1, np.float32)
    result = {"device": simt.get_device().properties.name, "n": n, "blocks": blocks,
              "cluster": CLUSTER, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    for kernel in (blocks_only, clustered):
        out.copy_from(np.zeros(1, np.float32))
        run(kernel, a, out, blocks)
        result[f"{kernel.__name__}_sum"] = float(out.copy_to_host()[0])
        result[f"{kernel.__name__}_ms"] = float(np.median(event_times(
            lambda: run(kernel, a, out, blocks), 20)))
    result["expected_sum"] = float(host.astype(np.float64).sum())
    result["clustered_over_blocks_only"] = result["clustered_ms"] / result["blocks_only_ms"]
    here = os.path.dirname(os.path.abspath(__file__))
    exe = "/tmp/cluster_reduce_cu"
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-o", exe,
                    os.path.join(here, "gpu", "cluster_reduce.cu")], check=True)
    result["nvcc"] = json.loads(subprocess.run([exe], check=True, capture_output=True,
                                               text=True).stdout)
    print(f"{'2^26 f32 sum':14} {'simt ms':>8} {'nvcc ms':>8} {'simt/nvcc':>10} {'GB/s':>8}")
    for name in ("blocks_only", "clustered"):
        ms, theirs = result[f"{name}_ms"], result["nvcc"][f"{name}_ms"]
        result[f"{name}_simt_over_nvcc"] = ms / theirs
        print(f"{name:14} {ms:8.3f} {theirs:8.3f} {ms / theirs:10.2f} {n * 4 / ms / 1e6:8.1f}")
    return result


if __name__ == "__main__":
    from common import gpu_script
    gpu_script(check, gpu)
