"""Is it the kernel or the compiler? The workloads where simt's CPU device loses to the
idiomatic C+OpenMP versions (bench/run_cpu_baselines.py: histograms, scan, reduction)
run their GPU algorithms: per-thread loops with a block-sized stride, atomics on global memory,
Hillis-Steele's log2(1024) passes. Here the same computations are simt kernels written the
way the idiomatic C is (one thread per block, each block a contiguous chunk), timed in
turns with that C on the same inputs, each checked against NumPy.

Usage: PYTHONPATH=src python bench/cpu_shaped_probe.py [--budget S]
(threads: OMP_NUM_THREADS and SIMT_CPU_THREADS, default every core)"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np                      # noqa: E402

from run_cpu_baselines import IDIOMATIC, build_idiomatic, load_run_cpu   # noqa: E402

R = load_run_cpu()          # before simt: the thread counts (OMP_NUM_THREADS, SIMT_CPU_THREADS)

import simt                             # noqa: E402
from simt import blockIdx, gridDim      # noqa: E402

PARTS = 64                              # chunks (blocks of one thread), as the C's threads


@simt.kernel
def histo_chunks(buf, histo):
    """A private histogram per chunk (a local array), added to the global one."""
    counts = simt.local.array(256, np.int32)
    for b in range(256):
        counts[b] = 0
    n = buf.shape[0]
    for i in range(n * blockIdx.x // PARTS, n * (blockIdx.x + 1) // PARTS):
        counts[buf[i]] += 1
    for b in range(256):
        simt.atomic.add(histo, b, counts[b])


@simt.kernel
def chunk_sums(x, part):
    n = x.shape[0]
    s = np.int32(0)
    for i in range(n * blockIdx.x // PARTS, n * (blockIdx.x + 1) // PARTS):
        s += x[i]
    part[blockIdx.x + 1] = s


@simt.kernel
def scan_parts(part):
    part[0] = 0
    for k in range(1, PARTS + 1):
        part[k] += part[k - 1]


@simt.kernel
def chunk_scan(x, y, part):
    n = x.shape[0]
    run = part[blockIdx.x]
    for i in range(n * blockIdx.x // PARTS, n * (blockIdx.x + 1) // PARTS):
        run += x[i]
        y[i] = run


@simt.kernel
def sum_chunks(x, partial):
    """16 running sums per chunk (lanes of a local array, as gcc's simd reduction keeps
    them in vector registers), added at the end; partial[b] for each of the blocks."""
    acc = simt.local.array(16, np.float32)
    for lane in range(16):
        acc[lane] = np.float32(0)
    n = x.shape[0]
    lo = n * blockIdx.x // gridDim.x
    hi = n * (blockIdx.x + 1) // gridDim.x
    full = lo + (hi - lo) // 16 * 16
    for i in range(lo, full, 16):
        for lane in range(16):
            acc[lane] += x[i + lane]
    s = np.float32(0)
    for i in range(full, hi):
        s += x[i]
    for lane in range(16):
        s += acc[lane]
    partial[blockIdx.x] = s


def reduction_run(d):
    sum_chunks[d["blocks"], 1](d["x"], d["partial"])


def histogram_run(d):
    histo_chunks[PARTS, 1](d["buf"], d["histo"])


def scan_run(d):
    chunk_sums[PARTS, 1](d["x"], d["part"])
    scan_parts[1, 1](d["part"])
    chunk_scan[PARTS, 1](d["x"], d["y"], d["part"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=4.0)
    args = ap.parse_args()
    from workloads import histogram, reduction, scan
    idio = build_idiomatic()
    rng = np.random.default_rng(2026)
    device = simt.set_device("cpu", boundscheck=False)
    rows = []
    for case, simt_run in ((reduction.CASES[0], reduction_run),
                           (histogram.CASES[1], histogram_run), (scan.CASES[0], scan_run)):
        size = case.size("cpu", sms=int(R.THREADS))
        h = case.make(size, rng)
        expected = case.reference(h, size)
        hc = dict(h)
        R.fresh_outputs(case, hc)
        c_args = R.C.c_args(case, hc, size)
        c_fn = getattr(idio, IDIOMATIC[case.name])
        c_fn(*c_args)
        hs = dict(h, part=np.zeros(PARTS + 1, np.int32))
        R.fresh_outputs(case, hs)
        d = {k: (simt.to_device(v) if isinstance(v, np.ndarray) else v) for k, v in hs.items()}

        def go(d=d, run=simt_run):
            run(d)
            simt.synchronize()
        go()
        ok = (case.ok({k: hc[k] for k in case.outputs}, expected),
              case.ok({k: d[k].copy_to_host() for k in case.outputs}, expected))
        ways = [("c_idiomatic", None, lambda f=c_fn, a=c_args: f(*a)),
                ("simt_cpu_shaped", device, go)]
        times, rounds = R.timed_rounds(ways, budget_s=args.budget)
        t = {k: min(v) * 1e3 for k, v in times.items()}
        rows.append([case.name, R.C.fmt(t["c_idiomatic"]), R.C.fmt(t["simt_cpu_shaped"]),
                     f"{t['simt_cpu_shaped'] / t['c_idiomatic']:.2f}", rounds,
                     "yes" if all(ok) else f"NO {ok}"])
        print(rows[-1], flush=True)
    print(R.C.table(["workload", "C idiomatic ms", "simt CPU-shaped ms", "ratio", "rounds",
                     "correct"], rows))


if __name__ == "__main__":
    main()
