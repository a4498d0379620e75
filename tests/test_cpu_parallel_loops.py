"""The CPU device's thread loops are marked parallel for their element accesses
(``llvm.loop.parallel_accesses``: the threads between two barriers touch no element another
writes, or the kernel has a data race), so LLVM vectorizes them without run-time alias
checks. Results stay exact for block shapes that leave vector remainders, for strided
(gathered) reads, and for loops whose other accesses (shared-memory atomics, which the CPU
lowers to plain read-modify-writes) make the mark not apply."""
import numpy as np

import simt
from conftest import poison, random_array

TILE, ROWS = 32, 8


@simt.kernel
def tiled_transpose(a, out):
    tile = simt.shared.array((TILE, TILE + 1), np.float32)
    x = simt.blockIdx.x * TILE + simt.threadIdx.x
    y = simt.blockIdx.y * TILE + simt.threadIdx.y
    for j in range(0, TILE, ROWS):
        tile[simt.threadIdx.y + j, x - simt.blockIdx.x * TILE] = a[y + j, x]
    simt.syncthreads()
    x = simt.blockIdx.y * TILE + simt.threadIdx.x
    y = simt.blockIdx.x * TILE + simt.threadIdx.y
    for j in range(0, TILE, ROWS):
        out[y + j, x] = tile[simt.threadIdx.x, simt.threadIdx.y + j]


@simt.kernel
def mix(a, b, out):
    x = simt.blockIdx.x * simt.blockDim.x + simt.threadIdx.x
    y = simt.blockIdx.y * simt.blockDim.y + simt.threadIdx.y
    if x < out.shape[1] and y < out.shape[0]:
        out[y, x] = a[x, y] * 2.0 + b[y, x]


@simt.kernel
def shared_histogram(values, bins):
    counts = simt.shared.array(8, np.int32)
    t = simt.threadIdx.x
    if t < 8:
        counts[t] = 0
    simt.syncthreads()
    i = simt.grid(1)
    if i < values.shape[0]:
        simt.atomic.add(counts, values[i] % 8, 1)
    simt.syncthreads()
    if t < 8:
        simt.atomic.add(bins, t, counts[t])


def test_thread_loops_carry_the_parallel_mark():
    with simt.use_device("cpu"):
        text = mix.inspect_llvm("(float32[:, ::1], float32[:, ::1], float32[:, ::1])")
    assert "llvm.loop.parallel_accesses" in text and "llvm.access.group" in text


def test_tiled_transpose_is_exact(rng):
    with simt.use_device("cpu"):
        n = 96
        host = random_array(rng, (n, n), np.float32)
        a, out = simt.to_device(host), simt.to_device(poison((n, n), np.float32))
        tiled_transpose[(n // TILE, n // TILE), (TILE, ROWS)](a, out)
        np.testing.assert_array_equal(out.copy_to_host(), host.T)


def test_uneven_blocks_and_gathered_reads_are_exact(rng):
    with simt.use_device("cpu"):
        for shape, block in (((45, 37), (13, 5)), ((64, 64), (32, 2)), ((9, 70), (7, 3))):
            rows, cols = shape
            a_host = random_array(rng, (cols, rows), np.float32)
            b_host = random_array(rng, shape, np.float32)
            out = simt.to_device(poison(shape, np.float32))
            grid = ((cols + block[0] - 1) // block[0], (rows + block[1] - 1) // block[1])
            mix[grid, block](simt.to_device(a_host), simt.to_device(b_host), out)
            np.testing.assert_allclose(out.copy_to_host(), a_host.T * 2.0 + b_host, rtol=1e-6)


def test_shared_atomics_in_a_thread_loop_count_every_value(rng):
    with simt.use_device("cpu"):
        values = rng.integers(0, 1000, 5000).astype(np.int32)
        bins = simt.to_device(np.zeros(8, np.int32))
        shared_histogram[(5000 + 255) // 256, 256](simt.to_device(values), bins)
        np.testing.assert_array_equal(bins.copy_to_host(), np.bincount(values % 8, minlength=8))


@simt.kernel
def row_sums(rowptr, vals, out):
    row = simt.grid(1)
    if row < out.shape[0]:
        acc = np.float32(0)
        for k in range(rowptr[row], rowptr[row + 1]):     # trips known at run time only
            acc += vals[k]
        for j in range(4):                               # a constant trip count
            acc += np.float32(j)
        out[row] = acc


def test_loops_of_run_time_trips_are_not_unrolled_at_run_time(rng):
    """As gcc -O3 leaves them: LLVM's runtime unrolling of spmv's short rows cost 1.5x."""
    with simt.use_device("cpu"):
        n = 300
        lengths = rng.integers(0, 9, n)
        rowptr = np.zeros(n + 1, np.int32)
        np.cumsum(lengths, out=rowptr[1:])
        vals = random_array(rng, int(rowptr[-1]), np.float32)
        out = simt.to_device(poison(n, np.float32))
        row_sums[(n + 63) // 64, 64](simt.to_device(rowptr), simt.to_device(vals), out)
        want = np.array([vals[rowptr[r]:rowptr[r + 1]].sum(dtype=np.float32) + 6
                         for r in range(n)], np.float32)
        np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-5)
        text = row_sums.inspect_llvm("(int32[::1], float32[::1], float32[::1])")
    # in each version of the kernel the thread loop and the row loop are marked, the
    # constant loop is not (LLVM may still unroll that one fully)
    lines = text.splitlines()
    rolled = [line.split(" = ")[0] for line in lines
              if "llvm.loop.unroll.runtime.disable" in line]
    assert len(rolled) == 1, rolled                              # one shared node
    loop_ids = {line.split(" = ")[0]: line for line in lines if "distinct" in line}
    marked = [line for line in lines if line.lstrip().startswith("br ") and "!llvm.loop" in line]
    threads = [m for m in marked if '%"x_head' in m]
    rows = [m for m in marked if '%"for' in m]
    assert threads and len(rows) == len(threads) and len(marked) == 2 * len(threads), marked
    for m in marked:
        assert rolled[0] in loop_ids[m.split("!llvm.loop ")[1]].split("{")[1], m
