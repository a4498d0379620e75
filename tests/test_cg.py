"""Cooperative groups (guide appendix C): thread blocks, tiles and their collectives,
coalesced groups, cg.reduce, and grid sync under a cooperative launch."""
import re
import shutil
import subprocess

import math

import numpy as np
import pytest

import simt
from simt import cg
from conftest import marked_line, poison, random_array


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


@simt.kernel
def norm_by_dot(vec_a, vec_b, partial, size):
    """NVIDIA's simpleAWBarrier sample: a grid-strided dot product reduced by tiles and an
    arrive/wait barrier per block, then grid syncs to normalise vec_a by its result."""
    cta = cg.this_thread_block()
    grid = cg.this_grid()
    bar = simt.shared.barrier(simt.blockDim.x)
    block_sum = simt.shared.array(1, np.float64)
    if simt.threadIdx.x == 0:
        block_sum[0] = 0.0
    cta.sync()
    temp = 0.0
    i = grid.thread_rank()
    while i < size:
        temp += np.float64(vec_a[i] * vec_b[i])
        i += grid.size()
    tile = cg.tiled_partition(cta, 32)
    s = cg.reduce(tile, temp, cg.plus)
    if tile.thread_rank() == 0:
        simt.atomic.add(block_sum, 0, s)
    bar.wait(bar.arrive())
    if simt.threadIdx.x == 0:
        partial[simt.blockIdx.x] = block_sum[0]
    grid.sync()
    if grid.thread_rank() == 0:
        total = 0.0
        for b in range(simt.gridDim.x):
            total += partial[b]
        partial[0] = total
    grid.sync()
    norm = np.float32(math.sqrt(partial[0]))
    i = grid.thread_rank()
    while i < size:
        vec_a[i] = vec_a[i] / norm
        i += grid.size()


@pytest.mark.parametrize("ask", ["signature", "args"])
def test_simple_aw_barrier_sample_sizes_its_grid_by_occupancy(device, rng, ask):
    """The sample asks the occupancy of its kernel before the first launch, then launches
    that many blocks per multiprocessor cooperatively (issue 33 item 11: the answer must
    hold for the compile the launch uses)."""
    n, threads = 20000, 256
    a = random_array(rng, n, np.float32)
    b = a * np.float32(1.5)                     # a positive dot product
    da, db = simt.to_device(a), simt.to_device(b)
    blocks_guess = 4 * device.properties.multiprocessor_count
    partial = simt.to_device(poison(blocks_guess * 64, np.float64))
    args = (da, db, partial, np.int32(n))
    if ask == "signature":
        per_sm = norm_by_dot.max_active_blocks_per_multiprocessor(
            threads, signature="void(float32[::1], float32[::1], float64[::1], int32)")
    else:
        per_sm = norm_by_dot.max_active_blocks_per_multiprocessor(threads, args=args)
    blocks = min(per_sm * device.properties.multiprocessor_count, blocks_guess * 64)
    assert per_sm >= 1
    norm_by_dot.launch_cooperative(blocks, threads, args)
    dot = np.dot(a.astype(np.float64), b.astype(np.float64))
    want = a / np.float32(np.sqrt(dot))
    assert np.isfinite(want).all()
    np.testing.assert_allclose(da.copy_to_host(), want, rtol=1e-5)


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


@pytest.mark.parametrize("test, args", [
    (test_grid_sync_reduction, ()),
    (test_simple_aw_barrier_sample_sizes_its_grid_by_occupancy, ("signature",)),
    (test_simple_aw_barrier_sample_sizes_its_grid_by_occupancy, ("args",)),
    (test_cooperative_errors, ())], ids=["grid_sum", "aw_barrier_signature",
                                         "aw_barrier_args", "errors"])
def test_cooperative_on_sim(test, args, rng):
    """The cpu device's cooperative launches on the sim device: the blocks take turns
    between grid.sync()s, with the same results and errors."""
    import inspect
    with simt.use_device("sim") as sim:
        test(sim, *([rng] if "rng" in inspect.signature(test).parameters else []), *args)


@simt.kernel
def neighbours(a, out, synced):
    grid = cg.this_grid()
    b, t = simt.blockIdx.x, simt.threadIdx.x
    a[b * 32 + t] = b * 100 + t                    # <- own element
    if synced:
        grid.sync()
    out[b * 32 + t] = a[(b + 1) % simt.gridDim.x * 32 + t]     # <- neighbour


def test_sim_checks_accesses_across_grid_sync(rng):
    """On the sim device grid.sync() orders every block's accesses before it with every
    block's after it (in any order of the blocks: seeds); without it, reading another
    block's element is a race."""
    blocks = 3
    want = np.roll(np.arange(blocks)[:, None] * 100 + np.arange(32), -1, axis=0).ravel()
    for seed in (0, 3):
        with simt.use_device("sim", seed=seed):
            a = simt.to_device(random_array(rng, blocks * 32, np.int32))
            out = simt.to_device(poison(blocks * 32, np.int32))
            neighbours.launch_cooperative(blocks, 32, (a, out, True))
            np.testing.assert_array_equal(out.copy_to_host(), want)
    with simt.use_device("sim"):
        a = simt.to_device(random_array(rng, blocks * 32, np.int32))
        with pytest.raises(simt.RaceConditionError, match=(
                f"(?s)test_cg.py:{marked_line(__file__, 'neighbour')}.*"
                f"test_cg.py:{marked_line(__file__, 'own element')}.*different blocks")):
            neighbours.launch_cooperative(blocks, 32, (a, out, False))
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


# ------------------------------------------------ C.5.2 / C.5.3: labeled and binary partitions
def _partition_reference(labels, parents):
    """Per thread: the sorted members of its partition (same parent, same label)."""
    groups = {}
    for t, (label, parent) in enumerate(zip(labels, parents)):
        groups.setdefault((parent, label), []).append(t)
    return {t: members for members in groups.values() for t in members}


def _packed(members, pred):
    return sum(1 << r for r, t in enumerate(members) if pred(t))


@simt.kernel
def odd_even(inputArr, out, fout):                # C.5.3's example, then the subtile's collectives
    cta = cg.this_thread_block()
    tile32 = cg.tiled_partition(cta, 32)
    elem = inputArr[cta.thread_rank()]
    subtile = cg.binary_partition(tile32, (elem & 1))
    i = cta.thread_rank()
    out[i, 0] = subtile.thread_rank()
    out[i, 1] = subtile.size()
    out[i, 2] = cg.reduce(subtile, elem, cg.plus)
    out[i, 3] = subtile.shfl(elem, subtile.size() - 1)
    out[i, 4] = subtile.ballot(elem > 0)
    out[i, 5] = subtile.any(elem > 90)
    out[i, 6] = subtile.all(elem > -90)
    out[i, 7] = subtile.shfl_up(elem, 1)
    m, p = subtile.match_all(elem & 1)
    out[i, 8] = m
    out[i, 9] = p
    out[i, 10] = subtile.match_any(elem % 3)
    out[i, 11] = subtile.meta_group_size()
    subtile.sync()
    fout[i, 0] = cg.reduce(subtile, np.float64(elem) / 8, cg.greater)
    fout[i, 1] = cg.reduce(subtile, np.float64(elem) / 8, cg.plus)


def test_binary_partition(device, rng):
    a = random_array(rng, 64, np.int32)
    out, fout = poison((64, 12), np.int64), poison((64, 2), np.float64)
    odd_even[1, 64](a, out, fout)
    group = _partition_reference(a & 1, np.arange(64) // 32)
    for t in range(64):
        members = group[t]
        r, vals = members.index(t), a[members]
        expect = [r, len(members), vals.sum(), vals[-1], _packed(members, lambda u: a[u] > 0),
                  (vals > 90).any(), (vals > -90).all(), a[members[r - 1]] if r else a[t],
                  (1 << len(members)) - 1, 1, _packed(members, lambda u: a[u] % 3 == a[t] % 3), 1]
        np.testing.assert_array_equal(out[t], expect, err_msg=f"thread {t}")
        np.testing.assert_array_equal(fout[t], [vals.max() / 8, (vals / 8).sum()])


@simt.kernel
def labeled(a, out):
    block = cg.this_thread_block()
    t8 = cg.tiled_partition(block, 8)
    i = block.thread_rank()
    v = a[i]
    g = cg.labeled_partition(t8, v % 5)
    out[i, 0] = g.thread_rank()
    out[i, 1] = g.size()
    out[i, 2] = cg.reduce(g, v, cg.less)
    out[i, 3] = g.shfl_down(v, 2)
    wide = cg.labeled_partition(cg.tiled_partition(block, 32), np.int64(v % 4) << 32)
    out[i, 4] = wide.size()                       # 64-bit labels compare all their bits
    inner = cg.binary_partition(g, v > 0)         # a partition of a partition
    out[i, 5] = inner.size()
    out[i, 6] = cg.reduce(inner, v, cg.bit_xor)
    out[i, 7] = inner.ballot(v % 2 == 0)
    if v > 0:
        pos = cg.coalesced_threads()
        h = cg.labeled_partition(pos, v > 50)
        out[i, 8] = h.size()
        out[i, 9] = cg.reduce(h, v, cg.plus)
    else:
        out[i, 8] = -1
        out[i, 9] = -1


def test_labeled_partition(device, rng):
    a = random_array(rng, 64, np.int32)
    out = poison((64, 10), np.int64)
    labeled[1, 64](a, out)
    t = np.arange(64)
    g = _partition_reference(a % 5, t // 8)
    wide = _partition_reference(a % 4, t // 32)
    inner = _partition_reference(list(zip(a % 5, a > 0)), t // 8)
    pos = _partition_reference(list(zip(a > 0, a > 50)), t // 32)
    for i in t:
        r, members = g[i].index(i), g[i]
        down = a[members[r + 2]] if r + 2 < len(members) else a[i]
        expect = [r, len(members), a[members].min(), down, len(wide[i]), len(inner[i]),
                  np.bitwise_xor.reduce(a[inner[i]]), _packed(inner[i], lambda u: a[u] % 2 == 0)]
        expect += [len(pos[i]), a[pos[i]].sum()] if a[i] > 0 else [-1, -1]
        np.testing.assert_array_equal(out[i], expect, err_msg=f"thread {i}")


# ------------------------------------------------ C.6.2: memcpy_async and wait
IN_SHARED = 48


@simt.kernel
def stream_one_stage(global_data, out, chunks):   # C.6.2.1's example
    local_smem = simt.shared.array(IN_SHARED, np.float32)
    tb = cg.this_thread_block()
    per_block = global_data.shape[0] // simt.gridDim.x
    base = simt.blockIdx.x * per_block
    index = 0
    n = 0
    while index < per_block:
        copy_count = cg.memcpy_async(tb, local_smem, IN_SHARED, global_data[base + index:],
                                     per_block - index)
        cg.wait(tb)
        for j in range(tb.thread_rank(), copy_count, tb.size()):   # work with local_smem
            out[base + index + j] = local_smem[copy_count - 1 - j] * 2
        index += copy_count
        n += 1
        cg.sync(tb)                               # before the next copy overwrites local_smem
    if tb.thread_rank() == 0:
        chunks[simt.blockIdx.x] = n


@simt.kernel
def stream_two_stages(global_data, result):       # C.6.2.2's example: copy N + 1 while using N
    smem = simt.shared.array((2, IN_SHARED), np.float32)
    tb = cg.this_thread_block()
    per_block = global_data.shape[0] // simt.gridDim.x
    data = global_data[simt.blockIdx.x * per_block:]
    out = result[simt.blockIdx.x * per_block:]
    stage = 0
    start = 0
    held = cg.memcpy_async(tb, smem[stage], IN_SHARED, data, per_block)
    index = held
    while index < per_block:
        copy_count = cg.memcpy_async(tb, smem[stage ^ 1], IN_SHARED, data[index:],
                                     per_block - index)
        cg.wait_prior(tb, 1)
        for j in range(tb.thread_rank(), held, tb.size()):
            out[start + j] = smem[stage, held - 1 - j] + 1
        start = index
        held = copy_count
        index += copy_count
        cg.sync(tb)
        stage ^= 1
    cg.wait(tb)
    for j in range(tb.thread_rank(), held, tb.size()):
        out[start + j] = smem[stage, held - 1 - j] + 1


def _chunk_reversed(a, blocks, size):
    out = []
    for block in a.reshape(blocks, -1):
        for k in range(0, block.size, size):
            out.append(block[k:k + size][::-1])
    return np.concatenate(out)


def test_memcpy_async_stream(device, rng):
    blocks, per_block = 3, 200                    # 200 = 4 chunks of 48 and one of 8
    a = random_array(rng, blocks * per_block, np.float32)
    out, chunks = poison(a.size, np.float32), poison(blocks, np.int32)
    stream_one_stage[blocks, 40](a, out, chunks)
    np.testing.assert_array_equal(out, _chunk_reversed(a, blocks, IN_SHARED) * 2)
    assert (chunks == 5).all()
    out = poison(a.size, np.float32)
    stream_two_stages[blocks, 40](a, out)
    np.testing.assert_array_equal(out, _chunk_reversed(a, blocks, IN_SHARED) + 1)


@simt.kernel
def tile_copy(a, out, counts):                    # each warp stages its own slice
    block = cg.this_thread_block()
    tile = cg.tiled_partition(block, 32)
    staged = simt.shared.array((2, 40), np.int64)
    w = tile.meta_group_rank()
    n = cg.memcpy_async(tile, staged[w], a[w * 40:(w + 1) * 40])
    cg.wait(tile)
    for j in range(tile.thread_rank(), n, 32):
        out[w * 40 + j] = staged[w, (j + 7) % n]
    block.sync()                               # every warp is done reading staged
    copied = cg.memcpy_async(block, staged[0], 40, a, 13)     # a block collective: all call it
    if block.thread_rank() == 0:
        counts[0] = copied


def test_memcpy_async_tile(device, rng):
    if device.kind == "sim":
        pytest.skip("tile_copy races: thread 0 rewrites staged[0] while its warp reads it, "
                    "and the sim device reports it")
    a = random_array(rng, 80, np.int64)
    out, counts = poison(80, np.int64), poison(1, np.int64)
    tile_copy[1, 64](a, out, counts)
    np.testing.assert_array_equal(out, np.roll(a.reshape(2, 40), -7, axis=1).ravel())
    assert counts[0] == 13


COPIED = 100


@simt.kernel
def two_copies_in_flight(a, out):                 # (group, dst, src, count), then wait_prior
    block = cg.this_thread_block()
    smem = simt.shared.array((2, 128), np.float32)
    base = simt.blockIdx.x * 2 * COPIED
    cg.memcpy_async(block, smem[0], a[base:], COPIED)
    cg.memcpy_async(block, smem[1], a[base + COPIED:], COPIED)
    cg.wait_prior(block, 1)                       # the first copy has landed
    for j in range(block.thread_rank(), COPIED, block.size()):
        out[base + j] = smem[0, COPIED - 1 - j] * 2
    cg.wait(block)
    for j in range(block.thread_rank(), COPIED, block.size()):
        out[base + COPIED + j] = smem[1, j] + 1


TWO_COPIES = "void(float32[::1], float32[::1])"


def test_memcpy_async_count_form_and_wait_prior(device, rng):
    a = random_array(rng, 3 * 2 * COPIED, np.float32)
    out = poison(a.size, np.float32)
    two_copies_in_flight[3, 64](a, out)
    halves = a.reshape(3, 2, COPIED)
    expected = np.concatenate([halves[:, 0, ::-1] * 2, halves[:, 1] + 1], axis=1).ravel()
    np.testing.assert_array_equal(out, expected)


def test_memcpy_async_is_cp_async_on_the_gpu(tmp_path):
    """Issue 35 item 7: 16-byte cp.async chunks (4-byte ones for the tail), one commit_group
    per call, wait_prior(1) and wait as cp.async.wait_group 1 and 0; ptxas accepts it."""
    with simt.use_device("cpu"):
        ptx = str(two_copies_in_flight.inspect_ptx(TWO_COPIES))
    assert "cp.async.cg.shared.global" in ptx and "cp.async.ca.shared.global" in ptx
    assert "cp.async.commit_group" in ptx
    assert re.search(r"cp\.async\.wait_group\s+1;", ptx)
    assert re.search(r"cp\.async\.wait_group\s+0;", ptx)
    if shutil.which("ptxas") is None:
        pytest.skip("needs CUDA's ptxas for the rest")
    path = tmp_path / "copy.ptx"
    path.write_text(ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@simt.kernel
def copy_mixed(a, out):
    block = cg.this_thread_block()
    cg.memcpy_async(block, out, a)


@simt.kernel
def partition_block(a, out):
    block = cg.this_thread_block()
    g = cg.labeled_partition(block, a[0])
    out[0] = g.size()


@simt.kernel
def float_label(a, out):
    tile = cg.tiled_partition(cg.this_thread_block(), 32)
    g = cg.labeled_partition(tile, a[0])
    out[0] = g.size()


def test_partition_and_copy_errors():
    with simt.use_device("cpu"):
        with pytest.raises(simt.CompileError, match="one type.*int32.*float64"):
            copy_mixed[1, 32](np.zeros(4, np.float64), np.zeros(4, np.int32))
        with pytest.raises(simt.CompileError, match="1-d array, got a 2-d array"):
            copy_mixed[1, 32](np.zeros((2, 2), np.int32), np.zeros((2, 2), np.int32))
        with pytest.raises(simt.CompileError, match="tile or a coalesced group, not a ThreadBlock"):
            partition_block[1, 32](np.zeros(1, np.int32), np.zeros(1, np.int32))
        with pytest.raises(simt.CompileError, match="label .* is an integer, got float32"):
            float_label[1, 32](np.zeros(1, np.float32), np.zeros(1, np.int32))
