"""Shared fixtures and helpers for simt's tests.

``--device cpu`` (default; repeat the option to run on several: ``--device cpu
--device cuda:0``) parametrizes every test that takes the ``device`` fixture,
and the device is part of the test id (``test_x[cpu]``, ``test_x[cuda_0]``).
Helpers (``poison``, ``random_array``) are imported from here: ``from conftest import poison``.
"""

import atexit
import os
import shutil
import tempfile
import zlib

# Compiled kernels go to a throwaway cache, never the user's, removed when the run ends, and
# the IR verifier runs after every IR pass: in the environment, which subprocesses inherit,
# and in simt's settings, which were read already when simt's pytest plugin (simt.testing,
# installed as a pytest11 entry point) imported simt before this file ran.
os.environ["SIMT_CACHE_DIR"] = tempfile.mkdtemp(prefix="simt-test-cache-")
atexit.register(shutil.rmtree, os.environ["SIMT_CACHE_DIR"], ignore_errors=True)
os.environ["SIMT_VERIFY_IR"] = "1"

import numpy as np   # noqa: E402
import pytest        # noqa: E402

from simt.config import config   # noqa: E402

config.cache_dir = os.environ["SIMT_CACHE_DIR"]
config.verify_ir = True

from simt.runtime.devices import use_device   # noqa: E402
from simt.testing import poison, random_array   # noqa: E402,F401  (the tests import them from here)


def pytest_addoption(parser):
    parser.addoption("--device", action="append", default=None,
                     help="device to run device tests on: cpu, sim, cuda:0 ... (repeatable; default cpu)")


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        specs = metafunc.config.getoption("--device") or ["cpu"]
        metafunc.parametrize("device", specs, indirect=True,
                             ids=[spec.replace(":", "_") for spec in specs])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """With --device sim, a test stopped by the sim device's NotSupportedError (a feature it
    does not have: textures, graphs, pools, vector types...) is skipped, the error's
    message its reason; everything else fails as usual."""
    outcome = yield
    spec = getattr(getattr(item, "callspec", None), "params", {}).get("device")
    if spec == "sim" and outcome.excinfo is not None:
        from simt.errors import NotSupportedError
        error = outcome.excinfo[1]
        if isinstance(error, NotSupportedError) and "sim" in str(error):
            outcome.force_exception(pytest.skip.Exception(f"sim: {error}"))


@pytest.fixture
def device(request):
    """The device under test, made current for the test; yields the Device."""
    with use_device(request.param) as current:
        yield current


@pytest.fixture
def rng(request):
    """A NumPy Generator seeded from the test's id: reproducible, different per test."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def marked_line(path, marker):
    """The line of file ``path`` whose text ends with the comment ``# <- marker`` (checked
    mode's reports name lines; the tests mark them in their kernels' source)."""
    with open(path) as f:
        hits = [n for n, text in enumerate(f, 1) if text.rstrip().endswith(f"# <- {marker}")]
    assert len(hits) == 1, marker
    return hits[0]

