"""Run a fuzz program on a simt device and hold its results against the evaluator's.

Integers and bools must match exactly, and so must floats the generator marked bit-exact
(NaN matches NaN, -0.0 matches 0.0); other floats may differ by 64 times the error bound the
evaluator carried with them (each step's rounding, in that step's precision, through the
operations after it: an fma that contracts, a math function's last bits).
"""
import importlib.util
import os
import pickle
import subprocess
import sys
import traceback

import numpy as np

import fuzz_ref
from fuzz_gen import generate

ULPS = 64


class Outcome:
    """``kind``: 'ok', 'mismatch', 'error' (simt raised) or 'skipped' (a float went
    non-finite in the evaluator, so nothing is comparable); ``detail``: what differed."""

    def __init__(self, program, kind, detail=""):
        self.program, self.kind, self.detail = program, kind, detail

    def report(self):
        return (f"seed {self.program.seed}: {self.kind}\n{self.detail}\n\n"
                f"{self.program.source()}")


def load_kernel(program, folder):
    """Write the program's source to ``folder`` and import its kernel (simt reads the file)."""
    path = os.path.join(folder, f"fuzz_{program.seed}.py")
    with open(path, "w") as f:
        f.write(program.source())
    spec = importlib.util.spec_from_file_location(f"fuzz_{program.seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.kernel


def differences(name, got, want, mags, exact):
    """Lines describing the elements of ``got`` that ``want`` does not allow."""
    if got.dtype.kind == "f":
        both_nan = np.isnan(got) & np.isnan(want)
        if exact:
            bad = ~((got == want) | both_nan)
        else:
            eps = np.finfo(got.dtype).eps
            scale = np.maximum(mags, eps * np.abs(want.astype(np.float64)))
            with np.errstate(invalid="ignore"):
                err = np.abs(got.astype(np.float64) - want.astype(np.float64))
            bad = ~((got == want) | (err <= ULPS * scale) | both_nan)     # inf == inf
    else:
        bad = got != want
    rows = np.flatnonzero(bad)
    return [f"{name}[{k}]: got {got[k]!r}, want {want[k]!r}" for k in rows[:8]] + (
        [f"{name}: {len(rows)} elements differ"] if len(rows) > 8 else [])


def check(program, device, folder):
    """Run ``program`` on ``device`` (a name or a Device) and compare; returns an Outcome."""
    import simt
    try:
        want, mags, comparable = fuzz_ref.reference(program)
    except Exception:
        return Outcome(program, "error", "the evaluator failed:\n" + traceback.format_exc(limit=4))
    if not comparable:
        return Outcome(program, "skipped")
    args = program.arguments()
    try:
        kernel = load_kernel(program, folder)
        with simt.use_device(device):
            launch(program, kernel, args)
    except Exception:
        return Outcome(program, "error", traceback.format_exc(limit=4))
    lines = []
    for (name, role, _), got in zip(program.params, args):
        if role == "scalar":
            continue
        lines += differences(name, got, want[name], mags.get(name, 0.0),
                             program.exact.get(name, True))
    return Outcome(program, "mismatch" if lines else "ok", "\n".join(lines))


def launch(program, kernel, args):
    """Run the kernel once as ``program.launch_mode`` says: directly, captured on a stream
    into a graph, or as a graph built with add_kernel (the graph forms on device copies of
    the arrays, copied back into ``args`` after)."""
    import simt
    config = (program.blocks, program.block, program.shared_bytes)
    if program.launch_mode == "direct":
        kernel[config](*args)
        simt.synchronize()
        return
    on_device = [simt.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    stream = simt.Stream()
    if program.launch_mode == "capture":
        with stream.capture() as graph:
            kernel[config + (stream,)](*on_device)
    else:
        graph = simt.Graph()
        graph.add_kernel(kernel, program.blocks, program.block, tuple(on_device),
                         shared_bytes=program.shared_bytes)
    graph.instantiate().launch(stream)
    stream.synchronize()
    for host, copy in zip(args, on_device):
        if isinstance(host, np.ndarray):
            host[...] = copy.copy_to_host()


def check_isolated(program, device, folder):
    """``check`` in a child process, so that a kernel that kills its process (a segfault)
    becomes an outcome of kind 'crash' rather than the end of the run."""
    path = os.path.join(folder, f"program_{program.seed}.pickle")
    with open(path, "wb") as f:
        pickle.dump(program, f)
    code = ("import pickle, sys; sys.path.insert(0, sys.argv[1]); import fuzz_check; "
            "o = fuzz_check.check(pickle.load(open(sys.argv[2], 'rb')), sys.argv[3], sys.argv[4]); "
            "print(o.kind); print(o.detail)")
    done = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__), path, str(device),
                           folder], capture_output=True, text=True)
    if done.returncode < 0:
        return Outcome(program, "crash", f"killed by signal {-done.returncode}\n{done.stderr[-2000:]}")
    kind, _, detail = done.stdout.partition("\n")
    return Outcome(program, kind.strip() or "error", detail or done.stderr[-2000:])


def run_seeds(seeds, device, folder, out=None, without=(), isolate=False):
    """Check seeds in order; write each failing program's report to ``out`` (a folder) if
    given. Stops after a kernel that raised (unless ``isolate``: then each ran in its own
    process), as the error may have left the process's device unusable (a sticky CUDA
    error). Returns ({kind: [Outcome]}, the seeds not run)."""
    results = {"ok": [], "mismatch": [], "error": [], "crash": [], "skipped": []}
    seeds = list(seeds)
    for k, seed in enumerate(seeds):
        outcome = (check_isolated if isolate else check)(generate(seed, without), device,
                                                          folder)
        results[outcome.kind].append(outcome)
        if out and outcome.kind in ("mismatch", "error", "crash"):
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, f"seed_{seed}.txt"), "w") as f:
                f.write(outcome.report())
        if outcome.kind == "error" and not isolate:
            return results, seeds[k + 1:]
    return results, []
