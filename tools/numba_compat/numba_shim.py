"""A pytest plugin that runs numba-cuda's own tests through simt: ``numba.cuda`` becomes
simt.cuda (with numba's real types from an installed numba), and the test helpers
numba-cuda's suite imports (``numba.cuda.testing``, ``numba.cuda.tests.support``) are
small stand-ins over unittest. numba-cuda's internals (its compiler, driver, typing
modules) are deliberately absent: tests of those fail to import, and count as failed.

Used by run_numba_tests.py (``-p numba_shim``); it writes each test's outcome to the
JSON lines file named by NUMBA_SHIM_REPORT."""
import contextlib
import io
import json
import os
import sys
import types as pytypes
import unittest

import numpy as np
import numba
import numba.core.errors
import numba.core.utils
import numba.np.numpy_support
import numba.types

import simt
import simt.cuda as simt_cuda


def _module(name, **attrs):
    module = pytypes.ModuleType(name)
    module.__dict__.update(attrs)
    module.__path__ = []                 # a package: `from numba.cuda.x import y` looks here
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, module)
    return module


class _Config:
    """numba.cuda.config: the settings the tests read (unknown ones read as 0)."""
    ENABLE_CUDASIM = False
    CUDA_MEMORY_MANAGER = "default"
    CUDA_LOW_OCCUPANCY_WARNINGS = 0
    CUDA_WARN_ON_IMPLICIT_COPY = 0

    def __getattr__(self, name):
        if name.isupper():
            return 0
        raise AttributeError(name)


config = _Config()
cuda = _module("numba.cuda", **{k: v for k, v in vars(simt_cuda).items()
                                if not k.startswith("__")})
numba.cuda = cuda
# numba-cuda exports numba's types: signatures such as void(float32[:]) are made of them
for _name in ("void", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
              "uint8", "uint16", "uint32", "uint64", "complex64", "complex128", "boolean",
              "intp", "uintp"):
    setattr(cuda, _name, getattr(numba.types, _name))
for _name in dir(numba.types):       # numba.cuda also exports numba's other type names
    if not _name.startswith("_") and not hasattr(cuda, _name):
        setattr(cuda, _name, getattr(numba.types, _name))
cuda.types = numba.types
sys.modules["numba.cuda.random"] = simt_cuda.random      # from numba.cuda.random import ...
cuda.config = config
cuda.HAS_NUMBA = True
sys.modules["numba.cuda.types"] = numba.types
_module("numba.cuda.core", config=config)
sys.modules["numba.cuda.core.config"] = config
# numba's errors, except that a kernel's typing error is simt's CompileError
_module("numba.cuda.core.errors", **{**vars(numba.core.errors), "__name__":
                                     "numba.cuda.core.errors", "TypingError":
                                     simt.CompileError, "LoweringError": simt.CompileError})
sys.modules["numba.cuda.utils"] = numba.core.utils
_module("numba.cuda.compiler", compile_ptx=simt_cuda.compile_ptx,
        compile_ptx_for_current_device=simt_cuda.compile_ptx_for_current_device)
_module("numba.cuda.np")
sys.modules["numba.cuda.np.numpy_support"] = numba.np.numpy_support
cuda.np.numpy_support = numba.np.numpy_support


class TestCase(unittest.TestCase):
    """numba's TestCase: assertPreciseEqual compares values (NaNs equal), by ``prec``."""

    def assertPreciseEqual(self, first, second, prec="exact", ulps=1, msg=None,
                           ignore_sign_on_zero=False, abs_tol=None):
        rtol = {"exact": 0, "single": 2e-7 * ulps, "double": 4e-16 * ulps}[prec]
        if rtol == 0 and not abs_tol:
            np.testing.assert_array_equal(first, second, err_msg=msg or "")
        else:
            np.testing.assert_allclose(first, second, rtol=rtol, atol=abs_tol or 0,
                                       err_msg=msg or "")


class CUDATestCase(TestCase):
    FLOAT16_RTOL = np.finfo(np.float16).eps


def _skip_if(condition):
    return lambda reason: unittest.skipIf(condition, reason)


def _cc_at_least(major, minor):
    def decorate(fn):
        cc = tuple(simt.get_device().properties.compute_capability)
        return unittest.skipUnless(cc >= (major, minor), f"requires cc >= {major}.{minor}")(fn)
    return decorate


class ForeignArray:
    """An object exporting a device array only through __cuda_array_interface__."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


_module("numba.cuda.testing", unittest=unittest, test_data_dir=os.path.join(
        os.environ.get("NUMBA_SHIM_TESTS", "."), "data"), CUDATestCase=CUDATestCase,
        ForeignArray=ForeignArray,
        skip_on_cudasim=_skip_if(False), skip_unless_cudasim=_skip_if(True),
        skip_on_standalone_numba_cuda=lambda fn: fn,
        skip_unless_conda_cudatoolkit=_skip_if(True), skip_if_external_memmgr=_skip_if(False),
        skip_under_cuda_memcheck=_skip_if(False), skip_without_nvdisasm=_skip_if(True),
        skip_with_nvdisasm=_skip_if(False), skip_on_arm=_skip_if(False),
        skip_on_wsl2=_skip_if(False), skip_if_nvjitlink_missing=_skip_if(True),
        skip_on_nvjitlink_13_1_sm_120=_skip_if(False),
        skip_if_cuda_includes_missing=unittest.skip("no CUDA includes: simt links no C"),
        skip_if_curand_kernel_missing=unittest.skip("no curand: simt links no C"),
        skip_if_cudadevrt_missing=lambda fn: fn,    # grid sync needs no library in simt
        skip_unless_cc_50=_cc_at_least(5, 0), skip_unless_cc_53=_cc_at_least(5, 3),
        skip_unless_cc_60=_cc_at_least(6, 0), skip_unless_cc_75=_cc_at_least(7, 5),
        skip_unless_cc_90=_cc_at_least(9, 0), xfail_unless_cudasim=unittest.expectedFailure,
        cc_X_or_above=lambda major, minor: tuple(
            simt.get_device().properties.compute_capability) >= (major, minor))


@contextlib.contextmanager
def captured_stdout():
    with contextlib.redirect_stdout(io.StringIO()) as out:
        yield out


@contextlib.contextmanager
def override_config(name, value):
    old = getattr(config, name)
    setattr(config, name, value)
    try:
        yield
    finally:
        setattr(config, name, old)


def _skip_unless_cffi(fn):
    try:
        import cffi  # noqa: F401
    except ImportError:
        return unittest.skip("cffi is not installed")(fn)
    return fn


_module("numba.cuda.tests")
# helper modules beside the tests (complex_usecases ...) import from the copied folders
for _sub in ("cudapy", "doc_examples"):
    _module(f"numba.cuda.tests.{_sub}").__path__ = [
        os.path.join(os.environ.get("NUMBA_SHIM_TESTS", "."), _sub)]
_module("numba.cuda.tests.support", TestCase=TestCase, captured_stdout=captured_stdout,
        override_config=override_config, skip_unless_cffi=_skip_unless_cffi,
        MemoryLeakMixin=type("MemoryLeakMixin", (), {}),
        CheckWarningsMixin=type("CheckWarningsMixin", (), {}),
        ignore_internal_warnings=lambda: None,
        linux_only=unittest.skipUnless(sys.platform.startswith("linux"), "linux only"),
        windows_only=unittest.skipUnless(sys.platform.startswith("win"), "windows only"))


def pytest_runtest_logreport(report):
    """One JSON line per test: its file, name and outcome (errors in setup count as failed)."""
    path = os.environ.get("NUMBA_SHIM_REPORT")
    if not path or (report.when != "call" and report.passed):
        return
    if report.when != "call" and report.skipped:
        outcome = "skipped"
    else:
        outcome = report.outcome
    message = ""
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = crash.message if crash is not None else str(report.longrepr)[-300:]
    with open(path, "a") as f:
        f.write(json.dumps({"test": report.nodeid, "outcome": outcome,
                            "message": message.splitlines()[0][:300] if message else ""}) + "\n")


def pytest_collectreport(report):
    """A test file that fails to import (it needs numba-cuda internals) is one line."""
    path = os.environ.get("NUMBA_SHIM_REPORT")
    if path and report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = crash.message if crash is not None else str(report.longrepr).splitlines()[-1]
        with open(path, "a") as f:
            f.write(json.dumps({"test": report.nodeid, "outcome": "collect-error",
                                "message": message.splitlines()[0][:300]}) + "\n")
