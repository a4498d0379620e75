"""simt's CPU device against three CPU baselines of every CPU workload, in one run on the
same inputs: the block-structured C+OpenMP twins (bench/openmp/workloads.c), idiomatic
C+OpenMP (bench/openmp/idiomatic.c: row loops, simd, OpenMP reductions; both gcc -O3
-fopenmp -march=native) and numba's @njit(parallel=True) with prange (bench/numba_cpu.py),
all with the same number of threads. The ways take turns round by round (run_cpu.py's
timed_in_turns); each way's result is checked against NumPy before timing. Figures are the
minimum over the rounds (this machine is shared: the minimum is the run least disturbed),
the medians are in the JSON too.

numba is optional: when it does not import (not installed, or installed for another NumPy)
its column says why and the rest runs.

Usage: python bench/run_cpu_baselines.py [--threads N] [--only NAME ...] [--repeat K] [--out FILE.txt]
Writes FILE.txt (the table) and FILE.json (every figure); default
bench/results/cpu-baselines-<threads>core-<date>.txt"""
import argparse
import ctypes
import importlib.util
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def load_run_cpu():
    spec = importlib.util.spec_from_file_location("run_cpu", os.path.join(HERE, "run_cpu.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)   # sets the thread counts' defaults and a cache folder
    return module


# case name -> function in bench/openmp/idiomatic.c (none: the twin is already row loops)
IDIOMATIC = {"saxpy": "saxpy", "reduction_tree": "sum", "reduction_warp": "sum",
             "transpose_naive": "transpose_rows", "transpose_tiled": "transpose_blocked",
             "matmul": "matmul", "histogram_global": "histogram",
             "histogram_shared": "histogram", "scan": "scan", "stencil": "stencil",
             "nbody": "nbody"}
BASELINES = ("c_block", "c_idiomatic", "numba")


def build_idiomatic(out=None):
    out = out or os.path.join(HERE, "build", "openmp_idiomatic.so")
    src = os.path.join(HERE, "openmp", "idiomatic.c")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        subprocess.run(["gcc", "-O3", "-fopenmp", "-march=native", "-shared", "-fPIC", "-o",
                        out, src], check=True)
    return ctypes.CDLL(out)


def load_numba(threads):
    """(module bench/numba_cpu.py, None) or (None, why not)."""
    try:
        import numba
        import numba_cpu
        numba.set_num_threads(threads)
    except Exception as exc:           # ImportError, or numba refusing this NumPy
        return None, f"numba not available: {type(exc).__name__}: {str(exc)[:200]}"
    return numba_cpu, None


def host_copy(case, h, R):
    """A copy of the inputs with the outputs poisoned (zeroed where they accumulate)."""
    hc = {k: (v.copy() if hasattr(v, "copy") and hasattr(v, "shape") else v)
          for k, v in h.items()}
    R.fresh_outputs(case, hc)
    return hc


def run_case(case, R, block_lib, idio_lib, nb, simt, rng, budget_s, spin=None):
    size = case.size("cpu", sms=int(R.THREADS))
    h = case.make(size, rng)
    expected = case.reference(h, size)
    row = {"size": {k: v for k, v in size.items() if k not in ("kind", "sms")}, "correct": {}}
    ways = []

    def add(label, device, fn, arrays):
        fn()
        row["correct"][label] = case.ok({k: arrays[k] for k in case.outputs}, expected)
        ways.append((label, device, fn))

    hb = host_copy(case, h, R)
    block_args = R.C.c_args(case, hb, size)
    block_fn = getattr(block_lib, case.name)
    add("c_block", None, lambda: block_fn(*block_args), hb)
    if case.name in IDIOMATIC:
        hi = host_copy(case, h, R)
        idio_args = R.C.c_args(case, hi, size)
        idio_fn = getattr(idio_lib, IDIOMATIC[case.name])
        add("c_idiomatic", None, lambda: idio_fn(*idio_args), hi)
    if nb is not None and nb.twin(case.name) is not None:
        hn = host_copy(case, h, R)
        nb_fn = nb.twin(case.name)
        t0 = time.perf_counter()
        add("numba", None, lambda: nb_fn(hn, size), hn)
        row["numba_first_call_s"] = time.perf_counter() - t0     # compile included
    device = simt.set_device("cpu", boundscheck=False)
    hs = host_copy(case, h, R)
    d = {k: (simt.to_device(v) if isinstance(v, R.np.ndarray) else v) for k, v in hs.items()}

    def go():
        case.launch(d, size)
        simt.synchronize()
    go()
    row["correct"]["simt"] = case.ok({k: d[k].copy_to_host() for k in case.outputs}, expected)
    ways.append(("simt", device, go))
    if spin is not None:
        return spin_one(ways, *spin)
    row["times_s"], row["rounds"] = R.timed_rounds(ways, budget_s=budget_s)
    return row


def merge(old, row):
    """A repeat's row added to the earlier ones' (its rounds and its checks)."""
    if old is None or "times_s" not in old:
        return row
    for label, t in row["times_s"].items():
        old["times_s"][label] += t
    old["rounds"] += row["rounds"]
    old["correct"] = {k: v and row["correct"].get(k, False) for k, v in old["correct"].items()}
    return old


def finish(row, median):
    row["min_ms"] = {label: min(t) * 1e3 for label, t in row["times_s"].items()}
    row["median_ms"] = {label: median(t) * 1e3 for label, t in row["times_s"].items()}
    ratios(row, "min_ms")
    ratios(row, "median_ms")


def spin_one(ways, label, calls):
    """Profiling: the way ``label`` alone, ``calls`` times, on its device."""
    import simt
    device, fn = [(dev, f) for lab, dev, f in ways if lab == label][0]
    if device is not None:
        simt.set_device(device)
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return {"spin": label, "calls": calls,
            "ms_per_call": (time.perf_counter() - t0) / max(calls, 1) * 1e3}


def ratios(row, key):
    t = row[key]
    present = [b for b in BASELINES if b in t]
    best = min(present, key=lambda b: t[b])
    row.setdefault("ratio", {})[key] = dict(
        {f"simt/{b}": t["simt"] / t[b] for b in present},
        best=best, **{"simt/best": t["simt"] / t[best]})


def summarize(results, R, key):
    done = {n: w for n, w in results["workloads"].items() if "ratio" in w}
    cols = [f"simt/{b}" for b in BASELINES] + ["simt/best"]
    rows = []
    for n, w in done.items():
        t, r = w[key], w["ratio"][key]
        rows.append([n] + [R.C.fmt(t.get(b)) for b in BASELINES + ("simt",)]
                    + [f"{r[c]:.2f}" if c in r else "-" for c in cols]
                    + [r["best"], "yes" if all(w["correct"].values()) else
                       "NO: " + ",".join(k for k, v in w["correct"].items() if not v)])
    geo = {c: R.C.geomean([w["ratio"][key][c] for w in done.values() if c in w["ratio"][key]])
           for c in cols}
    worst = {c: max((w["ratio"][key][c] for w in done.values() if c in w["ratio"][key]),
                    default=None) for c in cols}
    results.setdefault("geomean", {})[key] = geo
    results.setdefault("highest", {})[key] = worst
    rows.append(["geometric mean", "", "", "", ""]
                + [f"{geo[c]:.2f}" if geo[c] else "-" for c in cols] + ["", ""])
    rows.append(["highest", "", "", "", ""]
                + [f"{worst[c]:.2f}" if worst[c] else "-" for c in cols] + ["", ""])
    return R.C.table(["workload", "C block ms", "C idiomatic ms", "numba ms", "simt ms"]
                     + cols + ["best baseline", "all correct"], rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--threads", type=int, default=None,
                    help="threads of every side (default: SIMT_CPU_THREADS or all cores)")
    ap.add_argument("--budget", type=float, default=6.0,
                    help="seconds of timed rounds per workload (at least 5 rounds)")
    ap.add_argument("--out", default=None, help="the table's file (.txt; the JSON beside it)")
    ap.add_argument("--spin", nargs=2, metavar=("WAY", "CALLS"), default=None,
                    help="profiling: after the checks, call WAY (c_block, c_idiomatic, numba "
                         "or simt) CALLS times for each --only case, time nothing else and "
                         "write nothing (perf stat the process with CALLS and with 0, and "
                         "subtract)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="passes over the workloads; figures over every pass's rounds")
    args = ap.parse_args()
    spin = (args.spin[0], int(args.spin[1])) if args.spin else None
    if args.threads:
        for k in ("OMP_NUM_THREADS", "SIMT_CPU_THREADS", "NUMBA_NUM_THREADS"):
            os.environ[k] = str(args.threads)
    R = load_run_cpu()
    threads = int(R.THREADS)
    os.environ.setdefault("NUMBA_NUM_THREADS", str(threads))
    import simt
    from workloads import all_cases
    block_lib, idio_lib = R.build(), build_idiomatic()
    nb, why = load_numba(threads)
    if why:
        print(why, "- its column is left out", flush=True)
    rng = R.np.random.default_rng(2026)
    results = {"device": "cpu", "date": R.C.DATE, "threads": threads, **R.C.machine(),
               "cpu_name": R._cpu_name(), "numpy": R.np.__version__, "numba": why,
               "timing": "ways take turns round by round; min and median over the rounds",
               "repeat": args.repeat,
               "workloads": {}}
    cases = [c for c in all_cases() if not args.only or c.name in args.only]
    for case in cases * args.repeat:
        t0 = time.perf_counter()
        try:
            row = run_case(case, R, block_lib, idio_lib, nb, simt, rng, args.budget, spin)
            if spin:
                print(case.name, row, flush=True)
                continue
        except Exception as exc:          # one failing case must not lose the others
            print(case.name, "failed:", type(exc).__name__, exc, flush=True)
            results["workloads"].setdefault(
                case.name, {"error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        row = results["workloads"][case.name] = merge(results["workloads"].get(case.name), row)
        finish(row, R.C.median)
        t, r = row["min_ms"], row["ratio"]["min_ms"]
        print(f"{case.name:17s} " + "  ".join(f"{k} {v:8.2f}" for k, v in t.items())
              + f"  simt/best {r['simt/best']:.2f} ({r['best']})  ok {row['correct']}  "
              f"[{time.perf_counter() - t0:.1f} s]", flush=True)
    if spin:
        return
    if nb is not None:
        import numba
        results["numba"] = f"numba {numba.__version__}, threading layer " \
                           f"{numba.threading_layer()}, {numba.get_num_threads()} threads"
    head = (f"simt CPU device against C+OpenMP (block twin, idiomatic) and numba, "
            f"{results['cpu_name']}, {threads} threads, {R.C.DATE}; numpy {R.np.__version__}; "
            f"{results['numba']}\nms: minimum over the rounds (ways taking turns; {args.repeat} "
            f"passes over the workloads, {R.PAUSE_S} s pause before each turn); "
            f"ratio < 1: simt faster; best = fastest baseline of that workload\n\n")
    text = head + summarize(results, R, "min_ms") + "\n\nmedians over the rounds:\n\n" \
        + summarize(results, R, "median_ms") + "\n"
    out = args.out or os.path.join(HERE, "results",
                                   f"cpu-baselines-{threads}core-{R.C.DATE}.txt")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(results, f, indent=1)
    print(text)
    print("wrote", out)


if __name__ == "__main__":
    main()
