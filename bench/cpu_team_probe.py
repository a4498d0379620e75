"""Where a launch that wakes the CPU device's team spends its time, for tuning its waits
(backends/cpu/team.py) on a given machine: microseconds per launch of a small kernel over
2 and 64 blocks, launched back to back and with a pause between launches (the workers
fall asleep after their spin), for several spin budgets and sched_yield intervals, each in
a fresh process. Also the same launches with SIMT_CPU_THREADS=1 (no team) for reference.

Run from the repository root: PYTHONPATH=src python3 bench/cpu_team_probe.py [--threads N] [out.json]
(about 30 s on 16 cores)."""
import argparse
import json
import os
import subprocess
import sys

CONFIGS = [(200, 16), (200, 1 << 20), (2000, 16), (2000, 1 << 20), (20, 16), (0, 16)]
GAPS_US = (0, 200)

CHILD = r'''
import json, os, sys, time
import numpy as np
spin, every = int(sys.argv[1]), int(sys.argv[2])
from simt.backends.cpu import team
team.SPIN, team.YIELD_EVERY = spin, every
import simt

@simt.kernel
def bump(out):
    i = simt.grid(1)
    if i < out.size:
        out[i] += 1

simt.set_device("cpu", boundscheck=False)
out = simt.to_device(np.zeros(64 * 32, np.float32))
rows = {}
for gap in GAPS:
    for blocks in (2, 64):
        for _ in range(50):
            bump[blocks, 32](out)
        times = []
        for _ in range(400):
            t0 = time.perf_counter()
            bump[blocks, 32](out)
            times.append(time.perf_counter() - t0)
            if gap:
                end = time.perf_counter() + gap * 1e-6
                while time.perf_counter() < end:
                    pass
        times.sort()
        rows[f"{blocks} blocks, {gap} us apart"] = round(times[len(times) // 2] * 1e6, 1)
print(json.dumps(rows))
'''


def run(threads, spin, every):
    env = dict(os.environ, SIMT_CPU_THREADS=str(threads))
    code = CHILD.replace("GAPS", repr(GAPS_US))
    done = subprocess.run([sys.executable, "-c", code, str(spin), str(every)], env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode:
        return {"error": done.stderr[-500:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("out", nargs="?")
    opts = ap.parse_args()
    results = {"threads": opts.threads, "no team (1 thread)": run(1, 200, 16)}
    for spin, every in CONFIGS:
        results[f"spin {spin}k cycles, yield every {every}"] = run(opts.threads, spin, every)
    labels = [k for k in results if k != "threads"]
    columns = sorted({c for k in labels for c in results[k] if c != "error"})
    print(f"median µs per launch, {opts.threads} threads")
    print(f"{'':40s}" + "".join(f"{c:>26s}" for c in columns))
    for k in labels:
        row = results[k]
        print(f"{k:40s}" + "".join(f"{row.get(c, 'error'):>26}" for c in columns))
    if opts.out:
        os.makedirs(os.path.dirname(os.path.abspath(opts.out)), exist_ok=True)
        with open(opts.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
