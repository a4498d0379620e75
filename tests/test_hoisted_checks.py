"""Bounds checks hoisted out of the thread loops (backends/cpu/hoist.py): results stay
right, and every out-of-bounds access is still reported at its thread and line, whether
the block's range check passes or not. On other devices the same kernels test plain
boundscheck."""
import re

import numpy as np
import pytest

import simt
from conftest import poison

B = 128


@pytest.fixture
def checked(device):
    with simt.use_device(device.name, boundscheck=True) as current:
        yield current


def line_of(kernel, offset):
    return kernel.pyfunc.__code__.co_firstlineno + offset


@simt.kernel
def block_scan(x, y, sums, slack):
    s = simt.shared.array(B, np.int32)
    tid = simt.threadIdx.x
    i = simt.blockIdx.x * B + tid
    s[tid] = x[i]
    simt.syncthreads()
    off = 1
    while off < B:
        t = np.int32(0)
        if tid >= off - slack:              # slack 0: right; 1: one thread reads s[-1]
            t = s[tid - off]
        simt.syncthreads()
        s[tid] += t
        simt.syncthreads()
        off *= 2
    y[i] = s[tid]
    if tid == B - 1:
        sums[simt.blockIdx.x] = s[tid]


def test_block_scan_with_checks(checked, rng):
    blocks = 6
    x = rng.integers(-100, 100, blocks * B).astype(np.int32)
    y, sums = poison(x.shape, np.int32), poison(blocks, np.int32)
    block_scan[blocks, B](x, y, sums, np.int32(0))
    expected = np.cumsum(x.reshape(blocks, B), axis=1, dtype=np.int32)
    np.testing.assert_array_equal(y.reshape(blocks, B), expected)
    np.testing.assert_array_equal(sums, expected[:, -1])


def test_block_scan_fault_names_thread_and_line(checked, rng):
    x = rng.integers(-100, 100, 2 * B).astype(np.int32)
    with pytest.raises(simt.IllegalAddressError) as info:
        block_scan[2, B](x, np.empty_like(x), np.empty(2, np.int32), np.int32(1))
        simt.synchronize()
    message = str(info.value)
    assert "index -1" in message and "'s'" in message, message
    assert "thread (0, 0, 0)" in message, message
    assert f"test_hoisted_checks.py:{line_of(block_scan, 11)}" in message, message


@simt.kernel
def guarded_double(x, y, n):
    i = simt.grid(1)
    if i < n:
        y[i] = 2.0 * x[i]


def test_guarded_tail(checked, rng):
    n = 1000
    x = rng.standard_normal(n)
    y = poison(n, np.float64)
    guarded_double[(n + 255) // 256, 256](x, y, n)
    np.testing.assert_array_equal(y, 2.0 * x)


def test_guard_past_the_array_faults_at_a_thread_past_it(checked, rng):
    """Threads 300-399 of 512 are past the arrays; the CPU reports the first of them, a GPU
    whichever faults first."""
    x = rng.standard_normal(300)
    with pytest.raises(simt.IllegalAddressError) as info:
        guarded_double[2, 256](x, np.empty(300), 400)      # n says 400: threads 300-399
        simt.synchronize()
    message = str(info.value)
    index = int(re.search(r"index (\d+)", message).group(1))
    thread = int(re.search(r"block \(1, 0, 0\), thread \((\d+), 0, 0\)", message).group(1))
    assert 300 <= index < 400 and index == 256 + thread and "size 300" in message, message
    assert f"test_hoisted_checks.py:{line_of(guarded_double, 4)}" in message, message
    if checked.kind == "cpu":
        assert index == 300, message


@simt.kernel
def flagged_shift(flags, y):
    i = simt.grid(1)
    if flags[i] > 0:                # reads memory: the access under it keeps its check
        y[i - 1] = 1.0


def test_condition_reading_memory(checked):
    flags = np.array([0, 1, 0, 1, 1, 0, 0, 1], np.int32)
    y = np.zeros(8)
    flagged_shift[1, 8](flags, y)
    np.testing.assert_array_equal(y, [1, 0, 1, 1, 0, 0, 1, 0])
    flags[0] = 1
    with pytest.raises(simt.IllegalAddressError) as info:
        flagged_shift[1, 8](flags, np.zeros(8))
        simt.synchronize()
    assert "index -1" in str(info.value) and "thread (0, 0, 0)" in str(info.value)


@simt.kernel
def wrapped_min(a, k):
    t = simt.threadIdx.x
    a[min(t + k, 7)] = 1.0          # int32: t + k wraps past 2**31 - 1 from thread 2 on


def test_wrapping_index_is_not_trusted(checked):
    """Computed exactly, every index is 7; in int32, threads 2.. wrap to a negative one."""
    with pytest.raises(simt.IllegalAddressError) as info:
        wrapped_min[1, 4](np.zeros(8), np.int32(2**31 - 2))
        simt.synchronize()
    message = str(info.value)
    assert "index -2147483648" in message and "thread (2, 0, 0)" in message, message


@simt.kernel
def strided_rows(a, out):
    """Rows y + j for j in 0, 8, 16, 24 of a 32-row tile: the loop never reaches y + 31."""
    x = simt.blockIdx.x * 32 + simt.threadIdx.x
    y = simt.blockIdx.y * 32 + simt.threadIdx.y
    for j in range(0, 32, 8):
        out[y + j, x] = 2.0 * a[y + j, x]


def test_range_loop_values(checked, rng):
    a = rng.standard_normal((64, 64))
    out = poison((64, 64), np.float64)
    strided_rows[(2, 2), (32, 8)](a, out)
    np.testing.assert_array_equal(out, 2.0 * a)


def test_checks_are_hoisted_on_the_cpu(device):
    """The scan's thread loops come in two versions: checks hoisted, and as written."""
    if device.kind != "cpu":
        pytest.skip("the hoisting is the CPU device's")
    with simt.use_device(device.name, boundscheck=True):
        text = block_scan.inspect_llvm("void(int32[:], int32[:], int32[:], int32)")
    assert text.count("threads_checked") >= 4


@simt.kernel
def divided_indices(p, q, out):
    i = simt.threadIdx.x
    acc = p[i // 5] + q[i // 3, i % 3]
    for j in range(i % 4, 15, 3):           # a loop of step 3: its last value is a division
        acc += p[j]
    out[i] = acc


def test_indices_divided_by_a_non_power_of_two(checked, rng):
    """The range of i // 5 (and of a loop of step 3) is a division by a constant that is
    not a power of two: in 128 bits that was a call of libgcc's __divti3, which the CPU JIT
    could not resolve, and the process crashed (SIGSEGV) at the launch."""
    p = rng.standard_normal(15).astype(np.float32)
    q = rng.standard_normal((5, 3)).astype(np.float32)
    out = poison(15, np.float32)
    divided_indices[1, 15](p, q, out)
    i = np.arange(15)
    want = p[i // 5] + q[i // 3, i % 3]
    for t in range(15):
        for j in range(t % 4, 15, 3):
            want[t] += p[j]
    np.testing.assert_allclose(out, want, rtol=1e-6)
