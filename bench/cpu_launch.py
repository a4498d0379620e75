"""Launch overhead of the CPU device: microseconds of host time per launch of a small
kernel (``out[i] += 1`` for the block's threads), launched back to back and synchronized
at the end, for one block of 32 threads and for grids that wake the worker threads
(2 blocks, one block per thread, 64 blocks). Median of interleaved rounds.

Run from the repository root: PYTHONPATH=src python3 bench/cpu_launch.py [--threads N] [out.json]
"""
import argparse
import json
import os
import statistics
import sys
import time

ROUNDS = 5


def timed(launch_once, sync, count):
    """Microseconds per launch: count launches, then one synchronize."""
    for _ in range(50):
        launch_once()
    sync()
    start = time.perf_counter()
    for _ in range(count):
        launch_once()
    sync()
    return (time.perf_counter() - start) / count * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--count", type=int, default=4000)
    ap.add_argument("out", nargs="?")
    opts = ap.parse_args()
    os.environ["SIMT_CPU_THREADS"] = str(opts.threads)
    import numpy as np
    import simt

    @simt.kernel
    def bump(out):
        i = simt.grid(1)
        if i < out.size:
            out[i] += 1

    simt.set_device("cpu", boundscheck=False)
    grids = {"1 block": 1, "2 blocks": 2, f"{opts.threads} blocks": opts.threads,
             "64 blocks": 64}
    out = simt.to_device(np.zeros(64 * 32, np.float32))
    rows = {}
    for _ in range(ROUNDS):
        for label, blocks in grids.items():
            rows.setdefault(label, []).append(
                timed(lambda: bump[blocks, 32](out), simt.synchronize, opts.count))
    expected = ROUNDS * (50 + opts.count) * len(set(grids.values()))
    host = out.copy_to_host()
    result = {"threads": opts.threads, "us_per_launch": {k: statistics.median(v)
                                                         for k, v in rows.items()},
              "correct": bool(host[0] == expected)}
    for label, us in result["us_per_launch"].items():
        print(f"{label:12s} {us:8.2f} us per launch")
    print("correct:", result["correct"])
    if opts.out:
        os.makedirs(os.path.dirname(os.path.abspath(opts.out)), exist_ok=True)
        with open(opts.out, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if result["correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
