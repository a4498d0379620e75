"""Trust in the runtime (issue 12): memory is not freed under queued work, read-only
host arrays stay unchanged, copies never cast, forked children launch, host functions
cannot deadlock a stream, local arrays have CUDA's limit, errors reach the thread whose
work failed."""

import numpy as np
import pytest

import simt

N = 4096          # small arrays: freed memory is reused at once by the host allocator


@simt.kernel
def fill_slowly(x, v, spin):
    """x[:] = v, after a busy loop, so that the work is still queued when the host goes on."""
    i = simt.grid(1)
    if i < x.shape[0]:
        acc = 0.0
        for k in range(spin):
            acc = acc * 0.5 + 1.0
        x[i] = v + (acc - acc)


def test_dropped_array_is_not_freed_under_queued_work(device):
    """The issue's loop: the output array is reassigned right after its async copy."""
    s = simt.Stream()
    iters = 24
    outs = [simt.pinned_array(N, np.float64) for _ in range(iters)]
    for i in range(iters):
        d = simt.device_array(N)
        fill_slowly[(N + 127) // 128, 128, 0, s](d, float(i), 300)
        d.copy_to_host(out=outs[i], stream=s)
        junk = [np.full(N, -1.0) for _ in range(4)]     # the host reuses freed memory
    s.synchronize()
    del junk
    for i, out in enumerate(outs):
        np.testing.assert_array_equal(out, np.full(N, float(i)), err_msg=f"iteration {i}")


def test_copies_refuse_read_only_destinations(device):
    d = simt.to_device(np.arange(8, dtype=np.float64))
    frozen = np.zeros(8)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        d.copy_to_host(out=frozen)
    immutable = np.frombuffer(bytes(64), dtype=np.float64)
    with pytest.raises(ValueError, match="read-only"):
        d.copy_to_host(out=immutable, stream=simt.Stream())
    with pytest.raises(ValueError, match="read-only"):
        d[::2].copy_to_host(out=np.frombuffer(bytes(32), dtype=np.float64))
    assert not frozen.any() and not immutable.any()


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
def test_copies_into_another_dtype_are_errors(device, dtype):
    d = simt.to_device(np.arange(8, dtype=np.float64))
    out = np.zeros(8, dtype)
    with pytest.raises(TypeError, match="do not convert"):
        d.copy_to_host(out=out)
    with pytest.raises(TypeError, match="do not convert"):
        d[::2].copy_to_host(out=out[:4])
    assert not out.any()
    with pytest.raises(TypeError, match="do not convert"):
        d.copy_from(np.ones(8, dtype))
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(8.0))
