"""Odds and ends of the kernel language: simt.uni_sync (CUDA's __uni_sync), a bare
``warpSize`` imported from simt, and a kernel launched from a kernel (dynamic parallelism,
refused at compile time with the line)."""
import numpy as np
import pytest

import simt
from simt import warpSize
from conftest import poison, random_array

FULL = 0xFFFFFFFF


@simt.kernel
def uni(a, limit, out):
    i = simt.grid(1)
    w = i // warpSize
    v = a[i]
    out[i, 0] = simt.uni_sync(FULL, v > limit[w])
    out[i, 1] = -1
    if v > 0:                                         # a divergent branch: part of the warp
        out[i, 1] = simt.uni_sync(simt.activemask(), v > limit[w] + 50)
    out[i, 2] = warpSize + simt.warpSize


def uni_reference(a, limit):
    n = len(a)
    want = np.zeros((n, 3), np.int64)
    for t in range(n):
        lane, w = t % 32, t // 32
        warp = a[t - lane: t - lane + 32]
        p = warp > limit[w]
        want[t, 0] = int(p.all() or not p.any())
        if a[t] > 0:
            q = warp[warp > 0] > limit[w] + 50
            want[t, 1] = int(q.all() or not q.any())
        else:
            want[t, 1] = -1
        want[t, 2] = 64
    return want


def test_uni_sync(device, rng):
    a = random_array(rng, 128, np.int32)
    limit = np.array([-1000, 1000, 0, -60], np.int32)   # all true, all false, mixed, mixed
    out = poison((128, 3), np.int64)
    uni[2, 64](a, limit, out)
    want = uni_reference(a, limit)
    assert want[:32, 0].all() and want[32:64, 0].all() and not want[64:96, 0].any()
    np.testing.assert_array_equal(out, want)


def test_uni_sync_ptx():
    ptx = uni.inspect_ptx("void(int32[:], int32[:], int64[:, :])")
    assert "vote.sync.uni.pred" in ptx


@simt.kernel
def child(out):
    out[simt.threadIdx.x] = 1


def parent_call(out):
    child(out)


def test_a_kernel_called_without_a_launch_is_refused():
    """A kernel launches a kernel with child[grid, block](...) (tests/test_dynamic_parallelism.py);
    calling it like a function is refused at the line."""
    k = simt.kernel(parent_call)
    with pytest.raises(simt.CompileError, match=r"(?s)kernel 'child' is named here without a "
                       r"launch.*test_warp_extras.py:\d+.*child\(out\)") as info:
        k.inspect_types("void(int32[:])")
    assert "child[grid, block](args)" in str(info.value)
