"""Start-up costs on a GPU machine, each in fresh interpreters (median of RUNS processes):
``import simt`` (NumPy's share apart), with the interpreter as configured and with
Python's bytecode cache on (PYTHONPYCACHEPREFIX in a scratch folder, after one warm-up
import): a machine that sets PYTHONDONTWRITEBYTECODE and installs packages without .pyc
files compiles every module's source at every start; and where the first kernel of a
process spends its time: the tiled matmul compiled and loaded, phase by phase.

Phases: ``import simt``; the workloads' import; the CUDA context (the cuda.bindings import,
cuInit, the primary context, the device's properties); the import of llvmlite's LLVM
library; the import of simt's GPU compiler; LLVM's NVPTX target machine; the front end
(Python source -> typed IR); LLVM IR -> PTX (O3); the driver's PTX JIT (module load).
``first_kernel_ms`` is what ``kernel.compile`` costs as the first kernel of a process once
the context exists; ``first_kernel_with_context_ms`` adds the primary context's creation
(cuInit and the bindings import already ran in ``set_device``), as bench/common.py's
figure does.

Usage: PYTHONPATH=src python bench/gpu/startup.py [out.json] [device]"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = 5

PHASES = r"""
import sys, time, json
t = [time.perf_counter()]
import simt
t.append(time.perf_counter())
sys.path.insert(0, {bench!r})
from workloads import matmul
from simt.ir import types as T
t.append(time.perf_counter())
simt.set_device({device!r})
backend = simt.get_device().backend
arch = backend.arch()
t.append(time.perf_counter())
import llvmlite.binding
t.append(time.perf_counter())
from simt.backends.cuda import compile as C
from simt.compiler.options import CompileOptions
t.append(time.perf_counter())
C.target_machine(arch)
t.append(time.perf_counter())
fn = matmul.matmul.typed_ir(T.parse_signature(matmul.CASES[0].kernels[0][1]))
t.append(time.perf_counter())
binary = C.compile_kernel(fn, CompileOptions(boundscheck=False), arch)
t.append(time.perf_counter())
backend.load_binary(binary)
t.append(time.perf_counter())
names = ["import_simt", "import_workloads", "context", "import_llvmlite", "import_compiler",
         "target_machine", "frontend", "llvm_to_ptx", "ptx_jit"]
print(json.dumps({{n: (b - a) * 1e3 for n, a, b in zip(names, t, t[1:])}}))
"""

WHOLE = r"""
import sys, time, json
import simt
sys.path.insert(0, {bench!r})
from workloads import matmul
from simt.ir import types as T
simt.set_device({device!r})
t0 = time.perf_counter()
simt.get_device().backend.arch()
t1 = time.perf_counter()
k = simt.kernel(cache=False)(matmul.matmul.pyfunc)
k.compile(T.parse_signature(matmul.CASES[0].kernels[0][1]))
t2 = time.perf_counter()
print(json.dumps({{"context": (t1 - t0) * 1e3, "first_kernel": (t2 - t1) * 1e3}}))
"""


IMPORT = r"""
import time, json
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
import simt
t2 = time.perf_counter()
print(json.dumps({"numpy": (t1 - t0) * 1e3, "simt_after_numpy": (t2 - t1) * 1e3,
                  "total": (t2 - t0) * 1e3}))
"""


def import_times(bytecode):
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="simt-pyc-")
        fresh(IMPORT, env)                       # writes the bytecode
    runs = [fresh(IMPORT, env) for _ in range(RUNS)]
    return {k: round(statistics.median(r[k] for r in runs), 1) for k in runs[0]}


def fresh(code, env=None):
    env = dict(env or os.environ, SIMT_CACHE_DIR=tempfile.mkdtemp(prefix="simt-cold-"))
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    device = sys.argv[2] if len(sys.argv) > 2 else "cuda:0"
    bench = os.path.dirname(HERE)
    phases = [fresh(PHASES.format(bench=bench, device=device)) for _ in range(RUNS)]
    whole = [fresh(WHOLE.format(bench=bench, device=device)) for _ in range(RUNS)]
    result = {k: round(statistics.median(p[k] for p in phases), 1) for k in phases[0]}
    result["first_kernel_ms"] = round(statistics.median(w["first_kernel"] for w in whole), 1)
    result["first_kernel_with_context_ms"] = round(
        statistics.median(w["first_kernel"] + w["context"] for w in whole), 1)
    result["import_as_configured_ms"] = import_times(bytecode=False)
    result["import_with_bytecode_ms"] = import_times(bytecode=True)
    result["runs"] = RUNS
    for k, v in result.items():
        print(f"{k:30s} {v}")
    if out:
        with open(out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
