"""Two runs of the bench suite side by side: typically the tree before a change and after it,
run on one machine in one session (bench/run_gpu.py or bench/run_cpu.py JSON files).

Usage: python bench/compare_runs.py BEFORE.json AFTER.json [--label-before X --label-after Y]
Prints a Markdown table: each workload's simt/reference ratio before and after, then compile,
import and launch-overhead figures where the runs have them."""
import argparse
import json
import math


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def ratio_rows(before, after):
    rows = []
    for name, old in before["workloads"].items():
        new = after["workloads"].get(name)
        if not new:
            continue
        rows.append((name, old.get("simt_ms"), new.get("simt_ms"), old.get("ratio"), new.get("ratio")))
    return rows


def compile_rows(before, after):
    rows = []
    for name, old in before.get("compile", {}).items():
        new = after.get("compile", {}).get(name)
        if new:
            rows.append((name, old.get("cold_ms"), new.get("cold_ms"),
                         old.get("disk_ms"), new.get("disk_ms")))
    return rows


def launch_rows(before, after):
    key = "simt kernel[1, 1](*args)"
    old = (before.get("launch_overhead") or {}).get("rows", {})
    new = (after.get("launch_overhead") or {}).get("rows", {})
    rows = []
    for label in (key, key + ", arguments alternating", "cuda.core 1.2.0"):
        for n in ("1", "5", "26"):
            if n in old.get(label, {}) and n in new.get(label, {}):
                rows.append((f"{label}, {n} args", old[label][n], new[label][n]))
    return rows


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--label-before", default="before")
    parser.add_argument("--label-after", default="after")
    opts = parser.parse_args()
    with open(opts.before) as f:
        before = json.load(f)
    with open(opts.after) as f:
        after = json.load(f)
    b, a = opts.label_before, opts.label_after
    print(f"device: {after.get('device')}, {after.get('date')}\n")
    print(f"| workload | simt ms {b} | simt ms {a} | ratio {b} | ratio {a} |")
    print("| --- | --- | --- | --- | --- |")
    rows = ratio_rows(before, after)
    for name, old_ms, new_ms, old_r, new_r in rows:
        print(f"| {name} | {fmt(old_ms)} | {fmt(new_ms)} | {fmt(old_r)} | {fmt(new_r)} |")
    print(f"| geometric mean | | | {geomean([r[3] for r in rows]):.3f} | "
          f"{geomean([r[4] for r in rows]):.3f} |")
    if "geomean_ratio_checked" in before:
        print(f"\nwith bounds checks: {before['geomean_ratio_checked']:.3f} {b}, "
              f"{after.get('geomean_ratio_checked', float('nan')):.3f} {a}")
    crows = compile_rows(before, after)
    if crows:
        print(f"\n| kernel | cold ms {b} | cold ms {a} | disk-cached ms {b} | disk-cached ms {a} |")
        print("| --- | --- | --- | --- | --- |")
        for name, oc, nc, od, nd in crows:
            print(f"| {name} | {fmt(oc, 2)} | {fmt(nc, 2)} | {fmt(od, 2)} | {fmt(nd, 2)} |")
        print(f"| geometric mean | {geomean([r[1] for r in crows]):.2f} | "
              f"{geomean([r[2] for r in crows]):.2f} | {geomean([r[3] for r in crows]):.2f} | "
              f"{geomean([r[4] for r in crows]):.2f} |")
    for key, label in (("import_simt_ms", "import simt, ms"),
                       ("matmul_fresh_process_compile_ms", "tiled matmul cold in a fresh process, ms")):
        if key in before and key in after:
            print(f"\n{label}: {fmt(before[key], 1)} {b}, {fmt(after[key], 1)} {a}")
    lrows = launch_rows(before, after)
    if lrows:
        print(f"\n| launch overhead, µs | {b} | {a} |\n| --- | --- | --- |")
        for label, old, new in lrows:
            print(f"| {label} | {old:.2f} | {new:.2f} |")


if __name__ == "__main__":
    main()
