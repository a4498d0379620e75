"""Unified addressing (API.md section 11, guide 3.2.2): simt.pointer_attributes
(cudaPointerGetAttributes) and simt.copy between any two memories (cudaMemcpyDefault)."""
import numpy as np
import pytest

import simt
from conftest import poison, random_array

KINDS = ["numpy", "pinned", "mapped", "registered", "device", "managed", "managed_symbol"]
SYMBOL = simt.Managed((6, 5), np.float64)


def _make(kind, shape, dtype):
    """A poisoned array of one memory kind (and what keeps it alive)."""
    host = poison(shape, dtype)
    if kind == "numpy":
        return host, None
    if kind == "registered":
        return simt.host_register(host), host
    if kind == "managed_symbol":
        SYMBOL.copy_from(host)
        return SYMBOL, None
    if kind in ("device", "managed"):
        array = simt.device_array(shape, dtype) if kind == "device" else \
            simt.managed_array(shape, dtype)
        array.copy_from(host)
        return array, None
    array = simt.pinned_array(shape, dtype) if kind == "pinned" else \
        simt.mapped_array(shape, dtype)
    array[...] = host
    return array, None


def _read(array):
    if isinstance(array, simt.DeviceArray):
        return array.copy_to_host()
    return np.array(array)


@pytest.mark.parametrize("src_kind", KINDS)
@pytest.mark.parametrize("dst_kind", KINDS)
def test_copy_between_any_two_memories(device, rng, src_kind, dst_kind):
    values = random_array(rng, (6, 5), np.float64)
    src, _ = _make(src_kind, (6, 5), np.float64)
    if src_kind == dst_kind == "managed_symbol":
        pytest.skip("one symbol: source and destination would be the same memory")
    if isinstance(src, np.ndarray):
        src[...] = values
    else:
        simt.copy(src, values)                     # host to device / managed
    dst, keep = _make(dst_kind, (6, 5), np.float64)
    assert simt.copy(dst, src) is dst
    np.testing.assert_array_equal(_read(dst), values)
    if dst_kind == "registered":
        simt.host_unregister(keep)


def test_copy_in_a_stream_and_between_views(device, rng):
    values = random_array(rng, (8, 10), np.float32)
    d = simt.to_device(values)
    out = poison((10, 8), np.float32)
    stream = simt.Stream()
    simt.copy(out, d.T, stream=stream)             # a strided view
    stream.synchronize()
    np.testing.assert_array_equal(out, values.T)
    h = poison((4, 10), np.float32)
    simt.copy(h, d[2:6], stream)
    stream.synchronize()
    np.testing.assert_array_equal(h, values[2:6])


def test_copy_refuses_what_cuda_cannot_copy(device):
    with pytest.raises(ValueError, match=r"dst has shape \(3,\), src \(4,\)"):
        simt.copy(np.zeros(3), simt.zeros(4))
    with pytest.raises(TypeError, match="dst holds float32, src float64; copies do not convert"):
        simt.copy(np.zeros(4, np.float32), simt.zeros(4))
    with pytest.raises(TypeError, match="src is a list"):
        simt.copy(np.zeros(2), [1.0, 2.0])
    readonly = np.zeros(2)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        simt.copy(readonly, np.ones(2))


def test_pointer_attributes(device):
    d = simt.device_array(100, np.float32)
    m = simt.managed_array(100, np.float32)
    p = simt.pinned_array(100, np.float32)
    mapped = simt.mapped_array(100, np.float32)
    pageable = np.zeros(100, np.float32)
    got = simt.pointer_attributes(d)
    assert (got.type, got.device, got.device_pointer) == ("device", device, d.ptr)
    assert got.memory_type == "device" and not got.is_managed
    got = simt.pointer_attributes(d[10:])                # inside an allocation
    assert got.type == "device" and got.device_pointer == d.ptr + 40
    assert simt.pointer_attributes(d.ptr + 8).type == "device"   # a bare address
    got = simt.pointer_attributes(m)
    assert got.type == "managed" and got.is_managed and got.device == device
    assert got.host_pointer == m.ptr and got.device_pointer == m.ptr
    got = simt.pointer_attributes(p)
    assert got.type == "host" and got.host_pointer == p.ctypes.data
    assert got.device_pointer is not None
    got = simt.pointer_attributes(mapped)
    assert got.type == "host" and got.device_pointer == mapped.device_ptr
    assert got.host_pointer == mapped.ctypes.data
    got = simt.pointer_attributes(pageable)
    assert got.type == "unregistered" and got.device is None
    assert got.host_pointer == pageable.ctypes.data
    reach = pageable.ctypes.data if device.properties.pageable_memory_access else None
    assert got.device_pointer in (reach, pageable.ctypes.data)    # the driver may know more
    simt.host_register(pageable)
    try:
        assert simt.pointer_attributes(pageable[3:]).type == "host"
    finally:
        simt.host_unregister(pageable)
    assert simt.pointer_attributes(pageable).type == "unregistered"
    if device.kind != "cuda":          # host devices: device memory is host memory
        assert simt.pointer_attributes(d).host_pointer == d.ptr
    with pytest.raises(TypeError, match="pointer_attributes takes an address"):
        simt.pointer_attributes("0x1234")
