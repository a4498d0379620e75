"""Unified memory (guide, appendix on unified memory): prefetch and advise on managed
arrays, host access after synchronize, on every device (on the CPU managed memory is host
memory, so the hints have nothing to move: the data path is what is checked)."""
import numpy as np
import pytest

import simt
from conftest import random_array


@simt.kernel
def twice_plus(a, b):
    i = simt.grid(1)
    if i < a.shape[0]:
        a[i] = a[i] * 2 + b[i]


def test_prefetch_kernel_prefetch_back(device, rng):
    n = 5000
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    a, b = simt.managed_array(n, np.float32), simt.managed_array(n, np.float32)
    np.asarray(a)[:] = x                       # written on the host, in place
    np.asarray(b)[:] = y
    stream = simt.Stream()
    assert a.prefetch(stream=stream) is a      # to the current device
    b.prefetch(device, stream)
    twice_plus[(n + 255) // 256, 256, 0, stream](a, b)
    a.prefetch("host", stream)                 # back for the host
    stream.synchronize()
    np.testing.assert_array_equal(np.asarray(a), x * 2 + y)


def test_advice(device, rng):
    n = 3000
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    a, b = simt.managed_array(n, np.float32), simt.managed_array(n, np.float32)
    np.asarray(a)[:] = x
    np.asarray(b)[:] = y
    b.advise("read_mostly")
    a.advise("preferred_location", device)
    a.advise("accessed_by", "host")
    b.advise("accessed_by", device)
    twice_plus[(n + 255) // 256, 256](a, b)
    simt.synchronize()
    np.testing.assert_array_equal(np.asarray(a), x * 2 + y)
    for advice in ("read_mostly", "preferred_location", "accessed_by"):
        b.advise(advice, device, unset=True)
    a.advise("preferred_location", "host")
    np.testing.assert_array_equal(np.asarray(b), y)


def test_hints_are_for_managed_memory(device):
    with pytest.raises(ValueError, match=r"managed memory \(simt.managed_array\)"):
        simt.zeros(4).prefetch()
    with pytest.raises(ValueError, match="managed memory"):
        simt.zeros(4).advise("read_mostly")
    with pytest.raises(ValueError, match="unknown advice 'read_only'; the advice is one of "
                                         "read_mostly, preferred_location, accessed_by"):
        simt.managed_array(4).advise("read_only")
    with pytest.raises(ValueError, match="no device 'cuda:77'"):
        simt.managed_array(4).prefetch("cuda:77")


def test_concurrent_managed_access_is_a_property(device):
    value = device.properties.concurrent_managed_access
    assert isinstance(value, bool)
    if device.kind == "cpu":
        assert value                          # the host and the CPU device are one processor


LEVELS = simt.Managed(256, np.float32)


@simt.kernel
def raise_levels(a, n):
    i = simt.grid(1)
    if i < n:
        a[i] = a[i] * 3 - 1
        LEVELS[i] = LEVELS[i] + a[i]


def _fma3(x):
    """float32 x * 3 - 1 as the kernel computes it: one fma (exact in float64, then
    rounded once)."""
    return (x.astype(np.float64) * 3 - 1).astype(np.float32)


def test_stream_attached_managed_memory(device, rng):
    """cudaStreamAttachMemAsync (guide L.2.2.3): a managed array attached to one stream,
    another to the host, a Managed symbol to the stream; results as without them."""
    n = 256
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    a, spare = simt.managed_array(n, np.float32), simt.managed_array(n, np.float32)
    np.asarray(a)[:] = x
    LEVELS[:] = y
    stream = simt.Stream()
    stream.attach_mem(a)                                  # 'single': this stream only
    stream.attach_mem(LEVELS, "single")
    stream.attach_mem(spare, flags="host")                # the host's alone
    stream.synchronize()
    raise_levels[1, n, 0, stream](a, n)
    np.asarray(spare)[:] = x                              # the host may touch it meanwhile
    stream.synchronize()
    once = _fma3(x)
    np.testing.assert_array_equal(np.asarray(a), once)
    np.testing.assert_array_equal(np.asarray(LEVELS), y + once)
    np.testing.assert_array_equal(np.asarray(spare), x)
    stream.attach_mem(a, "global")                        # every stream again
    raise_levels[1, n](a, n)
    simt.synchronize()
    np.testing.assert_array_equal(np.asarray(a), _fma3(once))


def test_attach_is_for_managed_memory(device):
    stream = simt.Stream()
    with pytest.raises(ValueError, match=r"attach_mem applies to managed memory"):
        stream.attach_mem(simt.zeros(4))
    with pytest.raises(ValueError, match="flags is one of 'single', 'host', 'global'"):
        stream.attach_mem(simt.managed_array(4), "device")
    with pytest.raises(ValueError, match="legacy default stream is not one"):
        simt.default_stream().attach_mem(simt.managed_array(4))
    simt.default_stream().attach_mem(simt.managed_array(4), "global")


def test_unified_memory_properties(device):
    """cudaDeviceProp's unified-memory fields; on the cpu and sim devices device memory is
    host memory, so the device reaches pageable memory through the host's page tables, and
    the host reaches managed memory directly."""
    props = device.properties
    fields = ("managed_memory", "concurrent_managed_access", "pageable_memory_access",
              "pageable_memory_access_uses_host_page_tables",
              "direct_managed_mem_access_from_host", "unified_addressing",
              "can_map_host_memory")
    for name in fields:
        assert isinstance(getattr(props, name), bool), name
    if device.kind in ("cpu", "sim"):
        assert all(getattr(props, name) for name in fields)
