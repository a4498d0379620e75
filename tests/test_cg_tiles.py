"""Tiles of more than a warp (lang/cg_tiles.py): cg.tiled_partition(block, 64 ... 1024) with
sync, ranks, any, all, shfl and cg.reduce, the CUDA samples' multi-warp reduction, and the
CompileErrors for what CUDA keeps to tiles of a warp or less."""
import linecache
import re

import numpy as np
import pytest

import simt
from simt import cg
from conftest import poison, random_array

BLOCK = 256
MULTI_WARP = 64                     # the sample's MultiWarpGroupSize


@simt.kernel
def multi_warp_cg_reduce(g_idata, g_odata, n):
    """reduction_kernel.cu's multi_warp_cg_reduce<T, BlockSize=256, MultiWarpGroupSize=64>."""
    sdata = simt.shared.array(BLOCK // MULTI_WARP, g_idata.dtype)
    cta = cg.this_thread_block()
    multi_warp_tile = cg.tiled_partition(cta, MULTI_WARP)
    grid_size = BLOCK * simt.gridDim.x
    thread_val = g_idata.dtype.type(0)
    if n & (n - 1) == 0:
        i = simt.blockIdx.x * BLOCK * 2 + simt.threadIdx.x
        grid_size = grid_size << 1
        while i < n:
            thread_val += g_idata[i]
            if i + BLOCK < n:
                thread_val += g_idata[i + simt.blockDim.x]
            i += grid_size
    else:
        i = simt.blockIdx.x * BLOCK + simt.threadIdx.x
        while i < n:
            thread_val += g_idata[i]
            i += grid_size
    thread_val = cg.reduce(multi_warp_tile, thread_val, cg.plus)
    if multi_warp_tile.thread_rank() == 0:
        sdata[multi_warp_tile.meta_group_rank()] = thread_val
    cg.sync(cta)
    if simt.threadIdx.x == 0:
        thread_val = g_idata.dtype.type(0)
        for k in range(multi_warp_tile.meta_group_size()):
            thread_val += sdata[k]
        g_odata[simt.blockIdx.x] = thread_val


@pytest.mark.parametrize("dtype, n", [(np.int32, 4096), (np.float32, 3000)])
def test_cuda_samples_multi_warp_reduction(device, rng, dtype, n):
    data = random_array(rng, n, dtype)
    blocks = 4
    partial = poison(blocks, dtype)
    multi_warp_cg_reduce[blocks, BLOCK](data, partial, n)
    if n & (n - 1) == 0:            # each block reads 2 * BLOCK elements per grid stride
        owner = (np.arange(n) % (2 * BLOCK * blocks)) // (2 * BLOCK)
    else:
        owner = (np.arange(n) % (BLOCK * blocks)) // BLOCK
    want = np.array([data[owner == b].astype(np.float64).sum() for b in range(blocks)])
    if dtype == np.int32:
        np.testing.assert_array_equal(partial, want.astype(np.int32))
    else:
        np.testing.assert_allclose(partial, want, rtol=1e-5, atol=1e-4)


@simt.device
def tile_total(g, v):
    return cg.reduce(g, v, cg.plus)


def tile_semantics(size):
    """A kernel using a tile of ``size`` threads (a constant: a closure value)."""
    def kernel(a, out):
        block = cg.this_thread_block()
        tile = cg.tiled_partition(block, size)
        i = simt.grid(1)
        v = a[i]
        out[i, 0] = cg.reduce(tile, v, cg.plus)
        out[i, 1] = tile.thread_rank() + 10000 * tile.size()
        out[i, 2] = tile.meta_group_rank() * 1000 + tile.meta_group_size()
        out[i, 3] = tile.any(v > 95) + 2 * tile.all(v > -99)
        out[i, 4] = tile.shfl(v, 5)
        out[i, 5] = np.int64(cg.reduce(tile, np.float64(v), cg.greater))
        warp = cg.tiled_partition(tile, 32)
        out[i, 6] = warp.meta_group_rank() * 100 + warp.meta_group_size()
        acc = 0
        for r in range(3):                          # the scratch is reused trip after trip
            acc += tile_total(tile, v * (r + 1))
        out[i, 7] = acc
        half = cg.tiled_partition(tile, size // 2)
        out[i, 8] = half.meta_group_rank() * 100 + half.meta_group_size() + 10 * half.thread_rank()
        tile.sync()
    return simt.kernel(kernel)


def semantics_reference(a, size, block):
    n, t = len(a), np.arange(len(a))
    tiles = a.reshape(-1, size).astype(np.int64)
    each = lambda values: np.repeat(values, size)
    want = np.zeros((n, 9), np.int64)
    want[:, 0] = each(tiles.sum(1))
    want[:, 1] = t % size + 10000 * size
    want[:, 2] = ((t % block) // size) * 1000 + block // size
    want[:, 3] = each((tiles > 95).any(1)) + 2 * each((tiles > -99).all(1))
    want[:, 4] = each(tiles[:, 5])
    want[:, 5] = each(tiles.max(1))
    want[:, 6] = ((t % size) // 32) * 100 + size // 32
    want[:, 7] = 6 * want[:, 0]
    half = size // 2
    want[:, 8] = ((t % size) // half) * 100 + 2 + 10 * (t % half)
    return want


@pytest.mark.parametrize("size, block", [(64, 256), (1024, 1024)])
def test_tile_semantics(device, rng, size, block):
    a = random_array(rng, 2 * block, np.int32)
    out = poison((2 * block, 9), np.int64)
    tile_semantics(size)[2, block](a, out)
    np.testing.assert_array_equal(out, semantics_reference(a, size, block))


def test_tile_sync_is_a_named_barrier_of_the_tile():
    ptx = multi_warp_cg_reduce.inspect_ptx("void(float32[:], float32[:], int64)")
    assert re.search(r"barrier\.sync\s+%r\d+, 64;", ptx)       # id: 1 + the tile's index
    assert "bar.sync \t0;" in ptx or "barrier.sync \t0;" in ptx  # cg.sync(cta)


@simt.kernel
def sixteen_tiles(out):
    tile = cg.tiled_partition(cg.this_thread_block(), 64)
    out[simt.threadIdx.x] = cg.reduce(tile, 1, cg.plus)


def test_more_tiles_of_64_than_named_barriers(device):
    out = poison(1024, np.int32)
    sixteen_tiles[1, 960](out)
    assert (out[:960] == 64).all()
    with pytest.raises(simt.LaunchError, match="more than 15 tiles of 64"):
        sixteen_tiles[1, 1024](out)
        simt.synchronize()


def kernel_using(expression):
    """A kernel storing ``expression`` (of a tile of 128 and v) (source kept by linecache)."""
    source = ("def kernel(a, out):\n"
              "    tile = cg.tiled_partition(cg.this_thread_block(), 128)\n"
              "    v = a[simt.threadIdx.x]\n"
              f"    out[simt.threadIdx.x] = {expression}\n")
    filename = f"<cg-tiles {expression}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"simt": simt, "cg": cg}
    exec(compile(source, filename, "exec"), scope)
    return simt.kernel(scope["kernel"])


@pytest.mark.parametrize("expression, text", [
    ("tile.shfl_down(v, 1)",
     r"tile.shfl_down\(\) is only available on tiles of at most 32 threads .*this tile has 128"),
    ("tile.ballot(v > 0)", r"tile.ballot\(\) is only available"),
    ("tile.match_any(v)", r"tile.match_any\(\) is only available"),
    ("cg.labeled_partition(tile, v).size()",
     "partitions a tile or a coalesced group, not a BlockTile"),
    ("cg.tiled_partition(tile, 256).size()",
     "tile size 256: tiles have a power-of-2 size from 1 to 128"),
])
def test_warp_only_collectives_are_compile_errors(expression, text):
    with pytest.raises(simt.CompileError, match=text) as info:
        kernel_using(expression).inspect_types("void(int32[:], int32[:])")
    assert ":4:" in str(info.value)


def test_tile_size_above_a_block():
    def kernel(out):
        tile = cg.tiled_partition(cg.this_thread_block(), 2048)
        out[0] = tile.size()
    with pytest.raises(simt.CompileError, match="tile size 2048: tiles have a power-of-2 "
                       "size from 1 to 1024"):
        simt.kernel(kernel).inspect_types("void(int32[:])")
