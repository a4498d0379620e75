"""Checked mode's cheaper paths on the CPU device (issue 34 item 4): shared reads that no
write of their barrier interval can race with are checked but not recorded
(ir/intervals.py), and relaxed atomics take an inline fast path. Each optimised pattern
runs clean and correct, and the same pattern with a bug planted is still reported, at
its lines.

Lines are found by the ``# <-`` markers in this file's kernels.
"""
import numpy as np
import pytest

import simt
from conftest import poison, random_array, marked_line
from test_checked import checked, reported, run  # noqa: F401 - checked is a fixture
from simt import blockIdx, threadIdx
from simt.ir import intervals
from simt.ir import nodes as ir
from simt.ir import types
from simt.ir.walk import walk

FILE = __file__.rsplit("/", 1)[-1]
T = 16                       # the tiles' side


def line(marker):
    return marked_line(__file__, marker)


@simt.kernel
def tiled_matmul(A, B, C):
    sA = simt.shared.array((T, T), np.float32)
    sB = simt.shared.array((T, T), np.float32)
    tx, ty = threadIdx.x, threadIdx.y
    row, col = blockIdx.y * T + ty, blockIdx.x * T + tx
    acc = np.float32(0)
    for k0 in range(0, A.shape[1], T):
        sA[ty, tx] = A[row, k0 + tx]
        sB[ty, tx] = B[k0 + ty, col]
        simt.syncthreads()
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        simt.syncthreads()
    C[row, col] = acc


@simt.kernel
def matmul_no_second_barrier(A, B, C):
    sA = simt.shared.array((T, T), np.float32)
    sB = simt.shared.array((T, T), np.float32)
    tx, ty = threadIdx.x, threadIdx.y
    row, col = blockIdx.y * T + ty, blockIdx.x * T + tx
    acc = np.float32(0)
    for k0 in range(0, A.shape[1], T):
        sA[ty, tx] = A[row, k0 + tx]  # <- next tile
        sB[ty, tx] = B[k0 + ty, col]
        simt.syncthreads()
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]  # <- tile read
    C[row, col] = acc


@simt.kernel
def half_tile(A, out):
    s = simt.shared.array(2 * T, np.float32)
    tid = threadIdx.x
    if tid < T:
        s[tid] = A[tid]
    simt.syncthreads()
    out[tid] = s[2 * T - 1 - tid]  # <- half read


@simt.kernel
def late_writer(A, out):
    s = simt.shared.array(T, np.float32)
    tid = threadIdx.x
    s[tid] = A[tid]
    simt.syncthreads()
    out[tid] = s[T - 1 - tid]  # <- mirror read
    if tid == T - 1:
        s[0] = np.float32(0)  # <- late write


def _sites(kernel, sig):
    fn = kernel.typed_ir(types.parse_signature(sig))
    unrecorded = intervals.unrecorded_reads(fn)
    return [(n.loc.line, id(n) in unrecorded) for n in walk(*fn.body)
            if isinstance(n, ir.Load) and isinstance(n.array, ir.ArrayRef)]


def test_reads_of_an_interval_without_writes_are_not_recorded():
    """The tile reads of a tiled matmul are in an interval that writes no tile; a read
    whose interval also writes its array (missing barrier, a write after the read)
    stays on record."""
    sig2 = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"
    assert [kept for _, kept in _sites(tiled_matmul, sig2)] == [True, True]
    assert [kept for _, kept in _sites(matmul_no_second_barrier, sig2)] == [False, False]
    assert _sites(late_writer, "void(float32[::1], float32[::1])") == \
        [(line("mirror read"), False)]


def test_tiled_matmul_checked_is_exact(checked, rng):
    n = 2 * T
    a, b = random_array(rng, (n, n), np.float32), random_array(rng, (n, n), np.float32)
    c = simt.to_device(poison((n, n), np.float32))
    run(tiled_matmul, (2, 2), (T, T), simt.to_device(a), simt.to_device(b), c)
    np.testing.assert_allclose(c.copy_to_host(), a.astype(np.float64) @ b, rtol=1e-4)


def test_a_missing_barrier_before_the_next_tile_is_a_race(checked, rng):
    """Without the second barrier a thread writes the next tile while others still read
    this one: the reads are on record, the write is reported against one."""
    n = 2 * T
    a, b = (simt.to_device(random_array(rng, (n, n), np.float32)) for _ in range(2))
    error = reported(simt.RaceConditionError, matmul_no_second_barrier, (2, 2), (T, T), a, b,
                     simt.to_device(poison((n, n), np.float32)))
    assert error.line == line("next tile") and error.other.line == line("tile read")
    assert f"{FILE}:{line('next tile')}" in str(error)


def test_an_unwritten_element_read_without_recording_is_reported(checked, rng):
    """Half the tile is written; the unrecorded read of the other half is still an
    uninitialized read, at its line."""
    a = simt.to_device(random_array(rng, T, np.float32))
    error = reported(simt.UninitializedReadError, half_tile, 1, 2 * T, a,
                     simt.to_device(poison(2 * T, np.float32)))
    assert error.line == line("half read") and error.thread == (0, 0, 0)


def test_a_reader_that_writes_its_own_element_later_runs_clean(checked, rng):
    """The interval writes s[0] after the reads, so they stay on record; the one reader
    of s[0] is its writer (thread T-1): no race."""
    a = random_array(rng, T, np.float32)
    out = simt.to_device(poison(T, np.float32))
    run(late_writer, 1, T, simt.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), a[::-1])


@simt.kernel
def reader_then_writer(A, out):
    s = simt.shared.array(T, np.float32)
    tid = threadIdx.x
    s[tid] = A[tid]
    simt.syncthreads()
    out[tid] = s[T - 1]  # <- shared read
    if tid == T - 1:
        s[T - 1] = np.float32(0)  # <- shared write


def test_a_write_after_other_threads_reads_is_a_race(checked, rng):
    a = simt.to_device(random_array(rng, T, np.float32))
    error = reported(simt.RaceConditionError, reader_then_writer, 1, T, a,
                     simt.to_device(poison(T, np.float32)))
    assert error.thread == (T - 1, 0, 0) and error.line == line("shared write")
    assert error.other.line == line("shared read") and error.other.thread[0] < T - 1


# ---------------------------------------------------------------- atomics
@simt.kernel
def shared_histogram(data, hist):
    counts = simt.shared.array(64, np.int32)
    tid = threadIdx.x
    counts[tid] = 0
    simt.syncthreads()
    i = blockIdx.x * 64 + tid
    for k in range(4):
        simt.atomic.add(counts, data[4 * i + k], 1)
    simt.syncthreads()
    simt.atomic.add(hist, tid, counts[tid])


@simt.kernel
def atomic_after_plain_write(hist):
    counts = simt.shared.array(64, np.int32)
    tid = threadIdx.x
    counts[tid] = 0  # <- plain zero
    simt.atomic.add(counts, 63 - tid, 1)  # <- atomic add
    simt.syncthreads()
    simt.atomic.add(hist, tid, counts[tid])


@simt.kernel
def plain_write_after_atomic(hist):
    counts = simt.shared.array(64, np.int32)
    tid = threadIdx.x
    counts[tid] = 0
    simt.syncthreads()
    simt.atomic.add(counts, 0, 1)  # <- atomic first
    if tid == 5:
        counts[0] = 7  # <- plain after
    simt.syncthreads()
    simt.atomic.add(hist, tid, counts[tid])


def test_histograms_with_atomics_are_exact(checked, rng):
    data = rng.integers(0, 64, 4 * 64 * 3).astype(np.int32)
    hist = simt.to_device(np.zeros(64, np.int32))
    run(shared_histogram, 3, 64, simt.to_device(data), hist)
    np.testing.assert_array_equal(hist.copy_to_host(), np.bincount(data, minlength=64))


def test_an_atomic_on_another_threads_plain_write_is_a_race(checked):
    """Thread 63's atomic on counts[0] comes after thread 0's plain write of it with no
    barrier between: reported at both lines."""
    error = reported(simt.RaceConditionError, atomic_after_plain_write, 1, 64,
                     simt.to_device(np.zeros(64, np.int32)))
    lines = {error.line, error.other.line}
    assert lines == {line("plain zero"), line("atomic add")}


def test_a_plain_write_among_other_threads_atomics_is_a_race(checked):
    """Thread 5's plain write follows its own atomic (the last write on record), so the
    next thread's atomic is the one reported, against that plain write."""
    error = reported(simt.RaceConditionError, plain_write_after_atomic, 1, 64,
                     simt.to_device(np.zeros(64, np.int32)))
    assert error.thread == (6, 0, 0) and error.line == line("atomic first")
    assert error.other.thread == (5, 0, 0) and error.other.line == line("plain after")
