"""Grids of many blocks: every block runs once, blocks of uneven cost, a failing block
named, launches from two threads at once. On the CPU device these run on the native team
(backends/cpu/team.py) or, for a launch that finds it busy, on the Python pool."""
import threading

import numpy as np
import pytest

import simt
from conftest import poison, random_array


@simt.kernel
def count_blocks(hits, x, out):
    i = simt.grid(1)
    if i < x.size:
        out[i] = 2.0 * x[i] + simt.blockIdx.x
        simt.atomic.add(hits, simt.blockIdx.x, 1)


@simt.kernel
def uneven(x, out):
    """Block b loops b times: the last blocks cost most."""
    i = simt.grid(1)
    if i < x.size:
        acc = 0.0
        for k in range(simt.blockIdx.x):
            acc += x[i] * 0.5
        out[i] = acc


@simt.kernel
def fail_in_block(a, block):
    i = simt.grid(1)
    if simt.blockIdx.x == block and simt.threadIdx.x == 5:
        a[a.size + i] = 1.0


def _run_count(rng, blocks, threads):
    n = blocks * threads - 7                    # the last block is partial
    x = random_array(rng, n, np.float32)
    hits, out = simt.zeros(blocks, np.int32), simt.to_device(poison(n, np.float32))
    count_blocks[blocks, threads](hits, simt.to_device(x), out)
    want = 2.0 * x + np.repeat(np.arange(blocks, dtype=np.float32), threads)[:n]
    want_hits = np.full(blocks, threads, np.int32)
    want_hits[-1] -= 7
    np.testing.assert_array_equal(hits.copy_to_host(), want_hits)
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-6)


def test_every_block_runs_once(device, rng):
    for blocks in (2, 3, 997, 5003):             # 5003: many chunks, shrinking (guided)
        _run_count(rng, blocks, 33 if blocks < 1000 else 8)


def test_blocks_of_uneven_cost(device, rng):
    blocks, threads = 96, 32
    x = random_array(rng, blocks * threads, np.float64)
    out = simt.to_device(poison(x.shape, x.dtype))
    uneven[blocks, threads](simt.to_device(x), out)
    loops = np.repeat(np.arange(blocks), threads)
    np.testing.assert_allclose(out.copy_to_host(), x * 0.5 * loops, rtol=1e-12)


def test_a_failing_block_is_named(rng):
    with simt.use_device("cpu"):
        with pytest.raises(simt.IllegalAddressError) as info:
            fail_in_block[64, 16](simt.zeros(64 * 16), 37)
            simt.synchronize()
    assert "block (37, 0, 0)" in str(info.value) and "thread (5, 0, 0)" in str(info.value)


def test_launches_from_two_threads_at_once(device, rng):
    errors = []

    def launches():
        try:
            with simt.use_device(device.name):
                s = simt.Stream()
                for blocks in (64, 997, 5):
                    _run_count(rng, blocks, 16)
                s.synchronize()
        except BaseException as exc:
            errors.append(exc)
    threads = [threading.Thread(target=launches) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors


def test_the_team_follows_cpu_threads(monkeypatch, rng):
    from simt.config import config
    from simt.backends.cpu import team
    if not team.available():
        pytest.skip("no native team on this platform: the Python pool runs the blocks")
    with simt.use_device("cpu") as dev:
        for threads in (3, 2):
            monkeypatch.setattr(config, "cpu_threads", threads)
            _run_count(rng, 50, 8)
            assert dev.backend.team.members == threads


def test_native_helpers_come_from_the_disk_cache(monkeypatch, tmp_path):
    """hostjit.cached_object: made once, then read; a damaged file is made again."""
    from simt.config import config
    from simt.backends import hostjit as jit
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(config, "cache", True)
    text = "define i32 @simt_test_twice(i32 %x) {\n  %y = mul i32 %x, 2\n  ret i32 %y\n}\n"
    made = jit.cached_object("probe", text)
    [path] = list(tmp_path.iterdir())
    assert jit.cached_object("probe", text) == made
    path.write_bytes(b"\0" * 40)
    again = jit.cached_object("probe", text)
    assert again == made and path.read_bytes().endswith(made)
    import ctypes
    twice = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)(
        jit.LoadedObject(again).address("simt_test_twice"))
    assert twice(21) == 42


def test_a_kernel_keeps_a_bounded_number_of_configurations(rng):
    from simt.backends.cpu import frames
    with simt.use_device("cpu") as dev:
        x = random_array(rng, 4 * frames.KEPT, np.float32)
        for blocks in range(1, 2 * frames.KEPT):
            hits = simt.zeros(blocks, np.int32)
            out = simt.to_device(poison(x.size, np.float32))
            count_blocks[blocks, 2](hits, simt.to_device(x), out)
        np.testing.assert_array_equal(hits.copy_to_host(), np.full(blocks, 2, np.int32))
        loaded = next(v for k, v in count_blocks.compiled.items() if k[0] == "cpu")
        assert 0 < len(loaded.plans) <= frames.KEPT
