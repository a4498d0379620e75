"""Cooperative groups, issue 35 item 7: tiles whose size is computed at run time, the
scans (cg.inclusive_scan, cg.exclusive_scan) and cg.invoke_one, against NumPy."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt import cg
from conftest import poison, random_array

INT32_MAX = np.iinfo(np.int32).max


@simt.device
def tile_facts(t, v):
    """A run-time tile passed to a device function keeps its size and place."""
    return t.size() * 10000 + t.meta_group_rank() * 100 + cg.reduce(t, v, cg.plus)


@simt.kernel
def runtime_tiles(a, f, out, fout, sizes):
    block = cg.this_thread_block()
    i = simt.grid(1)
    t = cg.tiled_partition(block, sizes[0])
    out[i, 0] = t.thread_rank()
    out[i, 1] = t.size()
    out[i, 2] = t.meta_group_rank()
    out[i, 3] = t.meta_group_size()
    out[i, 4] = cg.reduce(t, a[i], cg.plus)
    out[i, 5] = t.shfl(a[i], 0)
    out[i, 6] = t.ballot(a[i] > 0)
    out[i, 7] = tile_facts(t, a[i])
    fout[i] = cg.reduce(t, f[i], cg.greater)        # the butterfly, not redux.sync
    half = cg.tiled_partition(t, sizes[1])          # a run-time tile of a run-time tile
    out[i, 8] = half.thread_rank() + 100 * half.meta_group_rank()


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 32])
def test_tiled_partition_with_run_time_size(device, rng, n):
    a = random_array(rng, 64, np.int32)
    f = random_array(rng, 64, np.float32)
    out, fout = poison((64, 9), np.int32), poison(64, np.float32)
    sub = max(n // 2, 1)
    runtime_tiles[1, 64](a, f, out, fout, np.array([n, sub], np.int32))
    i = np.arange(64)
    tiles = a.reshape(-1, n)
    sums = tiles.sum(1).repeat(n)
    ballots = ((tiles > 0) << np.arange(n)).sum(1).astype(np.uint32).repeat(n).view(np.int32)
    expected = np.stack([i % n, np.full(64, n), i // n, np.full(64, 64 // n), sums,
                         tiles[:, 0].repeat(n), ballots, n * 10000 + (i // n) * 100 + sums,
                         i % sub + 100 * ((i % n) // sub)], 1)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(fout, f.reshape(-1, n).max(1).repeat(n))


@simt.kernel
def bad_runtime_tile(out, sizes):
    t = cg.tiled_partition(cg.this_thread_block(), sizes[0])
    out[simt.grid(1)] = t.size()


@pytest.mark.parametrize("n", [3, 0, 64])
def test_run_time_tile_size_is_checked(n):
    with simt.use_device("cpu"):
        with pytest.raises(simt.DeviceAssertError, match="power of 2 from 1 to 32"):
            bad_runtime_tile[1, 32](np.zeros(32, np.int32), np.array([n], np.int32))
            simt.synchronize()


@simt.device
def keep_first(a, b):
    return a


@simt.device
def record(flags, slot, value):
    flags[slot] = value


@simt.kernel
def scans(a, f, out, fout, flags, sizes):
    block = cg.this_thread_block()
    i = simt.grid(1)
    t = cg.tiled_partition(block, sizes[0])
    t8 = cg.tiled_partition(block, 8)
    out[i, 0] = cg.inclusive_scan(t, a[i])
    out[i, 1] = cg.exclusive_scan(t, a[i], cg.plus)
    out[i, 2] = cg.inclusive_scan(t8, a[i], cg.greater)
    out[i, 3] = cg.exclusive_scan(t8, a[i], cg.less)
    out[i, 4] = cg.inclusive_scan(t, a[i], keep_first)     # order: op(lower ranks, own)
    out[i, 5] = cg.exclusive_scan(t8, a[i], cg.bit_and)
    fout[i] = cg.inclusive_scan(t8, f[i])
    cg.invoke_one(t, record, flags, i // sizes[0], a[i])


@pytest.mark.parametrize("n", [1, 4, 32])
def test_tile_scans_and_invoke_one(device, rng, n):
    a = random_array(rng, 64, np.int32)
    f = random_array(rng, 64, np.float32)
    out, fout, flags = poison((64, 6), np.int32), poison(64, np.float32), poison(64, np.int32)
    untouched = flags[64 // n:].copy()
    scans[1, 64](a, f, out, fout, flags, np.array([n], np.int32))
    tiles, eights = a.reshape(-1, n), a.reshape(-1, 8)
    inclusive = np.cumsum(tiles, 1).ravel()
    mins = np.minimum.accumulate(eights, 1)[:, :-1]
    ands = np.bitwise_and.accumulate(eights, 1)[:, :-1]
    expected = np.stack([
        inclusive, inclusive - a, np.maximum.accumulate(eights, 1).ravel(),
        np.concatenate([np.full((8, 1), INT32_MAX), mins], 1).ravel(),
        tiles[:, 0].repeat(n), np.concatenate([np.full((8, 1), -1), ands], 1).ravel()], 1)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_allclose(fout, np.cumsum(f.reshape(-1, 8), 1).ravel(), rtol=1e-5)
    np.testing.assert_array_equal(flags[:64 // n], tiles[:, 0])
    np.testing.assert_array_equal(flags[64 // n:], untouched)


@simt.kernel
def coalesced_scans(a, out):
    i = simt.grid(1)
    if a[i] % 3 != 0:
        g = cg.coalesced_threads()
        out[i, 0] = cg.inclusive_scan(g, a[i])
        out[i, 1] = cg.exclusive_scan(g, a[i], cg.bit_xor)
        out[i, 2] = cg.exclusive_scan(g, a[i], keep_first)


def test_coalesced_scans(device, rng):
    a = random_array(rng, 64, np.int32)
    out = poison((64, 3), np.int32)
    expected = out.copy()
    coalesced_scans[1, 64](a, out)
    for warp in range(2):
        members = np.nonzero(a[warp * 32:(warp + 1) * 32] % 3 != 0)[0] + warp * 32
        values = a[members]
        expected[members, 0] = np.cumsum(values)
        expected[members, 1] = np.concatenate([[0], np.bitwise_xor.accumulate(values)[:-1]])
        expected[members, 2] = values[0]
    np.testing.assert_array_equal(out, expected)


@simt.kernel
def scan_of_a_block(a, out):
    out[0] = cg.inclusive_scan(cg.this_thread_block(), a[0])


@simt.kernel
def scan_of_a_wide_tile(a, out):
    out[0] = cg.exclusive_scan(cg.tiled_partition(cg.this_thread_block(), 64), a[0])


@simt.kernel
def invoke_non_function(a, out):
    cg.invoke_one(cg.this_thread_block(), a, out)


@pytest.mark.parametrize("kernel, message", [
    (scan_of_a_block, r"cg.inclusive_scan needs a group \(Tile or Coalesced\)"),
    (scan_of_a_wide_tile, r"cg.exclusive_scan scans tiles of at most 32 threads"),
    (invoke_non_function, r"second argument of cg.invoke_one must be a @simt.device"),
])
def test_scan_and_invoke_errors(kernel, message):
    with pytest.raises(simt.CompileError, match=message):
        kernel.compile("void(int32[::1], int32[::1])")


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
@pytest.mark.parametrize("kernel, sig", [
    (scans, "void(int32[::1], float32[::1], int32[:, ::1], float32[::1], int32[::1], int32[::1])"),
    (runtime_tiles, "void(int32[::1], float32[::1], int32[:, ::1], float32[::1], int32[::1])"),
])
def test_ptxas_accepts_the_scans_and_run_time_tiles(kernel, sig, tmp_path):
    with simt.use_device("cpu"):
        ptx = str(kernel.inspect_ptx(sig))
    assert "shfl.sync" in ptx
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
