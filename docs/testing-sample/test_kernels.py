"""A user's kernel tests, run by the simt pytest plugin on every device asked for:

    pytest                              # the CPU device: any machine, any CI
    pytest --simt-device cpu,cuda:0     # both, on a GPU machine
    pytest --simt-device all            # every device this machine has
"""
import numpy as np
import pytest

import simt
from simt.testing import poison, random_array


@simt.kernel
def twice(a, out):
    i = simt.grid(1)
    if i < out.size:
        out[i] = 2 * a[i]


def test_twice(simt_device):
    rng = np.random.default_rng(1)
    a = random_array(rng, 100, np.float32)      # never all zero
    out = poison(100, np.float32)               # NaN: a skipped element shows
    twice[4, 32](a, out)
    np.testing.assert_array_equal(out, 2 * a)
    assert simt.get_device() == simt_device


@pytest.mark.requires_gpu
def test_gpu_only(simt_device):
    assert simt_device.kind == "cuda"           # skipped on the CPU device


@pytest.mark.requires_gpu
def test_gpu_only_without_the_fixture():
    assert any(d.kind == "cuda" for d in simt.devices())   # skipped without a GPU
