"""Module-level symbols on the host side (API.md section 11): simt.Managed (__managed__),
read and written by kernels and by the host in place, and device_array() / nbytes of
Global, Constant and Managed symbols (cudaGetSymbolAddress)."""
import numpy as np
import pytest

import simt
from conftest import poison, random_array

SCALE = simt.Managed((4, 8), np.float32)
COUNTS = simt.Global(16, np.int64)
TABLE = simt.Constant(np.arange(1, 17, dtype=np.float64))
FLAGS = simt.Managed(3, np.int32)


@simt.kernel
def scale_rows(x, out):
    r, c = simt.grid(2)
    if r < 4 and c < 8:
        out[r, c] = x[r, c] * SCALE[r, c]
        SCALE[r, c] = SCALE[r, c] + 1


def test_managed_read_and_written_by_host_and_kernels(device, rng):
    start = random_array(rng, (4, 8), np.float32)
    SCALE[:] = start                                # the host writes it in place
    x = random_array(rng, (4, 8), np.float32)
    out = poison((4, 8), np.float32)
    scale_rows[(1, 1), (4, 8)](x, out)
    simt.synchronize()
    np.testing.assert_array_equal(out, x * start)
    np.testing.assert_array_equal(np.asarray(SCALE), start + 1)    # the kernel's writes
    assert SCALE[2, 3] == start[2, 3] + 1
    np.testing.assert_array_equal(SCALE.copy_to_host(), start + 1)
    view = np.asarray(SCALE)
    view[0] = -5                                    # through a NumPy view of it
    out = poison((4, 8), np.float32)
    scale_rows[(1, 1), (4, 8)](x, out)
    simt.synchronize()
    np.testing.assert_array_equal(out[0], -5 * x[0])
    np.testing.assert_array_equal(out[1:], x[1:] * (start[1:] + 1))


def test_managed_shape_and_sizes(device):
    assert SCALE.shape == (4, 8) and SCALE.dtype == np.float32 and len(SCALE) == 4
    assert SCALE.nbytes == 4 * 8 * 4 and SCALE.size == 32 and SCALE.ndim == 2
    assert TABLE.nbytes == 16 * 8 and COUNTS.nbytes == 16 * 8
    assert simt.pointer_attributes(SCALE).type == "managed"


@simt.kernel
def count_into(values):
    i = simt.grid(1)
    if i < values.shape[0]:
        simt.atomic.add(COUNTS, values[i], 1)


@simt.kernel
def read_table(idx, out):
    i = simt.grid(1)
    if i < idx.shape[0]:
        out[i] = TABLE[idx[i]]


def test_global_device_array_is_the_symbol(device, rng):
    view = COUNTS.device_array()
    assert view.shape == (16,) and view.dtype == np.int64 and view.nbytes == COUNTS.nbytes
    start = random_array(rng, 16, np.int64)
    view.copy_from(start)                           # written through the address
    values = rng.integers(0, 16, 500)
    count_into[2, 256](values)
    expected = start + np.bincount(values, minlength=16)
    np.testing.assert_array_equal(view.copy_to_host(), expected)   # the kernel's writes
    np.testing.assert_array_equal(COUNTS.copy_to_host(), expected)


@simt.kernel
def add_through(a, n):
    i = simt.grid(1)
    if i < n:
        a[i] += COUNTS[i]


def test_global_device_array_as_a_kernel_argument(device, rng):
    start = random_array(rng, 16, np.int64)
    COUNTS.copy_from(start)
    add_through[1, 16](COUNTS.device_array(), 16)   # the symbol, reached by pointer too
    np.testing.assert_array_equal(COUNTS.copy_to_host(), 2 * start)


def test_managed_device_array(device, rng):
    values = random_array(rng, 3, np.int32)
    FLAGS.device_array().copy_from(values)
    np.testing.assert_array_equal(np.asarray(FLAGS), values)
    assert FLAGS.device_array().device == device


def test_constant_device_array(device, rng):
    idx = rng.integers(0, 16, 40).astype(np.int32)
    if device.kind == "cuda":
        with pytest.raises(simt.NotSupportedError, match="Constant.*copy_from"):
            TABLE.device_array()
        return
    view = TABLE.device_array()
    assert view.readonly
    np.testing.assert_array_equal(view.copy_to_host(), np.arange(1, 17))
    new = random_array(rng, 16, np.float64)
    try:
        view.copy_from(new)                         # cudaMemcpy to the symbol's address
        out = poison(40, np.float64)
        read_table[1, 64](idx, out)
        np.testing.assert_array_equal(out, new[idx])
    finally:
        TABLE.copy_from(np.arange(1, 17, dtype=np.float64))


def test_a_symbol_view_is_not_freed(device):
    with pytest.raises(ValueError, match="view of another array's memory"):
        COUNTS.device_array().free()


def test_symbol_views_in_checked_mode(rng):
    """A symbol's view passed as an argument, with checked mode watching (cpu)."""
    with simt.use_device("cpu", checks=True):
        start = random_array(rng, 16, np.int64)
        COUNTS.copy_from(start)
        add_through[1, 16](COUNTS.device_array(), 16)
        simt.synchronize()
        np.testing.assert_array_equal(COUNTS.copy_to_host(), 2 * start)


def test_copy_to_host_reads_the_current_devices_storage(rng):
    """A Global held by another device too (here a stand-in GPU placement) is read from the
    current device: on the cpu device its own storage, which the other device's contents
    must not overwrite (the H200 suite, 2026-12-02: the GPU's copy was read into it)."""
    class Elsewhere:
        def read(self, host, stream=None):
            host[...] = -7

        def write(self, host, stream=None):
            pass

    start = random_array(rng, 16, np.int64)
    COUNTS.placements["cuda:99"] = Elsewhere()
    try:
        with simt.use_device("cpu"):
            COUNTS.copy_from(start)
            add_through[1, 16](COUNTS.device_array(), 16)
            simt.synchronize()
            np.testing.assert_array_equal(COUNTS.copy_to_host(), 2 * start)
            np.testing.assert_array_equal(COUNTS.copy_to_host(), 2 * start)
    finally:
        del COUNTS.placements["cuda:99"]
