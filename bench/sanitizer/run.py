"""compute-sanitizer against simt's checked mode on the same planted bugs (issue 13
item 5): bugs.cu holds them in CUDA C, tests/test_checked.py in Python.

For each case: build bugs.cu once with nvcc, run it under compute-sanitizer's memcheck,
racecheck, synccheck and initcheck (found or not, and the wall time of each run), then
run the Python twin with checks=True on the CPU device and (with a GPU) on cuda:0 (the
exception class, or clean, and the time of the launch, compile excluded). Writes bench/results/issue13-sanitizer-<date>.md and .json.

Usage (on a machine with a GPU and the CUDA toolkit):
    python bench/sanitizer/run.py [--only CASE ...] [--arch sm_90] [--no-cuda]
--no-cuda runs the simt column only (any machine)."""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np            # noqa: E402

import common as C            # noqa: E402

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
# case -> (what it is, the tool meant to find it, simt's class; None: must be clean)
CASES = {
    "oob_global": ("global index past the end", "memcheck", "IllegalAddressError"),
    "oob_shared": ("shared index past the end", "memcheck", "IllegalAddressError"),
    "oob_local": ("local array, negative index", "memcheck", "IllegalAddressError"),
    "race_shared": ("shared: read a neighbour's write, no barrier", "racecheck",
                    "RaceConditionError"),
    "race_global_block": ("global: every thread of a block writes one element",
                          "racecheck", "RaceConditionError"),
    "race_across_blocks": ("global: block i+1 writes what block i reads", "racecheck",
                           "RaceConditionError"),
    "race_in_warp": ("shared: warp-synchronous sum without syncwarp", "racecheck",
                     "RaceConditionError"),
    "init_races_atomics": ("plain init, atomics, no barrier (C: shared, Python: global)",
                           "racecheck",
                           "RaceConditionError"),
    "diverge_if": ("syncthreads under if", "synccheck", "BarrierDivergenceError"),
    "diverge_break": ("syncthreads after a break", "synccheck", "BarrierDivergenceError"),
    "diverge_return": ("syncthreads after a device function's early return", "synccheck",
                       "BarrierDivergenceError"),
    "bad_mask": ("shfl_sync mask names lanes that skip it", "synccheck",
                 "BarrierDivergenceError"),
    "uninit_shared": ("shared element nothing wrote", "initcheck", "UninitializedReadError"),
    "uninit_global": ("cudaMalloc'd memory nothing wrote", "initcheck",
                      "UninitializedReadError"),
    "traps": ("correct code: atomics, barriers, disjoint halves, exited threads", None, None),
}


def twins():
    """The Python twins: the kernels of tests/test_checked.py, with their launches."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))          # its conftest helpers
    spec = importlib.util.spec_from_file_location(
        "test_checked", os.path.join(ROOT, "tests", "test_checked.py"))
    t = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(t)
    import simt

    def z(n, dtype=np.float32):
        return simt.zeros(n, dtype)

    def data():
        return simt.to_device((np.arange(128) * 37 % 100).astype(np.int32))
    return {
        "oob_global": (t.oob_global, 1, 32, lambda: (t.ones(32), z(32))),
        "oob_shared": (t.oob_shared, 1, 32, lambda: (z(32),)),
        "oob_local": (t.oob_local_negative, 1, 32, lambda: (z(32),)),
        "race_shared": (t.race_shared, 1, 64, lambda: (z(64),)),
        "race_global_block": (t.race_global_in_block, 1, 8, lambda: (z(1),)),
        "race_across_blocks": (t.race_across_blocks, 4, 1, lambda: (t.ones(4),)),
        "race_in_warp": (t.race_in_warp, 1, 32, lambda: (z(1, np.int32),)),
        "init_races_atomics": (t.init_races_atomics, 1, 8, lambda: (z(1, np.int32),)),
        "diverge_if": (t.diverge_if, 1, 32, lambda: (z(32),)),
        "diverge_break": (t.diverge_break, 1, 32, lambda: (z(32),)),
        "diverge_return": (t.diverge_return, 1, 32, lambda: (z(32),)),
        "bad_mask": (t.bad_mask, 1, 32, lambda: (z(32, np.int32),)),
        "uninit_shared": (t.uninit_shared, 1, 32, lambda: (z(32),)),
        "uninit_global": (t.copy, 1, 32, lambda: (simt.device_array(32, np.float32), z(32))),
        "traps": (t.traps, 2, 64, lambda: (data(), z(4, np.int32), z(128, np.int32), 48)),
    }


def run_simt(case, twin, device="cpu"):
    import simt
    kernel, grid, block, make = twin
    with simt.use_device(device, checks=True):
        args = make()
        kernel[grid, block](*args)          # compile outside the timing
        try:
            simt.synchronize()
        except simt.LaunchError:
            pass
        args = make()
        t0 = time.perf_counter()
        try:
            kernel[grid, block](*args)
            simt.synchronize()
            found = None
        except simt.LaunchError as exc:
            found = type(exc).__name__
        return found, (time.perf_counter() - t0) * 1e3


def build(arch):
    exe = os.path.join(HERE, "build", "bugs")
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    subprocess.run(["nvcc", "-O2", "-lineinfo", f"-arch={arch}", "-o", exe,
                    os.path.join(HERE, "bugs.cu")], check=True)
    return exe


def run_tool(exe, tool, case):
    """(errors reported, wall seconds) of one compute-sanitizer run."""
    cmd = ["compute-sanitizer", "--tool", tool, exe, case]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    seconds = time.perf_counter() - t0
    text = proc.stdout + proc.stderr
    counts = [int(n) for n in re.findall(r"(?:ERROR|RACECHECK) SUMMARY: (\d+)", text)]
    return (max(counts) if counts else -1), seconds, text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--arch", default="native")
    ap.add_argument("--no-cuda", action="store_true")
    args = ap.parse_args()
    cases = [c for c in CASES if not args.only or c in args.only]
    cuda = not args.no_cuda and shutil.which("nvcc") and shutil.which("compute-sanitizer")
    exe = build(args.arch) if cuda else None
    pythons = twins()
    rows, results = [], {"date": C.DATE, "cases": {}}
    for case in cases:
        what, tool, expected = CASES[case]
        row = {"what": what, "tool": tool, "expected": expected}
        if cuda:
            for name in TOOLS:
                errors, seconds, text = run_tool(exe, name, case)
                row[name] = {"errors": errors, "s": round(seconds, 2)}
                if errors and errors > 0:
                    row[name]["first"] = next((line.strip() for line in text.splitlines()
                                              if "=========" in line and (
                                                  "Invalid" in line or "hazard" in line.lower()
                                                  or "Barrier" in line or "Uninitialized" in line
                                                  or "Error" in line)), "")[:200]
        found, ms = run_simt(case, pythons[case])
        row["simt"] = {"found": found, "ms": round(ms, 2), "right": found == expected}
        if cuda:                    # the same twin under checks=True on the GPU
            gfound, gms = run_simt(case, pythons[case], "cuda:0")
            row["simt_cuda"] = {"found": gfound, "ms": round(gms, 2),
                                "right": gfound == expected}
        results["cases"][case] = row
        cells = [case, what]
        if cuda:
            for name in TOOLS:
                n = row[name]["errors"]
                mark = "found" if n > 0 else ("-" if n == 0 else "?")
                cells.append(f"{mark} ({row[name]['s']:.1f} s)")
        cells.append(f"{found or 'clean'} ({ms:.1f} ms)" + ("" if found == expected else " WRONG"))
        if cuda:
            g = row["simt_cuda"]
            cells.append(f"{g['found'] or 'clean'} ({g['ms']:.1f} ms)"
                         + ("" if g["right"] else " WRONG"))
        rows.append(cells)
        print(" | ".join(cells), flush=True)
    header = ["case", "bug"] + ([f"{t}" for t in TOOLS] if cuda else []) + \
        ["simt checks=True, cpu"] + (["simt checks=True, cuda:0"] if cuda else [])
    table = "\n".join(["| " + " | ".join(header) + " |",
                       "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows])
    base = os.path.join(ROOT, "bench", "results", f"issue13-sanitizer-{C.DATE}")
    with open(base + ".json", "w") as f:
        json.dump(results, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write(f"# compute-sanitizer vs simt checked mode, {C.DATE}\n\n"
                f"`python bench/sanitizer/run.py` (found: the tool reported an error or "
                f"hazard; -: it reported none; times: wall time of one run, the tool's "
                f"start included)\n\n{table}\n")
    print(table)
    print("wrote", base + ".md")


if __name__ == "__main__":
    main()
