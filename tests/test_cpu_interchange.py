"""The CPU device swaps a block-stride loop (``for i in range(a + threadIdx.x, b, step)``,
a, b, step the same for the block) with the loop over the block's threads
(ir/interchange.py): results equal NumPy's, with bounds checks on and off, and the loops
it must leave alone (a barrier inside, bounds that read the thread index otherwise,
shared memory another thread reads, a break) are left alone and still give the
results of threads run in order. Whether a loop was swapped shows in the kernel's LLVM
IR: its block-level loop variable is named ``$interchange...``."""
import numpy as np
import pytest

import simt
from simt.ir import types as T

B = 128


@simt.kernel
def strided_sum(x, partial, last):
    """Each block sums a chunk; threads stride by the block's width (bench's
    reduction_tree), the loop variable read after the loop."""
    cache = simt.shared.array(B, np.int64)
    tid = simt.threadIdx.x
    n = np.int32(x.shape[0])
    chunk = (n + simt.gridDim.x - 1) // simt.gridDim.x
    start = simt.blockIdx.x * chunk
    end = min(start + chunk, n)
    acc = np.int64(7)
    i = np.int32(-1)
    for i in range(start + tid, end, B):
        acc += x[i] * np.int64(3)
    last[simt.blockIdx.x * B + tid] = i
    cache[tid] = acc
    simt.syncthreads()
    if tid == 0:
        total = np.int64(0)
        for t in range(B):
            total += cache[t]
        partial[simt.blockIdx.x] = total


@simt.kernel
def grid_axpy(a, x, y, out, sums):
    """A grid-stride loop storing out[i] (a step of blockDim.x * gridDim.x), then a barrier."""
    cache = simt.shared.array(256, np.float32)
    tid = simt.threadIdx.x
    acc = np.float32(0)
    for i in range(simt.blockIdx.x * simt.blockDim.x + tid, x.shape[0],
                   simt.blockDim.x * simt.gridDim.x):
        v = a * x[i] + y[i]
        out[i] = v
        acc += v
    cache[tid] = acc
    simt.syncthreads()
    if tid == 0:
        s = np.float32(0)
        for t in range(simt.blockDim.x):
            s += cache[t]
        sums[simt.blockIdx.x] = s


@simt.kernel
def shared_histogram(buf, per_block):
    """bench's histogram_shared: atomics on a shared histogram inside the loop."""
    temp = simt.shared.array(256, np.int32)
    temp[simt.threadIdx.x] = 0
    simt.syncthreads()
    n = np.int32(buf.shape[0])
    chunk = (n + simt.gridDim.x - 1) // simt.gridDim.x
    start = simt.blockIdx.x * chunk
    end = min(start + chunk, n)
    for i in range(start + simt.threadIdx.x, end, 256):
        simt.atomic.add(temp, buf[i], 1)
    simt.syncthreads()
    per_block[simt.blockIdx.x, simt.threadIdx.x] = temp[simt.threadIdx.x]


@simt.kernel
def own_slot(x, out):
    """Each thread accumulates in its own shared element (s[tid]) inside the loop."""
    s = simt.shared.array(B, np.float64)
    tid = simt.threadIdx.x
    s[tid] = 0.0
    for i in range(tid, x.shape[0], B):
        s[tid] += x[i]
    simt.syncthreads()
    out[tid] = s[(tid + 1) % B]


@simt.kernel
def while_dot(a, b, c, last):
    """while_dot_plain with the loop's variable read after the loop (left alone)."""
    cache = simt.shared.array(B, np.float64)
    tid = simt.threadIdx.x + simt.blockIdx.x * simt.blockDim.x
    temp = 0.0
    while tid < a.shape[0]:
        temp += a[tid] * b[tid]
        tid += simt.blockDim.x * simt.gridDim.x
    if last.shape[0] > 1:
        last[simt.threadIdx.x + simt.blockIdx.x * simt.blockDim.x] = tid
    cache[simt.threadIdx.x] = temp
    simt.syncthreads()
    if simt.threadIdx.x == 0:
        s = 0.0
        for t in range(B):
            s += cache[t]
        c[simt.blockIdx.x] = s


@simt.kernel
def while_dot_plain(a, b, c):
    """CUDA by Example's dot product: ``while tid < n: ...; tid += step``."""
    cache = simt.shared.array(B, np.float64)
    tid = simt.threadIdx.x + simt.blockIdx.x * simt.blockDim.x
    temp = 0.0
    while tid < a.shape[0]:
        temp += a[tid] * b[tid]
        tid += simt.blockDim.x * simt.gridDim.x
    cache[simt.threadIdx.x] = temp
    simt.syncthreads()
    if simt.threadIdx.x == 0:
        s = 0.0
        for t in range(B):
            s += cache[t]
        c[simt.blockIdx.x] = s


@simt.kernel
def staged_copy(x, out, flags):
    """A cooperative load into shared memory inside a uniform loop holding barriers (the
    loop swapped), and a block-stride loop inside a branch some threads skip, holding a
    barrier (run masked)."""
    tile = simt.shared.array(512, np.float32)
    tid = simt.threadIdx.x
    for base in range(0, x.shape[0], 512):
        for i in range(tid, 512, B):
            tile[i] = x[base + i] * np.float32(2)
        simt.syncthreads()
        for j in range(tid, 512, B):
            out[base + j] = tile[511 - j]
        simt.syncthreads()
    acc = np.float32(0)
    if flags[tid] != 0:
        for i in range(tid, x.shape[0], B):
            acc += x[i]
        simt.syncthreads()
    flags[tid] = np.int32(acc)


# ---------------------------------------------------------------- loops left alone
@simt.kernel
def barrier_inside(x, out):
    s = simt.shared.array(B, np.float32)
    tid = simt.threadIdx.x
    acc = np.float32(0)
    for i in range(tid, x.shape[0], B):      # x.shape[0] a multiple of B
        s[tid] = x[i]
        simt.syncthreads()
        acc += s[(tid + 1) % B]
        simt.syncthreads()
    out[tid] = acc


@simt.kernel
def thread_bounds(x, out):
    """The stop reads the thread index: threads run different trip counts."""
    s = simt.shared.array(B, np.float32)
    tid = simt.threadIdx.x
    acc = np.float32(0)
    for i in range(tid, x.shape[0] - 3 * tid, B):
        acc += x[i]
    s[tid] = acc
    simt.syncthreads()
    out[tid] = s[B - 1 - tid]


@simt.kernel
def neighbour_reads(x, out):
    """Each thread reads what its left neighbour wrote in the loop (a race in CUDA):
    threads run in order, so the result is the sequential one; swapped it would differ."""
    s = simt.shared.array(B, np.float32)
    tid = simt.threadIdx.x
    s[tid] = 0.0
    simt.syncthreads()
    for i in range(tid, x.shape[0], B):
        s[tid] = s[(tid + B - 1) % B] + x[i]
    simt.syncthreads()
    out[tid] = s[tid]


@simt.kernel
def shift_in_place(x, out):
    """x[i + 1] = x[i]: a thread reads what another wrote (a race in CUDA); threads in
    order give the sequential result, which a swapped loop would not."""
    s = simt.shared.array(B, np.float32)
    tid = simt.threadIdx.x
    for i in range(tid, x.shape[0] - 1, B):
        x[i + 1] = x[i]
    s[tid] = x[tid]
    simt.syncthreads()
    out[tid] = s[B - 1 - tid]


@simt.kernel
def breaks(x, out):
    s = simt.shared.array(B, np.float32)
    tid = simt.threadIdx.x
    acc = np.float32(0)
    for i in range(tid, x.shape[0], B):
        if x[i] > 0.9:
            break
        acc += x[i]
    s[tid] = acc
    simt.syncthreads()
    out[tid] = s[B - 1 - tid]


def _swapped(kernel, args, block, device):
    types = tuple(T.typeof(a) for a in args)
    return "$interchange" in kernel.binary_for(types, device, block).binary.stages["llvm_ir"]


@pytest.fixture(params=[False, True], ids=["nocheck", "boundscheck"])
def cpu(request):
    with simt.use_device("cpu", boundscheck=request.param) as device:
        yield device


def test_strided_sum_swapped(cpu, rng):
    n, blocks = 100_003, 5
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    partial = np.full(blocks, -1, np.int64)
    last = np.full(blocks * B, -1, np.int32)
    strided_sum[blocks, B](x, partial, last)
    chunk = (n + blocks - 1) // blocks
    for b in range(blocks):
        lo, hi = b * chunk, min(b * chunk + chunk, n)
        assert partial[b] == 7 * B + 3 * x[lo:hi].astype(np.int64).sum()
        for t in range(B):
            assert last[b * B + t] == lo + t + (hi - 1 - lo - t) // B * B
    assert _swapped(strided_sum, (x, partial, last), (B, 1, 1), cpu)


@pytest.mark.parametrize("threads, blocks", [(256, 3), (100, 7)])
def test_grid_stride_stores_swapped(cpu, rng, threads, blocks):
    n = 50_001
    a = np.float32(1.5)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    sums = np.full(blocks, np.nan, np.float32)
    grid_axpy[blocks, threads](a, x, y, out, sums)
    expected = a * x + y                    # simt fuses it: one rounding
    np.testing.assert_allclose(out, expected, rtol=2e-7)
    stride = threads * blocks
    for b in range(blocks):
        want = sum(float(expected[b * threads + t::stride].astype(np.float64).sum())
                   for t in range(threads))
        assert abs(float(sums[b]) - want) <= 1e-4 * want
    assert _swapped(grid_axpy, (a, x, y, out, sums), (threads, 1, 1), cpu)


def test_shared_atomics_swapped(cpu, rng):
    n, blocks = 1 << 16, 6
    buf = rng.integers(0, 256, n, dtype=np.uint8)
    per_block = np.full((blocks, 256), -1, np.int32)
    shared_histogram[blocks, 256](buf, per_block)
    chunk = (n + blocks - 1) // blocks
    for b in range(blocks):
        np.testing.assert_array_equal(
            per_block[b], np.bincount(buf[b * chunk:(b + 1) * chunk], minlength=256))
    assert _swapped(shared_histogram, (buf, per_block), (256, 1, 1), cpu)


def test_own_shared_element_swapped(cpu, rng):
    x = rng.random(5 * B + 17)
    out = np.full(B, np.nan)
    own_slot[1, B](x, out)
    sums = np.array([x[t::B].sum() for t in range(B)])
    np.testing.assert_allclose(out, np.roll(sums, -1), rtol=1e-12)
    assert _swapped(own_slot, (x, out), (B, 1, 1), cpu)


def test_barrier_inside_left_alone(cpu, rng):
    x = rng.random(4 * B, dtype=np.float32)
    out = np.full(B, np.nan, np.float32)
    barrier_inside[1, B](x, out)
    expected = x.reshape(4, B)[:, (np.arange(B) + 1) % B].sum(axis=0, dtype=np.float32)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert not _swapped(barrier_inside, (x, out), (B, 1, 1), cpu)


def test_thread_dependent_bounds_left_alone(cpu, rng):
    n = 3 * B + 50
    x = rng.random(n, dtype=np.float32)
    out = np.full(B, np.nan, np.float32)
    thread_bounds[1, B](x, out)
    sums = np.array([x[t:max(t, n - 3 * t):B].sum(dtype=np.float64) for t in range(B)])
    np.testing.assert_allclose(out, sums[::-1], rtol=1e-6)
    assert not _swapped(thread_bounds, (x, out), (B, 1, 1), cpu)


def test_shared_read_by_other_threads_left_alone(cpu, rng):
    n = 3 * B + 5
    x = rng.random(n, dtype=np.float32)
    out = np.full(B, np.nan, np.float32)
    neighbour_reads[1, B](x, out)
    s = np.zeros(B, np.float32)
    for t in range(B):                     # the threads one after another
        for i in range(t, n, B):
            s[t] = s[(t + B - 1) % B] + x[i]
    np.testing.assert_array_equal(out, s)
    assert not _swapped(neighbour_reads, (x, out), (B, 1, 1), cpu)


def test_break_left_alone(cpu, rng):
    n = 6 * B
    x = rng.random(n, dtype=np.float32)
    out = np.full(B, np.nan, np.float32)
    breaks[1, B](x, out)
    sums = np.zeros(B)
    for t in range(B):
        for i in range(t, n, B):
            if x[i] > 0.9:
                break
            sums[t] += x[i]
    np.testing.assert_allclose(out, sums[::-1], rtol=1e-5)
    assert not _swapped(breaks, (x, out), (B, 1, 1), cpu)


def _dot_expected(a, b, blocks):
    stride = blocks * B
    return np.array([sum((a[g::stride] * b[g::stride]).sum() for g in range(k * B, k * B + B))
                     for k in range(blocks)])


def test_while_loop_swapped(cpu, rng):
    n, blocks = 40_001, 6
    a, b = rng.random(n), rng.random(n)
    c = np.full(blocks, np.nan)
    while_dot_plain[blocks, B](a, b, c)
    np.testing.assert_allclose(c, _dot_expected(a, b, blocks), rtol=1e-12)
    assert _swapped(while_dot_plain, (a, b, c), (B, 1, 1), cpu)


def test_while_loop_variable_read_after_left_alone(cpu, rng):
    n, blocks = 40_001, 6
    a, b = rng.random(n), rng.random(n)
    c = np.full(blocks, np.nan)
    last = np.full(blocks * B, -1, np.int32)
    while_dot[blocks, B](a, b, c, last)
    np.testing.assert_allclose(c, _dot_expected(a, b, blocks), rtol=1e-12)
    g = np.arange(blocks * B)
    np.testing.assert_array_equal(last, g + (n - 1 - g) // (blocks * B) * blocks * B
                                  + blocks * B)
    assert not _swapped(while_dot, (a, b, c, last), (B, 1, 1), cpu)


def test_swapped_inside_uniform_and_masked_regions(cpu, rng):
    n = 4 * 512
    x = rng.integers(1, 5, n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    flags = (np.arange(B) % 3 != 0).astype(np.int32)
    expected_flags = np.where(flags != 0, [int(x[t::B].sum()) for t in range(B)], 0)
    staged_copy[1, B](x, out, flags)
    np.testing.assert_array_equal(out, (2 * x).reshape(4, 512)[:, ::-1].ravel())
    np.testing.assert_array_equal(flags, expected_flags)
    assert _swapped(staged_copy, (x, out, flags), (B, 1, 1), cpu)


def test_store_read_at_another_index_left_alone(cpu, rng):
    n = 3 * B + 7
    x = rng.random(n, dtype=np.float32)
    out = np.full(B, np.nan, np.float32)
    expected = x.copy()
    for t in range(B):                     # the threads one after another
        for i in range(t, n - 1, B):
            expected[i + 1] = expected[i]
    shift_in_place[1, B](x, out)
    np.testing.assert_array_equal(x, expected)
    np.testing.assert_array_equal(out, expected[:B][::-1])
    assert not _swapped(shift_in_place, (x, out), (B, 1, 1), cpu)
