"""Memory kinds (guide 3.2.5, appendix L): kernels on pinned, mapped (zero-copy) and
managed (unified) memory, with the same results on every device."""

import numpy as np

import simt
from conftest import random_array


@simt.kernel
def triple(out, a):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = 3 * a[i]


def test_kernel_writes_mapped_memory_in_place(device, rng):
    n = 1000
    a = simt.mapped_array(n, np.float32)
    out = simt.mapped_array(n, np.float32)
    a[:] = random_array(rng, n, np.float32)
    out[:] = np.nan
    triple[(n + 127) // 128, 128](out, a)         # zero-copy: no copies either way
    simt.synchronize()
    np.testing.assert_allclose(out, 3 * a, rtol=1e-6)
    view = out[10:20]                            # a slice keeps its own device address
    triple[1, 32](view, a[:10])
    simt.synchronize()
    np.testing.assert_allclose(out[10:20], 3 * a[:10], rtol=1e-6)


def test_kernel_on_managed_memory(device, rng):
    n = 777
    a = simt.managed_array(n, np.int32)
    out = simt.managed_array(n, np.int32)
    np.asarray(a)[:] = random_array(rng, n, np.int32)
    np.asarray(out)[:] = -7
    simt.synchronize()
    triple[(n + 63) // 64, 64](out, a)
    simt.synchronize()
    np.testing.assert_array_equal(np.asarray(out), 3 * np.asarray(a))


def test_pinned_memory_round_trip_through_a_kernel(device, rng):
    n = 4096
    host = simt.pinned_array(n, np.float64)
    host[:] = random_array(rng, n, np.float64)
    d_a = simt.to_device(host)
    d_out = simt.device_array(n, np.float64)
    triple[n // 256, 256](d_out, d_a)
    back = simt.pinned_array(n, np.float64)
    d_out.copy_to_host(back)
    np.testing.assert_allclose(back, 3 * host)


def test_managed_memory_refuses_more_than_is_free(device):
    free, total = simt.mem_get_info()
    try:
        simt.managed_array(total * 4, np.uint8)
    except simt.OutOfMemoryError as exc:
        assert "bytes" in str(exc)
    else:
        raise AssertionError("asking for 4x the device's memory as managed memory succeeded")
