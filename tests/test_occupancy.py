"""The occupancy API and device flags (issue 14 item 8), on every device; the CPU
device's model (backends/cpu/cooperative.blocks_per_core) checked exactly."""
import numpy as np
import pytest

import simt
from simt import cg
from conftest import poison, random_array


@simt.kernel
def staged_copy(y, x):
    """y = x through a shared-memory tile (so the kernel has static shared memory)."""
    tile = simt.shared.array(1024, np.float32)
    i = simt.grid(1)
    t = simt.threadIdx.x
    if i < x.shape[0]:
        tile[t] = x[i]
    simt.syncthreads()
    if i < y.shape[0]:
        y[i] = tile[t]


SIG = "void(float32[::1], float32[::1])"     # what a launch with device arrays compiles


def test_max_active_blocks(device):
    occupancy = staged_copy.max_active_blocks_per_multiprocessor
    p = device.properties
    blocks = occupancy(128, signature=SIG)
    assert 1 <= blocks <= p.max_blocks_per_multiprocessor
    assert blocks * 128 <= p.max_threads_per_multiprocessor
    big = occupancy(128, 40 * 1024, signature=SIG)        # shared memory limits it
    assert 1 <= big < blocks
    assert occupancy((8, 16), signature=SIG) == blocks     # block given as dims
    if device.kind == "cpu":                              # the documented model
        assert blocks == min(p.max_blocks_per_multiprocessor,
                             p.max_threads_per_multiprocessor // 128)
        assert big == p.shared_memory_per_multiprocessor // (40 * 1024 + 4096)
        assert occupancy(2048, signature=SIG) == 0


def test_max_potential_block_size_launches(device, rng):
    p = device.properties
    min_grid, block = staged_copy.max_potential_block_size(signature=SIG)
    assert block % p.warp_size == 0 and 0 < block <= p.max_threads_per_block
    per_sm = staged_copy.max_active_blocks_per_multiprocessor(block, signature=SIG)
    assert min_grid == per_sm * p.multiprocessor_count
    if device.kind == "cpu":
        assert block == p.max_threads_per_block            # ties go to the largest block
    n = 3000
    x = random_array(rng, n, np.float32)
    y = simt.to_device(poison(n, np.float32))
    staged_copy[(n + block - 1) // block, block](y, simt.to_device(x))
    np.testing.assert_array_equal(y.copy_to_host(), x)
    assert staged_copy.max_potential_block_size() == (min_grid, block)   # its one compile


def test_occupancy_needs_a_signature_when_ambiguous(device):
    @simt.kernel
    def fill(a, v):
        i = simt.grid(1)
        if i < a.shape[0]:
            a[i] = v

    with pytest.raises(ValueError, match="has 0 compiles"):
        fill.max_potential_block_size()
    fill[1, 32](simt.device_array(8, np.float32), np.float32(1))
    fill[1, 32](simt.device_array(8, np.int32), np.int32(1))
    with pytest.raises(ValueError, match="has 2 compiles.*pass signature="):
        fill.max_active_blocks_per_multiprocessor(64)


def test_device_flags(device, rng):
    x = random_array(rng, 4096, np.float32)
    try:
        for flags in (("schedule_yield",), ("schedule_blocking_sync", "map_host"),
                      ("schedule_spin",)):
            simt.set_device_flags(*flags)
            s = simt.Stream()
            y = simt.to_device(poison(4096, np.float32))
            staged_copy[32, 128, 0, s](y, simt.to_device(x))
            s.synchronize()
            simt.synchronize()
            np.testing.assert_array_equal(y.copy_to_host(), x)
    finally:
        simt.set_device_flags("schedule_auto")
    with pytest.raises(ValueError, match="unknown device flags"):
        simt.set_device_flags("schedule_fast")
    with pytest.raises(ValueError, match="choose one scheduling flag"):
        simt.set_device_flags("schedule_spin", "schedule_yield")


def test_occupancy_respects_launch_bounds(device):
    @simt.kernel(launch_bounds=(256, 1))
    def bounded(a):
        i = simt.grid(1)
        if i < a.shape[0]:
            a[i] = 1.0

    sig = "void(float32[::1])"
    assert bounded.max_active_blocks_per_multiprocessor(512, signature=sig) == 0
    assert bounded.max_active_blocks_per_multiprocessor(256, signature=sig) >= 1
    min_grid, block = bounded.max_potential_block_size(signature=sig)
    assert 0 < block <= 256 and min_grid >= device.properties.multiprocessor_count


@simt.kernel
def neighbours_through_grid(y, x, out, n):
    """y = 2x through a shared tile, then, after a grid-wide sync, out[i] = y[i + 1]."""
    tile = simt.shared.array(256, np.float32)
    i = simt.grid(1)
    t = simt.threadIdx.x
    tile[t] = x[i] if i < n else np.float32(0)
    simt.syncthreads()
    if i < n:
        y[i] = tile[t] * 2
    cg.this_grid().sync()
    if i < n:
        out[i] = y[(i + 1) % n]


@pytest.mark.parametrize("ask", ["args", "signature"])
def test_occupancy_answer_holds_for_the_cooperative_launch(device, rng, ask):
    """The occupancy query compiles what the launch with that block runs (on the CPU device,
    the compile made for that block shape), so the launch reuses it and a grid of the
    answered size launches cooperatively (issue 33 item 11)."""
    kernel = simt.kernel(neighbours_through_grid.pyfunc)      # no compiles yet
    block = 256
    p = device.properties
    x, y = simt.to_device(np.zeros(1, np.float32)), simt.to_device(np.zeros(1, np.float32))
    example = (x, y, simt.to_device(np.zeros(1, np.float64)), np.int32(1))
    query = {"args": example} if ask == "args" else \
        {"signature": "void(float32[::1], float32[::1], float64[::1], int32)"}
    per_sm = kernel.max_active_blocks_per_multiprocessor(block, shared_bytes=64, **query)
    assert per_sm >= 1
    made = {id(v) for v in (*kernel.compiled.values(), *kernel.shaped.values())}
    blocks = per_sm * p.multiprocessor_count
    n = blocks * block - 17
    host = random_array(rng, n, np.float32)
    out = simt.to_device(poison(n, np.float64))
    kernel.launch_cooperative(blocks, block, (simt.to_device(poison(n, np.float32)),
                                              simt.to_device(host), out, np.int32(n)),
                              shared_bytes=64)
    now = {id(v) for v in (*kernel.compiled.values(), *kernel.shaped.values())}
    assert now == made                                    # the query's compile ran
    np.testing.assert_array_equal(out.copy_to_host(), np.roll(2 * host, -1).astype(np.float64))


def test_occupancy_takes_signature_or_args(device):
    with pytest.raises(ValueError, match="signature= or args=, not both"):
        staged_copy.max_active_blocks_per_multiprocessor(
            128, signature=SIG, args=(simt.device_array(4, np.float32),) * 2)
