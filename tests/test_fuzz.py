"""The differential fuzzer (tools/fuzz.py) on a fixed seed set, and checks of the fuzzer itself.

Each seed is one generated kernel run on the device under test and compared with the NumPy
evaluator (docs/fuzzing.md). Long runs: ``python tools/fuzz.py --count 10000 --device cuda:0``.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "tools"))

import fuzz_ref                       # noqa: E402
from fuzz_check import check          # noqa: E402
from fuzz_gen import generate         # noqa: E402
from fuzz import KNOWN_BUGS           # noqa: E402  (drop a feature there when its bug is fixed)

CI_SEEDS = range(60)


@pytest.mark.parametrize("seed", CI_SEEDS)
def test_generated_kernel_matches_numpy(device, seed, tmp_path):
    outcome = check(generate(seed, KNOWN_BUGS), device, str(tmp_path))
    assert outcome.kind in ("ok", "skipped"), outcome.report()


def test_same_seed_same_kernel():
    first, again = generate(7), generate(7)
    assert first.source() == again.source()
    assert all((x == y).all() if hasattr(x, "all") else x == y
               for x, y in zip(first.arguments(), again.arguments()))
    assert generate(8).source() != first.source()


def test_fixed_seeds_cover_every_feature():
    text = "".join(generate(seed, KNOWN_BUGS).source() for seed in CI_SEEDS)
    for construct in ("syncthreads()", "syncthreads_", "shfl_sync", "shfl_up_sync",
                      "shfl_down_sync", "shfl_xor_sync", "ballot_sync", "any_sync", "all_sync",
                      "match_any_sync", "match_all_sync", "activemask", "reduce_", "atomic.",
                      "atomic.cas", "atomic.inc", "simt.shared.array", "simt.shared.dynamic",
                      "simt.local.array", "@simt.device", "while ", "for ", "elif ", "break",
                      "continue", "return", " and ", "+=", "//", "<<", "np.uint64", "np.int8",
                      "np.float32", "np.float16", "math.", "threadIdx.y", "laneid()",
                      # fuzz_more.py's kinds (issue 33)
                      "simt.math.ffs(m", "_sync(m", "scope=", "order=", "atomic.load(",
                      "atomic.store(", "float2bfloat16", "float8_e4m3(", "float8_e5m2(",
                      "make_float2", "make_double2", "make_int2", "['f", "].f"):
        assert construct in text, construct
    modes = {generate(seed, KNOWN_BUGS).launch_mode for seed in CI_SEEDS}
    assert modes == {"direct", "capture", "graph"}


def test_a_wrong_evaluator_is_caught(device, tmp_path, monkeypatch):
    # the checker must notice when the two sides disagree: make the evaluator's >> wrong
    monkeypatch.setitem(fuzz_ref.BIN, ">>", lambda x, y: (x >> y) ^ 1)
    kinds = [check(generate(seed, KNOWN_BUGS), device, str(tmp_path)).kind
             for seed in range(12)]
    assert "mismatch" in kinds


def test_reducer_keeps_the_failure_and_shrinks(device, tmp_path, monkeypatch):
    from fuzz_reduce import reduce
    monkeypatch.setitem(fuzz_ref.BIN, ">>", lambda x, y: (x >> y) ^ 1)
    failing = next(p for p in (generate(seed, KNOWN_BUGS) for seed in range(12))
                   if check(p, device, str(tmp_path)).kind == "mismatch")
    small, _ = reduce(failing, device, str(tmp_path), budget=25)
    assert check(small, device, str(tmp_path)).kind == "mismatch"
    assert len(small.source()) < len(failing.source())


@pytest.mark.parametrize("seed", range(0, 60, 3))
def test_generated_kernel_makes_ptx(seed, tmp_path):
    # the CUDA backend's side of the fixed seeds, on machines without a GPU
    from fuzz_check import load_kernel
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions
    from simt.runtime.launch import arg_types
    program = generate(seed, KNOWN_BUGS)
    kernel = load_kernel(program, str(tmp_path))
    typed = kernel.typed_ir(arg_types(kernel, program.arguments()))   # records too
    assert ".entry" in compile_kernel(typed, CompileOptions(), "sm_90").ptx


def test_isolated_check_agrees(device, tmp_path):
    from fuzz_check import check_isolated
    program = generate(3, KNOWN_BUGS)
    spec = device.name
    isolated = check_isolated(program, spec, str(tmp_path))
    assert isolated.kind == check(program, device, str(tmp_path)).kind
