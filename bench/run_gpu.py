"""The GPU half of the benchmark suite, on a machine with an NVIDIA GPU: simt against
the CUDA C twins (bench/cuda/, nvcc -O3 -arch=sm_XY), CuPy where natural and numba-cuda
(bench/numba_twins.py, in its own process with NUMBA_PYTHONPATH's NumPy); kernel time by
CUDA events, median of 25 runs after a warm-up; bandwidth against a device-to-device copy;
compile, launch and import times; PTX, SASS and resource usage of every kernel.

Usage: PYTHONPATH=src python bench/run_gpu.py [--only NAME ...] [--dump DIR] [--no-numba]
Writes bench/results/<gpu>-<date>.json and .png and prints the table."""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
os.environ["SIMT_CACHE_DIR"] = tempfile.mkdtemp(prefix="simt-bench-cache-")
sys.path.insert(0, HERE)

import numpy as np          # noqa: E402

import common as C          # noqa: E402

REPS = 25


def build(arch):
    out = os.path.join(HERE, "build", f"cuda_workloads_{arch}.so")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run(["nvcc", "-O3", f"-arch={arch}", "-shared", "-Xcompiler", "-fPIC", "-o", out,
                    os.path.join(HERE, "cuda", "workloads.cu")], check=True)
    return out, ctypes.CDLL(out)


def twin_times(fn, args, reps=REPS):
    ms = (ctypes.c_float * reps)()
    err = fn(*args, reps, ms)
    if err:
        raise RuntimeError(f"CUDA twin failed with cudaError {err}")
    return list(ms)


def run_case(case, lib, simt, sms, rng, cp):
    from gpu_timing import event_times
    size = case.size("gpu", sms=sms)
    h = case.make(size, rng)
    expected = case.reference(h, size)
    d = {k: (simt.to_device(v) if isinstance(v, np.ndarray) else v) for k, v in h.items()}
    row = {"size": {k: v for k, v in size.items() if k not in ("kind", "sms")}}

    def reset():
        for name in case.outputs:
            init = np.zeros_like(h[name]) if name in case.zero else C.poisoned(h[name])
            d[name].copy_from(init)
    # simt
    reset()
    case.launch(d, size)
    simt.synchronize()
    row["simt_correct"] = case.ok({k: d[k].copy_to_host() for k in case.outputs}, expected)
    row["simt_ms"] = C.median(event_times(lambda: case.launch(d, size), REPS))
    # nvcc
    fn = getattr(lib, case.name)
    args = C.c_args(case, d, size)
    reset()
    fn(*args, 0, None)
    row["nvcc_correct"] = case.ok({k: d[k].copy_to_host() for k in case.outputs}, expected)
    row["nvcc_ms"] = C.median(twin_times(fn, args))
    row["ratio"] = row["simt_ms"] / row["nvcc_ms"]
    # CuPy, where natural
    if cp is not None and case.cupy is not None:
        try:
            c = {k: (cp.asarray(v) if hasattr(v, "__cuda_array_interface__") else v)
                 for k, v in d.items()}
            c["cp"] = cp
            if case.workload == "spmv":
                import cupyx.scipy.sparse as sp
                n = size["n"]
                c["csr"] = sp.csr_matrix((c["vals"], c["cols"], c["rowptr"]), shape=(n, n))
            row["cupy_ms"] = C.median(event_times(lambda: case.cupy(c, size), REPS))
        except Exception as exc:
            row["cupy_error"] = f"{type(exc).__name__}: {exc}"[:200]
    nbytes, flops = case.work(size) if case.work else (0, 0)
    if nbytes:
        row["simt_GBps"] = nbytes / row["simt_ms"] / 1e6
        row["nvcc_GBps"] = nbytes / row["nvcc_ms"] / 1e6
    if flops:
        row["simt_GFLOPs"] = flops / row["simt_ms"] / 1e6
    return row


def copy_ceiling(lib, simt):
    """GB/s of a 1 GiB device-to-device copy, bytes read plus written (median of 25)."""
    n = 1 << 28
    a, b = simt.device_array(n, np.float32), simt.device_array(n, np.float32)
    ptrs = (ctypes.c_void_p * 2)(C.data_ptr(a), C.data_ptr(b))
    ints = (ctypes.c_long * 1)(4 * n)
    ms = C.median(twin_times(lib.copy_ceiling, (ptrs, ints, (ctypes.c_double * 1)())))
    return 2 * 4 * n / ms / 1e6


def dump_code(cases, simt, so_path, dump_dir):
    """PTX of every simt kernel, its SASS (ptxas + cuobjdump) and resource usage, and the
    SASS of the CUDA twins, into dump_dir for bench/NOTES.md."""
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions
    from simt.ir import types as T
    os.makedirs(dump_dir, exist_ok=True)
    arch = simt.get_device().backend.arch()
    res = {}
    for case in cases:
        for k, sig in case.kernels:
            path = os.path.join(dump_dir, f"simt_{k.__name__}")
            if os.path.exists(path + ".ptx"):
                continue
            binary = compile_kernel(k.typed_ir(T.parse_signature(sig)),
                                    CompileOptions(boundscheck=False), arch)
            with open(path + ".ptx", "w") as f:
                f.write(binary.stages["ptx"])
            try:
                r = k.resources(sig)
                res[k.__name__] = r if isinstance(r, dict) else str(r)
            except Exception as exc:
                res[k.__name__] = f"{type(exc).__name__}: {exc}"
    subprocess.run(f"cd {dump_dir} && for p in simt_*.ptx; do ptxas -O3 -arch={arch} -v $p "
                   f"-o ${{p%.ptx}}.cubin 2>> ptxas_simt.txt && cuobjdump -sass ${{p%.ptx}}.cubin "
                   f"> ${{p%.ptx}}.sass; done; cuobjdump -sass {so_path} > nvcc_all.sass; "
                   f"cuobjdump -res-usage {so_path} > nvcc_res.txt 2>&1", shell=True)
    return res


def numba_run(out_json):
    """bench/numba_twins.py in its own process; NUMBA_PYTHONPATH puts NumPy 2.3 first."""
    env = dict(os.environ)
    extra = os.environ.get("NUMBA_PYTHONPATH")
    if extra:
        env["PYTHONPATH"] = extra + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, os.path.join(HERE, "numba_twins.py"), out_json],
                          env=env, capture_output=True, text=True, timeout=240)
    print(proc.stdout[-3000:], proc.stderr[-2000:], flush=True)
    if proc.returncode != 0 or not os.path.exists(out_json):
        return {"error": (proc.stderr or proc.stdout)[-600:]}
    with open(out_json) as f:
        return json.load(f)


def launch_overhead(tmp):
    script = os.path.join(HERE, "gpu", "launch_overhead.py")
    if not os.path.exists(script):
        return {"skipped": "bench/gpu/launch_overhead.py not present"}
    out = os.path.join(tmp, "launch.json")
    proc = subprocess.run([sys.executable, script, out], capture_output=True, text=True,
                          timeout=240, env=os.environ)
    print(proc.stdout[-2000:], proc.stderr[-1500:], flush=True)
    if not os.path.exists(out):
        return {"error": proc.stderr[-600:]}
    with open(out) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--dump", default=None, help="folder for PTX/SASS of every kernel")
    ap.add_argument("--no-numba", action="store_true")
    args = ap.parse_args()
    import simt
    from workloads import all_cases
    simt.set_device("cuda:0")
    dev = simt.get_device()
    props = dev.properties
    sms = props.multiprocessor_count
    arch = dev.backend.arch()
    so_path, lib = build(arch)
    try:
        import cupy as cp
    except Exception:
        cp = None
    rng = np.random.default_rng(2026)
    results = {"device": props.name, "arch": arch, "sms": sms, "date": C.DATE,
               "cupy": getattr(cp, "__version__", None), **C.machine(), "workloads": {}}
    results["copy_GBps"] = copy_ceiling(lib, simt)
    cases = [c for c in all_cases() if not args.only or c.name in args.only]
    for case in cases:
        t0 = time.perf_counter()
        try:
            row = run_case(case, lib, simt, sms, rng, cp)
        except Exception as exc:
            row = {"error": f"{type(exc).__name__}: {exc}"[:400]}
            print(case.name, row["error"], flush=True)
            results["workloads"][case.name] = row
            continue
        if "simt_GBps" in row:
            row["simt_of_copy"] = row["simt_GBps"] / results["copy_GBps"]
        results["workloads"][case.name] = row
        print(f"{case.name:18s} simt {row['simt_ms']:9.4f} ms  nvcc {row['nvcc_ms']:9.4f} ms  "
              f"ratio {row['ratio']:.3f}  cupy {row.get('cupy_ms', '-')}  "
              f"ok {row['simt_correct']}/{row['nvcc_correct']}  [{time.perf_counter() - t0:.1f} s]",
              flush=True)
    ok_rows = [r for r in results["workloads"].values() if "ratio" in r]
    results["geomean_ratio"] = C.geomean([r["ratio"] for r in ok_rows])
    results["max_ratio"] = max(r["ratio"] for r in ok_rows) if ok_rows else None
    results["compile"] = C.compile_times(cases)
    results["matmul_fresh_process_compile_ms"] = C.fresh_matmul_compile_ms("cuda:0")
    results["import_simt_ms"] = C.import_time_ms()
    tag = props.name.replace("NVIDIA ", "").replace(" ", "-").lower()
    C.write_results(results, tag)          # written early too: the rest is the slow part
    tmp = tempfile.mkdtemp()
    if cp is not None:
        results["cupy_compile"] = cupy_compile_times(cp)
    if not args.no_numba:
        results["numba"] = numba_run(os.path.join(tmp, "numba.json"))
        for name, r in results["numba"].get("workloads", {}).items():
            if "ms" in r and name in results["workloads"]:
                results["workloads"][name]["numba_ms"] = r["ms"]
                results["workloads"][name]["numba_correct"] = r["correct"]
    results["launch_overhead"] = launch_overhead(tmp)
    if args.dump:
        results["resources"] = dump_code(cases, simt, so_path, args.dump)
    base = C.write_results(results, tag)
    names = [n for n, r in results["workloads"].items() if "ratio" in r]
    C.plot_ratios(base + ".png", f"simt / nvcc -O3 kernel time, {props.name}, {C.DATE} "
                  "(lower is better; red: above 1.10)",
                  names, [results["workloads"][n]["ratio"] for n in names], limit=1.10)
    print(summary(results))
    print("wrote", base + ".json", base + ".png")


MATMUL_CU = r'''
#define TILE 32
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int n) {
    __shared__ float sA[TILE][TILE], sB[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        sA[ty][tx] = A[row * n + k0 + tx];
        sB[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += sA[ty][k] * sB[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}'''


def cupy_compile_times(cp):
    """CuPy RawKernel of the tiled matmul: cold (NVRTC + load, its cache in a fresh
    folder), then cached in the process; milliseconds."""
    os.environ["CUPY_CACHE_DIR"] = tempfile.mkdtemp()
    a = cp.zeros((32, 32), cp.float32)
    t0 = time.perf_counter()
    k = cp.RawKernel(MATMUL_CU, "matmul")
    k((1, 1), (32, 32), (a, a, a, np.int32(32)))
    cp.cuda.runtime.deviceSynchronize()
    t1 = time.perf_counter()
    k2 = cp.RawKernel(MATMUL_CU, "matmul")
    k2((1, 1), (32, 32), (a, a, a, np.int32(32)))
    cp.cuda.runtime.deviceSynchronize()
    t2 = time.perf_counter()
    return {"matmul_cold_ms": (t1 - t0) * 1e3, "matmul_cached_ms": (t2 - t1) * 1e3}


def summary(r):
    rows = []
    for n, w in r["workloads"].items():
        if "ratio" not in w:
            rows.append([n, "error", w.get("error", "")[:60], "", "", "", "", "", ""])
            continue
        bw = f"{w['simt_GBps']:.0f} ({w['simt_of_copy']:.0%})" if "simt_GBps" in w else "-"
        fl = f"{w['simt_GFLOPs'] / 1e3:.2f}" if "simt_GFLOPs" in w else "-"
        rows.append([n, f"{w['simt_ms']:.4f}", f"{w['nvcc_ms']:.4f}", f"{w['ratio']:.3f}",
                     C.fmt(w.get("cupy_ms"), 4), C.fmt(w.get("numba_ms"), 4), bw, fl,
                     "yes" if w["simt_correct"] and w["nvcc_correct"] else "NO"])
    rows.append(["geometric mean", "", "", f"{r['geomean_ratio']:.3f}", "", "", "", "", ""])
    text = C.table(["workload", "simt ms", "nvcc ms", "simt/nvcc", "CuPy ms", "numba ms",
                    "simt GB/s (of copy)", "simt TFLOP/s", "correct"], rows)
    text += f"\n\ndevice-to-device copy: {r['copy_GBps']:.0f} GB/s"
    text += "\n\n" + C.table(["kernel", "cold ms", "in-process ms", "disk-cached ms"],
                             [[k, v["cold_ms"], v["in_process_ms"], v["disk_ms"]]
                              for k, v in r["compile"].items()])
    text += (f"\n\nimport simt: {r['import_simt_ms']} ms; tiled matmul cold in a fresh process "
             f"(PTX JIT included): {r['matmul_fresh_process_compile_ms']} ms; CuPy "
             f"{r.get('cupy_compile')}; numba {r.get('numba', {}).get('compile')}")
    text += f"\n\nlaunch overhead: {json.dumps(r.get('launch_overhead'))[:1500]}"
    return text


if __name__ == "__main__":
    main()
