"""How much of numba-cuda's own kernel test suite runs with ``from simt import cuda``.

    python tools/numba_port_check.py [--tests PATH] [--out OUT.json] [FILE ...]

Runs numba-cuda's ``tests/cudapy`` and ``tests/doc_examples`` unchanged, ``numba.cuda``
replaced by ``simt.cuda`` (tools/numba_compat/numba_shim.py), one process per file
(tools/numba_compat/run_numba_tests.py), on the device SIMT_DEVICE names (cpu when
unset), and prints the pass rate and the failures by cause. The tests are not part of
simt: PATH is numba-cuda's ``numba_cuda/numba/cuda/tests`` folder (or a checkout of
numba-cuda); without --tests the tool clones NVIDIA/numba-cuda (git, shallow) into
``~/.cache/simt/numba-cuda``. FILE names limit the run (``test_random``).

Run it with a Python that has numba (for ``numba.types``; its own CUDA target is never
used) and pytest: ``pip install numba pytest cffi``. docs/coming-from-numba.md records the
figures and what the causes mean.

Pass rate: tests passed / tests run (passed + failed), counted per pytest report: under
pytest 9 each unittest subTest is one (a test function that fails before its subtests
counts once, one that runs them counts each), so a third rate counts per test function
(failed if any of its reports failed); the files that fail to import (they import
numba-cuda's internals) are listed apart, with the number of test functions they define,
and a second rate counts those as failed."""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "numba_compat"))
import run_numba_tests  # noqa: E402

REPO = "https://github.com/NVIDIA/numba-cuda"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "simt" / "numba-cuda"
INSIDE = Path("numba_cuda/numba/cuda/tests")

# (cause, class, message pattern): the first match names a failure's cause. Classes:
# "numba internals" (the test reads numba's compiler, typing, driver or exact output),
# "not applicable" (by design in simt, or a limit of the measurement), "missing" (simt
# lacks it: work to do).
# (test id pattern, message pattern, cause, class): failures whose message alone does not
# say what they check, looked up first.
TEST_CAUSES = [
    (r"test_array_alignment\.py::.*test_array_alignment_\dd", r"AssertionError: \d+ != \d+",
     "numba's exact PTX, LLVM IR or messages", "numba internals"),
    (r"test_array_alignment\.py::.*test_invalid_aligments", r"alignment",
     "numba's exact PTX, LLVM IR or messages", "numba internals"),
]

CAUSES = [
    ("device arrays read from globals (numba captures them by pointer)", "missing",
     r"\(DeviceNDArray\) cannot be used as a value"),
    ("numba's exact PTX, LLVM IR or messages", "numba internals",
     r"number of dimensions must be a compile-time constant"),
    ("needs ml_dtypes (absent on this machine)", "not applicable",
     r"No module named 'ml_dtypes'"),
    ("imports numba-cuda internals", "numba internals",
     r"No module named 'numba\.cuda\.|cannot import name .* from 'numba\.(cuda|types)|"
     r"module 'numba\.cuda' has no attribute '(core|cudadrv|typing|extending|cudaimpl|"
     r"compiler|dispatcher|descriptor|target|cudadecl|kernels|api|simulator)"),
    ("numba's exact PTX, LLVM IR or messages", "numba internals",
     r"not found in|Regex didn't match|AssertionError: '.*' != '|ld\.global|\.ptx|"
     r"assertIn|does not match|unexpectedly found|DID NOT WARN"),
    ("ctypes pointers and numba's record alignment option", "not applicable",
     r"ctypes|alignment"),
    ("opt=False, debug options and other numba compile options", "not applicable",
     r"cuda\.jit\((opt|debug|link|lto|extensions|cache)=|no equivalent of this numba option"),
    ("C pointer types in signatures", "not applicable",
     r"CPointer|pointer|to a NumPy dtype \(via"),
    ("needs NVIDIA's cuda-python bindings (absent on this machine)", "not applicable",
     r"No module named 'cuda'"),
    ("kernels built from strings with exec (no source to compile)", "not applicable",
     r"source|could not get source|OSError"),
    ("the measurement: helpers imported relatively, subprocesses without the shim, "
     "process pools", "not applicable",
     r"relative import|subprocess|CalledProcess|BrokenProcessPool"),
    ("__cuda_array_interface__ off a GPU", "not applicable",
     r"__cuda_array_interface__|cuda_array_interface|streams of other libraries"),
    ("timed out (per-file limit)", "not applicable", r"timed out"),
    ("numba host APIs simt lacks (CUSource, declare_device, reduce, IPC, specialize, "
     "pickling, compile)", "missing",
     r"has no attribute '(CUSource|declare_device|reduce|Reduce|compile|get_ipc_handle|"
     r"specialize|inspect_asm|gpu_data)'|pickle|compile_ptx\(device=True\)"),
    ("string, bytes and datetime arrays", "missing",
     r"dtype \|S|dtype <U|datetime|record fields hold"),
    ("compile-time arguments of device functions (types, functions)", "missing",
     r"compile-time constant|Static|dtype argument|cannot be used as a value"),
    ("cmath, complex power and missing math functions", "missing",
     r"cmath|math\.\w+ is not|on complex numbers"),
    ("dynamic parallelism / launches in kernels", "missing", r"launch"),
    ("other constructs simt's front end refuses", "missing", r"CompileError"),
    ("other (assertions on results, one to a few tests each)", "missing", r""),
]


def fetch(dest=CACHE):
    """numba-cuda's tests folder, cloned once (git, shallow) into ``dest``."""
    if not (dest / INSIDE).is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "--depth", "1", REPO, str(dest)], check=True)
    return dest / INSIDE


def tests_dir(path):
    path = Path(path)
    return path / INSIDE if (path / INSIDE).is_dir() else path


def cause_of(message, test=""):
    for test_pattern, pattern, cause, kind in TEST_CAUSES:
        if re.search(test_pattern, test or "") and re.search(pattern, message or ""):
            return cause, kind
    for cause, kind, pattern in CAUSES:
        if re.search(pattern, message or ""):
            return cause, kind
    return CAUSES[-1][:2]


def summarize(results):
    """The counts, the two pass rates and the failures by cause, from run_numba_tests'
    per-file results."""
    totals, causes = collections.Counter(), collections.Counter()
    uncollected = {}
    for name, r in results.items():
        counts = r["counts"]
        for outcome in ("passed", "failed", "skipped"):
            totals[outcome] += counts.get(outcome, 0)
        if counts.get("collect-error") or counts.get("no-result") or counts.get("timeout"):
            if not counts.get("passed") and not counts.get("failed"):
                uncollected[name] = r["tests_defined"]
        for f in r["failures"]:
            if f["outcome"] == "failed":
                causes[cause_of(f["message"], f.get("test", ""))] += 1
            else:
                causes[cause_of(f["message"] or f["outcome"])] += r["tests_defined"] or 1
    functions = collections.Counter()
    for r in results.values():
        functions.update(r.get("functions", {}))
    run = totals["passed"] + totals["failed"]
    run_functions = functions["passed"] + functions["failed"]
    return {"passed": totals["passed"], "failed": totals["failed"],
            "skipped": totals["skipped"], "files": len(results),
            "files_not_collected": len(uncollected),
            "tests_in_files_not_collected": sum(uncollected.values()),
            "pass_rate_of_run": totals["passed"] / run if run else 0.0,
            "pass_rate_with_uncollected": totals["passed"] / (run + sum(uncollected.values()))
            if run else 0.0,
            "functions_passed": functions["passed"], "functions_failed": functions["failed"],
            "function_pass_rate": functions["passed"] / run_functions if run_functions else 0.0,
            "causes": [{"cause": c, "class": k, "tests": n}
                       for (c, k), n in causes.most_common()],
            "not_collected": sorted(uncollected)}


def report(summary):
    s = summary
    print(f"\n{s['passed']} passed, {s['failed']} failed, {s['skipped']} skipped "
          f"({s['files']} files): {100 * s['pass_rate_of_run']:.1f}% of the tests run")
    if s.get("functions_passed") is not None and s["functions_passed"] + s["functions_failed"]:
        print(f"per test function (a function with a failed subtest fails): "
              f"{s['functions_passed']} passed, {s['functions_failed']} failed: "
              f"{100 * s['function_pass_rate']:.1f}%")
    print(f"{s['files_not_collected']} files not collected ({s['tests_in_files_not_collected']}"
          f" tests defined): {100 * s['pass_rate_with_uncollected']:.1f}% counting them failed")
    print("\nfailures by cause (tests; a file not collected counts its tests):")
    for c in s["causes"]:
        print(f"  {c['tests']:5d}  {c['class']:16s} {c['cause']}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", help="numba-cuda's tests folder or checkout "
                        "(default: clone NVIDIA/numba-cuda)")
    parser.add_argument("--out", help="write the per-file results and summary as JSON")
    parser.add_argument("--summary-of", metavar="JSON",
                        help="summarize a run written by --out again (no tests run)")
    parser.add_argument("files", nargs="*", help="only these test files (test_random ...)")
    args = parser.parse_args(argv)
    if args.summary_of:
        summary = summarize(json.loads(Path(args.summary_of).read_text())["files"])
        report(summary)
        return summary
    try:
        import numba  # noqa: F401
        import pytest  # noqa: F401
    except ImportError as exc:
        sys.exit(f"numba_port_check needs numba and pytest in this Python ({exc.name} is "
                 f"missing): pip install numba pytest cffi")
    os.environ.setdefault("SIMT_DEVICE", "cpu")
    folder = tests_dir(args.tests) if args.tests else fetch()
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        raw = Path(tmp.name)
    run_numba_tests.main(str(folder), str(raw), args.files)
    results = json.loads(raw.read_text())
    raw.unlink()
    summary = summarize(results)
    report(summary)
    if args.out:
        Path(args.out).write_text(json.dumps({"device": os.environ["SIMT_DEVICE"],
                                              "summary": summary, "files": results},
                                             indent=1))
    return summary


if __name__ == "__main__":
    main()
