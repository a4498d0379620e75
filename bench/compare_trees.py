"""Start-up costs of two simt trees side by side (say, main before and after a change),
measured in alternating rounds in one run so that machine drift falls on both alike:
`import simt` in a fresh process (as the machine is, and with bytecode cached as after
`pip install`), every bench kernel's cold compile, disk-cache load and
in-process lookup, the tiled matmul compiled first in a fresh process, and (on a GPU)
launch overhead from bench/gpu/launch_overhead.py.

Usage: python bench/compare_trees.py BEFORE_ROOT AFTER_ROOT [--device cuda:0] [--rounds 3]
       [--out results.json]
Each root is a checkout holding src/, bench/ and tests/. Prints a Markdown table of medians."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

IMPORT = "import time; t = time.perf_counter(); import simt; print((time.perf_counter() - t) * 1e3)"

COMPILE = r"""
import json, os, sys, tempfile
os.environ["SIMT_CACHE_DIR"] = tempfile.mkdtemp(prefix="simt-compare-")
sys.path.insert(0, "bench")
import simt
simt.set_device({device!r})
import common as C
from workloads import all_cases
rows = C.compile_times(all_cases())
print(json.dumps({{"compile": rows, "fresh_matmul_ms": C.fresh_matmul_compile_ms({device!r}, runs=1)}}))
"""


def run(root, args, env_extra=None):
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "src"), **(env_extra or {}))
    proc = subprocess.run([sys.executable] + args, cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"{args[:2]} in {root} failed:\n{proc.stderr[-3000:]}")
    return proc.stdout


def geomean(values):
    values = [v for v in values if v > 0]
    return statistics.geometric_mean(values) if values else float("nan")


def one_round(root, device):
    """{measure: value} for one tree."""
    out = {"import_ms": float(run(root, ["-c", IMPORT]).split()[-1])}
    # As after `pip install`, which writes bytecode: Python then need not compile sources.
    cached = {"PYTHONPYCACHEPREFIX": os.path.join(tempfile.gettempdir(),
                                                  "simt-compare-pyc" + root.replace(os.sep, "_"))}
    run(root, ["-c", IMPORT], cached)
    out["import_ms, bytecode cached"] = float(run(root, ["-c", IMPORT], cached).split()[-1])
    data = json.loads(run(root, ["-c", COMPILE.format(device=device)]).splitlines()[-1])
    for key in ("cold_ms", "disk_ms", "in_process_ms"):
        out[f"compile {key} (geomean)"] = geomean([r[key] for r in data["compile"].values()])
    out["matmul first kernel of a fresh process, ms"] = data["fresh_matmul_ms"]
    if device.startswith("cuda"):
        path = tempfile.mktemp(suffix=".json")
        run(root, ["bench/gpu/launch_overhead.py", path])
        with open(path) as f:
            rows = json.load(f)["rows"]
        for label in ("simt kernel[1, 1](*args)", "simt kernel[1, 1](*args), arguments alternating"):
            for n, us in rows.get(label, {}).items():
                out[f"launch us, {label}, {n} args"] = us
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out")
    opts = parser.parse_args()
    trees = {"before": os.path.abspath(opts.before), "after": os.path.abspath(opts.after)}
    samples = {name: [] for name in trees}
    for i in range(opts.rounds):
        order = list(trees) if i % 2 == 0 else list(reversed(trees))
        for name in order:
            samples[name].append(one_round(trees[name], opts.device))
            print(f"round {i + 1}, {name}: done", file=sys.stderr, flush=True)
    medians = {name: {key: statistics.median(s[key] for s in rows) for key in rows[0]}
               for name, rows in samples.items()}
    print(f"| measure ({opts.device}, median of {opts.rounds} alternating rounds) | before | after "
          f"| after / before |\n| --- | --- | --- | --- |")
    for key, old in medians["before"].items():
        new = medians["after"].get(key, float("nan"))
        print(f"| {key} | {old:.3f} | {new:.3f} | {new / old:.2f} |")
    if opts.out:
        with open(opts.out, "w") as f:
            json.dump({"device": opts.device, "samples": samples, "medians": medians}, f, indent=1)


if __name__ == "__main__":
    main()
