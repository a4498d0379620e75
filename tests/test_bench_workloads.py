"""The benchmark workloads (bench/workloads/) give NumPy's answers on small sizes,
so the figures in bench/results/ come from kernels that are right."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))

import simt                              # noqa: E402
from conftest import poison              # noqa: E402
from workloads import all_cases          # noqa: E402

SMALL = {"saxpy": {"n": 5000}, "reduction": {"n": 100000, "blocks": 8},
         "transpose": {"n": 128}, "matmul": {"n": 64}, "histogram": {"n": 100000, "blocks": 8},
         "scan": {"n": 1 << 20}, "stencil": {"n": 100}, "nbody": {"n": 512},
         "spmv": {"n": 1000}, "julia": {"n": 256}, "raytrace": {"n": 256}}


# Sizes too large for the sim device's speed (Python, tens of thousands of threads/s).
TOO_LARGE_FOR_SIM = {"scan", "julia", "raytrace", "nbody", "reduction", "histogram"}


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c.name)
def test_workload_matches_numpy(case, device):
    if device.kind == "sim" and case.workload in TOO_LARGE_FOR_SIM:
        pytest.skip(f"{case.workload} at these sizes takes minutes on the sim device")
    size = dict(SMALL[case.workload], kind="cpu", sms=4, per_sm=2)
    h = case.make(size, np.random.default_rng(5))
    for name in case.outputs:
        h[name] = np.zeros_like(h[name]) if name in case.zero else poison(h[name].shape,
                                                                          h[name].dtype)
    d = {k: (simt.to_device(v) if isinstance(v, np.ndarray) else v) for k, v in h.items()}
    case.launch(d, size)
    got = {k: d[k].copy_to_host() for k in case.outputs}
    assert case.ok(got, case.reference(h, size))
