"""syncthreads and its reductions: exchanges, loops with barriers, divergent barriers."""

import numpy as np
import pytest

import simt
from conftest import poison, random_array


@simt.kernel
def exchange(a, out):
    buf = simt.shared.array(1024, np.float64)
    t = simt.threadIdx.x
    i = simt.grid(1)
    buf[t] = a[i]
    simt.syncthreads()
    v = buf[simt.blockDim.x - 1 - t]
    simt.syncthreads()                        # the buffer is rewritten: a second barrier
    buf[t] = v * 2
    simt.syncthreads()
    out[i] = buf[(t + 1) % simt.blockDim.x]


@pytest.mark.parametrize("threads", [1, 7, 32, 33, 64, 255, 256, 1000, 1024])
def test_shared_exchange(device, rng, threads):
    a = random_array(rng, 2 * threads, np.float64)
    out = poison(2 * threads, np.float64)
    exchange[2, threads](a, out)
    rev = a.reshape(2, threads)[:, ::-1] * 2
    np.testing.assert_array_equal(out, np.roll(rev, -1, axis=1).ravel())


@simt.kernel
def loop_barriers(a, steps, out):
    buf = simt.shared.array(256, np.int64)
    t = simt.threadIdx.x
    n = simt.blockDim.x
    buf[t] = a[t]
    for k in range(steps):                    # rotate by one each step
        simt.syncthreads()
        v = buf[(t + 1) % n]
        simt.syncthreads()
        buf[t] = v + k
    k = 0
    while k < steps:                          # and back
        simt.syncthreads()
        v = buf[(t + n - 1) % n]
        simt.syncthreads()
        buf[t] = v - k
        k += 1
    simt.syncthreads()
    out[t] = buf[t]


@pytest.mark.parametrize("threads, steps", [(1, 3), (33, 5), (256, 2), (8, 0)])
def test_barriers_in_uniform_loops(device, rng, threads, steps):
    a = random_array(rng, threads, np.int64)
    out = poison(threads, np.int64)
    loop_barriers[1, threads](a, steps, out)
    buf = a.copy()
    for k in range(steps):
        buf = np.roll(buf, -1) + k
    for k in range(steps):
        buf = np.roll(buf, 1) - k
    np.testing.assert_array_equal(out, buf)


@simt.kernel
def tree_sum(a, out):
    buf = simt.shared.array(512, np.float64)
    t = simt.threadIdx.x
    buf[t] = a[simt.grid(1)]
    s = simt.blockDim.x // 2
    while s > 0:
        simt.syncthreads()
        if t < s:
            buf[t] += buf[t + s]
        s //= 2
    if t == 0:
        out[simt.blockIdx.x] = buf[0]


@pytest.mark.parametrize("threads", [1, 64, 512])
def test_tree_reduction(device, rng, threads):
    a = rng.integers(-100, 100, 3 * threads).astype(np.float64)    # exact in any order
    out = poison(3, np.float64)
    tree_sum[3, threads](a, out)
    np.testing.assert_array_equal(out, a.reshape(3, threads).sum(axis=1))


@simt.kernel
def votes(a, out):
    i = simt.grid(1)
    p = a[i] > 0
    c = simt.syncthreads_count(p)
    x = simt.syncthreads_and(p)
    o = simt.syncthreads_or(p)
    out[i, 0] = c
    out[i, 1] = x
    out[i, 2] = o


@pytest.mark.parametrize("threads", [1, 33, 256])
def test_syncthreads_count_and_or(device, rng, threads):
    a = random_array(rng, (4, threads), np.int32)
    a[1] = np.abs(a[1])                       # all positive
    a[2] = -np.abs(a[2])                      # none
    out = poison((4 * threads, 3), np.int32)
    votes[4, threads](a.ravel(), out)
    pos = a > 0
    expect = np.stack([pos.sum(1), pos.all(1), pos.any(1)], axis=1)
    np.testing.assert_array_equal(out.reshape(4, threads, 3),
                                  np.repeat(expect[:, None, :], threads, axis=1))


@simt.kernel
def divergent(out):
    t = simt.threadIdx.x
    if t < 5:
        simt.syncthreads()                    # not every thread gets here: undefined in CUDA
    out[t] = t


def test_divergent_barrier_returns(device):
    out = poison(32, np.int32)
    try:
        divergent[1, 32](out)
        simt.synchronize()
    except simt.LaunchError:                 # reporting it is allowed; hanging or crashing is not
        pass
    exchange_ok = poison(8, np.float64)     # the device is still usable
    exchange[1, 8](np.arange(8.0), exchange_ok)
    np.testing.assert_array_equal(exchange_ok, np.roll(np.arange(8.0)[::-1] * 2, -1))
