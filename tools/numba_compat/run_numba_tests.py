"""Run numba-cuda's own kernel tests (tests/cudapy and tests/doc_examples) through simt
(numba_shim.py makes ``numba.cuda`` simt.cuda) and count the outcomes per file.

    python tools/numba_compat/run_numba_tests.py NUMBA_CUDA_TESTS_DIR OUT.json [FILE ...]

NUMBA_CUDA_TESTS_DIR is numba-cuda's numba_cuda/numba/cuda/tests. Run it with a Python
that has numba (for numba.types) and pytest; SIMT_DEVICE picks the device (cpu here).
Each file runs in its own process under a time limit, so a hang costs one file."""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent.parent / "src"
LIMIT_S = int(os.environ.get("NUMBA_SHIM_FILE_LIMIT", "240"))


def run_file(path, report):
    env = dict(os.environ, NUMBA_SHIM_REPORT=str(report), NUMBA_SHIM_TESTS=str(path.parent.parent),
               PYTHONPATH=os.pathsep.join([str(SRC), str(HERE)]))
    started = time.time()
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "numba_shim",
                               "-p", "no:cacheprovider", "--import-mode=importlib",
                               str(path)], env=env, capture_output=True, text=True,
                              timeout=LIMIT_S, cwd=path.parent)
        tail = proc.stdout.strip().splitlines()[-1:] if proc.stdout else []
    except subprocess.TimeoutExpired:
        tail = [f"timed out after {LIMIT_S} s"]
    return time.time() - started, tail


def main(tests_dir, out, only=()):
    # The test folders without their __init__.py (which import numba-cuda's runner): each
    # file is then a plain module, importing only what its tests use.
    copy = Path(tempfile.mkdtemp(prefix="numba-cuda-tests-"))
    for sub in ("cudapy", "doc_examples", "data"):
        if not (Path(tests_dir) / sub).is_dir():
            continue
        shutil.copytree(Path(tests_dir) / sub, copy / sub,
                        ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    files = sorted(p for sub in ("cudapy", "doc_examples")
                   for p in (copy / sub).glob("test_*.py"))
    if only:
        files = [f for f in files if f.name in only or f.stem in only]
    results = {}
    for path in files:
        with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as tmp:
            report = Path(tmp.name)
        seconds, tail = run_file(path, report)
        lines = [json.loads(line) for line in report.read_text().splitlines()]
        report.unlink()
        counts = collections.Counter(r["outcome"] for r in lines)
        # pytest 9 reports each unittest subTest apart: one test function may count
        # hundreds of times (test_intrinsics' round tests), or once where it fails before
        # its subtests. Per function: failed if any report failed, else passed if any did.
        worst = {}
        for r in lines:
            rank = {"passed": 1, "skipped": 0}.get(r["outcome"], 2)
            worst[r["test"]] = max(worst.get(r["test"], rank), rank)
        functions = collections.Counter({0: "skipped", 1: "passed"}.get(v, "failed")
                                        for v in worst.values())
        if not lines:
            counts["timeout" if "timed out" in " ".join(tail) else "no-result"] += 1
        key = f"{path.parent.name}/{path.name}"
        results[key] = {"counts": dict(counts), "functions": dict(functions),
                        "seconds": round(seconds, 1), "tail": tail,
                        "tests_defined": path.read_text().count("def test_"),
                        "failures": [r for r in lines if r["outcome"] not in
                                     ("passed", "skipped")]}
        print(f"{key:60s} {dict(counts)} {seconds:.0f}s", flush=True)
    Path(out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
