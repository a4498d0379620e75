"""Checked mode's write-only arrays (issue 34 item 4): a global array a kernel only
writes, at indices no two threads of the launch share (ir/disjoint.py at compile time,
backends/cpu/disjoint.py at the launch), needs no record of its writes. Kernels in that
pattern run clean and exact; the same patterns launched so that two threads share an
element (blocks wider than the index assumes, one array passed twice, an index that
wraps) are still reported as races, at their lines.

Lines are found by the ``# <-`` markers in this file's kernels.
"""
import numpy as np
import pytest

import simt
from conftest import poison, random_array, marked_line
from test_checked import checked, reported, run  # noqa: F401 - checked is a fixture
from simt import blockDim, blockIdx, gridDim, threadIdx
from simt.backends.cpu import disjoint as launch_side
from simt.ir import disjoint
from simt.ir import types

TILE, ROWS = 32, 8


def line(marker):
    return marked_line(__file__, marker)


@simt.kernel
def axpy(a, x, y, out):
    i = blockIdx.x * blockDim.x + threadIdx.x
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@simt.kernel
def transpose(a, out):
    x = blockIdx.x * TILE + threadIdx.x
    y = blockIdx.y * TILE + threadIdx.y
    for j in range(0, TILE, ROWS):
        out[x, y + j] = a[y + j, x]  # <- transposed write


@simt.kernel
def edges(src, dst):
    x = blockIdx.x * blockDim.x + threadIdx.x
    y = blockIdx.y * blockDim.y + threadIdx.y
    if x < src.shape[1] and y < src.shape[0]:
        c = src[y, x]
        if x > 0 and x < src.shape[1] - 1:
            dst[y, x] = c + src[y, x - 1] + src[y, x + 1]
        else:
            dst[y, x] = c


@simt.kernel
def grid_stride(x, out):
    start = blockIdx.x * blockDim.x + threadIdx.x
    for i in range(start, out.shape[0], gridDim.x * blockDim.x):
        out[i] = x[i] * np.float32(2)


@simt.kernel
def fixed_width(x, out):
    i = blockIdx.x * 32 + threadIdx.x
    out[i] = x[i] + np.float32(1)  # <- fixed width write


@simt.kernel
def two_outputs(x, out1, out2):
    i = blockIdx.x * blockDim.x + threadIdx.x
    out1[i] = x[i]  # <- first output
    out2[(i + 1) % out2.shape[0]] = x[i]  # <- second output


@simt.kernel
def narrow_index(x, out):
    i = blockIdx.x * blockDim.x + threadIdx.x
    out[np.uint16(i)] = x[i]  # <- narrow write


@simt.kernel
def halves(x, out):
    i = blockIdx.x * blockDim.x + threadIdx.x
    out[i // 2] = x[i]  # <- half write


SIG1 = "void(float32[::1], float32[::1])"
SIG2 = "void(float32[:, ::1], float32[:, ::1])"


def _spec(kernel, sig, param):
    found = dict(disjoint.owned_specs(kernel.typed_ir(types.parse_signature(sig))))
    return found.get(param)


def test_write_only_arrays_and_their_index_forms():
    """The output of axpy, transpose, the stencil and a grid-stride loop is write-only
    with affine indices; an index through // has none; arrays read are not write-only."""
    sig = "void(float32, float32[::1], float32[::1], float32[::1])"
    assert _spec(axpy, sig, 3) is not None and _spec(axpy, sig, 1) is None
    assert _spec(transpose, SIG2, 1) is not None and _spec(transpose, SIG2, 0) is None
    assert _spec(edges, SIG2, 1) is not None
    assert _spec(grid_stride, SIG1, 1) is not None
    assert _spec(halves, SIG1, 1) is None


def test_disjointness_depends_on_the_launch():
    """transpose's writes are disjoint for blocks of up to 32 x 8 threads, fixed_width's
    for blocks of up to 32; axpy's and the grid-stride loop's for any launch."""
    a = np.zeros((64, 64), np.float32)
    spec = _spec(transpose, SIG2, 1)
    assert launch_side.disjoint(1, spec, [a, a], (2, 2, 1), (32, 8, 1))
    assert not launch_side.disjoint(1, spec, [a, a], (2, 2, 1), (64, 8, 1))
    assert not launch_side.disjoint(1, spec, [a, a], (2, 2, 1), (32, 16, 1))
    assert not launch_side.disjoint(1, spec, [a, a], (2, 2, 1), (32, 8, 2))
    v = np.zeros(4096, np.float32)
    spec = _spec(fixed_width, SIG1, 1)
    assert launch_side.disjoint(1, spec, [v, v], (8, 1, 1), (32, 1, 1))
    assert not launch_side.disjoint(1, spec, [v, v], (8, 1, 1), (33, 1, 1))
    spec = _spec(grid_stride, SIG1, 1)
    for grid, block in (((3, 1, 1), (100, 1, 1)), ((7, 1, 1), (64, 1, 1))):
        assert launch_side.disjoint(1, spec, [v, v], grid, block)
    spec = _spec(narrow_index, SIG1, 1)
    assert launch_side.disjoint(1, spec, [v, v], (256, 1, 1), (256, 1, 1))
    assert not launch_side.disjoint(1, spec, [v, v], (257, 1, 1), (256, 1, 1))


def test_write_only_outputs_are_exact(checked, rng):
    n = 1000
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    out = simt.to_device(poison(n, np.float32))
    run(axpy, (n + 127) // 128, 128, np.float32(2.5), simt.to_device(x), simt.to_device(y), out)
    fused = (2.5 * x.astype(np.float64) + y).astype(np.float32)      # one rounding: fma
    np.testing.assert_array_equal(out.copy_to_host(), fused)
    a = random_array(rng, (64, 64), np.float32)
    out = simt.to_device(poison((64, 64), np.float32))
    run(transpose, (2, 2), (TILE, ROWS), simt.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), a.T)
    src = random_array(rng, (20, 50), np.float32)
    dst = simt.to_device(poison((20, 50), np.float32))
    run(edges, (4, 3), (16, 8), simt.to_device(src), dst)
    want = src.copy()
    want[:, 1:-1] = src[:, 1:-1] + src[:, :-2] + src[:, 2:]
    np.testing.assert_array_equal(dst.copy_to_host(), want)
    out = simt.to_device(poison(n, np.float32))
    run(grid_stride, 3, 64, simt.to_device(x), out)
    np.testing.assert_array_equal(out.copy_to_host(), x * np.float32(2))


def test_blocks_wider_than_the_index_assumes_race(checked, rng):
    """fixed_width assumes 32 threads a block: with 64, block 1's threads write what
    block 0's threads 32.. wrote."""
    x = simt.to_device(random_array(rng, 256, np.float32))
    error = reported(simt.RaceConditionError, fixed_width, 2, 64, x,
                     simt.to_device(poison(256, np.float32)))
    assert error.line == line("fixed width write") and error.other.line == error.line
    assert error.thread[0] != error.other.thread[0] or \
        error.block[0] != error.other.block[0]


def test_transpose_with_taller_blocks_races(checked, rng):
    a = simt.to_device(random_array(rng, (64, 64), np.float32))
    error = reported(simt.RaceConditionError, transpose, (2, 1), (TILE, 2 * ROWS), a,
                     simt.to_device(poison((64, 64), np.float32)))
    assert error.line == line("transposed write")


def test_one_array_as_two_write_only_outputs_races(checked, rng):
    """Each output alone is written at distinct elements, but passed as one array the
    two writes of threads i and i + 1 meet."""
    x = simt.to_device(random_array(rng, 64, np.float32))
    out = simt.to_device(poison(64, np.float32))
    error = reported(simt.RaceConditionError, two_outputs, 1, 64, x, out, out)
    assert {error.line, error.other.line} == {line("first output"), line("second output")}
    out1, out2 = (simt.to_device(poison(64, np.float32)) for _ in range(2))
    run(two_outputs, 1, 64, x, out1, out2)
    host = x.copy_to_host()
    np.testing.assert_array_equal(out1.copy_to_host(), host)
    np.testing.assert_array_equal(out2.copy_to_host(), np.roll(host, 1))


def test_a_wrapping_index_races(checked, rng):
    """np.uint16(i) wraps past 65535: thread 65536 (block 256) writes element 0 again."""
    x = simt.to_device(random_array(rng, 257 * 256, np.float32))
    error = reported(simt.RaceConditionError, narrow_index, 257, 256, x,
                     simt.to_device(poison(65536, np.float32)))
    assert error.line == line("narrow write") and error.block == (256, 0, 0)


def test_a_non_affine_index_still_races(checked, rng):
    x = simt.to_device(random_array(rng, 64, np.float32))
    error = reported(simt.RaceConditionError, halves, 1, 64, x,
                     simt.to_device(poison(32, np.float32)))
    assert error.line == line("half write")


# ---------------------------------------------------------------- shared arrays
S = 64


@simt.kernel
def block_scan(x, y):
    s = simt.shared.array(S, np.int32)
    tid = threadIdx.x
    i = blockIdx.x * S + tid
    s[tid] = x[i]
    simt.syncthreads()
    off = 1
    while off < S:
        t = np.int32(0)
        if tid >= off:
            t = s[tid - off]
        simt.syncthreads()
        s[tid] += t  # <- own element
        simt.syncthreads()
        off *= 2
    y[i] = s[tid]


@simt.kernel
def scan_missing_barrier(x, y):
    s = simt.shared.array(S, np.int32)
    tid = threadIdx.x
    s[tid] = x[tid]
    simt.syncthreads()
    t = np.int32(0)
    if tid >= 1:
        t = s[tid - 1]  # <- neighbour read
    s[tid] += t  # <- unordered write
    simt.syncthreads()
    y[tid] = s[tid]


@simt.kernel
def row_of_threads(x, y):
    s = simt.shared.array(S, np.float32)
    s[threadIdx.x] = x[threadIdx.x]  # <- row write
    simt.syncthreads()
    y[threadIdx.y * blockDim.x + threadIdx.x] = s[threadIdx.x]


@simt.kernel
def half_written(x, y):
    s = simt.shared.array(S, np.float32)
    tid = threadIdx.x
    if tid < S // 2:
        s[tid] = x[tid]
    simt.syncthreads()
    s[tid] += np.float32(1)  # <- unwritten half
    simt.syncthreads()
    y[tid] = s[tid]


@simt.kernel
def tile_transpose(a, out):
    tile = simt.shared.array((TILE, TILE + 1), np.float32)
    x = blockIdx.x * TILE + threadIdx.x
    y = blockIdx.y * TILE + threadIdx.y
    for j in range(0, TILE, ROWS):
        tile[threadIdx.y + j, threadIdx.x] = a[y + j, x]  # <- tile write
    simt.syncthreads()
    x = blockIdx.y * TILE + threadIdx.x
    y = blockIdx.x * TILE + threadIdx.y
    for j in range(0, TILE, ROWS):
        out[y + j, x] = tile[threadIdx.x, threadIdx.y + j]


def test_private_shared_accesses_depend_on_the_block():
    """block_scan's s[tid] accesses and the tile writes are private for their blocks;
    row_of_threads's s[threadIdx.x] is not for blocks of more than one row."""
    from simt.backends.cpu import checked as code_side
    for kernel, sig, block, expected in (
            (block_scan, "void(int32[::1], int32[::1])", (S, 1, 1), True),
            (tile_transpose, SIG2, (TILE, ROWS, 1), True),
            (tile_transpose, SIG2, (TILE, 2 * ROWS, 1), False),
            (row_of_threads, SIG1, (S, 1, 1), True),
            (row_of_threads, SIG1, (S, 2, 1), False)):
        groups, sites = code_side.private_groups(kernel.typed_ir(types.parse_signature(sig)))
        assert sites, kernel.__name__
        mask = launch_side.private_mask(groups, block)
        assert (mask != 0) == expected, (kernel.__name__, block)


def test_a_block_scan_is_exact(checked, rng):
    x = rng.integers(-100, 100, 4 * S, dtype=np.int32)
    y = simt.to_device(poison(4 * S, np.int32))
    run(block_scan, 4, S, simt.to_device(x), y)
    np.testing.assert_array_equal(y.copy_to_host(),
                                  np.cumsum(x.reshape(4, S), axis=1).reshape(-1))
    a = random_array(rng, (64, 64), np.float32)
    out = simt.to_device(poison((64, 64), np.float32))
    run(tile_transpose, (2, 2), (TILE, ROWS), simt.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), a.T)


def test_a_scan_step_without_its_barrier_races(checked, rng):
    x = simt.to_device(rng.integers(-100, 100, S, dtype=np.int32))
    error = reported(simt.RaceConditionError, scan_missing_barrier, 1, S, x,
                     simt.to_device(poison(S, np.int32)))
    assert {error.line, error.other.line} == {line("neighbour read"), line("unordered write")}


def test_threads_of_two_rows_writing_one_row_race(checked, rng):
    x = simt.to_device(random_array(rng, S, np.float32))
    run(row_of_threads, 1, (S, 1), x, simt.to_device(poison(S, np.float32)))
    error = reported(simt.RaceConditionError, row_of_threads, 1, (S, 2), x,
                     simt.to_device(poison(2 * S, np.float32)))
    assert error.line == line("row write") and error.thread[1] == 1


def test_a_tile_written_by_taller_blocks_races(checked, rng):
    a = simt.to_device(random_array(rng, (64, 64), np.float32))
    error = reported(simt.RaceConditionError, tile_transpose, (2, 1), (TILE, 2 * ROWS), a,
                     simt.to_device(poison((64, 64), np.float32)))
    assert error.line == line("tile write")


def test_a_private_read_of_an_unwritten_element_is_reported(checked, rng):
    x = simt.to_device(random_array(rng, S, np.float32))
    error = reported(simt.UninitializedReadError, half_written, 1, S, x,
                     simt.to_device(poison(S, np.float32)))
    assert error.line == line("unwritten half") and error.thread == (S // 2, 0, 0)


# ---------------------------------------------------------------- owned: read and written
@simt.kernel
def add_offsets(y, sums):
    if blockIdx.x > 0:
        i = blockIdx.x * blockDim.x + threadIdx.x
        y[i] += sums[blockIdx.x - 1]


@simt.kernel
def shift_add(y):
    i = blockIdx.x * blockDim.x + threadIdx.x
    if i + 1 < y.shape[0]:
        y[i] += y[i + 1]  # <- neighbour update


@simt.kernel
def bump_fixed_width(y):
    i = blockIdx.x * 16 + threadIdx.x
    y[i] += np.float32(1)  # <- fixed width update


def test_an_array_read_and_written_at_one_index_is_owned(rng):
    sig = "void(float32[::1], float32[::1])"
    assert _spec(add_offsets, sig, 0) is not None and _spec(add_offsets, sig, 1) is None
    assert _spec(shift_add, "void(float32[::1])", 0) is None


def test_owned_updates_are_exact_and_their_overlaps_race(checked, rng):
    y, sums = random_array(rng, 4 * 32, np.float32), random_array(rng, 4, np.float32)
    dy = simt.to_device(y)
    run(add_offsets, 4, 32, dy, simt.to_device(sums))
    np.testing.assert_array_equal(dy.copy_to_host(),
                                  y + np.repeat(np.concatenate([np.zeros(1, np.float32), sums[:3]]), 32))
    error = reported(simt.RaceConditionError, shift_add, 2, 32, simt.to_device(y))
    assert error.line == line("neighbour update")
    run(bump_fixed_width, 8, 16, simt.to_device(y))
    error = reported(simt.RaceConditionError, bump_fixed_width, 4, 32, simt.to_device(y))
    assert error.line == line("fixed width update")


def test_accesses_before_any_barrier():
    """block_scan's first s[tid] = x[i] comes before any barrier; its s[tid] += t does not
    (checkscan does not look at a block's shared shadow before its first barrier)."""
    from simt.ir import intervals
    from simt.ir import nodes as ir
    from simt.ir.walk import walk
    fn = block_scan.typed_ir(types.parse_signature("void(int32[::1], int32[::1])"))
    first = intervals.before_any_barrier(fn)
    stores = [n for n in walk(*fn.body) if isinstance(n, ir.Store)
              and isinstance(n.array, ir.ArrayRef)]
    assert [id(s) in first for s in stores] == [True, False]
