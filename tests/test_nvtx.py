"""NVTX ranges around launches and copies (SIMT_NVTX / config.nvtx), checked with a
stand-in for NVIDIA's nvtx package that records the ranges opened and closed."""
import contextlib
import sys
import types

import numpy as np
import pytest

import simt
from simt.config import config
from simt.runtime import nvtx
from conftest import poison, random_array


@simt.kernel
def double(a, out):
    i = simt.grid(1)
    if i < out.size:
        out[i] = 2 * a[i]


@pytest.fixture
def ranges(monkeypatch):
    """Turn NVTX on with a recording stand-in package; yields the list of ranges."""
    seen = []

    @contextlib.contextmanager
    def annotate(message=None, color=None, domain=None):
        seen.append(("push", message, domain))
        yield
        seen.append(("pop", message, domain))
    monkeypatch.setitem(sys.modules, "nvtx", types.SimpleNamespace(annotate=annotate))
    monkeypatch.setattr(nvtx, "_annotate", None)
    monkeypatch.setattr(config, "nvtx", True)
    return seen


def test_launches_and_copies_are_ranges(ranges, device, rng):
    a = random_array(rng, 64, np.float32)
    d, out = simt.to_device(a), simt.to_device(poison(64, np.float32))
    double[2, 32](d, out)
    got = out.copy_to_host()
    np.testing.assert_array_equal(got, 2 * a)
    messages = [m for kind, m, domain in ranges if kind == "push"]
    assert all(domain == "simt" for _, _, domain in ranges)
    assert "double[2, 32]" in messages
    assert f"copy_to_host {64 * 4} B" in messages
    assert sum(1 for m in messages if m.startswith("copy_from")) == 2      # to_device twice
    pushes = [m for k, m, _ in ranges if k == "push"]
    pops = [m for k, m, _ in ranges if k == "pop"]
    assert sorted(pushes) == sorted(pops)                                  # every range closed


def test_off_by_default_costs_nothing(monkeypatch, device, rng):
    monkeypatch.setattr(config, "nvtx", False)
    monkeypatch.setitem(sys.modules, "nvtx", None)          # importing it would fail
    monkeypatch.setattr(nvtx, "_annotate", None)
    a = random_array(rng, 32, np.float32)
    out = simt.to_device(poison(32, np.float32))
    double[1, 32](simt.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), 2 * a)
    assert double[1, 32] is double[1, 32]                   # the plain launch function


def test_asking_without_the_package_says_what_to_install(monkeypatch):
    monkeypatch.setattr(config, "nvtx", True)
    monkeypatch.setitem(sys.modules, "nvtx", None)
    monkeypatch.setattr(nvtx, "_annotate", None)
    with pytest.raises(simt.NotSupportedError, match="pip install nvtx"):
        double[1, 32]
