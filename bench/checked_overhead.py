"""Checked mode's cost (issue 13 item 4): every bench workload on the CPU device with
checks=True against the unchecked device (bounds checks off, and on as by default).

Checked mode runs a launch's blocks one after another on one OS thread (its shadow
memory takes no locks), so the unchecked device is timed both with SIMT_CPU_THREADS
threads and with one: the second ratio is the per-thread cost of the checks.
A report from checked mode on these (correct) kernels would be a false positive: it is
printed and counted.

On a loaded machine (other jobs on its cores) wall times move by 2-5x between runs;
``--cpu-time`` times the process's CPU time instead, which the load moves much less:
then the per-thread column (checked against the unchecked device on one thread) is
the one to read (the two-thread unchecked time is the CPU time of both threads).

Usage: python bench/checked_overhead.py [--only NAME ...] [--scale S] [--cpu-time] [--out F]
Writes bench/results/issue13-checked-overhead-<date>.json (or F) and prints a Markdown
table."""
import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
THREADS = os.cpu_count() or 1
os.environ.setdefault("SIMT_CPU_THREADS", str(THREADS))
os.environ["SIMT_CACHE_DIR"] = tempfile.mkdtemp(prefix="simt-bench-cache-")
sys.path.insert(0, HERE)

import numpy as np            # noqa: E402

import common as C            # noqa: E402


CLOCK = time.perf_counter        # --cpu-time: time.process_time


def timed(fn, budget_s=1.5, most=10, least=3):
    """Median time (ms, wall or CPU: CLOCK) of fn() after one warm-up."""
    t0 = CLOCK()
    fn()
    first = CLOCK() - t0
    reps = max(least, min(most, int(budget_s / max(first, 1e-6))))
    times = []
    for _ in range(reps):
        t0 = CLOCK()
        fn()
        times.append(CLOCK() - t0)
    return C.median(times) * 1e3


SQUARE = ("matmul", "stencil", "transpose", "julia", "raytrace")   # n is a side
MINIMUM = {"scan": 1 << 20}          # its second kernel needs 1024 blocks at least


def scaled(case, scale):
    """The CPU size with ``scale`` times the elements (shadow memory is 40 bytes per
    element: the full CPU sizes would need gigabytes)."""
    size = case.size("cpu", sms=THREADS)
    if scale != 1:
        side = case.workload in SQUARE
        factor = scale ** 0.5 if side else scale
        size["n"] = max(MINIMUM.get(case.workload, 32), int(size["n"] * factor) // 32 * 32)
    return size


def run_case(case, simt, rng, scale):
    from simt.config import config
    size = scaled(case, scale)
    h = case.make(size, rng)
    expected = case.reference(h, size)
    row = {"size": {k: v for k, v in size.items() if k not in ("kind", "sms")}}
    modes = [("unchecked", dict(boundscheck=False), THREADS),
             ("unchecked_1thread", dict(boundscheck=False), 1),
             ("boundscheck", dict(boundscheck=True), THREADS),
             ("checked", dict(checks=True), THREADS)]
    for label, options, threads in modes:
        config.cpu_threads = threads
        simt.set_device("cpu", **options)
        for name in case.outputs:
            h[name] = np.zeros_like(h[name]) if name in case.zero else C.poisoned(h[name])
        d = {k: (simt.to_device(v) if isinstance(v, np.ndarray) else v) for k, v in h.items()}

        def go():
            case.launch(d, size)
            simt.synchronize()
        try:
            go()
        except simt.LaunchError as exc:
            row[label + "_report"] = str(exc)
            print(f"  {case.name} {label}: REPORTED {type(exc).__name__}: {exc}", flush=True)
            continue
        row[label + "_correct"] = case.ok({k: d[k].copy_to_host() for k in case.outputs},
                                          expected)
        row[label + "_ms"] = timed(go)
    config.cpu_threads = THREADS
    if "checked_ms" in row:
        row["overhead"] = row["checked_ms"] / row["unchecked_ms"]
        row["overhead_1thread"] = row["checked_ms"] / row["unchecked_1thread_ms"]
        row["overhead_vs_boundscheck"] = row["checked_ms"] / row["boundscheck_ms"]
    return row


def table(results):
    lines = ["| workload | unchecked ms (%d thr) | unchecked ms (1 thr) | bounds ms | checked ms "
             "| checked / unchecked | per thread | correct |" % THREADS,
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name, r in results["workloads"].items():
        if "overhead" not in r:
            lines.append(f"| {name} | {r.get('unchecked_ms', 0):.2f} | | | "
                         f"{'report: ' + r.get('checked_report', r.get('error', ''))[:60]} | | | |")
            continue
        ok = all(r.get(k + "_correct") for k in ("unchecked", "boundscheck", "checked"))
        lines.append(f"| {name} | {r['unchecked_ms']:.2f} | {r['unchecked_1thread_ms']:.2f} | "
                     f"{r['boundscheck_ms']:.2f} | {r['checked_ms']:.2f} | "
                     f"{r['overhead']:.1f}x | {r['overhead_1thread']:.1f}x | "
                     f"{'yes' if ok else 'NO'} |")
    lines.append(f"| geometric mean | | | | | {results['geomean_overhead']:.1f}x | "
                 f"{results['geomean_overhead_1thread']:.1f}x | |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--scale", type=float, default=0.125,
                    help="the bench's CPU sizes times this many elements (default 1/8)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time the process's CPU time, not wall time (a loaded machine)")
    ap.add_argument("--out", default=None, help="the JSON file to write")
    args = ap.parse_args()
    global CLOCK
    if args.cpu_time:
        CLOCK = time.process_time
    import simt
    from workloads import all_cases
    rng = np.random.default_rng(2026)
    results = {"device": "cpu", "date": C.DATE, "threads": THREADS, **C.machine(),
               "scale": args.scale, "clock": "cpu" if args.cpu_time else "wall",
               "workloads": {}}
    for case in all_cases():
        if args.only and case.name not in args.only:
            continue
        t0 = time.perf_counter()
        try:
            row = run_case(case, simt, rng, args.scale)
        except Exception as exc:          # one failing case must not lose the others
            print(case.name, "failed:", type(exc).__name__, exc, flush=True)
            results["workloads"][case.name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            continue
        results["workloads"][case.name] = row
        if "overhead" in row:
            print(f"{case.name:18s} unchecked {row['unchecked_ms']:8.2f} ms  checked "
                  f"{row['checked_ms']:9.2f} ms  {row['overhead']:6.1f}x  (1 thread "
                  f"{row['overhead_1thread']:5.1f}x)  [{time.perf_counter() - t0:.1f} s]",
                  flush=True)
    done = [r for r in results["workloads"].values() if "overhead" in r]
    results["geomean_overhead"] = C.geomean([r["overhead"] for r in done])
    results["geomean_overhead_1thread"] = C.geomean([r["overhead_1thread"] for r in done])
    results["false_positives"] = sum("checked_report" in r
                                     for r in results["workloads"].values())
    out = args.out or os.path.join(HERE, "results", f"issue13-checked-overhead-{C.DATE}.json")
    with open(out, "w") as f:
        json.dump(results, f, indent=1)
    print(table(results))
    print("wrote", out)


if __name__ == "__main__":
    main()
