"""Dynamic parallelism on the GPU: the recursive quicksort and the Mariani-Silver Mandelbrot
of src/simt/examples/dynamic.py against the same programs in CUDA C
(bench/gpu/dynamic_parallelism.cu, built with nvcc -rdc=true -lcudadevrt in the same run).
Each is timed the same way on both sides: events around the host launch of the root grid,
so every child grid is inside; median of the runs. Prints a table and writes JSON.

    python bench/dynamic_parallelism.py [out.json]   # a GPU and nvcc
    python bench/dynamic_parallelism.py --check      # CPU device, small sizes
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

import simt
from simt.examples import dynamic

HERE = os.path.dirname(os.path.abspath(__file__))
PENDING = 1 << 16     # a 4096^2 picture leaves more children pending than the default 2048


def values(n):
    """The values both sides sort: a multiplicative hash of the index, in [0, 1)."""
    i = np.arange(n, dtype=np.uint64)
    return ((i * np.uint64(2654435761)) % np.uint64(1 << 32)).astype(np.float64) / 2.0 ** 32


def check(n=2000, size=128):
    simt.set_device("cpu")
    v = values(n).astype(np.float32)
    assert np.array_equal(dynamic.sort(v), np.sort(v))
    print("quicksort: right on the CPU device")
    assert (dynamic.mandelbrot(size) != dynamic.reference(size)).mean() <= 1e-3
    print("mariani_silver: right on the CPU device")


def timed(launch, reps, before=None):
    backend = simt.get_device().backend
    times = []
    for r in range(reps + 1):
        if before is not None:
            before()
        start, stop = backend.create_event(), backend.create_event()
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        if r:
            times.append(start.elapsed_time(stop))
    return float(np.median(times))


def gpu(n=1 << 16, size=4096, reps=7):
    simt.set_device("cuda:0")
    simt.set_limit("dev_runtime_pending_launch_count", PENDING)
    host = values(n).astype(np.float32)
    original, data = simt.to_device(host), simt.device_array(n, np.float32)
    result = {"device": simt.get_device().properties.name, "n": n, "size": size,
              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    result["quicksort_ms"] = timed(lambda: dynamic.quicksort[1, 1](data, 0, n - 1, 0), reps,
                                   before=lambda: data.copy_from(original))
    result["sorted"] = bool(np.array_equal(data.copy_to_host(), np.sort(host)))
    dwells = simt.device_array((size, size), np.int32)
    side = -(-size // dynamic.INIT_SUBDIV)
    grid = (dynamic.INIT_SUBDIV, dynamic.INIT_SUBDIV)
    result["mariani_silver_ms"] = timed(
        lambda: dynamic.square[grid, dynamic.BLOCK](dwells, 0, 0, side, 1), reps)
    result["inside"] = int((dwells.copy_to_host() >= dynamic.MAX_DWELL).sum())
    exe = "/tmp/dynamic_parallelism_cu"
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-rdc=true", "-o", exe,
                    os.path.join(HERE, "gpu", "dynamic_parallelism.cu"), "-lcudadevrt"],
                   check=True)
    result["nvcc"] = json.loads(subprocess.run([exe, str(n), str(size), str(reps),
                                                str(PENDING)], check=True,
                                               capture_output=True, text=True).stdout)
    print(f"{'program':16} {'simt ms':>9} {'nvcc ms':>9} {'simt/nvcc':>10}")
    for name in ("quicksort", "mariani_silver"):
        ms, theirs = result[f"{name}_ms"], result["nvcc"][f"{name}_ms"]
        result[f"{name}_simt_over_nvcc"] = ms / theirs
        print(f"{name:16} {ms:9.3f} {theirs:9.3f} {ms / theirs:10.2f}")
    return result


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from common import gpu_script
    gpu_script(check, gpu)
