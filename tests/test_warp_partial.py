"""Warp functions, tiles and coalesced groups in partial warps (issue 12).

A block whose size is not a multiple of 32 ends in a partial warp. Its missing lanes never
take part, on the GPU as on the CPU device: with a full mask, votes, ballots, matches and
reductions are over the lanes that exist, and every mask a function returns has 0 bits for
the missing lanes (the GPU's match_all_sync returns 0x3FF in a block of 10 threads). A
shuffle from a missing lane is undefined on a GPU (guide B.20); the CPU device gives the
caller's own value, checked on the CPU only. Blocks of 10, 33 (as 11 x 3) and 45 threads.

Which threads ``activemask()`` and ``cg.coalesced_threads()`` return is the device's choice
(threads on one code path may diverge: the H100 split a full warp into 24 + 8 lanes after
tile functions); CUDA defines only that the caller and no missing or exited lane is among
them. The CPU device returns every lane that exists; on a GPU the tests check what is
defined, and the group's results against the lanes the group reported.
"""

import numpy as np
import pytest

import simt
from simt import cg
from conftest import poison

FULL = 0xFFFFFFFF
BLOCKS = [10, (11, 3), 45]
IDS = ["10", "11x3", "45"]


def count(block):
    return int(np.prod(block))


@simt.kernel
def warp_functions(a, out):
    i = simt.threadIdx.x + simt.threadIdx.y * simt.blockDim.x
    v = a[i]
    out[i, 0] = simt.ballot_sync(0xFFFFFFFF, v > 0)
    out[i, 1] = simt.any_sync(0xFFFFFFFF, v > 90)
    out[i, 2] = simt.all_sync(0xFFFFFFFF, v > -90)
    out[i, 3] = simt.activemask()
    out[i, 4] = simt.match_any_sync(0xFFFFFFFF, v & 3)
    m, p = simt.match_all_sync(0xFFFFFFFF, v - v + 5)      # equal everywhere
    out[i, 5] = m
    out[i, 6] = p
    m, p = simt.match_all_sync(0xFFFFFFFF, np.float64(v))
    out[i, 7] = m
    out[i, 8] = p
    out[i, 9] = simt.reduce_add_sync(0xFFFFFFFF, v)
    out[i, 10] = simt.reduce_min_sync(0xFFFFFFFF, v)
    out[i, 11] = simt.reduce_max_sync(0xFFFFFFFF, v)
    out[i, 12] = simt.reduce_and_sync(0xFFFFFFFF, v)
    out[i, 13] = simt.reduce_or_sync(0xFFFFFFFF, v)
    out[i, 14] = simt.reduce_xor_sync(0xFFFFFFFF, v)
    out[i, 15] = simt.shfl_sync(0xFFFFFFFF, v, 0)          # lane 0 always exists
    out[i, 16] = simt.shfl_down_sync(0xFFFFFFFF, v, 1)
    out[i, 17] = simt.shfl_up_sync(0xFFFFFFFF, v, 1)
    out[i, 18] = simt.shfl_xor_sync(0xFFFFFFFF, v, 1)
    out[i, 19] = simt.shfl_sync(0xFFFFFFFF, v, 31)         # the last lane: missing if partial


def warp_reference(a):
    """(expected, defined on a GPU) for warp_functions."""
    n = len(a)
    want, defined = np.zeros((n, 20), np.int64), np.ones((n, 20), bool)
    for base in range(0, n, 32):
        w = a[base:base + 32]
        lanes = len(w)
        live = (1 << lanes) - 1
        bits = lambda sel: int(sum(1 << int(k) for k in np.flatnonzero(sel)))
        same = len(set(w.tolist())) == 1
        row = [bits(w > 0), np.any(w > 90), np.all(w > -90), live, 0, live, 1,
               live if same else 0, int(same), w.sum(), w.min(), w.max(),
               np.bitwise_and.reduce(w), np.bitwise_or.reduce(w), np.bitwise_xor.reduce(w)]
        for k in range(lanes):
            t = base + k
            want[t, :15] = row
            want[t, 4] = bits((w & 3) == (w[k] & 3))
            shuffles = [(0, 15), (k + 1 if k < 31 else k, 16), (k - 1 if k > 0 else k, 17),
                        (k ^ 1, 18), (31, 19)]
            for source, col in shuffles:
                if source < lanes:
                    want[t, col] = w[source]
                else:                                  # undefined on a GPU
                    want[t, col], defined[t, col] = w[k], False
    return want, defined


@pytest.mark.parametrize("block", BLOCKS, ids=IDS)
def test_warp_functions_in_a_partial_warp(device, rng, block):
    n = count(block)
    a = rng.integers(-100, 101, size=n).astype(np.int32)
    out = poison((n, 20), np.int64)
    warp_functions[1, block](a, out)
    want, defined = warp_reference(a)
    got = out.copy()
    got[:, [0, 3, 4, 5, 7]] &= 0xFFFFFFFF
    if device.kind != "cpu":
        # activemask: the caller and only lanes that exist; which others is the GPU's choice
        # (threads on one code path may diverge, guide __activemask)
        lanes = np.arange(n) % 32
        live = np.array([(1 << min(32, n - t + t % 32)) - 1 for t in range(n)])
        assert np.all((got[:, 3] >> lanes & 1 == 1) & (got[:, 3] & ~live == 0))
        defined[:, 3] = False
        got, want = got[defined], want[defined]
    np.testing.assert_array_equal(got, want)


@simt.kernel
def match_all_of_ten(out):
    i = simt.threadIdx.x
    m, p = simt.match_all_sync(0xFFFFFFFF, 1)
    out[i] = m


def test_match_all_in_a_block_of_ten_names_the_ten_lanes(device):
    # the case: 0x3FF, as the GPU returns, not the mask 0xFFFFFFFF
    out = poison(10, np.uint32)
    match_all_of_ten[1, 10](out)
    np.testing.assert_array_equal(out, np.full(10, 0x3FF, np.uint32))


@simt.kernel
def group_functions(a, out):
    i = simt.threadIdx.x + simt.threadIdx.y * simt.blockDim.x
    v = a[i]
    block = cg.this_thread_block()
    t32 = cg.tiled_partition(block, 32)
    t8 = cg.tiled_partition(block, 8)
    out[i, 0] = t32.ballot(v > 0)
    out[i, 1] = t8.ballot(v > 0)
    out[i, 2] = t8.any(v > 50)
    out[i, 3] = t8.all(v > -50)
    out[i, 4] = t8.match_any(v & 1)
    m, p = t8.match_all(v - v + 1)
    out[i, 5] = m
    out[i, 6] = p
    m, p = t32.match_all(v - v + 1)
    out[i, 7] = m
    out[i, 8] = p
    out[i, 9] = cg.reduce(t8, v, cg.plus)
    g = cg.coalesced_threads()
    out[i, 10] = g.size()
    out[i, 11] = g.thread_rank()
    out[i, 12] = g.ballot(v > 0)
    out[i, 13] = g.match_any(v & 1)
    m, p = g.match_all(v - v + 1)
    out[i, 14] = m
    out[i, 15] = p
    out[i, 16] = cg.reduce(g, v, cg.plus)
    out[i, 17] = cg.reduce(g, np.float64(v), cg.plus)
    out[i, 18] = g.shfl(v, g.size() - 1)
    half = cg.binary_partition(t32, v > 0)
    out[i, 19] = half.size()
    out[i, 20] = cg.reduce(half, np.float64(v), cg.plus)
    out[i, 21] = cg.reduce(g, np.uint32(1) << simt.laneid(), cg.bit_or)    # g's lanes


def group_reference(a, members):
    """Expected group_functions results. ``members``: per thread, the lanes of its
    coalesced group, as the device reported them (column 21): which threads
    coalesced_threads() returns is the device's choice (below)."""
    n = len(a)
    want = np.zeros((n, 22), np.int64)
    bits = lambda sel: int(sum(1 << int(k) for k in np.flatnonzero(sel)))
    for t in range(n):
        v, lane, base = a[t], t % 32, t - t % 32
        w = a[base:base + 32]
        tile = a[t - t % 8:t - t % 8 + 8]
        side = w[(w > 0) == (v > 0)]
        lanes = [k for k in range(32) if members[t] >> k & 1]
        g = a[[base + k for k in lanes if base + k < n]]
        want[t] = [bits(w > 0), bits(tile > 0), np.any(tile > 50), np.all(tile > -50),
                   bits((tile & 1) == (v & 1)), (1 << len(tile)) - 1, 1, (1 << len(w)) - 1, 1,
                   tile.sum(), len(lanes), lanes.index(lane) if lane in lanes else -1,
                   bits(g > 0), bits((g & 1) == (v & 1)), (1 << len(g)) - 1, 1, g.sum(),
                   g.sum(), g[-1], len(side), side.sum(), members[t]]
    return want


def check_members(members, n, cpu):
    """What CUDA defines of coalesced_threads() in code no branch divides (guide C.4.2.1
    and __activemask): the calling thread and only threads that exist and are active, the
    same set for each of them; which ones is unspecified (the H100 split full warps into
    24 + 8 lanes after the tile functions above). The CPU device: every lane that exists."""
    for base in range(0, n, 32):
        live = (1 << min(32, n - base)) - 1
        for t in range(base, min(base + 32, n)):
            m = int(members[t])
            assert m >> (t - base) & 1 and m & ~live == 0, (t, hex(m))
            for k in range(32):
                if m >> k & 1:
                    assert members[base + k] == m, (t, base + k, hex(m))
            if cpu:
                assert m == live, (t, hex(m))


@pytest.mark.parametrize("block", [(4, 10), 72], ids=["4x10", "72"])
def test_groups_in_a_partial_warp(device, rng, block):
    # tiles of 8 in blocks whose size 8 divides (CUDA's rule for tiled_partition), the last
    # warp partial; coalesced groups need no such rule
    n = count(block)
    a = rng.integers(-100, 101, size=n).astype(np.int32)
    out = poison((n, 22), np.int64)
    group_functions[1, block](a, out)
    got = out.copy()
    got[:, [0, 1, 4, 5, 7, 12, 13, 14, 21]] &= 0xFFFFFFFF
    check_members(got[:, 21], n, device.kind == "cpu")
    np.testing.assert_array_equal(got, group_reference(a, got[:, 21]))
