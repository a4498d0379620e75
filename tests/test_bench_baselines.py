"""bench/run_cpu_baselines.py's baselines give NumPy's answers on small sizes: the
idiomatic C+OpenMP versions (bench/openmp/idiomatic.c) and numba's prange versions
(bench/numba_cpu.py, skipped where numba does not import), outputs poisoned first."""
import importlib.util
import os
import shutil
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(__file__), os.pardir, "bench")
sys.path.insert(0, BENCH)

from conftest import poison                    # noqa: E402
from test_bench_workloads import SMALL         # noqa: E402
from workloads import all_cases                # noqa: E402


@pytest.fixture(scope="module")
def baselines():
    saved = dict(os.environ)            # run_cpu sets thread counts and a cache folder
    try:
        spec = importlib.util.spec_from_file_location(
            "run_cpu_baselines", os.path.join(BENCH, "run_cpu_baselines.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return module


def inputs(case):
    size = dict(SMALL[case.workload], kind="cpu", sms=4)
    h = case.make(size, np.random.default_rng(11))
    for name in case.outputs:
        h[name] = np.zeros_like(h[name]) if name in case.zero else poison(h[name].shape,
                                                                          h[name].dtype)
    return h, size


def test_every_case_has_an_idiomatic_version_or_an_idiomatic_twin(baselines):
    names = {c.name for c in all_cases()}
    assert set(baselines.IDIOMATIC) <= names
    # the cases left out are those whose block twin is already a loop over rows
    assert names - set(baselines.IDIOMATIC) <= {"spmv", "julia", "raytrace"}


@pytest.fixture(scope="module")
def idiomatic(baselines, tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    return baselines.build_idiomatic(str(tmp_path_factory.mktemp("omp") / "idiomatic.so"))


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c.name)
def test_idiomatic_c_matches_numpy(case, baselines, idiomatic):
    if case.name not in baselines.IDIOMATIC:
        pytest.skip(f"{case.name}: its block twin is already row loops")
    lib = idiomatic
    h, size = inputs(case)
    expected = case.reference(h, size)
    fn = getattr(lib, baselines.IDIOMATIC[case.name])
    from common import c_args
    fn(*c_args(case, h, size))
    assert case.ok({k: h[k] for k in case.outputs}, expected)


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c.name)
def test_numba_matches_numpy(case, baselines):
    nb, why = baselines.load_numba(2)
    if nb is None:
        pytest.skip(why)
    h, size = inputs(case)
    expected = case.reference(h, size)
    nb.twin(case.name)(h, size)
    assert case.ok({k: h[k] for k in case.outputs}, expected)


@pytest.fixture(scope="module")
def probe():
    saved = dict(os.environ)
    try:
        spec = importlib.util.spec_from_file_location(
            "cpu_shaped_probe", os.path.join(BENCH, "cpu_shaped_probe.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return module


@pytest.mark.parametrize("name", ["reduction_tree", "histogram_shared", "scan"])
def test_cpu_shaped_simt_kernels_match_numpy(name, probe):
    import simt
    previous = simt.get_device()
    simt.set_device("cpu", boundscheck=True)
    try:
        case = [c for c in all_cases() if c.name == name][0]
        h, size = inputs(case)
        h["part"] = np.zeros(probe.PARTS + 1, np.int32)       # scan's chunk totals
        if name == "reduction_tree":                           # one partial sum a block
            h["partial"], h["blocks"] = poison((probe.PARTS,), np.float32), probe.PARTS
        d = {k: (simt.to_device(v) if isinstance(v, np.ndarray) else v) for k, v in h.items()}
        run = {"reduction_tree": probe.reduction_run, "histogram_shared": probe.histogram_run,
               "scan": probe.scan_run}[name]
        run(d)
        got = {k: d[k].copy_to_host() for k in case.outputs}
    finally:
        simt.set_device(previous)
    assert case.ok(got, case.reference(h, size))
