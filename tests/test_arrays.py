"""DeviceArray and the functions that make arrays (API.md section 3)."""

import numpy as np
import pytest

import simt

from conftest import poison, random_array
from simt.runtime import arrays, hostarrays
from simt.runtime.arrays import DeviceArray, device_array, device_array_like, zeros
from simt.runtime.interop import to_device
from simt.runtime.interop import asarray
from simt.errors import NotSupportedError, OutOfMemoryError

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
SHAPES = [(), (1,), (7,), (3, 5), (2, 3, 4), (0,), (4, 0, 2)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_round_trip(device, rng, shape, dtype):
    host = random_array(rng, shape, dtype)
    d = to_device(host)
    assert (d.shape, d.dtype, d.size, d.ndim) == (host.shape, host.dtype, host.size, host.ndim)
    assert (d.strides, d.nbytes, d.itemsize) == (host.strides, host.nbytes, host.itemsize)
    assert d.device == device
    np.testing.assert_array_equal(d.copy_to_host(), host)


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.complex64])
def test_copy_to_host_into_out(device, rng, dtype):
    host = random_array(rng, (4, 6), dtype)
    out = poison((4, 6), dtype)
    assert to_device(host).copy_to_host(out=out) is out
    np.testing.assert_array_equal(out, host)


def test_fortran_order_is_kept(device, rng):
    host = np.asfortranarray(random_array(rng, (3, 4), np.float32))
    d = to_device(host)
    assert d.is_f_contiguous() and not d.is_c_contiguous()
    back = d.copy_to_host()
    assert back.flags.f_contiguous
    np.testing.assert_array_equal(back, host)


def test_non_contiguous_host_source(device, rng):
    host = random_array(rng, (6, 8), np.int64)[::2, ::-3]
    np.testing.assert_array_equal(to_device(host).copy_to_host(), host)


@pytest.mark.parametrize("key", [
    np.s_[1:3], np.s_[::2], np.s_[::-1], np.s_[1], np.s_[-1], np.s_[:, 2], np.s_[1:, ::-2],
    np.s_[..., 1], np.s_[None, 2:4], np.s_[2, None, 1:], np.s_[3:1], np.s_[-3:, 1:5:3]],
    ids=str)
def test_views_match_numpy(device, rng, key):
    host = random_array(rng, (5, 6), np.float64)
    view = to_device(host)[key]
    assert isinstance(view, DeviceArray)
    assert view.shape == host[key].shape and view.strides == host[key].strides
    np.testing.assert_array_equal(view.copy_to_host(), host[key])


def test_contiguity_flags_match_numpy(device):
    """flags (which every copy asks) are worked out from shape and strides: they must say
    what NumPy says of the same layout, views with steps, extents of 1 and empty ones too."""
    keys = [(), (slice(None),), (slice(None, None, 2),), (slice(None), slice(1, 2)),
            (slice(0, 1),), (slice(None), 0), (0,), (slice(None, None, -1),),
            (slice(2, 2),), (Ellipsis, slice(None, None, 3))]
    for shape in [(6,), (4, 6), (1, 6), (6, 1), (3, 1, 4), (0, 3), ()]:
        for order in "CF":
            host = np.empty(shape, np.float32, order=order)
            dev = device_array(shape, np.float32, order=order)
            for view in [lambda a: a, lambda a: a.T]:
                for key in keys:
                    try:
                        expect = view(host)[key]
                    except IndexError:
                        continue
                    got = view(dev)[key]
                    if not isinstance(got, DeviceArray):      # an element: a scalar
                        continue
                    assert (got.shape, got.strides) == (expect.shape, expect.strides)
                    assert got.flags == {"C_CONTIGUOUS": expect.flags.c_contiguous,
                                         "F_CONTIGUOUS": expect.flags.f_contiguous}, \
                        (shape, order, key, expect.strides)


def test_integer_index_gives_scalar(device, rng):
    host = random_array(rng, (3, 4), np.int32)
    d = to_device(host)
    assert d[1, 2] == host[1, 2] and isinstance(d[1, 2], np.int32)
    assert d[-1, -1] == host[-1, -1]
    assert to_device(host[0])[3] == host[0, 3]
    with pytest.raises(IndexError):
        d[3, 0]


@pytest.mark.parametrize("key", [np.s_[1:3], np.s_[::2, 1], np.s_[::-1, ::-2], np.s_[2], np.s_[:, 3]],
                         ids=str)
def test_writes_through_views_reach_parent(device, rng, key):
    host = random_array(rng, (4, 6), np.float32)
    d = to_device(host)
    patch = random_array(rng, host[key].shape, np.float32)
    d[key].copy_from(patch)
    host[key] = patch
    np.testing.assert_array_equal(d.copy_to_host(), host)


def test_setitem(device, rng):
    host = random_array(rng, (4, 5), np.int16)
    d = to_device(host)
    d[1] = 7
    d[2:, ::2] = np.arange(3, dtype=np.int16)
    d[0, 0] = -5
    host[1] = 7
    host[2:, ::2] = np.arange(3)
    host[0, 0] = -5
    np.testing.assert_array_equal(d.copy_to_host(), host)


def test_transpose(device, rng):
    host = random_array(rng, (2, 3, 4), np.float64)
    d = to_device(host)
    np.testing.assert_array_equal(d.T.copy_to_host(), host.T)
    np.testing.assert_array_equal(d.transpose(1, 0, 2).copy_to_host(), host.transpose(1, 0, 2))
    d.T[0].copy_from(np.zeros((3, 2)))
    host.T[0] = 0
    np.testing.assert_array_equal(d.copy_to_host(), host)


def test_reshape_views(device, rng):
    host = random_array(rng, (4, 6), np.int32)
    d = to_device(host)
    r = d.reshape(3, -1)
    assert r.shape == (3, 8)
    np.testing.assert_array_equal(r.copy_to_host(), host.reshape(3, 8))
    np.testing.assert_array_equal(d.reshape((24,), order="C").copy_to_host(), host.ravel())
    np.testing.assert_array_equal(d.T.reshape(24, order="F").copy_to_host(), host.T.reshape(24, order="F"))
    r[0, 0] = 123
    assert d[0, 0] == 123


def test_reshape_needing_a_copy_is_an_error(device):
    d = zeros((4, 6), np.float32)
    with pytest.raises(ValueError, match="without a copy"):
        d.T.reshape(24)
    with pytest.raises(ValueError):
        d.reshape(5, 5)


def test_copy_from_device_array_and_copy(device, rng):
    host = random_array(rng, (5, 4), np.complex128)
    a, b = to_device(host), zeros((5, 4), np.complex128)
    b.copy_from(a)
    np.testing.assert_array_equal(b.copy_to_host(), host)
    c = a.T.copy()
    assert c.is_c_contiguous()
    np.testing.assert_array_equal(c.copy_to_host(), host.T)
    strided = zeros((5, 8), np.complex128)[:, ::2]
    a.copy_to_device(strided)
    np.testing.assert_array_equal(strided.copy_to_host(), host)


def test_copy_from_broadcasts_and_converts_python_values(device):
    d = zeros((3, 4), np.float64)
    d.copy_from(np.arange(4, dtype=np.float64))
    np.testing.assert_array_equal(d.copy_to_host(), np.broadcast_to(np.arange(4.0), (3, 4)))
    d.copy_from(2.5)
    assert (d.copy_to_host() == 2.5).all()
    d.copy_from([1, 2, 3, 4])                   # Python values convert, as in NumPy assignment
    np.testing.assert_array_equal(d.copy_to_host()[0], [1.0, 2.0, 3.0, 4.0])


def test_copy_errors(device):
    d = zeros((3, 4), np.int32)
    with pytest.raises(ValueError, match="shape"):
        d.copy_from(np.zeros((4, 3), np.int32))
    with pytest.raises(TypeError, match="float64"):
        d.copy_from(np.zeros((3, 4), np.float64))
    with pytest.raises(ValueError):
        d.copy_to_device(zeros((4, 3), np.int32))
    with pytest.raises(TypeError):
        d.copy_to_device(zeros((3, 4), np.int64))


def test_fancy_indexing_is_not_supported(device):
    d = zeros(5)
    with pytest.raises(NotSupportedError, match="basic indices"):
        d[[0, 1]]
    with pytest.raises(NotSupportedError):
        d[np.array([True, False, True, False, True])]


def test_zeros_empty_like(device):
    assert (zeros((2, 3), np.int8).copy_to_host() == 0).all()
    e = arrays.empty((2, 3), np.float32, order="F")
    assert e.is_f_contiguous() and e.dtype == np.float32
    like = device_array_like(np.asfortranarray(np.ones((3, 2))))
    assert like.shape == (3, 2) and like.is_f_contiguous()
    assert device_array(4).dtype == np.float64
    with pytest.raises(ValueError):
        device_array((2, -1))
    with pytest.raises(ValueError):
        device_array(3, order="K")


def test_len_repr_array(device):
    d = to_device(np.arange(6).reshape(2, 3))
    assert len(d) == 2
    assert "shape=(2, 3)" in repr(d) and device.name in repr(d)
    np.testing.assert_array_equal(np.asarray(d), np.arange(6).reshape(2, 3))
    assert np.asarray(d, dtype=np.float32).dtype == np.float32
    with pytest.raises(TypeError):
        len(zeros(()))


def test_zero_d_and_empty_arrays(device):
    d = to_device(np.float32(3.5))
    assert d.shape == () and d.copy_to_host()[()] == 3.5
    assert d[()] == 3.5
    e = to_device(np.zeros((0, 3)))
    assert e.copy_to_host().shape == (0, 3) and e[1:].shape == (0, 3)
    e.copy_from(np.zeros((0, 3)))


@simt.kernel
def _bump_zero_d(a, b):
    a[()] += 1
    b[()] *= 3


def test_zero_d_array_element_read_modify_write_in_a_kernel(device):
    """a[()] += 1 on a 0-d array (the CPU device's hoisted bounds check had no index to check)."""
    a, b = to_device(np.float64(2.5)), to_device(np.int32(7))
    _bump_zero_d[1, 1](a, b)
    assert a.copy_to_host()[()] == 3.5 and b.copy_to_host()[()] == 21


def test_views_keep_memory_alive(device):
    view = to_device(np.arange(10.0))[2:5]
    import gc
    gc.collect()
    np.testing.assert_array_equal(view.copy_to_host(), [2.0, 3.0, 4.0])


def test_out_of_memory_names_sizes(device):
    free, total = arrays.mem_get_info()
    assert 0 < free <= total
    with pytest.raises(OutOfMemoryError, match=str(total * 4)):
        device_array(total * 4, np.uint8)


def test_asarray_wraps_and_copies(device):
    d = zeros(3)
    assert asarray(d) is d
    from_list = asarray([1, 2, 3])
    np.testing.assert_array_equal(from_list.copy_to_host(), [1, 2, 3])


def test_cpu_asarray_shares_numpy_memory(device):
    if device.kind != "cpu":
        pytest.skip("NumPy memory is device memory only on the CPU device")
    host = np.arange(12.0).reshape(3, 4)[:, ::-2]
    d = asarray(host)
    d[0] = -1.0
    assert (host[0] == -1.0).all()
    host[1, 1] = 42.0
    assert d[1, 1] == 42.0
    with pytest.raises(ValueError, match="read-only"):
        asarray(np.broadcast_to(np.ones(3), (2, 3)))


def test_cpu_host_view_and_dlpack(device):
    if device.kind != "cpu":
        pytest.skip("CPU device only")
    d = to_device(np.arange(8, dtype=np.int32))
    view = d[::2]._host_view()
    view[:] = 0
    np.testing.assert_array_equal(d.copy_to_host(), [0, 1, 0, 3, 0, 5, 0, 7])
    assert d.__dlpack_device__() == (1, 0)
    shared = np.from_dlpack(d)
    shared[1] = 9
    assert d[1] == 9
    back = asarray(shared[2:])   # a DLPack-capable NumPy array wraps, no copy
    back[0] = 5
    assert d[2] == 5
    assert not hasattr(d, "__cuda_array_interface__")


def test_pinned_mapped_managed(device):
    p = hostarrays.pinned_array((3, 4), np.float32)
    assert isinstance(p, np.ndarray) and p.shape == (3, 4) and p.dtype == np.float32
    p[:] = 1.5
    d = to_device(p)
    np.testing.assert_array_equal(d.copy_to_host(), p)
    m = hostarrays.mapped_array(5, np.int64)
    m[:] = np.arange(5)
    assert m.device_ptr != 0 and m.sum() == 10
    u = hostarrays.managed_array((2, 2), np.int32)
    host = np.asarray(u)
    host[:] = 4
    np.testing.assert_array_equal(u.copy_to_host(), np.full((2, 2), 4))
    assert m[2:].device_ptr == m.device_ptr + 16
    if device.kind == "cpu":
        assert p.ctypes.data % 4096 == 0 and m.device_ptr == m.ctypes.data
    f = hostarrays.pinned_array((2, 3), np.int8, order="F")
    assert f.flags.f_contiguous and f.shape == (2, 3)


def test_conveniences_astype_view_fill_like(device, rng):
    host = rng.standard_normal((3, 8)).astype(np.float32)
    d = simt.to_device(host)
    np.testing.assert_array_equal(d.astype(np.float64).copy_to_host(), host.astype(np.float64))
    np.testing.assert_array_equal(d.view(np.int32).copy_to_host(), host.view(np.int32))
    assert d.view(np.uint8).shape == (3, 32)
    assert d.fill(2.5) is d and np.all(d.copy_to_host() == 2.5)
    like = simt.zeros_like(host)
    assert like.shape == host.shape and like.dtype == host.dtype and not like.copy_to_host().any()
    assert simt.empty_like(d).shape == (3, 8)
    with pytest.raises(ValueError):
        d.T.view(np.float64)                 # the last axis is not contiguous


def test_device_arrays_pickle_through_the_host(device, rng):
    import pickle
    host = rng.integers(1, 100, size=17).astype(np.int16)
    back = pickle.loads(pickle.dumps(simt.to_device(host)))
    assert isinstance(back, simt.DeviceArray)
    np.testing.assert_array_equal(back.copy_to_host(), host)


def test_star_import_leaves_math_alone():
    namespace = {}
    exec("import math\nfrom simt import *", namespace)
    import math
    assert namespace["math"] is math
    assert "kernel" in namespace and "threadIdx" in namespace and "runtime" not in namespace
