"""simt against nvcc on one GPU: saxpy over 2^26 float32 and the 32x32 tiled
shared-memory matmul at 4096^3 float32, median of batched launches timed by CUDA events.

Run from the repository root: PYTHONPATH=src python3 bench/gpu/bench.py [out.json]
(builds bench/gpu/kernels.cu with nvcc -O3 -arch=sm_90 first)."""
import json
import os
import subprocess
import sys
import time

import numpy as np

import simt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from workloads.matmul import TILE, matmul      # noqa: E402  (the suite's own kernels)
from workloads.saxpy import saxpy              # noqa: E402


def kernel_ms(launch, reps, batch=10):
    """Median over reps of the event time of ``batch`` back-to-back launches, divided by
    batch: the GPU stays busy, so Python's launch cost is not counted as kernel time
    (kernels.cu times nvcc's build the same way)."""
    start, end = simt.Event(), simt.Event()
    launch()
    simt.synchronize()
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(batch):
            launch()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / batch)
    return sorted(times)[len(times) // 2]


def main():
    out = {"device": None, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    simt.set_device("cuda:0")
    out["device"] = simt.get_device().properties.name
    n, m = 1 << 26, 4096
    rng = np.random.default_rng(0)
    x, y = (simt.to_device(rng.random(n, dtype=np.float32)) for _ in range(2))
    o = simt.device_array(n, np.float32)
    a = np.float32(2.0)
    t0 = time.perf_counter()
    saxpy[(n + 255) // 256, 256](a, x, y, o)
    out["saxpy_first_call_s"] = time.perf_counter() - t0
    ok = np.allclose(o.copy_to_host(), 2 * x.copy_to_host() + y.copy_to_host())
    out["saxpy_ms"] = kernel_ms(lambda: saxpy[(n + 255) // 256, 256](a, x, y, o), 20)
    out["saxpy_GBps"] = 3 * n * 4 / out["saxpy_ms"] / 1e6
    A, B = (simt.to_device(rng.random((m, m), dtype=np.float32)) for _ in range(2))
    C = simt.device_array((m, m), np.float32)
    launch = lambda: matmul[(m // TILE, m // TILE), (TILE, TILE)](A, B, C)
    out["matmul_ms"] = kernel_ms(launch, 5)
    out["matmul_TFLOPs"] = 2 * m ** 3 / out["matmul_ms"] / 1e9
    h = C.copy_to_host()
    Ah, Bh = A.copy_to_host(), B.copy_to_host()
    ok = ok and np.allclose(h[:64], Ah[:64] @ Bh, rtol=1e-3)
    out["simt_correct"] = bool(ok)
    here = os.path.dirname(os.path.abspath(__file__))
    exe = os.path.join("/tmp", "bench_cu")
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-o", exe, os.path.join(here, "kernels.cu")],
                   check=True)
    cu = json.loads(subprocess.run([exe], check=True, capture_output=True, text=True).stdout)
    out["nvcc"] = cu
    out["saxpy_ratio_simt_over_nvcc"] = out["saxpy_ms"] / cu["saxpy_ms"]
    out["matmul_ratio_simt_over_nvcc"] = out["matmul_ms"] / cu["matmul_ms"]
    text = json.dumps(out, indent=1)
    print(text)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)
        try:
            ptx = matmul.ptx("void(float32[:, ::1], float32[:, ::1], float32[:, ::1])")
            with open(os.path.splitext(sys.argv[1])[0] + ".ptx", "w") as f:
                f.write(ptx)
        except Exception as exc:            # the figures matter more than the PTX dump
            print("no PTX dump:", exc)


if __name__ == "__main__":
    main()
