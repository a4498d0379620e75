"""Time to the first result, as a user feels it: from starting the interpreter to the first
tiled matmul's result (512 x 512 float32, 16 x 16 tiles in shared memory) copied back to
the host, in fresh processes, side by side for simt, CuPy (RawKernel, the kernel in CUDA C)
and numba-cuda, with empty caches (cold) and with the caches the previous run left (warm);
and a bare ``python -c "import numpy"`` as the baseline every program pays. Median of
``--runs`` processes each. Each program prints the clock when its result is on the host, so
the interpreter's exit is not counted. The goal (issue 17): simt's time over the baseline at
most half of CuPy's, cold and warm; issue 37: over the baseline and the CUDA context's
creation (cuInit and the primary context, which every library pays: timed alone here).

    python bench/first_result.py [--runs 5] [--out results.json] [--device cpu]
        [--numba-pythonpath DIR]     # a folder with a NumPy numba-cuda accepts (<= 2.3)

With ``--device cpu`` only simt runs (on the CPU device). A program whose package is
missing (or fails to start) is reported as such, not timed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

N, TILE = 512, 16

SIMT = f"""
import time, numpy as np, simt
T = {TILE}
@simt.kernel
def matmul(a, b, c):
    sa = simt.shared.array((T, T), np.float32)
    sb = simt.shared.array((T, T), np.float32)
    tx, ty = simt.threadIdx.x, simt.threadIdx.y
    row, col = simt.blockIdx.y * T + ty, simt.blockIdx.x * T + tx
    acc = np.float32(0)
    for k in range(0, a.shape[1], T):
        sa[ty, tx] = a[row, k + tx]
        sb[ty, tx] = b[k + ty, col]
        simt.syncthreads()
        for j in range(T):
            acc += sa[ty, j] * sb[j, tx]
        simt.syncthreads()
    c[row, col] = acc
rng = np.random.default_rng(0)
a = rng.random(({N}, {N}), dtype=np.float32); b = rng.random(({N}, {N}), dtype=np.float32)
c = np.empty(({N}, {N}), np.float32)
matmul[({N} // T, {N} // T), (T, T)](a, b, c)
done = time.time()
assert np.allclose(c, a @ b, rtol=1e-4), "wrong result"
print(done)
"""

CUPY = f"""
import time, numpy as np, cupy as cp
source = r'''
extern "C" __global__ void matmul(const float *a, const float *b, float *c, int n) {{
    __shared__ float sa[{TILE}][{TILE}], sb[{TILE}][{TILE}];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * {TILE} + ty, col = blockIdx.x * {TILE} + tx;
    float acc = 0.0f;
    for (int k = 0; k < n; k += {TILE}) {{
        sa[ty][tx] = a[row * n + k + tx];
        sb[ty][tx] = b[(k + ty) * n + col];
        __syncthreads();
        for (int j = 0; j < {TILE}; j++) acc += sa[ty][j] * sb[j][tx];
        __syncthreads();
    }}
    c[row * n + col] = acc;
}}'''
matmul = cp.RawKernel(source, "matmul")
rng = np.random.default_rng(0)
a = rng.random(({N}, {N}), dtype=np.float32); b = rng.random(({N}, {N}), dtype=np.float32)
da, db = cp.asarray(a), cp.asarray(b)
dc = cp.empty(({N}, {N}), np.float32)
matmul(({N} // {TILE}, {N} // {TILE}), ({TILE}, {TILE}), (da, db, dc, np.int32({N})))
c = dc.get()
done = time.time()
assert np.allclose(c, a @ b, rtol=1e-4), "wrong result"
print(done)
"""

NUMBA = f"""
import time, numpy as np
from numba import cuda, float32
T = {TILE}
@cuda.jit(cache=True)
def matmul(a, b, c):
    sa = cuda.shared.array((T, T), float32)
    sb = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    acc = float32(0)
    for k in range(0, a.shape[1], T):
        sa[ty, tx] = a[row, k + tx]
        sb[ty, tx] = b[k + ty, col]
        cuda.syncthreads()
        for j in range(T):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()
    c[row, col] = acc
rng = np.random.default_rng(0)
a = rng.random(({N}, {N}), dtype=np.float32); b = rng.random(({N}, {N}), dtype=np.float32)
c = np.empty(({N}, {N}), np.float32)
matmul[({N} // T, {N} // T), (T, T)](a, b, c)
done = time.time()
assert np.allclose(c, a @ b, rtol=1e-4), "wrong result"
print(done)
"""

BASELINE = "import time, numpy\nprint(time.time())\n"

# the baseline plus what every CUDA library pays before its first kernel: cuInit and the
# primary context of device 0 (made current)
CONTEXT = """import time, numpy
from cuda.bindings import driver as d
d.cuInit(0)
_, dev = d.cuDeviceGet(0)
_, ctx = d.cuDevicePrimaryCtxRetain(dev)
d.cuCtxSetCurrent(ctx)
print(time.time())
"""


def one_run(code, env, folder):
    """Seconds from spawning the interpreter to the result on the host (None: it failed).
    The program is a file in ``folder`` (numba's disk cache needs one)."""
    path = os.path.join(folder, "program.py")
    with open(path, "w") as f:
        f.write(code)
    started = time.time()
    done = subprocess.run([sys.executable, path], env=env, capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines() or ["(no output)"])[-1]
    return float(done.stdout.strip().splitlines()[-1]) - started, None


def measure(code, runs, env_for):
    """{'cold': ms, 'warm': ms} (medians) or {'error': why}."""
    cold, warm = [], []
    for _ in range(runs):
        folder = tempfile.mkdtemp(prefix="first-result-")
        env = env_for(folder)
        seconds, error = one_run(code, env, folder)  # empty caches
        if error:
            return {"error": error}
        cold.append(seconds)
        seconds, error = one_run(code, env, folder)  # the caches the run above left
        if error:
            return {"error": error}
        warm.append(seconds)
    return {"cold": round(statistics.median(cold) * 1e3, 1),
            "warm": round(statistics.median(warm) * 1e3, 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out")
    parser.add_argument("--device", default=None, help="simt's device (default: its own)")
    parser.add_argument("--numba-pythonpath", default=None)
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(os.path.dirname(here), "src")
    base = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH")) if p))
    if args.device:
        base["SIMT_DEVICE"] = args.device

    def env(**extra):
        return lambda folder: dict(base, **{k: v.format(folder) for k, v in extra.items()})
    numba_path = os.pathsep.join(p for p in (args.numba_pythonpath, src) if p)
    programs = {"baseline (import numpy)": (BASELINE, env()),
                "simt": (SIMT, env(SIMT_CACHE_DIR="{}/simt"))}
    if args.device != "cpu":
        programs["context (numpy + cuInit + context)"] = (CONTEXT, env())
        programs["CuPy RawKernel"] = (CUPY, env(CUPY_CACHE_DIR="{}/cupy"))
        programs["numba-cuda"] = (NUMBA, env(NUMBA_CACHE_DIR="{}/numba",
                                             PYTHONPATH=numba_path))
    result = {"n": N, "runs": args.runs, "python": sys.version.split()[0],
              "bytecode": "PYTHONDONTWRITEBYTECODE" not in os.environ,
              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "programs": {}}
    for name, (code, env_for) in programs.items():
        result["programs"][name] = measure(code, args.runs, env_for)
    base_ms = result["programs"]["baseline (import numpy)"]
    print(f"{'program':26} {'cold ms':>9} {'warm ms':>9} {'cold-base':>10} {'warm-base':>10}")
    for name, r in result["programs"].items():
        if "error" in r:
            print(f"{name:26} not run: {r['error']}")
            continue
        r["cold_over_baseline"] = round(r["cold"] - base_ms["cold"], 1)
        r["warm_over_baseline"] = round(r["warm"] - base_ms["warm"], 1)
        print(f"{name:26} {r['cold']:9.1f} {r['warm']:9.1f} {r['cold_over_baseline']:10.1f} "
              f"{r['warm_over_baseline']:10.1f}")
    theirs = result["programs"].get("CuPy RawKernel", {})
    mine = result["programs"]["simt"]
    if "cold_over_baseline" in theirs and "cold_over_baseline" in mine:
        for kind in ("cold", "warm"):
            ratio = mine[f"{kind}_over_baseline"] / theirs[f"{kind}_over_baseline"]
            result[f"simt_over_cupy_{kind}"] = round(ratio, 3)
            print(f"simt / CuPy over the baseline, {kind}: {ratio:.2f} (goal <= 0.5)")
    context = result["programs"].get("context (numpy + cuInit + context)", {})
    if "cold" in context and "cold" in theirs and "cold" in mine:
        for kind in ("cold", "warm"):      # over both: interpreter + NumPy and the context
            ratio = (mine[kind] - context[kind]) / (theirs[kind] - context[kind])
            result[f"simt_over_cupy_{kind}_over_context"] = round(ratio, 3)
            print(f"simt / CuPy over the baseline and the context, {kind}: {ratio:.2f} "
                  f"(goal <= 0.5)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
