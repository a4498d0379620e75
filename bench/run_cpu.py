"""The CPU half of the benchmark suite: simt's CPU device against the C+OpenMP twins
(bench/openmp/workloads.c, gcc -O3 -fopenmp -march=native) with the same number of
threads, with bounds checks off and on, the three taking turns run by run; compile and
import times.

Usage: python bench/run_cpu.py [--threads N] [--only NAME ...] [--no-extras] [--out DIR]
Writes bench/results/cpu-<date>.json and .png (or DIR/cpu-<date>.json) and prints the table."""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
THREADS = str(os.cpu_count() or 1)
os.environ.setdefault("OMP_NUM_THREADS", THREADS)
os.environ.setdefault("SIMT_CPU_THREADS", THREADS)
os.environ["SIMT_CACHE_DIR"] = tempfile.mkdtemp(prefix="simt-bench-cache-")
sys.path.insert(0, HERE)

import numpy as np            # noqa: E402

import common as C            # noqa: E402


def build():
    out = os.path.join(HERE, "build", "openmp_workloads.so")
    src = os.path.join(HERE, "openmp", "workloads.c")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        subprocess.run(["gcc", "-O3", "-fopenmp", "-march=native", "-shared", "-fPIC", "-o",
                        out, src], check=True)
    return ctypes.CDLL(out)


PAUSE_S = float(os.environ.get("BENCH_PAUSE_S", "0.1"))


def timed_in_turns(ways, budget_s=6.0, most=20, least=5, pause_s=None):
    """{label: median wall time (ms)} and the number of rounds, of ``ways`` (label, device
    or None, fn) taking turns round by round, in another order each round, so that this
    machine's drift (the same code's time moves by up to 1.5x between minutes on the 2-core
    machine) falls on all of them alike. Each turn makes its device current and runs fn
    once untimed first: the launch functions are bound per device (a switch rebinds at the
    next launch), and the data is each way's own in cache, as in a run of that way alone.
    Before that, ``pause_s`` (BENCH_PAUSE_S, default 0.1 s) lets the other ways' threads
    go to sleep: libgomp's spin after a parallel region for longer than a 5 ms kernel, and
    a simt matmul started right after the C one took 6.7-7.3 ms against 5.2-5.4 after a
    pause, on the 2-core machine."""
    times, rounds = timed_rounds(ways, budget_s, most, least, pause_s)
    return {label: C.median(t) * 1e3 for label, t in times.items()}, rounds


def timed_rounds(ways, budget_s=6.0, most=20, least=5, pause_s=None):
    """timed_in_turns's rounds: {label: [wall time (s) of each round]} and their number."""
    import simt
    pause_s = PAUSE_S if pause_s is None else pause_s
    first = 0.0
    for _, device, fn in ways:
        if device is not None:
            simt.set_device(device)
        fn()
        t0 = time.perf_counter()
        fn()
        first += time.perf_counter() - t0
    rounds = max(least, min(most, int(budget_s / max(first, 1e-6))))
    times = {label: [] for label, _, _ in ways}
    for r in range(rounds):
        for label, device, fn in ways[r % len(ways):] + ways[:r % len(ways)]:
            if device is not None:
                simt.set_device(device)
            time.sleep(pause_s)
            fn()
            t0 = time.perf_counter()
            fn()
            times[label].append(time.perf_counter() - t0)
    return times, rounds


def fresh_outputs(case, h):
    for name in case.outputs:
        h[name] = np.zeros_like(h[name]) if name in case.zero else C.poisoned(h[name])


def run_case(case, lib, simt, rng):
    size = case.size("cpu", sms=int(THREADS))
    h = case.make(size, rng)
    expected = case.reference(h, size)
    row = {"size": {k: v for k, v in size.items() if k not in ("kind", "sms")}}
    # C + OpenMP, on arrays of its own: its arguments are their addresses, so the arrays
    # must live as long as the timing, whatever simt's set-up below replaces in ``h``
    hc = dict(h)
    fresh_outputs(case, hc)
    fn = getattr(lib, case.name)
    args = C.c_args(case, hc, size)
    fn(*args)
    row["c_correct"] = case.ok({k: hc[k] for k in case.outputs}, expected)
    ways = [("c_ms", None, lambda hc=hc: fn(*args))]
    # simt, checks off then on: each on its own device and arrays
    for label, check in (("simt_ms", False), ("simt_checked_ms", True)):
        device = simt.set_device("cpu", boundscheck=check)
        fresh_outputs(case, h)
        d = {k: (simt.to_device(v) if isinstance(v, np.ndarray) else v) for k, v in h.items()}

        def go(d=d):
            case.launch(d, size)
            simt.synchronize()
        go()
        ok = case.ok({k: d[k].copy_to_host() for k in case.outputs}, expected)
        row[label.replace("_ms", "_correct")] = ok
        ways.append((label, device, go))
    times, row["rounds"] = timed_in_turns(ways)
    row.update(times)
    row["ratio"] = row["simt_ms"] / row["c_ms"]
    row["ratio_checked"] = row["simt_checked_ms"] / row["c_ms"]
    nbytes, flops = case.work(size) if case.work else (0, 0)
    row["simt_GBps"] = nbytes / row["simt_ms"] / 1e6 if nbytes else None
    row["simt_GFLOPs"] = flops / row["simt_ms"] / 1e6 if flops else None
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--threads", type=int, default=None,
                    help="threads of both sides (default: SIMT_CPU_THREADS or all cores)")
    ap.add_argument("--no-extras", action="store_true",
                    help="skip the compile-time and import-time probes")
    ap.add_argument("--out", default=None, help="folder for the JSON (default bench/results)")
    args = ap.parse_args()
    global THREADS
    if args.threads:
        THREADS = os.environ["OMP_NUM_THREADS"] = os.environ["SIMT_CPU_THREADS"] = \
            str(args.threads)
    import simt
    from workloads import all_cases
    lib = build()
    rng = np.random.default_rng(2026)
    results = {"device": "cpu", "date": C.DATE, "threads": int(THREADS), **C.machine(),
               "cpu_name": _cpu_name(), "workloads": {}}
    cases = [c for c in all_cases() if not args.only or c.name in args.only]
    for case in cases:
        t0 = time.perf_counter()
        try:
            row = run_case(case, lib, simt, rng)
        except Exception as exc:          # one failing case must not lose the others
            print(case.name, "failed:", type(exc).__name__, exc, flush=True)
            results["workloads"][case.name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            continue
        results["workloads"][case.name] = row
        print(f"{case.name:18s} C {row['c_ms']:8.2f} ms  simt {row['simt_ms']:8.2f} ms "
              f"(checked {row['simt_checked_ms']:8.2f})  ratio {row['ratio']:.2f}  "
              f"ok {row['c_correct']}/{row['simt_correct']}/{row['simt_checked_correct']}  "
              f"[{time.perf_counter() - t0:.1f} s]", flush=True)
    done = {n: r for n, r in results["workloads"].items() if "ratio" in r}
    ratios = [r["ratio"] for r in done.values()]
    results["geomean_ratio"] = C.geomean(ratios)
    results["geomean_ratio_checked"] = C.geomean([r["ratio_checked"] for r in done.values()])
    simt.set_device("cpu", boundscheck=False)
    if not args.no_extras:
        results["compile"] = C.compile_times(cases)
        results["matmul_fresh_process_compile_ms"] = C.fresh_matmul_compile_ms("cpu")
        results["import_simt_ms"] = C.import_time_ms()
    base = C.write_results(results, "cpu", args.out)
    names = list(done)
    C.plot_ratios(base + ".png", f"simt CPU / C+OpenMP time, {results['cpu_name']}, "
                  f"{THREADS} threads, {C.DATE} (checks off; lower is better)",
                  names, ratios, limit=1.5)
    print(summary(results))
    print("wrote", base + ".json", base + ".png")


def summary(r):
    rows = [[n, C.fmt(w["c_ms"]), C.fmt(w["simt_ms"]), C.fmt(w["simt_checked_ms"]),
             f"{w['ratio']:.2f}", f"{w['ratio_checked']:.2f}",
             "yes" if w["c_correct"] and w["simt_correct"] and w["simt_checked_correct"] else "NO"]
            for n, w in r["workloads"].items() if "ratio" in w]
    rows.append(["geometric mean", "", "", "", f"{r['geomean_ratio']:.2f}",
                 f"{r['geomean_ratio_checked']:.2f}", ""])
    text = C.table(["workload", "C+OpenMP ms", "simt ms", "simt checked ms", "simt/C",
                    "checked/C", "correct"], rows)
    comp = r.get("compile")
    if comp is None:
        return text
    text += "\n\n" + C.table(["kernel", "cold ms", "in-process ms", "disk-cached ms"],
                             [[k, v["cold_ms"], v["in_process_ms"], v["disk_ms"]]
                              for k, v in comp.items()])
    text += (f"\n\nimport simt: {r['import_simt_ms']} ms; tiled matmul compiled cold in a fresh "
             f"process: {r['matmul_fresh_process_compile_ms']} ms")
    return text


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return C.machine()["processor"] or "cpu"


if __name__ == "__main__":
    main()
