"""Cooperative groups passed to device functions (compiler/group_args.py): blocks, tiles,
coalesced groups and the grid, each with the kernel's own group semantics, nested calls
included, against NumPy references."""
import numpy as np
import pytest

import simt
from simt import cg
from conftest import poison, random_array

THREADS = 64


@simt.device
def group_sum(g, v):
    return cg.reduce(g, v, cg.plus)


@simt.device
def rank_of(g):
    return g.thread_rank()


@simt.device
def size_times(g, k):
    return g.size() * k


@simt.device
def nested_sum(g, v):
    return group_sum(g, v) + rank_of(g) * 0 + 1


@simt.device
def block_reverse(block, s, v):
    s[block.thread_rank()] = v
    block.sync()
    return s[block.size() - 1 - block.thread_rank()]


@simt.kernel
def groups_in_functions(a, out):
    s = simt.shared.array(THREADS, np.int32)
    block = cg.this_thread_block()
    tile = cg.tiled_partition(block, 8)
    i = simt.grid(1)
    v = a[i]
    out[i, 0] = group_sum(tile, v)
    out[i, 1] = rank_of(tile) + 100 * rank_of(block)
    out[i, 2] = size_times(tile, 3) + size_times(block, 1000)
    out[i, 3] = nested_sum(tile, v)
    out[i, 4] = rank_of(cg.this_grid())
    out[i, 5] = block_reverse(block, s, v)
    out[i, 6] = -1
    out[i, 7] = -1
    if v > 0:
        active = cg.coalesced_threads()
        out[i, 6] = group_sum(active, v)
        out[i, 7] = rank_of(active) + 100 * size_times(active, 1)


def reference(a):
    n = len(a)
    want = np.zeros((n, 8), np.int64)
    for t in range(n):
        lane, block_rank = t % 32, t % THREADS
        tile = a[t - t % 8: t - t % 8 + 8]
        want[t, 0] = tile.sum()
        want[t, 1] = t % 8 + 100 * block_rank
        want[t, 2] = 8 * 3 + THREADS * 1000
        want[t, 3] = tile.sum() + 1
        want[t, 4] = t
        base = t - block_rank
        want[t, 5] = a[base + THREADS - 1 - block_rank]
        warp = a[t - lane: t - lane + 32]
        if a[t] > 0:
            positive = warp > 0
            want[t, 6] = warp[positive].sum()
            want[t, 7] = np.count_nonzero(positive[:lane]) + 100 * np.count_nonzero(positive)
        else:
            want[t, 6:8] = -1
    return want


def test_groups_pass_to_device_functions(device, rng):
    a = random_array(rng, 2 * THREADS, np.int32)
    out = poison((2 * THREADS, 8), np.int64)
    groups_in_functions[2, THREADS](a, out)
    np.testing.assert_array_equal(out, reference(a))


def test_one_device_function_typed_per_group_kind():
    ptx = groups_in_functions.inspect_ptx("void(int32[:], int64[:, :])")
    assert "redux.sync.add" in ptx and "bar.sync" in ptx and "activemask" in ptx
    keys = list(rank_of.ir_cache)
    kinds = {k[1][0][1][0] for k, _warp in keys if isinstance(k[1], tuple) and k[1]}
    assert {"Tile", "ThreadBlock", "Grid", "Coalesced"} <= kinds


@simt.device
def bad_group_use(g):
    return g.no_such_method()


def test_unknown_group_method_in_device_function():
    def kernel(out):
        block = cg.this_thread_block()
        out[0] = bad_group_use(block)
    with pytest.raises(simt.CompileError, match="(?s)g has no attribute 'no_such_method'.*bad_group_use"):
        simt.kernel(kernel).inspect_types("void(int32[:])")


@simt.device
def reassigns_group(g, v):
    g = v
    return g


def test_assigning_to_a_group_parameter():
    def kernel(out):
        out[0] = reassigns_group(cg.this_thread_block(), 1)
    with pytest.raises(simt.CompileError, match=r"'g' names a group \(ThreadBlock\) and cannot "
                       "be reassigned"):
        simt.kernel(kernel).inspect_types("void(int32[:])")
