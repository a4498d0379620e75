"""Values that live across barriers: recomputed, one per block, or per thread.

The CPU device keeps a variable of a barrier kernel in a per-thread slot only when a
thread loop may read it before assigning it; values of indices and parameters are
recomputed, and loops and conditions that are the same for the whole block run once
per block (backends/cpu/uniform.py, regions.py). These kernels check that each case
keeps CUDA's meaning, on any device; the last tests check the CPU device's choices."""
import numpy as np
import pytest

import simt
from simt import blockDim, blockIdx, threadIdx
from conftest import poison

N = 64


@simt.kernel
def reassigned(out):
    sh = simt.shared.array(N, np.int32)
    x = threadIdx.x                      # recomputed: twice assigned, both at top level
    y = x * 3 + blockIdx.x
    sh[x] = y
    simt.syncthreads()
    a = sh[N - 1 - x] + x                # read after the barrier: the first value of x
    x = x + 100                          # reads its own earlier value
    simt.syncthreads()
    out[blockIdx.x, threadIdx.x, 0] = a
    out[blockIdx.x, threadIdx.x, 1] = x + y


def test_recomputed_values_follow_reassignment(device):
    out = poison((3, N, 2), np.int32)
    reassigned[3, N](out)
    t = np.arange(N)
    for b in range(3):
        np.testing.assert_array_equal(out[b, :, 0], (N - 1 - t) * 3 + b + t)
        np.testing.assert_array_equal(out[b, :, 1], t + 100 + t * 3 + b)


@simt.kernel
def doubling_scan(x, y):
    s = simt.shared.array(N, np.int32)
    tid = threadIdx.x
    s[tid] = x[tid]
    simt.syncthreads()
    off = 1                              # one value per block
    steps = 0
    w = tid
    while off < blockDim.x:
        t = np.int32(0)
        if tid >= off:
            t = s[tid - off]
        simt.syncthreads()
        s[tid] += t
        simt.syncthreads()
        off *= 2
        before = steps * (tid + 1)       # read first in the run: steps stays per thread
        steps += 1
        w += tid                         # per thread
    y[tid] = s[tid] * 100 + steps * 10 + before // (tid + 1) + w * 1000


@pytest.mark.filterwarnings("ignore::simt.CompileWarning")   # 'before': assigned in the loop
def test_uniform_while(device, rng):
    x = rng.integers(-50, 50, N).astype(np.int32)
    y = poison(N, np.int32)
    doubling_scan[1, N](x, y)
    np.testing.assert_array_equal(y, np.cumsum(x) * 100 + 65 + np.arange(N) * 7000)


@simt.kernel
def thread_bound_loop(out):
    sh = simt.shared.array(N, np.int32)
    total = np.int32(0)
    n = threadIdx.x % 5                  # a different trip count per thread
    src = threadIdx.x - 5 if threadIdx.x >= 5 else threadIdx.x     # same trip count
    i = 0
    while i < n:
        sh[threadIdx.x] = i * threadIdx.x
        simt.syncthreads()
        total += sh[src] + 1
        simt.syncthreads()
        i += 1
    out[threadIdx.x] = total * 10 + i


def test_thread_dependent_loop_stays_masked(device):
    out = poison(N, np.int32)
    if device.kind == "sim":
        # threads that leave the loop early run to the kernel's end past barriers the
        # others wait at: the checked devices report it, as checked mode on cpu does
        # (compute-sanitizer's divergent_threads sample: tests/test_sanitizer_samples.py)
        with pytest.raises(simt.BarrierDivergenceError, match="which has not returned"):
            thread_bound_loop[1, N](out)
            simt.synchronize()
        return
    thread_bound_loop[1, N](out)
    t = np.arange(N)
    n = t % 5
    src = np.where(t >= 5, t - 5, t)
    expected = [sum(i * src[k] + 1 for i in range(n[k])) * 10 + n[k] for k in t]
    np.testing.assert_array_equal(out, expected)


@simt.kernel
def nested_uniform(a, flags, out, rows):
    sh = simt.shared.array(N, np.float32)
    acc = np.float32(0)
    if flags[blockIdx.x] > 0:            # read from memory: masked, per thread
        for r in range(rows):            # per block, inside the masked if
            sh[threadIdx.x] = a[r, threadIdx.x]
            simt.syncthreads()
            for k in range(0, r + 1):    # bounds from the block-level r
                acc += sh[(threadIdx.x + 2 * k) % N]
            simt.syncthreads()
    if blockIdx.x == 0:                  # per block
        simt.syncthreads()
        acc += np.float32(1)
    out[blockIdx.x, threadIdx.x] = acc


def test_uniform_loops_inside_masked_if(device, rng):
    rows = 5
    a = rng.random((rows, N), dtype=np.float32)
    out = poison((3, N), np.float32)
    nested_uniform[3, N](a, np.array([1, 0, 1], np.int32), out, rows)
    expected = np.zeros((3, N), np.float32)
    for t in range(N):
        for r in range(rows):
            for k in range(r + 1):
                expected[[0, 2], t] += a[r, (t + 2 * k) % N]
    expected[0] += 1
    np.testing.assert_allclose(out, expected, rtol=1e-5)


@simt.kernel
def early_exit(a, out):
    sh = simt.shared.array(N, np.int32)
    tid = threadIdx.x
    v = a[tid]                           # loaded: lives in a slot across the barriers
    for step in range(4):
        if step > 0 and tid == step * 3 + 1:
            out[tid] = -step
            return                       # excused from later barriers
        sh[tid] = v
        simt.syncthreads()
        v = v + sh[(tid + 1) % N]
        simt.syncthreads()
    out[tid] = v


def test_return_inside_block_level_loop(device, rng):
    a = rng.integers(-9, 9, N).astype(np.int64)
    out = poison(N, np.int32)
    early_exit[1, N](a.astype(np.int32), out)
    v, sh = a.copy(), np.zeros(N, np.int64)
    done = np.zeros(N, bool)
    expected = np.zeros(N, np.int64)
    for step in range(4):
        if step > 0:
            expected[step * 3 + 1], done[step * 3 + 1] = -step, True
        sh[~done] = v[~done]             # an exited thread's entry keeps its last value
        v = np.where(done, v, v + sh[(np.arange(N) + 1) % N])
    expected[~done] = v[~done]
    np.testing.assert_array_equal(out, expected)


@simt.kernel
def break_and_continue(a, out):
    sh = simt.shared.array(N, np.int32)
    tid = threadIdx.x
    best = np.int32(-1)
    for k in range(8):                   # break and continue: per-thread flags
        sh[tid] = a[k, tid]
        simt.syncthreads()
        mine = sh[(tid + k) % N]
        simt.syncthreads()
        if a[k, 0] < 0:                  # the same for every thread, but read from memory
            continue
        best = mine
        if a[k, 0] > 50:
            break
    out[tid] = best


def test_break_and_continue_keep_registers_in_sync(device, rng):
    a = rng.integers(-100, 100, (8, N)).astype(np.int32)
    out = poison(N, np.int32)
    break_and_continue[1, N](a, out)
    expected = np.full(N, -1)
    for t in range(N):
        for k in range(8):
            if a[k, 0] < 0:
                continue
            expected[t] = a[k, (t + k) % N]
            if a[k, 0] > 50:
                break
    np.testing.assert_array_equal(out, expected)


@simt.kernel
def inner_loop_temps(p, out):
    sh = simt.shared.array(N, np.float32)
    xi = p[threadIdx.x]
    acc = np.float32(0)
    for t in range(0, p.shape[0], N):
        sh[threadIdx.x] = p[t + threadIdx.x]
        simt.syncthreads()
        for k in range(N):
            d = sh[k] - xi               # temporaries of one run: registers
            acc += d * d
        simt.syncthreads()
    out[threadIdx.x] = acc


def test_temporaries_of_inner_loops(device, rng):
    p = rng.random(4 * N, dtype=np.float32)
    out = poison(N, np.float32)
    inner_loop_temps[1, N](p, out)
    expected = ((p[None, :] - p[:N, None]) ** 2).sum(1)
    np.testing.assert_allclose(out, expected, rtol=1e-4)


def test_cpu_keeps_only_loaded_values_in_slots():
    """The CPU device's choice: only values that differ per thread and cannot be
    recomputed (loaded from memory, or changed under a loop) take per-thread memory
    across a barrier, 8 bytes each; off, tid, x, y, t, d and k do not."""
    with simt.runtime.devices.use_device("cpu"):
        def slot_bytes(kernel, sig):
            return kernel.resources(sig)["local_bytes"]
        assert slot_bytes(reassigned, "void(int32[:, :, ::1])") == 8           # a
        assert slot_bytes(doubling_scan, "void(int32[::1], int32[::1])") == 32  # t steps before w
        assert slot_bytes(inner_loop_temps, "void(float32[::1], float32[::1])") == 16   # xi, acc


@pytest.mark.parametrize("kind", ["shared", "global"])
def test_atomics_return_old_values_in_order(device, kind):
    """Shared-memory atomics on the CPU are plain read-modify-writes: the values each
    thread gets back must still be a permutation of the sums seen in some order."""
    out = poison((2, N), np.int32)
    counter = np.zeros(1, np.int32)
    (shared_counter if kind == "shared" else global_counter)[1, N](counter, out)
    assert sorted(out[0]) == list(range(0, 3 * N, 3))
    assert out[1, 0] == 3 * N


@simt.kernel
def shared_counter(counter, out):
    c = simt.shared.array(1, np.int32)
    if threadIdx.x == 0:
        c[0] = 0
    simt.syncthreads()
    out[0, threadIdx.x] = simt.atomic.add(c, 0, 3)
    simt.syncthreads()
    out[1, threadIdx.x] = c[0]


@simt.kernel
def global_counter(counter, out):
    out[0, threadIdx.x] = simt.atomic.add(counter, 0, 3)
    simt.syncthreads()
    out[1, threadIdx.x] = counter[0]
