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
