"""Compile time against kernel size (issue 37 item 1): machine-generated straight-line
kernels of 300, 1000 and 3000 statements and kernels of 20 and 200 array parameters, each
compiled cold on the CPU device (and to PTX for sm_90, which needs no GPU) in a fresh
process with an empty SIMT_CACHE_DIR. Reports seconds per phase and the compile's peak
memory (the child's maxrss, minus its maxrss before the compile).

Usage: python bench/compile_time.py [--runs N] [--sizes 300,1000,3000] [--params 20,200]
         [--no-ptx] [--nvcc] [--profile NAME] [--src DIR] [--out FILE]
``--nvcc`` (a machine with the CUDA toolkit): the same kernels written in CUDA C, compiled by
``nvcc -cubin -arch=sm_90``, beside simt's GPU compile to the same point: its PTX (the "ptx"
target's time) plus ``ptxas -arch=sm_90`` on that PTX (what the driver's JIT does at load).
Each configuration runs ``--runs`` times (default 3), and the minimum is kept: other
processes share the machine's cores. ``--src DIR`` measures the simt in DIR (another
checkout's src/, for before and after). ``--profile straight_3000`` prints a cProfile of one
compile instead. Writes bench/results/compile-time-<date>.json unless --out says where."""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common as C            # noqa: E402


# ---------------------------------------------------------------- kernel generators
def straight_kernel(statements, seed=0):
    """Source of ``straight_<statements>(a, b, out)``: float32 arithmetic on locals and on
    array elements near the thread's index, one store every eight statements."""
    rng = random.Random(seed)
    lines = [f"def straight_{statements}(a, b, out):",
             "    i = blockIdx.x * blockDim.x + threadIdx.x",
             "    if i + 16 >= out.shape[0]:",
             "        return",
             "    t0 = a[i]",
             "    t1 = b[i + 1]"]
    ops = ["+", "-", "*"]
    for k in range(2, statements):
        x, y = f"t{rng.randrange(k)}", f"t{rng.randrange(k)}"
        arr, off = rng.choice("ab"), rng.randrange(16)
        kind = k % 4
        if kind == 0:
            rhs = f"{x} * {arr}[i + {off}] + {y}"
        elif kind == 1:
            rhs = f"{x} {rng.choice(ops)} {y} * 0.5"
        elif kind == 2:
            rhs = f"({x} - {arr}[i + {off}]) * 0.25 + {y}"
        else:
            rhs = f"{x} {rng.choice(ops)} {y}"
        lines.append(f"    t{k} = {rhs}")
        if k % 8 == 7:
            lines.append(f"    out[i + {rng.randrange(16)}] = t{k}")
    lines.append(f"    out[i] = t{statements - 1}")
    return "\n".join(lines) + "\n"


def params_kernel(count):
    """Source of ``params_<count>(p0, ..., p<count-1>, out)``: each array read once."""
    names = [f"p{k}" for k in range(count)]
    lines = [f"def params_{count}({', '.join(names)}, out):",
             "    i = blockIdx.x * blockDim.x + threadIdx.x",
             "    if i < out.shape[0]:",
             "        acc = p0[i]"]
    lines += [f"        acc = acc + {name}[i]" for name in names[1:]]
    lines.append("        out[i] = acc")
    return "\n".join(lines) + "\n"


def kernel_source(name):
    """The source of generated kernel ``name`` (straight_<statements> or params_<count>)."""
    kind, size = name.rsplit("_", 1)
    return straight_kernel(int(size)) if kind == "straight" else params_kernel(int(size))


def array_count(name):
    kind, size = name.rsplit("_", 1)
    return 3 if kind == "straight" else int(size) + 1


def cuda_source(name):
    """Generated kernel ``name`` in CUDA C: the same statements on float pointers."""
    kind, size = name.rsplit("_", 1)
    if kind == "params":
        count = int(size)
        params = ", ".join(f"const float* p{k}" for k in range(count))
        body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;",
                "    if (i < n) {", "        float acc = p0[i];"]
        body += [f"        acc = acc + p{k}[i];" for k in range(1, count)]
        body += ["        out[i] = acc;", "    }"]
        return (f'extern "C" __global__ void {name}({params}, float* out, int n) {{\n'
                + "\n".join(body) + "\n}\n")
    body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;",
            "    if (i + 16 >= n) return;"]
    for line in straight_kernel(int(size)).splitlines()[4:]:
        text = line.strip().replace("0.5", "0.5f").replace("0.25", "0.25f")
        body.append(("    float " if text.startswith("t") else "    ") + text + ";")
    return (f'extern "C" __global__ void {name}(const float* a, const float* b, float* out, '
            f'int n) {{\n' + "\n".join(body) + "\n}\n")


def nvcc_row(name, folder, runs):
    """nvcc -cubin of ``name``'s CUDA C twin, and ptxas of simt's PTX for it: the fastest
    of ``runs`` each, seconds."""
    import time
    cu = os.path.join(folder, f"{name}.cu")
    with open(cu, "w") as f:
        f.write(cuda_source(name))
    code = (f"import sys; sys.path.insert(0, {folder!r}); import simt, generated; "
            f"k = simt.kernel(cache=False)(generated.{name}.pyfunc); "
            f"sig = 'void(' + ', '.join(['float32[::1]'] * {array_count(name)}) + ')'; "
            f"open({os.path.join(folder, name + '.ptx')!r}, 'w').write(k.ptx(sig, arch='sm_90'))")
    subprocess.run([sys.executable, "-c", code], check=True,
                   env=dict(os.environ, PYTHONPATH=SRC,
                            SIMT_CACHE_DIR=tempfile.mkdtemp(prefix="simt-ct-cache-")))
    best = {"nvcc_s": float("inf"), "ptxas_s": float("inf")}
    for _ in range(runs):
        for key, cmd in (("nvcc_s", ["nvcc", "-cubin", "-arch=sm_90", "-O3", "-o",
                                     os.path.join(folder, name + ".nvcc.cubin"), cu]),
                         ("ptxas_s", ["ptxas", "-arch=sm_90", "-O3", "-o",
                                      os.path.join(folder, name + ".simt.cubin"),
                                      os.path.join(folder, name + ".ptx")])):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            best[key] = min(best[key], time.perf_counter() - t0)
    return {k: round(v, 3) for k, v in best.items()}


# ---------------------------------------------------------------- the child process
CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, {folder!r})
import numpy as np
import simt
from simt.ir import types as T
import generated
simt.set_device("cpu")
phases, calls = {{}}, {{}}
{timers}
kernel = simt.kernel(cache=False)(getattr(generated, {name!r}).pyfunc)
sig = "void(" + ", ".join(["float32[::1]"] * {arrays}) + ")"
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0, c0 = time.perf_counter(), time.process_time()
if {target!r} == "cpu":
    kernel.compile(sig)
    arrays = [np.ones(64, np.float32) for _ in range({arrays})]
    kernel[1, 32](*arrays)
    simt.synchronize()
else:
    kernel.ptx(sig, arch="sm_90")
total, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"total_s": total, "cpu_s": cpu, "phases": phases, "calls": calls,
                  "rss_before_mib": before / 1024,
                  "peak_rss_mib": peak / 1024, "compile_rss_mib": (peak - before) / 1024}}))
"""

# Wrappers that add each phase's wall time to ``phases``: the front end (ast -> typed IR,
# verified), simt's IR passes (inlining), LLVM IR emission, llvmlite's parse and verify,
# the optimizer's pass pipeline, and the code generator (object code or PTX).
TIMERS = r"""
import functools
import llvmlite.binding as llvm
from simt.compiler import pipeline
from simt.backends import hostjit
from simt.backends.cpu import compile as cpu_compile

def timed(owner, attr, phase):
    fn = getattr(owner, attr)
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            phases[phase] = phases.get(phase, 0.0) + time.process_time() - t
            calls[phase] = calls.get(phase, 0) + 1
    setattr(owner, attr, wrapper)

timed(pipeline, "typed_ir", "front_end")
timed(cpu_compile._Compile, "inline", "ir_passes")
timed(cpu_compile._Compile, "emit", "llvm_ir")
timed(llvm, "parse_assembly", "parse")
timed(llvm.ModuleRef, "verify", "verify")
timed(llvm.ModulePassManager, "run", "optimizer")
timed(llvm.TargetMachine, "emit_object", "codegen")
timed(llvm.TargetMachine, "emit_assembly", "codegen")
try:
    from simt.backends.cuda import compile as cuda_compile
    for attr, phase in (("emit", "llvm_ir"),):
        if hasattr(cuda_compile._Compile, attr):
            timed(cuda_compile._Compile, attr, phase)
except (ImportError, AttributeError):
    pass
"""


SRC = os.path.join(HERE, "..", "src")


def measure(name, target, folder, runs):
    """The fastest of ``runs`` fresh-process compiles of kernel ``name`` for ``target``
    (cpu: compiled and launched once; ptx: PTX for sm_90), with the lowest peak memory."""
    code = CHILD.format(folder=folder, name=name, arrays=array_count(name), target=target,
                        timers=TIMERS)
    best = None
    for _ in range(runs):
        env = dict(os.environ, SIMT_CACHE_DIR=tempfile.mkdtemp(prefix="simt-ct-cache-"),
                   PYTHONPATH=SRC)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True)
        if out.returncode:
            raise SystemExit(f"{name} ({target}) failed:\n{out.stderr}")
        row = json.loads(out.stdout.strip().splitlines()[-1])
        if best is None or row["total_s"] < best["total_s"]:
            peak = min(row["compile_rss_mib"], best["compile_rss_mib"]) if best else None
            best = row
            if peak is not None:
                best["compile_rss_mib"] = peak
    return rounded(best)


def rounded(row):
    row = dict(row)
    row["phases"] = {k: round(v, 3) for k, v in sorted(row["phases"].items())}
    for key in ("total_s", "cpu_s", "rss_before_mib", "peak_rss_mib", "compile_rss_mib"):
        row[key] = round(row[key], 3 if key.endswith("_s") else 1)
    return row


def write_kernels(folder, names):
    """The kernels ``names`` as module ``generated`` in ``folder`` (the front end reads a
    kernel's source from its file)."""
    with open(os.path.join(folder, "generated.py"), "w") as f:
        f.write("import simt\nfrom simt import blockIdx, blockDim, threadIdx\n\n\n")
        for name in names:
            f.write("@simt.kernel\n" + kernel_source(name) + "\n\n")


def profile(name, folder):
    """cProfile of one CPU compile of ``name``: the 40 costliest functions by own time and
    the 60 by cumulative time; the statistics are kept in /tmp/compile-<name>.prof."""
    code = CHILD.format(folder=folder, name=name, arrays=array_count(name), target="cpu",
                        timers="")
    code = ("import cProfile, pstats\n_p = cProfile.Profile()\n_p.enable()\n" +
            "exec(compile(" + repr(code) + ", 'child', 'exec'))\n" +
            "_p.disable()\n_p.dump_stats(" + repr(f"/tmp/compile-{name}.prof") + ")\n" +
            "pstats.Stats(_p).sort_stats('tottime').print_stats(40)\n" +
            "pstats.Stats(_p).sort_stats('cumulative').print_stats(60)\n")
    env = dict(os.environ, SIMT_CACHE_DIR=tempfile.mkdtemp(prefix="simt-ct-cache-"),
               PYTHONPATH=SRC)
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="300,1000,3000")
    ap.add_argument("--params", default="20,200")
    ap.add_argument("--no-ptx", action="store_true")
    ap.add_argument("--nvcc", action="store_true")
    ap.add_argument("--profile")
    ap.add_argument("--src", help="the src/ folder of the simt to measure")
    ap.add_argument("--out")
    args = ap.parse_args()
    global SRC
    SRC = os.path.abspath(args.src or SRC)
    names = [f"straight_{n}" for n in args.sizes.split(",") if n] + \
            [f"params_{n}" for n in args.params.split(",") if n]
    folder = tempfile.mkdtemp(prefix="simt-ct-src-")
    write_kernels(folder, names + ([args.profile] if args.profile else []))
    if args.profile:
        return profile(args.profile, folder)
    results = {"machine": C.machine(), "src": SRC, "runs": args.runs, "cpu": {}, "ptx": {}}
    targets = ["cpu"] + ([] if args.no_ptx else ["ptx"])
    for name in names:
        for target in targets:
            row = results[target][name] = measure(name, target, folder, args.runs)
            print(f"{target:4s} {name:15s} {row['total_s']:8.3f} s (cpu {row['cpu_s']:.3f} s)  "
                  f"{row['compile_rss_mib']:7.1f} MiB  {row['phases']}", flush=True)
    if args.nvcc:
        results["nvcc"] = {}
        for name in names:
            row = results["nvcc"][name] = nvcc_row(name, folder, args.runs)
            simt_s = results["ptx"][name]["total_s"] + row["ptxas_s"] if "ptx" in targets \
                else None
            row["simt_ptx_plus_ptxas_s"] = None if simt_s is None else round(simt_s, 3)
            print(f"nvcc {name:15s} nvcc -cubin {row['nvcc_s']:.3f} s; simt PTX + ptxas "
                  f"{row['simt_ptx_plus_ptxas_s']} s (ptxas {row['ptxas_s']:.3f} s)", flush=True)
    sizes = [n for n in names if n.startswith("straight_")]
    if len(sizes) > 1:
        for target in targets:
            first, last = results[target][sizes[0]], results[target][sizes[-1]]
            for key in ("total_s", "cpu_s"):
                results[target][f"ratio_{sizes[-1]}_to_{sizes[0]}_{key[:-2]}"] = \
                    round(last[key] / first[key], 2)
    text = json.dumps(results, indent=1)
    out = args.out or os.path.join(HERE, "results", f"compile-time-{C.DATE}.json")
    with open(out, "w") as f:
        f.write(text + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
