"""Cooperative groups (guide appendix C): thread blocks, tiles and their collectives,
coalesced groups, cg.reduce, and grid sync under a cooperative launch."""

import numpy as np
import pytest

import simt
from simt import cg
from conftest import poison, random_array


@simt.kernel
def block_group(data, out):                       # C.4.1.1
    x = simt.shared.array(1, np.int32)
    g = cg.this_thread_block()
    if g.thread_rank() == 0:
        x[0] = data[0]
    g.sync()
    r = g.thread_rank()
    bx, by, bz = g.group_index()
    tx, ty, tz = g.thread_index()
    out[bx, r, 0] = x[0] + r
    out[bx, r, 1] = g.size()
    out[bx, r, 2] = tx + 10 * ty


def test_thread_block(device):
    out = poison((2, 24, 3), np.int32)
    block_group[2, (4, 6)](np.array([7], np.int32), out)
    r = np.arange(24)
    np.testing.assert_array_equal(out[:, :, 0], np.tile(7 + r, (2, 1)))
    assert (out[:, :, 1] == 24).all()
    np.testing.assert_array_equal(out[0, :, 2], (r % 4) + 10 * (r // 4))


@simt.kernel
def tiles(a, out):
    block = cg.this_thread_block()
    t32 = cg.tiled_partition(block, 32)
    t4 = cg.tiled_partition(t32, 4)
    i = block.thread_rank()
    v = a[i]
    out[i, 0] = t4.thread_rank()
    out[i, 1] = t4.meta_group_rank()
    out[i, 2] = t32.meta_group_rank()
    out[i, 3] = t4.shfl(v, 3)
    out[i, 4] = t4.shfl_down(v, 1)
    out[i, 5] = t4.shfl_up(v, 2)
    out[i, 6] = t4.shfl_xor(v, 1)
    out[i, 7] = t4.ballot(v > 0)
    out[i, 8] = t4.any(v > 90)
    out[i, 9] = t4.all(v > 0)
    out[i, 10] = t32.meta_group_size()
    if t32.meta_group_rank() == 0:                # C.4.2.1.1: only the first tile
        t32.sync()
        out[i, 11] = t32.shfl(v, 31)
    else:
        out[i, 11] = -1


def test_tiles(device, rng):
    a = random_array(rng, 64, np.int32)
    out = poison((64, 12), np.int64)
    tiles[1, 64](a, out)
    r = np.arange(64)
    g = a.reshape(-1, 4)
    np.testing.assert_array_equal(out[:, 0], r % 4)
    np.testing.assert_array_equal(out[:, 1], (r % 32) // 4)
    np.testing.assert_array_equal(out[:, 2], r // 32)
    np.testing.assert_array_equal(out[:, 3], np.repeat(g[:, 3], 4))
    down = np.where(r % 4 < 3, a[np.minimum(r + 1, 63)], a)
    np.testing.assert_array_equal(out[:, 4], down)
    up = np.where(r % 4 >= 2, a[np.maximum(r - 2, 0)], a)
    np.testing.assert_array_equal(out[:, 5], up)
    np.testing.assert_array_equal(out[:, 6], a[r ^ 1])
    ballot = ((g > 0) * (1 << np.arange(4))).sum(1)
    np.testing.assert_array_equal(out[:, 7], np.repeat(ballot, 4))
    np.testing.assert_array_equal(out[:, 8], np.repeat((g > 90).any(1), 4))
    np.testing.assert_array_equal(out[:, 9], np.repeat((g > 0).all(1), 4))
    assert (out[:, 10] == 2).all()
    np.testing.assert_array_equal(out[:32, 11], np.full(32, a[31]))
    assert (out[32:, 11] == -1).all()


@simt.kernel
def coalesced(chosen, out, counter):
    lane = simt.laneid()
    i = simt.grid(1)
    if (chosen >> lane) & 1:                      # C.4.2.2: only some lanes
        active = cg.coalesced_threads()
        out[i, 0] = active.thread_rank()
        out[i, 1] = active.size()
        prev = 0                                  # C.4.2.2.1: aggregated atomic increment
        if active.thread_rank() == 0:
            prev = simt.atomic.add(counter, 0, active.size())
        out[i, 2] = active.thread_rank() + active.shfl(prev, 0)
        out[i, 3] = active.shfl_down(i, 1)
        active.sync()
    else:
        out[i, 0] = -1


def test_coalesced_threads(device):
    chosen = (1 << 2) | (1 << 4) | (1 << 8) | (1 << 30)
    out = poison((64, 4), np.int64)
    counter = np.zeros(1, np.int32)
    coalesced[1, 64](np.uint32(chosen), out, counter)
    lanes = [2, 4, 8, 30]
    members = [w * 32 + k for w in range(2) for k in lanes]
    assert counter[0] == 8
    assert sorted(out[members, 2]) == list(range(8))
    for w in range(2):
        rows = out[[w * 32 + k for k in lanes]]
        np.testing.assert_array_equal(rows[:, 0], range(4))
        assert (rows[:, 1] == 4).all()
        np.testing.assert_array_equal(rows[:, 3], [w * 32 + k for k in (4, 8, 30, 30)])
    others = [t for t in range(64) if t not in members]
    assert (out[others, 0] == -1).all()


@simt.kernel
def block_reduce(A, sums, minmax):                # C.6.3.1, for every tile size
    reduction_s = simt.shared.array(256, np.int32)
    cta = cg.this_thread_block()
    tile = cg.tiled_partition(cta, 32)
    tid = cta.thread_rank()
    beta = A[tid]
    reduction_s[tid] = cg.reduce(tile, beta, cg.plus)
    cg.sync(cta)
    if cta.thread_rank() == 0:
        beta = 0
        for i in range(0, 256, tile.size()):
            beta += reduction_s[i]
        sums[simt.blockIdx.x] = beta
    t8 = cg.tiled_partition(cta, 8)
    t2 = cg.tiled_partition(cta, 2)
    t1 = cg.tiled_partition(cta, 1)
    f = np.float64(A[tid]) / 4
    minmax[tid, 0] = cg.reduce(t8, A[tid], cg.less)
    minmax[tid, 1] = cg.reduce(t8, A[tid], cg.greater)
    minmax[tid, 2] = cg.reduce(t8, f, cg.plus)
    minmax[tid, 3] = cg.reduce(t2, A[tid], cg.bit_xor)
    minmax[tid, 4] = cg.reduce(tile, f, cg.greater)
    minmax[tid, 5] = cg.reduce(t1, A[tid], cg.plus)
    minmax[tid, 6] = cg.reduce(cg.tiled_partition(cta, 16), A[tid], cg.bit_or)


def test_cg_reduce(device, rng):
    a = random_array(rng, 256, np.int32)
    sums = poison(1, np.int32)
    mm = poison((256, 7), np.float64)
    block_reduce[1, 256](a, sums, mm)
    assert sums[0] == a.sum()
    g8 = a.reshape(-1, 8)
    np.testing.assert_array_equal(mm[:, 0], np.repeat(g8.min(1), 8))
    np.testing.assert_array_equal(mm[:, 1], np.repeat(g8.max(1), 8))
    np.testing.assert_array_equal(mm[:, 2], np.repeat((g8 / 4).sum(1), 8))
    np.testing.assert_array_equal(mm[:, 3], np.repeat(np.bitwise_xor.reduce(a.reshape(-1, 2), 1), 2))
    np.testing.assert_array_equal(mm[:, 4], np.repeat(a.reshape(-1, 32).max(1) / 4, 32))
    np.testing.assert_array_equal(mm[:, 5], a)
    np.testing.assert_array_equal(mm[:, 6], np.repeat(np.bitwise_or.reduce(a.reshape(-1, 16), 1), 16))


@simt.kernel
def grid_sum(a, partial, out):
    grid = cg.this_grid()
    block = cg.this_thread_block()
    tile = cg.tiled_partition(block, 32)
    acc = np.float64(0)
    i = grid.thread_rank()
    while i < a.shape[0]:
        acc += a[i]
        i += grid.size()
    acc = cg.reduce(tile, acc, cg.plus)
    if tile.thread_rank() == 0:
        partial[simt.blockIdx.x * (simt.blockDim.x // 32) + tile.meta_group_rank()] = acc
    grid.sync()
    if grid.thread_rank() == 0:
        total = np.float64(0)
        for k in range(partial.shape[0]):
            total += partial[k]
        out[0] = total
    grid.sync()
    if grid.thread_rank() == 1:
        out[1] = out[0] * 2


def test_grid_sync_reduction(device, rng):
    a = rng.integers(-100, 100, size=10000).astype(np.float64)
    blocks = 2 * device.properties.multiprocessor_count
    partial = simt.to_device(poison(blocks * 4, np.float64))
    out = simt.to_device(poison(2, np.float64))
    grid_sum.launch_cooperative(blocks, 128, (simt.to_device(a), partial, out))
    got = out.copy_to_host()
    assert got[0] == a.sum() and got[1] == 2 * a.sum()


def test_cooperative_errors(device):
    a = simt.to_device(np.ones(10, np.float64))
    too_many = 1000 * device.properties.multiprocessor_count
    partial = simt.to_device(np.zeros(too_many * 32, np.float64))
    out = simt.zeros(2, np.float64)
    with pytest.raises(simt.InvalidConfiguration, match="cudaErrorCooperativeLaunchTooLarge"):
        grid_sum.launch_cooperative(too_many, 1024, (a, partial, out))
    with pytest.raises(simt.LaunchError, match="launch_cooperative"):
        grid_sum[1, 32](a, partial, out)
        simt.synchronize()


@simt.kernel
def bad_tile(out):
    block = cg.this_thread_block()
    t = cg.tiled_partition(block, 12)
    out[0] = t.size()


def test_tile_size_error():
    with simt.use_device("cpu"):
        with pytest.raises(simt.CompileError, match="power-of-2"):
            bad_tile[1, 32](np.zeros(1, np.int32))
