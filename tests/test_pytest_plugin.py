"""simt.testing, the pytest plugin users get with simt: --simt-device, the simt_device
fixture, the requires_gpu marker (run through pytest's own pytester)."""
import os

import pytest

import simt

pytest_plugins = ["pytester"]

# The sample project of docs/testing.md: what a user's test file looks like.
SAMPLE = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "testing-sample",
                      "test_kernels.py")
with open(SAMPLE) as sample:
    USER_TESTS = sample.read()


@pytest.fixture(autouse=True)
def simt_importable(monkeypatch):
    """The inner pytest runs in a temporary folder: make this tree's simt importable there."""
    src = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, "src"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))


def plugin():
    """``-p simt.testing`` where the plugin is not installed (PYTHONPATH=src); nothing
    where pip installed simt, whose pytest11 entry point loads it already."""
    from importlib.metadata import entry_points
    installed = any(ep.value == "simt.testing" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "simt.testing"]


def has_gpu():
    return any(device.kind == "cuda" for device in simt.devices())


def test_default_runs_on_the_cpu_and_skips_gpu_tests(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess(*plugin(), "-v")
    result.stdout.fnmatch_lines(["*test_twice?cpu? PASSED*", "*test_gpu_only?cpu? SKIPPED*"])
    result.assert_outcomes(passed=1 + has_gpu(), skipped=2 - has_gpu())


def test_several_devices_and_unavailable_ones(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess(*plugin(), "-v",
                                          "--simt-device", "cpu,cuda:7")
    result.stdout.fnmatch_lines(["*test_twice?cpu? PASSED*", "*test_twice?cuda_7? SKIPPED*"])


def test_all_means_every_device_here(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess(*plugin(), "-v", "--simt-device", "all")
    for device in simt.devices():
        result.stdout.fnmatch_lines([f"*test_twice?{device.name.replace(':', '_')}? PASSED*"])


def test_poison_is_overwritten_only_by_a_kernel():
    from simt.testing import poison, random_array
    assert np_all_nan(poison(4, "float32"))
    assert (poison(3, "int16").view("uint8") == 0x5A).all()
    import numpy as np
    values = random_array(np.random.default_rng(0), 1000, "int8")
    assert values.all() and (abs(values.astype(int)) <= 100).all()


def np_all_nan(a):
    import numpy as np
    return bool(np.isnan(a).all())
