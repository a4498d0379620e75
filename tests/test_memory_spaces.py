"""Shared, dynamic shared, local, constant and __device__ global memory (API.md 2-3)."""

import numpy as np
import pytest

import simt
from conftest import poison, random_array

TABLE = np.array([3.5, -1.25, 8.0, 0.5, 2.0, -7.0, 1.0, 4.25])
COEFFS = simt.Constant(np.arange(1, 9, dtype=np.float64))
COUNTS = simt.Global((2, 16), np.int32)


@simt.kernel
def reverse_static(a, out):
    buf = simt.shared.array(64, np.float32)
    grid2 = simt.shared.array((2, 64), np.int32)
    t = simt.threadIdx.x
    i = simt.grid(1)
    buf[t] = a[i]
    grid2[0, t] = t
    grid2[1, t] = -t
    simt.syncthreads()
    r = simt.blockDim.x - 1 - t
    out[i] = buf[r] + grid2[0, r] + grid2[1, r]


def test_static_shared(device, rng):
    a = random_array(rng, 128, np.float32)
    out = poison(128, np.float32)
    reverse_static[2, 64](a, out)
    np.testing.assert_array_equal(out, a.reshape(2, 64)[:, ::-1].ravel())


@simt.kernel
def reverse_dynamic(a, out):
    buf = simt.shared.dynamic(np.float64)
    t = simt.threadIdx.x
    i = simt.grid(1)
    buf[t] = a[i]
    buf[t + simt.blockDim.x] = a[i] * 2
    simt.syncthreads()
    out[i] = buf[simt.blockDim.x - 1 - t] + buf[2 * simt.blockDim.x - 1 - t]


@pytest.mark.parametrize("threads", [1, 17, 64])
def test_dynamic_shared(device, rng, threads):
    a = random_array(rng, 3 * threads, np.float64)
    out = poison(3 * threads, np.float64)
    reverse_dynamic[3, threads, 2 * threads * 8](a, out)
    np.testing.assert_array_equal(out, 3 * a.reshape(3, threads)[:, ::-1].ravel())


@simt.kernel
def local_sort(a, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        tmp = simt.local.array(8, np.int64)
        for k in range(8):
            tmp[k] = a[i, k]
        for k in range(1, 8):                 # insertion sort in thread-private memory
            v = tmp[k]
            j = k - 1
            while j >= 0 and tmp[j] > v:
                tmp[j + 1] = tmp[j]
                j -= 1
            tmp[j + 1] = v
        for k in range(8):
            out[i, k] = tmp[k]


def test_local_arrays(device, rng):
    a = random_array(rng, (40, 8), np.int64)
    out = poison((40, 8), np.int64)
    local_sort[2, 32](a, out)
    np.testing.assert_array_equal(out, np.sort(a, axis=1))


@simt.kernel
def const_lookup(idx, out):
    table = simt.const.array_like(TABLE)
    i = simt.grid(1)
    if i < idx.shape[0]:
        out[i] = table[idx[i]] * COEFFS[idx[i]]


def test_const_array_like_and_constant_symbol(device, rng):
    idx = rng.integers(0, 8, 50).astype(np.int32)
    out = poison(50, np.float64)
    const_lookup[2, 32](idx, out)
    np.testing.assert_array_equal(out, TABLE[idx] * np.arange(1, 9)[idx])
    new = random_array(rng, 8, np.float64)
    COEFFS.copy_from(new)                     # cudaMemcpyToSymbol; the kernel is not recompiled
    try:
        out = poison(50, np.float64)
        const_lookup[2, 32](idx, out)
        np.testing.assert_array_equal(out, TABLE[idx] * new[idx])
    finally:
        COEFFS.copy_from(np.arange(1, 9, dtype=np.float64))


@simt.kernel
def bump_global(a):
    i = simt.grid(1)
    if i < 16:
        COUNTS[0, i] = COUNTS[0, i] + a[i]
        COUNTS[1, i] = i


def test_global_symbol(device, rng):
    start = random_array(rng, (2, 16), np.int32)
    COUNTS.copy_from(start)
    a = random_array(rng, 16, np.int32)
    bump_global[1, 16](a)
    bump_global[1, 16](a)
    got = COUNTS.copy_to_host()
    np.testing.assert_array_equal(got[0], start[0] + 2 * a)
    np.testing.assert_array_equal(got[1], np.arange(16))
