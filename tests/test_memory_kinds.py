"""Memory kinds (guide 3.2.5, appendix L): kernels on pinned, mapped (zero-copy) and
managed (unified) memory, with the same results on every device."""

import numpy as np

import simt
from conftest import poison, random_array


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


@simt.kernel
def reverse_in_shared(out, a):
    """One block reverses all of ``a`` through dynamic shared memory."""
    buf = simt.shared.dynamic(np.float32)
    n = a.shape[0]
    for i in range(simt.threadIdx.x, n, simt.blockDim.x):
        buf[i] = a[i]
    simt.syncthreads()
    for i in range(simt.threadIdx.x, n, simt.blockDim.x):
        out[i] = buf[n - 1 - i]


def test_dynamic_shared_memory_above_48_kb(device, rng):
    """The opt-in above 48 KB per block (cudaFuncAttributeMaxDynamicSharedMemorySize),
    up to the device's limit; one byte more is an InvalidConfiguration."""
    limit = device.properties.shared_memory_per_block_optin
    n = min(limit, 160 * 1024) // 4
    assert n * 4 > 48 * 1024
    a = simt.to_device(random_array(rng, n, np.float32))
    out = simt.to_device(np.full(n, np.nan, np.float32))
    reverse_in_shared[1, 256, n * 4](out, a)
    np.testing.assert_array_equal(out.copy_to_host(), a.copy_to_host()[::-1])
    try:
        reverse_in_shared[1, 256, limit + 1](out, a)
    except simt.InvalidConfiguration as exc:
        assert str(limit) in str(exc)
    else:
        raise AssertionError("a launch over the shared-memory limit was accepted")


def test_write_combined_host_memory_is_ordinary_to_kernels(device, rng):
    """cudaHostAllocWriteCombined: a bus hint; a kernel reads and a copy fills the memory
    as any pinned or mapped memory (CUDA by Example's zero-copy dot uses it)."""
    values = random_array(rng, 256, np.float32)
    pinned = simt.pinned_array(256, np.float32, write_combined=True)
    pinned[:] = values
    mapped = simt.mapped_array(256, np.float32, write_combined=True)
    mapped[:] = values
    out = simt.to_device(poison(256, np.float32))
    _double_into[1, 256](mapped, out)
    simt.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), values * 2)
    np.testing.assert_array_equal(simt.to_device(pinned).copy_to_host(), values)


@simt.kernel
def _double_into(src, out):
    i = simt.threadIdx.x
    out[i] = src[i] * np.float32(2)
