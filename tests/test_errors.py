"""Error reporting: CompileError, IllegalAddressError, InvalidConfiguration (API.md 8)."""

import numpy as np
import pytest

import simt
from conftest import poison, random_array


def line_of(kernel, offset):
    """The file line ``offset`` lines below the kernel's ``def``."""
    return kernel.pyfunc.__code__.co_firstlineno + offset


@simt.kernel
def dict_literal(a):
    d = {1: 2}
    a[0] = d[1]


@simt.kernel
def try_statement(a):
    try:
        a[0] = 1
    except Exception:
        pass


@simt.kernel
def undefined_name(a):
    a[0] = undefined_thing      # noqa: F821


@simt.kernel
def bad_types(a):
    a[0] = a[0] + "text"


@simt.kernel
def range_of_float(a):
    for k in range(a[0]):
        a[0] = k


@pytest.fixture
def checked(device):
    """The device under test with bounds checks on (the CPU's default; off by default on GPUs)."""
    with simt.use_device(device.name, boundscheck=True) as current:
        yield current


@pytest.mark.parametrize("kernel, offset, construct", [
    (dict_literal, 2, "dict"), (try_statement, 2, "try"),
    (undefined_name, 2, "undefined_thing"), (bad_types, 2, "str"), (range_of_float, 2, "range")],
    ids=lambda v: getattr(v, "__name__", None))
def test_compile_error_names_file_line_construct(device, kernel, offset, construct):
    with pytest.raises(simt.CompileError) as info:
        kernel[1, 1](np.ones(1))
    message = str(info.value)
    assert f"test_errors.py:{line_of(kernel, offset)}" in message
    assert construct in message
    assert kernel.__name__ in message


def test_compile_error_gives_a_hint(device):
    with pytest.raises(simt.CompileError, match="simt.local.array"):
        dict_literal[1, 1](np.ones(1))


@simt.kernel
def shifted_store(a, shift):
    i = simt.grid(1)
    a[i + shift] = 1.0


@simt.kernel
def row_end_store(a):
    r = simt.threadIdx.x
    if r < a.shape[0]:
        a[r, a.shape[1]] = 1.0


@pytest.mark.parametrize("shift, index", [(8, 10), (-3, -3)], ids=["overflow", "negative"])
def test_illegal_address_1d(checked, shift, index):
    with pytest.raises(simt.IllegalAddressError) as info:
        shifted_store[1, 4](np.zeros(10), shift)
        simt.synchronize()
    message = str(info.value)
    assert f"index {index}" in message and "'a'" in message and "size 10" in message
    assert "block (0, 0, 0)" in message and "thread (" in message
    assert f"test_errors.py:{line_of(shifted_store, 3)}" in message


def test_illegal_address_2d_checks_each_dimension(checked):
    with pytest.raises(simt.IllegalAddressError) as info:
        row_end_store[1, 2](np.zeros((3, 4)))       # row r+1 exists: still out of bounds
        simt.synchronize()
    message = str(info.value)
    assert "index 4" in message and "dimension 1" in message and "'a'" in message
    assert f"test_errors.py:{line_of(row_end_store, 4)}" in message


@simt.kernel
def reads_dynamic(out):
    buf = simt.shared.dynamic(np.float32)
    buf[simt.threadIdx.x] = 1.0
    simt.syncthreads()
    out[simt.threadIdx.x] = buf[simt.threadIdx.x]


def test_dynamic_shared_is_bounded_by_shared_bytes(checked):
    with pytest.raises(simt.IllegalAddressError, match="buf"):
        reads_dynamic[1, 8, 7 * 4](poison(8, np.float32))
        simt.synchronize()


def test_device_stays_usable_after_an_error(checked, rng):
    with pytest.raises(simt.IllegalAddressError):
        shifted_store[1, 4](np.zeros(10), 100)
        simt.synchronize()
    a = np.zeros(10)
    shifted_store[1, 4](a, 2)
    np.testing.assert_array_equal(a, [0, 0, 1, 1, 1, 1, 0, 0, 0, 0])


@simt.kernel
def copy(a, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[i] = a[i]


def test_boundscheck_off_runs_in_bounds_kernels(rng):
    a = random_array(rng, 50, np.float32)
    out = poison(50, np.float32)
    with simt.use_device("cpu", boundscheck=False):
        copy[2, 32](a, out)
    np.testing.assert_array_equal(out, a)
    simt.set_device("cpu", boundscheck=False)
    try:
        out = poison(50, np.float32)
        copy[2, 32](a, out)
        np.testing.assert_array_equal(out, a)
    finally:
        simt.set_device("cpu")


@pytest.mark.parametrize("blocks, threads, shared, words", [
    (1, 1025, 0, "1025 threads"), (1, (1, 1, 65), 0, "dimension z is 65"),
    (1, 32, 1 << 24, "16777216 bytes of shared memory")], ids=["threads", "block_z", "shared"])
def test_invalid_configuration(device, blocks, threads, shared, words):
    out = poison(4, np.float32)
    with pytest.raises(simt.InvalidConfiguration, match=words):
        copy[blocks, threads, shared](np.ones(4, np.float32), out)
    np.testing.assert_array_equal(out, poison(4, np.float32))    # nothing ran
    copy[1, 4](np.ones(4, np.float32), out)
    np.testing.assert_array_equal(out, np.ones(4))


def test_a_bad_configuration_is_not_chained_to_an_internal_error(device):
    """`k[1, 32, stream]` (the stream where the shared bytes go) raised the clear error
    "during handling of" an internal KeyError from the launch cache, so users read both."""
    with pytest.raises(simt.InvalidConfiguration, match="dynamic shared memory") as info:
        copy[1, 32, simt.Stream()](np.ones(4, np.float32), poison(4, np.float32))
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_a_compile_error_is_shown_as_compile_error():
    """Issue 12: compile errors surfaced as 'CompileFailure', a class name users never
    meet in the docs or in simt's namespace."""
    import traceback

    @simt.kernel
    def bad(a):
        with open("x"):
            a[0] = 1
    with pytest.raises(simt.CompileError) as info:
        bad[1, 1](np.zeros(1))
    assert type(info.value) is simt.CompileError
    shown = "".join(traceback.format_exception_only(info.type, info.value))
    assert shown.startswith("simt.errors.CompileError: ") and "CompileFailure" not in shown
