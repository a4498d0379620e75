"""Stream-ordered allocation (issue 14 item 4): memory pools, device_array on a stream,
free on a stream, pool attributes, on every device."""
import numpy as np
import pytest

import simt
from conftest import poison, random_array

N = 4096
CFG = ((N + 127) // 128, 128)
SPIN = 300


def spin(device):
    """SPIN; on the sim device 1: its work runs in call order, so nothing can overtake,
    and SPIN iterations of N threads take seconds at its speed."""
    return 1 if device.kind == "sim" else SPIN


@simt.kernel
def slow_fill(y, x, spin):
    """y = 3x, after a busy loop: slow enough that unordered work would overtake it."""
    i = simt.grid(1)
    if i < y.shape[0]:
        v = x[i]
        acc = v * 0.0
        for k in range(spin):
            acc = acc * 0.5 + v
        y[i] = 3.0 * v + (acc - acc)


def test_pool_arrays_compute_and_count(device, rng):
    pool = simt.MemoryPool(release_threshold=1 << 30)
    assert pool.release_threshold == 1 << 30 and pool.used_bytes == 0
    s = simt.Stream()
    x = simt.to_device(random_array(rng, N, np.float32))
    y = simt.device_array(N, np.float32, stream=s, pool=pool)
    y.copy_from(poison(N, np.float32))
    slow_fill[CFG + (0, s)](y, x, spin(device))
    s.synchronize()
    np.testing.assert_allclose(y.copy_to_host(), 3 * x.copy_to_host(), rtol=1e-6)
    assert pool.used_bytes >= y.nbytes and pool.reserved_bytes >= pool.used_bytes
    reserved = pool.reserved_bytes
    y.free(stream=s)
    s.synchronize()
    assert pool.used_bytes == 0 and pool.reserved_bytes == reserved    # kept for reuse
    again = simt.device_array(N, np.float32, stream=s, pool=pool)
    assert pool.reserved_bytes == reserved and pool.used_high_bytes >= again.nbytes
    again.free(s)
    pool.release_threshold = 0
    simt.synchronize()                          # memory above the threshold goes back
    assert pool.reserved_bytes == 0 and pool.reserved_high_bytes >= reserved


def test_free_is_ordered_after_the_work_before_it(device, rng):
    """A kernel writes a pool array, the copy out and the free follow in the stream, and
    the memory is reused at once by a second array that a second kernel overwrites: the
    first results must come out whole."""
    s = simt.Stream()
    x1, x2 = (simt.to_device(random_array(rng, N, np.float32)) for _ in range(2))
    out = simt.pinned_array(N, np.float32)
    out[:] = np.nan
    a = simt.device_array(N, np.float32, stream=s)          # the default pool
    slow_fill[CFG + (0, s)](a, x1, spin(device))
    a.copy_to_host(out, stream=s)
    a.free(stream=s)
    b = simt.device_array(N, np.float32, stream=s)
    slow_fill[CFG + (0, s)](b, x2, 0)
    s.synchronize()
    np.testing.assert_allclose(out, 3 * x1.copy_to_host(), rtol=1e-6)
    np.testing.assert_allclose(b.copy_to_host(), 3 * x2.copy_to_host(), rtol=1e-6)
    assert simt.MemoryPool.default().used_bytes >= b.nbytes


def test_free_of_a_view_is_refused_and_keeps_the_parent(device):
    parent = simt.to_device(np.arange(16, dtype=np.float32))
    for view in (parent[2:10], parent[:], parent.reshape(4, 4), parent.view(np.int32)):
        with pytest.raises(ValueError, match="only the array returned by the allocation"):
            view.free()
    np.testing.assert_array_equal(parent[2:10].copy_to_host(), np.arange(2, 10))
    parent.free()                                  # still allocated: the first free works


def test_pool_argument_errors(device):
    with pytest.raises(TypeError, match=r"pool must be a simt.MemoryPool .*42 \(int\)"):
        simt.device_array(4, np.float32, pool=42)
    pool = simt.MemoryPool()
    for keep in (-5, 1.5, "8"):
        with pytest.raises(ValueError, match="trim\\(\\) keeps a number of bytes >= 0"):
            pool.trim(keep)
    pool.trim(0)
    pool.trim(np.int64(16))


def test_free_errors(device):
    plain = simt.device_array(16, np.float32)
    with pytest.raises(ValueError, match="does not come from a memory pool"):
        plain.free(stream=simt.Stream())
    plain.free()
    with pytest.raises(ValueError, match="was freed already"):
        plain.free()
    pooled = simt.device_array(16, np.float32, stream=simt.Stream())
    pooled.free()                                  # the legacy default stream's order
    with pytest.raises(ValueError, match="release_threshold is a number of bytes"):
        simt.MemoryPool(release_threshold=-1)
    with pytest.raises(simt.InvalidConfiguration, match="must be a simt.Stream"):
        simt.device_array(4, np.float32, stream="s")


@simt.kernel
def add_one(y, x):
    i = simt.grid(1)
    if i < y.shape[0]:
        y[i] = x[i] + 1.0


def test_sim_pool_memory_computes_and_starts_unwritten(rng):
    """On the sim device pool memory computes as any, a free in a stream is done at once
    (its block is taken again by the next allocation of its size), and a block handed
    out again counts as unwritten: reading it before writing is reported."""
    with simt.use_device("sim"):
        pool = simt.MemoryPool()
        s = simt.Stream()
        x = random_array(rng, 256, np.float32)
        a = simt.device_array(256, np.float32, stream=s, pool=pool)
        a.copy_from(x)
        y = simt.device_array(256, np.float32, stream=s, pool=pool)
        y.copy_from(poison(256, np.float32))
        add_one[2, 128, 0, s](y, a)
        np.testing.assert_array_equal(y.copy_to_host(), x + 1)
        assert pool.used_bytes >= 2 * a.nbytes
        where = a.alloc.ptr
        a.free(stream=s)
        b = simt.device_array(256, np.float32, stream=s, pool=pool)
        assert b.alloc.ptr == where                 # a's block, still holding x
        add_one[2, 128, 0, s](y, b)
        with pytest.raises(simt.UninitializedReadError, match="add_one"):
            s.synchronize()
        b.copy_from(x)
        add_one[2, 128, 0, s](y, b)
        np.testing.assert_array_equal(y.copy_to_host(), x + 1)
