"""Memory and copies (issue 14 item 7): pitched arrays, 2-D and 3-D copies between host,
device, pitched and CUDA array memory, host_register, memset of 8-, 16- and 32-bit
values, mem_get_info; on every device."""
import numpy as np
import pytest

import simt
from conftest import poison, random_array


@simt.kernel
def double_2d(y, x):
    i, j = simt.grid(2)
    if i < y.shape[0] and j < y.shape[1]:
        y[i, j] = 2.0 * x[i, j]


def test_pitched_array_layout_and_kernels(device, rng):
    h, w = 19, 37
    x = simt.pitched_array((h, w), np.float32)
    y = simt.pitched_array((h, w), np.float32)
    assert x.pitch >= w * 4 and x.strides == (x.pitch, 4) and x.shape == (h, w)
    if device.kind == "cpu":
        assert x.pitch % 512 == 0                     # documented CPU pitch rule
    host = random_array(rng, (h, w), np.float32)
    simt.copy_2d(x, host)
    simt.copy_2d(y, poison((h, w), np.float32))
    double_2d[(2, 3), (16, 16)](y, x)
    out = poison((h, w), np.float32)
    simt.copy_2d(out, y)
    np.testing.assert_array_equal(out, 2 * host)
    z = simt.pitched_array((3, h, w), np.int16)
    assert z.strides == (h * z.pitch, z.pitch, 2)


def test_copy_2d_through_every_kind_of_memory(device, rng):
    h, w = 13, 29
    host = random_array(rng, (h, w), np.float32)
    wide = poison((h, w + 11), np.float32)
    strided = wide[:, :w]                             # host rows at a pitch
    pitched = simt.pitched_array((h, w), np.float32)
    cuda_array = simt.CudaArray((h, w), np.float32)
    flat = simt.to_device(poison((h, w), np.float32))
    out = poison((h, w), np.float32)
    simt.copy_2d(strided, host)                       # host -> host (pitched)
    simt.copy_2d(pitched, strided)                    # host -> pitched device
    simt.copy_2d(cuda_array, pitched)                 # pitched -> CUDA array
    simt.copy_2d(flat, cuda_array)                    # CUDA array -> device
    simt.copy_2d(out, flat)                           # device -> host
    np.testing.assert_array_equal(out, host)
    assert np.isnan(wide[:, w:]).all()                # the padding is not written
    np.testing.assert_array_equal(cuda_array.copy_to_host(), host)


def test_copy_3d_and_streams(device, rng):
    d, h, w = 4, 6, 10
    host = simt.pinned_array((d, h, w), np.int32)
    host[...] = random_array(rng, (d, h, w), np.int32)
    pitched = simt.pitched_array((d, h, w), np.int32)
    cuda_array = simt.CudaArray((d, h, w), np.int32)
    layered = simt.CudaArray((d, h, w), np.int32, layered=True)
    out = simt.pinned_array((d, h, w), np.int32)
    out[...] = poison((d, h, w), np.int32)
    s = simt.Stream()
    simt.copy_3d(pitched, host, stream=s)
    simt.copy_3d(cuda_array, pitched, stream=s)
    simt.copy_3d(layered, cuda_array, stream=s)
    simt.copy_3d(out, layered, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out, host)


def test_copy_errors(device):
    with pytest.raises(ValueError, match="one shape and dtype"):
        simt.copy_2d(np.zeros((3, 4), np.float32), np.zeros((3, 5), np.float32))
    with pytest.raises(ValueError, match="copies 3-D arrays"):
        simt.copy_3d(np.zeros((3, 4), np.float32), np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="contiguous rows"):
        simt.copy_2d(simt.device_array((4, 3), np.float32),
                     np.zeros((3, 4), np.float32).T)
    with pytest.raises(ValueError, match="channels"):
        simt.copy_2d(simt.CudaArray((2, 2), np.float32, channels=2),
                     np.zeros((2, 2), np.float32))


def test_host_register(device, rng):
    host = random_array(rng, 1 << 12, np.float64)
    assert simt.host_register(host) is host
    with pytest.raises(simt.CudaError, match="(?i)host.?memory.?already.?registered"):
        simt.host_register(host)
    d = simt.to_device(poison(host.shape, np.float64))
    s = simt.Stream()
    d.copy_from(host, stream=s)                      # asynchronous: the memory is locked
    back = np.full_like(host, np.nan)
    simt.host_register(back)
    d.copy_to_host(back, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(back, host)
    simt.host_unregister(host)
    simt.host_unregister(back)
    with pytest.raises(simt.CudaError, match="(?i)host.?memory.?not.?registered"):
        simt.host_unregister(host)


@pytest.mark.parametrize("dtype, value", [(np.int8, -7), (np.uint16, 0xBEEF),
                                          (np.float32, -1.25), (np.int32, 123456789)])
def test_memset_of_8_16_32_bit_values(device, dtype, value):
    n = 1000
    d = simt.to_device(poison(n, dtype))
    simt.memset(d[5:], value)
    expect = poison(n, dtype)
    expect[5:] = value
    np.testing.assert_array_equal(d.copy_to_host(), expect)
    s = simt.Stream()
    simt.memset(d, value, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), np.full(n, value, dtype))


def test_memset_of_8_bit_values_on_the_sim_device():
    # The sim device refused every memset_elements, with a message naming only 16- and 32-bit values.
    with simt.use_device("sim"):
        d = simt.to_device(poison(64, np.uint8))
        simt.memset(d[3:], 0xA5)
        expect = poison(64, np.uint8)
        expect[3:] = 0xA5
        np.testing.assert_array_equal(d.copy_to_host(), expect)
        h = simt.to_device(poison(8, np.uint16))
        simt.memset(h, 0xBEEF)
        np.testing.assert_array_equal(h.copy_to_host(), np.full(8, 0xBEEF, np.uint16))


def test_memset_errors_and_mem_get_info(device):
    with pytest.raises(ValueError, match="8-, 16- or 32-bit"):
        simt.memset(simt.device_array(4, np.float64), 1.0)
    with pytest.raises(ValueError, match="not contiguous"):
        simt.memset(simt.device_array((4, 4), np.int32)[:, :2], 1)
    free, total = simt.mem_get_info()
    assert 0 < free <= total
