"""Atomics (API.md 2, guide B.14) on every allowed dtype, in global and shared memory."""

import numpy as np
import pytest

import simt
from conftest import poison

N = 64           # threads: 2 blocks of 32 for global memory, one block of 64 for shared


@simt.kernel
def float_ops_global(slots, vals, olds):
    i = simt.grid(1)
    v = vals[i]
    olds[0, i] = simt.atomic.add(slots, 0, v)
    olds[1, i] = simt.atomic.sub(slots, 1, v)
    olds[2, i] = simt.atomic.exch(slots, 2, v)
    olds[3, i] = simt.atomic.min(slots, 3, v)
    olds[4, i] = simt.atomic.max(slots, (4,), v)
    old = slots[5]                            # a cas loop counting threads
    while True:
        seen = simt.atomic.cas(slots, 5, old, old + 1)
        if seen == old:
            break
        old = seen
    olds[5, i] = seen
    olds[6, i] = simt.atomic.add(slots, 6, 1)


@simt.kernel
def int_ops_global(slots, vals, bits, olds):
    i = simt.grid(1)
    v = vals[i]
    olds[0, i] = simt.atomic.add(slots, 0, v)
    olds[1, i] = simt.atomic.sub(slots, 1, v)
    olds[2, i] = simt.atomic.exch(slots, 2, v)
    olds[3, i] = simt.atomic.min(slots, 3, v)
    olds[4, i] = simt.atomic.max(slots, (4,), v)
    old = slots[5]
    while True:
        seen = simt.atomic.cas(slots, 5, old, old + 1)
        if seen == old:
            break
        old = seen
    olds[5, i] = seen
    olds[6, i] = simt.atomic.add(slots, 6, 1)
    olds[7, i] = simt.atomic.inc(slots, 7, 9)
    olds[8, i] = simt.atomic.dec(slots, 8, 9)
    olds[9, i] = simt.atomic.and_(slots, 9, bits[i])
    olds[10, i] = simt.atomic.or_(slots, 10, bits[i])
    olds[11, i] = simt.atomic.xor(slots, 11, bits[i])


@simt.kernel
def int_ops_shared(init, vals, bits, slots_out, olds):
    sh = simt.shared.array(12, np.int64)
    i = simt.threadIdx.x
    if i < 12:
        sh[i] = init[i]
    simt.syncthreads()
    v = vals[i]
    olds[0, i] = simt.atomic.add(sh, 0, v)
    olds[1, i] = simt.atomic.sub(sh, 1, v)
    olds[2, i] = simt.atomic.exch(sh, 2, v)
    olds[3, i] = simt.atomic.min(sh, 3, v)
    olds[4, i] = simt.atomic.max(sh, 4, v)
    olds[6, i] = simt.atomic.add(sh, 6, 1)
    olds[7, i] = simt.atomic.inc(sh, 7, 9)
    olds[8, i] = simt.atomic.dec(sh, 8, 9)
    olds[9, i] = simt.atomic.and_(sh, 9, bits[i])
    olds[10, i] = simt.atomic.or_(sh, 10, bits[i])
    olds[11, i] = simt.atomic.xor(sh, 11, bits[i])
    simt.syncthreads()
    if i < 12:
        slots_out[i] = sh[i]


INIT = [1000, 5000, 7, 50, 3, 0, 0, 0, 5, -1, 0, 0]


def inputs(rng, dtype):
    vals = rng.integers(1, 101, N).astype(dtype)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    bits = rng.integers(0, 1 << 16, N).astype(dtype) if info else None
    init = np.array(INIT, dtype=np.int64).astype(dtype) if info else \
        np.array(INIT[:7], dtype=dtype)
    return init, vals, bits


def check_common(slots, olds, init, vals):
    dtype = vals.dtype
    assert slots[0] == init[0] + vals.sum(dtype=dtype)
    assert slots[1] == init[1] - vals.sum(dtype=dtype)
    # exch: the olds and the final value together are init[2] and every val
    np.testing.assert_array_equal(np.sort(np.append(olds[2], slots[2])),
                                  np.sort(np.append(vals, init[2])))
    assert slots[3] == min(init[3], vals.min()) and slots[4] == max(init[4], vals.max())
    np.testing.assert_array_equal(np.sort(olds[6]), init[6] + np.arange(N))
    assert slots[6] == init[6] + N


def check_ints(slots, olds, init, bits):
    assert slots[7] == N % 10 and np.sort(olds[7]).tolist() == sorted(k % 10 for k in range(N))
    assert slots[8] == (5 - N) % 10
    assert slots[9] == init[9] & np.bitwise_and.reduce(bits)
    assert slots[10] == np.bitwise_or.reduce(bits)
    assert slots[11] == np.bitwise_xor.reduce(bits)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
def test_float_atomics_global(device, rng, dtype):
    init, vals, _ = inputs(rng, dtype)
    slots, olds = init.copy(), poison((7, N), dtype)
    float_ops_global[2, 32](slots, vals, olds)
    check_common(slots, olds, init, vals)
    assert slots[5] == N and sorted(olds[5]) == list(range(N))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64],
                         ids=lambda d: d.__name__)
def test_int_atomics_global(device, rng, dtype):
    init, vals, bits = inputs(rng, dtype)
    slots, olds = init.copy(), poison((12, N), dtype)
    with np.errstate(over="ignore"):
        int_ops_global[2, 32](slots, vals, bits, olds)
        check_common(slots, olds, init, vals)
    assert slots[5] == N and sorted(olds[5]) == list(range(N))
    check_ints(slots, olds, init, bits)


@pytest.mark.parametrize("dtype", [np.int64], ids=lambda d: d.__name__)
def test_int_atomics_shared(device, rng, dtype):
    init, vals, bits = inputs(rng, dtype)
    slots, olds = poison(12, dtype), poison((12, N), dtype)
    int_ops_shared[1, N](init, vals, bits, slots, olds)
    check_common(slots, olds, init, vals)
    check_ints(slots, olds, init, bits)


def make_shared_kernel(dtype):
    @simt.kernel
    def shared_ops(init, vals, slots_out, olds):
        sh = simt.shared.array(7, dtype)
        i = simt.threadIdx.x
        if i < 7:
            sh[i] = init[i]
        simt.syncthreads()
        v = vals[i]
        olds[0, i] = simt.atomic.add(sh, 0, v)
        olds[1, i] = simt.atomic.sub(sh, 1, v)
        olds[2, i] = simt.atomic.exch(sh, 2, v)
        olds[3, i] = simt.atomic.min(sh, 3, v)
        olds[4, i] = simt.atomic.max(sh, 4, v)
        olds[5, i] = simt.atomic.cas(sh, 5, 0, i + 1)
        olds[6, i] = simt.atomic.add(sh, 6, 1)
        simt.syncthreads()
        if i < 7:
            slots_out[i] = sh[i]
    return shared_ops


SHARED_KERNELS = {np.dtype(t): make_shared_kernel(t) for t in
                  (np.int32, np.uint32, np.uint64, np.float32, np.float64)}


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.uint64, np.float32, np.float64],
                         ids=lambda d: d.__name__)
def test_atomics_shared(device, rng, dtype):
    init, vals, _ = inputs(rng, dtype)
    init = init[:7]
    slots, olds = poison(7, dtype), poison((7, N), dtype)
    with np.errstate(over="ignore"):
        SHARED_KERNELS[np.dtype(dtype)][1, N](init, vals, slots, olds)
        check_common(slots, olds, init, vals)
    # cas(sh, 5, 0, i + 1): exactly one thread sees 0 and installs its value
    assert (olds[5] == 0).sum() == 1
    winner = int(np.flatnonzero(olds[5] == 0)[0])
    assert slots[5] == winner + 1 and (olds[5][olds[5] != 0] == winner + 1).all()


@simt.kernel
def float_cas_bitwise(a, out):
    out[0] = simt.atomic.cas(a, 0, -0.0, 1.0)     # -0.0 == 0.0, but not bitwise
    out[1] = simt.atomic.cas(a, 1, a[1], 2.0)     # NaN != NaN, but bitwise equal


def test_float_cas_compares_bitwise(device):
    a = np.array([0.0, np.nan])
    out = poison(2, np.float64)
    float_cas_bitwise[1, 1](a, out)
    assert a[0] == 0.0 and not np.signbit(a[0]) and a[1] == 2.0


@simt.kernel
def atomic_2d(hist, keys):
    i = simt.grid(1)
    if i < keys.shape[0]:
        simt.atomic.add(hist, (keys[i] // 4, keys[i] % 4), 1)


def test_atomic_tuple_index_histogram(device, rng):
    keys = rng.integers(0, 12, 500).astype(np.int32)
    hist = np.zeros((3, 4), np.uint32)
    atomic_2d[4, 128](hist, keys)
    np.testing.assert_array_equal(hist.ravel(), np.bincount(keys, minlength=12))


@simt.kernel
def atomic_float_on_ints_only(a):
    simt.atomic.and_(a, 0, 1)


def test_bitwise_atomics_refuse_floats(device):
    with pytest.raises(simt.CompileError, match="and_"):
        atomic_float_on_ints_only[1, 1](np.zeros(1, np.float32))
