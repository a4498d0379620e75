"""Warp functions and group collectives inside conditions (issue 12).

A warp function used in an ``if``/``elif``/``while`` condition, a conditional expression, on
either side of ``and``/``or``, in a chained comparison, or through a device function's return
value runs where Python evaluates it and only there, as in CUDA C: in ``if c and
simt.any_sync(m, p)`` only the lanes with ``c`` true run the vote, so ``m`` must name exactly
them (here: ``m = simt.ballot_sync(FULL, c)``, which keeps every test defined on a GPU).
References are NumPy, per warp, on random predicates; blocks of 40 threads end in a partial warp.
"""

import re

import numpy as np
import pytest

import simt
from simt import cg
from conftest import poison

FULL = 0xFFFFFFFF
SIZES = [64, 40]


def warps(a):
    """(first thread, values) of each warp of a one-block launch of len(a) threads."""
    return [(base, a[base:base + 32]) for base in range(0, len(a), 32)]


def bits(sel):
    return int(sum(1 << int(k) for k in np.flatnonzero(sel)))


def values(rng, n, low=-100, high=101):
    return rng.integers(low, high, size=n).astype(np.int32)


# ------------------------------------------------------------------ if / elif
@simt.kernel
def vote_in_if(a, out):
    i = simt.grid(1)
    v = a[i]
    p = v > 0
    r = 0
    if simt.any_sync(0xFFFFFFFF, v > 90):
        r += 1
    if simt.all_sync(0xFFFFFFFF, v > -90):
        r += 2
    if simt.ballot_sync(0xFFFFFFFF, p) & (np.uint32(1) << np.uint32(simt.laneid())):
        r += 4
    if simt.reduce_add_sync(0xFFFFFFFF, 1 if p else 0) > 10:
        r += 8
    if simt.shfl_sync(0xFFFFFFFF, v, 0) > v:
        r += 16
    odd = simt.ballot_sync(0xFFFFFFFF, (v & 1) == 1)
    live = simt.ballot_sync(0xFFFFFFFF, True)
    if simt.match_any_sync(0xFFFFFFFF, v & 1) == (odd if (v & 1) == 1 else live & ~odd):
        r += 32
    out[i] = r


@pytest.mark.parametrize("threads", SIZES)
def test_vote_as_if_condition(device, rng, threads):
    a = values(rng, threads)
    out = poison(threads, np.int32)
    vote_in_if[1, threads](a, out)
    want = np.zeros(threads, np.int32)
    for base, w in warps(a):
        for k, v in enumerate(w):
            want[base + k] = (np.any(w > 90) * 1 + np.all(w > -90) * 2 + (v > 0) * 4
                              + (np.sum(w > 0) > 10) * 8 + (w[0] > v) * 16 + 32)
    np.testing.assert_array_equal(out, want)


@simt.kernel
def vote_in_elif(a, out):
    i = simt.grid(1)
    v = a[i]
    c = v > 0
    rest = simt.ballot_sync(0xFFFFFFFF, not c)          # the lanes that reach the first elif
    if c:
        r = 1
    elif simt.any_sync(rest, v < -50):
        r = 2
    elif simt.all_sync(rest, v < -10):
        r = 3
    else:
        r = 4
    out[i] = r


@pytest.mark.parametrize("threads", SIZES)
def test_vote_as_elif_condition(device, rng, threads):
    for _ in range(4):
        a = values(rng, threads)
        out = poison(threads, np.int32)
        vote_in_elif[1, threads](a, out)
        want = np.zeros(threads, np.int32)
        for base, w in warps(a):
            rest = w[w <= 0]
            second = 2 if np.any(rest < -50) else 3 if np.all(rest < -10) else 4
            want[base:base + len(w)] = np.where(w > 0, 1, second)
        np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------------ while
@simt.kernel
def vote_in_while(a, limit, out):
    i = simt.grid(1)
    x = a[i]
    trips = 0
    while simt.any_sync(0xFFFFFFFF, x > 0):
        x -= 1
        trips += 1
    k = 0
    counted = 0
    while simt.ballot_sync(0xFFFFFFFF, k < a[i]) != 0:
        k += 1
        if k % 3 == 0:
            continue                                     # re-runs the vote at the top
        counted += 1
    j = 0
    while j < limit and simt.any_sync(0xFFFFFFFF, j < a[i]):
        j += 1
    steps = 0
    for _ in range(simt.reduce_max_sync(0xFFFFFFFF, a[i])):     # the bound: evaluated once
        steps += 1
    out[i, 0] = trips
    out[i, 1] = counted
    out[i, 2] = j
    out[i, 3] = steps


@pytest.mark.parametrize("threads", SIZES)
def test_vote_as_while_condition_and_range_bound(device, rng, threads):
    a = values(rng, threads, 0, 40)
    out = poison((threads, 4), np.int32)
    vote_in_while[1, threads](a, 25, out)
    want = np.zeros((threads, 4), np.int32)
    for base, w in warps(a):
        top = w.max()
        want[base:base + len(w)] = [top, top - top // 3, min(top, 25), top]
    np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------------ a if c else b
@simt.kernel
def vote_in_ifexp(a, out):
    i = simt.grid(1)
    v = a[i]
    c = v > 0
    m = simt.ballot_sync(0xFFFFFFFF, c)
    out[i, 0] = simt.reduce_add_sync(m, v) if c else -1            # only lanes with c
    out[i, 1] = -1 if c else simt.reduce_max_sync(~m, v)           # only lanes without
    out[i, 2] = 7 if simt.any_sync(0xFFFFFFFF, v > 90) else 3      # the vote decides


@pytest.mark.parametrize("threads", SIZES)
def test_vote_in_conditional_expression(device, rng, threads):
    a = values(rng, threads)
    out = poison((threads, 3), np.int32)
    vote_in_ifexp[1, threads](a, out)
    want = np.zeros((threads, 3), np.int32)
    for base, w in warps(a):
        pos, neg = w[w > 0], w[w <= 0]
        for k, v in enumerate(w):
            want[base + k] = [pos.sum() if v > 0 else -1, -1 if v > 0 else neg.max(),
                              7 if np.any(w > 90) else 3]
    np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------------ and / or, chains
@simt.kernel
def vote_in_bool_ops(a, out):
    i = simt.grid(1)
    v = a[i]
    c = v > 0
    m = simt.ballot_sync(0xFFFFFFFF, c)
    r = 0
    if c and simt.any_sync(m, v > 50):
        r |= 1
    if not c or simt.all_sync(m, v > 20):
        r |= 2
    if c and simt.reduce_add_sync(m, 1) > 10 and simt.any_sync(m, v > 95):
        r |= 4
    if 0 < v < simt.reduce_max_sync(m, v):
        r |= 8
    flag = simt.any_sync(0xFFFFFFFF, v < -50) or c
    if flag:
        r |= 16
    out[i] = r


@pytest.mark.parametrize("threads", SIZES)
def test_vote_under_and_or(device, rng, threads):
    if device.kind == "sim":
        pytest.skip("its full-mask collectives leave out lanes that exited or took the "
                    "other branch: the sim device reports that (API.md section 8)")
    for _ in range(4):
        a = values(rng, threads)
        out = poison(threads, np.int32)
        vote_in_bool_ops[1, threads](a, out)
        want = np.zeros(threads, np.int32)
        for base, w in warps(a):
            pos = w[w > 0]
            for k, v in enumerate(w):
                c = v > 0
                r = (c and np.any(pos > 50)) * 1
                r |= ((not c) or np.all(pos > 20)) * 2
                r |= (c and len(pos) > 10 and np.any(pos > 95)) * 4
                r |= (0 < v < (pos.max() if c else 0)) * 8
                r |= (np.any(w < -50) or c) * 16
                want[base + k] = r
        np.testing.assert_array_equal(out, want)


@simt.kernel
def collectives_skipped(a, out):
    i = simt.grid(1)
    c = a[i] > 0
    n = simt.math.popc(simt.ballot_sync(0xFFFFFFFF, c))
    # the mask names every lane, which a GPU leaves undefined when some do not arrive; the
    # CPU device counts the lanes that take part: those that evaluate the call
    out[i, 0] = c and simt.reduce_add_sync(0xFFFFFFFF, 1) == n
    out[i, 1] = c or simt.reduce_add_sync(0xFFFFFFFF, 1) == 32 - n
    out[i, 2] = simt.reduce_add_sync(0xFFFFFFFF, 1) if c else -simt.reduce_add_sync(0xFFFFFFFF, 1)


def test_only_lanes_that_evaluate_a_collective_run_it_on_the_cpu(rng):
    with simt.use_device("cpu"):
        a = values(rng, 64)
        out = poison((64, 3), np.int32)
        collectives_skipped[1, 64](a, out)
        want = np.zeros((64, 3), np.int32)
        for base, w in warps(a):
            n = int(np.sum(w > 0))
            want[base:base + 32] = np.stack([w > 0, w == w, np.where(w > 0, n, n - 32)], 1)
        np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------------ device functions
@simt.device
def warp_any(m, p):
    return simt.any_sync(m, p)


@simt.device
def guarded_any(c, m, p):
    return c and simt.any_sync(m, p)


@simt.device
def ballot_if_any(m, p):
    if simt.any_sync(m, p):
        return simt.ballot_sync(m, p)
    return np.uint32(0)


@simt.kernel
def votes_through_device_functions(a, out):
    i = simt.grid(1)
    v = a[i]
    c = v > 0
    m = simt.ballot_sync(0xFFFFFFFF, c)
    r = 0
    if warp_any(0xFFFFFFFF, v > 90):
        r |= 1
    if c and warp_any(m, v > 50):
        r |= 2
    if guarded_any(c, m, v > 30):
        r |= 4
    out[i, 0] = r
    out[i, 1] = ballot_if_any(m, v > 50) if c else np.uint32(0)
    k = 0
    while warp_any(0xFFFFFFFF, k < v):
        k += 1
    out[i, 2] = k


@pytest.mark.parametrize("threads", SIZES)
def test_vote_returned_by_device_function(device, rng, threads):
    if device.kind == "sim":
        pytest.skip("its full-mask collectives leave out lanes that exited or took the "
                    "other branch: the sim device reports that (API.md section 8)")
    a = values(rng, threads)
    out = poison((threads, 3), np.int64)
    votes_through_device_functions[1, threads](a, out)
    want = np.zeros((threads, 3), np.int64)
    for base, w in warps(a):
        pos = w > 0
        for k, v in enumerate(w):
            c = v > 0
            r = np.any(w > 90) * 1 | (c and np.any(w[pos] > 50)) * 2 | (c and np.any(w[pos] > 30)) * 4
            want[base + k] = [r, bits(pos & (w > 50)) if c else 0, max(w.max(), 0)]
    out[:, 1] &= 0xFFFFFFFF
    np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------------ groups
@simt.kernel
def group_votes_in_conditions(a, out):
    i = simt.grid(1)
    v = a[i]
    block = cg.this_thread_block()
    tile = cg.tiled_partition(block, 8)
    even = tile.meta_group_rank() % 2 == 0               # the same for a whole tile
    r = 0
    if tile.any(v > 50):
        r |= 1
    if even and tile.all(v > -50):
        r |= 2
    warp = cg.tiled_partition(block, 32)
    half = cg.binary_partition(warp, v > 0)
    if v > 0 and half.any(v > 70):
        r |= 4
    out[i, 0] = r
    out[i, 1] = cg.reduce(tile, np.float32(v), cg.plus) if even else np.float32(-1)
    k = 0
    while tile.any(k < v):
        k += 1
    out[i, 2] = k


@pytest.mark.parametrize("threads", SIZES)
def test_group_collectives_in_conditions(device, rng, threads):
    if device.kind == "sim":
        pytest.skip("its full-mask collectives leave out lanes that exited or took the "
                    "other branch: the sim device reports that (API.md section 8)")
    a = values(rng, threads)
    out = poison((threads, 3), np.float32)
    group_votes_in_conditions[1, threads](a, out)
    want = np.zeros((threads, 3), np.float32)
    for t in range(threads):
        base = t - t % 8
        tile, v = a[base:base + 8], a[t]
        even = (t // 8) % 2 == 0
        warp = a[t - t % 32:t - t % 32 + 32]
        r = np.any(tile > 50) * 1 | (even and np.all(tile > -50)) * 2
        r |= (v > 0 and np.any(warp[warp > 0] > 70)) * 4
        want[t] = [r, tile.sum() if even else -1, max(tile.max(), 0)]
    np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------------ block collectives
@simt.kernel
def block_collectives_in_conditions(a, out):
    i = simt.grid(1)
    v = a[i]
    r = 0
    if simt.syncthreads_count(v > 0) > simt.blockDim.x // 2:
        r |= 1
    if simt.syncthreads_or(v > 95):
        r |= 2
    k = 0
    while simt.syncthreads_or(k < v):
        k += 1
    out[i, 0] = r
    out[i, 1] = k


@pytest.mark.parametrize("threads", SIZES)
def test_block_collectives_in_conditions(device, rng, threads):
    a = values(rng, threads)
    out = poison((threads, 2), np.int32)
    block_collectives_in_conditions[1, threads](a, out)
    r = (np.sum(a > 0) > threads // 2) * 1 | np.any(a > 95) * 2
    want = np.stack([np.full(threads, r), np.full(threads, max(a.max(), 0))], 1)
    np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------------ the GPU's code, made without a GPU
@simt.kernel
def branch_on_vote(a, out):
    i = simt.grid(1)
    r = 0
    if simt.any_sync(0xFFFFFFFF, a[i] > 0):
        r = 1
    out[i] = r


def test_ptx_branches_on_the_vote():
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions
    from simt.ir import types as T
    binary = compile_kernel(branch_on_vote.typed_ir(T.parse_signature("(int32[:], int32[:])")),
                            CompileOptions(), "sm_90")
    vote = re.search(r"vote\.sync\.any\.pred\s+(%p\d+)", binary.ptx)
    assert vote, binary.ptx
    after = binary.ptx[vote.end():]
    assert re.search(re.escape(vote.group(1)) + r"\b", after), binary.ptx   # its result is used
