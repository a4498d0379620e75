"""DLPack 1.0 both ways (versioned capsules, the read-only and is-copied flags, max_version,
copy=, dl_device) and the legacy protocol beside it, checked against NumPy 2's exporter and
importer; and to_device of another library's GPU array, device to device."""
import ctypes

import numpy as np
import pytest

import simt
from simt.runtime import arrays, devices, dlpack, interop
from conftest import poison, random_array


@simt.kernel
def scale_into(a, out, s):
    i = simt.grid(1)
    if i < out.size:
        out[i] = a[i] * s


class Exporter:
    """A third-party host tensor that speaks DLPack 1.0 (NumPy's exporter underneath) and
    notes what each call asked for."""

    def __init__(self, array):
        self.array, self.calls = array, []

    def __dlpack__(self, **asked):
        self.calls.append(asked)
        return self.array.__dlpack__(**asked)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class LegacyExporter(Exporter):
    """A pre-1.0 exporter: the keywords of DLPack 1.0 are a TypeError, as they are for
    libraries written before it."""

    def __dlpack__(self, stream=None):
        self.calls.append({"stream": stream})
        return self.array.__dlpack__()


def _imported(capsule):
    return dlpack.Imported(capsule)


def test_exports_are_versioned_when_the_consumer_reads_1_0(device, rng):
    d = simt.to_device(random_array(rng, (6, 5), np.float32))
    for max_version, versioned in [(None, False), ((0, 8), False), ((1, 0), True),
                                   ((1, 3), True), ((2, 0), True)]:
        tensor = _imported(d.__dlpack__(max_version=max_version))
        assert (tensor.versioned, tensor.readonly, tensor.copied) == (versioned, False, False)
        assert (tensor.ptr, tensor.shape, tensor.strides) == (d.ptr, d.shape, d.strides)
        if versioned:
            version = tensor.managed.contents.version
            assert (version.major, version.minor) == (1, 0)
    with pytest.raises(BufferError, match=r"max_version must be a \(major, minor\) tuple"):
        d.__dlpack__(max_version=1)


def test_read_only_arrays_export_the_flag_or_refuse(device, rng):
    d = simt.to_device(random_array(rng, 40, np.int32))
    d.readonly = True                          # as a read-only import of another library is
    assert _imported(d.__dlpack__(max_version=(1, 0))).readonly
    with pytest.raises(BufferError, match=r"read-only, which a DLPack capsule before version "
                                          r"1.0 cannot say.*max_version=\(1, 0\)"):
        d.__dlpack__()
    copied = _imported(d.__dlpack__(copy=True))      # a copy is the consumer's to write
    assert not copied.readonly and copied.ptr != d.ptr


def test_copy_true_exports_a_flagged_copy(device, rng):
    a = random_array(rng, (3, 7), np.float64)
    d = simt.to_device(a)
    tensor = _imported(d.__dlpack__(max_version=(1, 0), copy=True))
    assert tensor.copied and tensor.ptr != d.ptr
    if device.kind != "cuda":                 # host memory: read the copy where it lies
        view = arrays._host_array(tensor.ptr, tensor.shape, tensor.strides, tensor.dtype,
                                  tensor)
        np.testing.assert_array_equal(view, a)
    same = _imported(d.__dlpack__(max_version=(1, 0), copy=False))
    assert not same.copied and same.ptr == d.ptr


def test_numpy_reads_simt_exports_both_ways(rng):
    """simt -> NumPy: np.from_dlpack asks for DLPack 1.0; the memory is shared (writes by
    NumPy reach the simt array), copy=True is a copy, a read-only array arrives read-only,
    and a legacy capsule is read too (NumPy makes that read-only, as it cannot say)."""
    with simt.use_device("cpu"):
        a = random_array(rng, 64, np.float32)
        d = simt.to_device(a)
        shared = np.from_dlpack(d)
        assert shared.flags.writeable and shared.ctypes.data == d.ptr
        shared[:] = -a
        np.testing.assert_array_equal(d.copy_to_host(), -a)
        copied = np.from_dlpack(d, copy=True)
        copied[:] = 0
        np.testing.assert_array_equal(d.copy_to_host(), -a)
        assert np.from_dlpack(d, copy=False).ctypes.data == d.ptr
        assert np.from_dlpack(d, device="cpu").ctypes.data == d.ptr
        legacy = np.from_dlpack(LegacyExporter(d))
        assert legacy.ctypes.data == d.ptr and not legacy.flags.writeable
        np.testing.assert_array_equal(legacy, -a)
        d.readonly = True
        frozen = np.from_dlpack(d)
        assert not frozen.flags.writeable and frozen.ctypes.data == d.ptr
        with pytest.raises(BufferError, match="read-only"):
            np.from_dlpack(LegacyExporter(d))


def test_simt_reads_numpy_dlpack_1_0(rng):
    """NumPy -> simt: asked for a versioned capsule, the array shares the memory and a
    kernel's writes land in it; a read-only NumPy array (which NumPy exports only as
    DLPack 1.0) is a read-only simt array: read by a kernel, refused to one that writes it."""
    with simt.use_device("cpu"):
        a = random_array(rng, 96, np.float32)
        out = poison(96, np.float32)
        source, target = Exporter(a), Exporter(out)
        scale_into[3, 32](simt.from_dlpack(source), simt.from_dlpack(target), np.float32(2))
        np.testing.assert_array_equal(out, a * 2)
        assert source.calls == [{"max_version": (1, 0)}]
        a.flags.writeable = False
        frozen = simt.from_dlpack(a)
        assert frozen.readonly and frozen.ptr == a.ctypes.data
        out[:] = poison(96, np.float32)
        scale_into[3, 32](frozen, out, np.float32(3))
        np.testing.assert_array_equal(out, a * 3)
        with pytest.raises(ValueError, match="writes its parameter 'out'.*read-only"):
            scale_into[3, 32](simt.from_dlpack(out), frozen, np.float32(3))
        assert simt.asarray(Exporter(a)).readonly
        with pytest.raises(ValueError, match="writes its parameter 'out'.*read-only"):
            scale_into[3, 32](out, Exporter(a), np.float32(3))       # wrapped by the launch


def test_legacy_exporters_are_asked_the_old_way(rng):
    with simt.use_device("cpu"):
        a = random_array(rng, (4, 8), np.int64)
        exporter = LegacyExporter(a)
        wrapped = simt.from_dlpack(exporter)
        assert wrapped.ptr == a.ctypes.data and not wrapped.readonly
        assert exporter.calls == [{"stream": None}]       # the 1.0 call was a TypeError
        np.testing.assert_array_equal(wrapped.copy_to_host(), a)


def test_copy_is_honoured_as_the_array_api_says(rng):
    """copy=True: a new array (the producer's flagged copy, or simt's for a legacy one);
    False: the memory itself; None: the memory where the device can use it."""
    with simt.use_device("cpu"):
        a = random_array(rng, 50, np.float64)
        for exporter in (Exporter(a), LegacyExporter(a), a):
            copied = simt.from_dlpack(exporter, copy=True)
            assert copied.ptr != a.ctypes.data and not copied.readonly
            np.testing.assert_array_equal(copied.copy_to_host(), a)
            assert simt.from_dlpack(exporter, copy=False).ptr == a.ctypes.data
            assert simt.from_dlpack(exporter).ptr == a.ctypes.data
        producer = Exporter(a)
        simt.from_dlpack(producer, copy=True)
        assert producer.calls == [{"max_version": (1, 0), "copy": True}]
        assert simt.asarray(a, copy=True).ptr != a.ctypes.data
        assert simt.asarray(a, copy=False).ptr == a.ctypes.data
        with pytest.raises(ValueError, match=r"copy=False forbids a copy"):
            simt.asarray([1.0, 2.0], copy=False)
        with pytest.raises(TypeError, match="copy must be True, False or None"):
            simt.from_dlpack(a, copy="yes")


def test_a_later_major_version_is_refused_and_released(rng):
    with simt.use_device("cpu"):
        d = simt.to_device(random_array(rng, 8, np.float32))
    capsule = dlpack.export(d, dlpack.KDL_CPU, 0, versioned=True)
    address = dlpack._api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
    managed = ctypes.cast(address, ctypes.POINTER(dlpack.DLManagedTensorVersioned))
    managed.contents.version.major = 2
    with pytest.raises(BufferError, match=r"version 2.0, and simt reads version 1.x"):
        dlpack.Imported(capsule)
    assert dlpack._exported
    del capsule, managed                        # unconsumed: its destructor releases it
    assert not dlpack._exported


def test_dl_device_other_than_the_arrays(device, rng):
    a = random_array(rng, 32, np.float32)
    d = simt.to_device(a)
    if device.backend.host_accessible:
        with pytest.raises(BufferError, match=r"not to \(2, 0\)"):
            d.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
        return
    host = np.from_dlpack(d, device="cpu")            # a host copy, asked for by NumPy
    np.testing.assert_array_equal(host, a)
    with pytest.raises(BufferError, match="copy=False forbids one"):
        d.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)


def test_host_memory_on_a_gpu_device_is_copied_unless_copy_false(device, rng):
    if device.backend.host_accessible:
        pytest.skip("the CPU and sim devices use host memory in place")
    a = random_array(rng, 32, np.float32)
    copied = simt.from_dlpack(Exporter(a))
    np.testing.assert_array_equal(copied.copy_to_host(), a)
    with pytest.raises(BufferError, match="copy=False forbids a copy"):
        simt.from_dlpack(a, copy=False)
    on_host = simt.from_dlpack(simt.to_device(a), device="cpu")
    assert on_host.device.kind == "cpu"
    np.testing.assert_array_equal(on_host.copy_to_host(), a)


class CudaInterface:
    """__cuda_array_interface__ over a host array (the CPU device's addresses are host
    addresses, standing in for GPU memory), as CuPy and PyTorch export it."""

    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = {
            "shape": array.shape, "typestr": array.dtype.str, "version": 3, "stream": 1,
            "data": (array.ctypes.data, False), "strides": array.strides}

    def __array__(self, *args, **kwargs):
        raise AssertionError("np.asarray of GPU memory: a host copy")


class CudaDlpack(Exporter):
    """A DLPack exporter on CUDA device 0 (host memory standing in, as above); the
    consumer's stream is noted, and not passed to NumPy, which has no streams."""

    def __dlpack__(self, stream=None, **asked):
        self.calls.append(dict(asked, stream=stream))
        return self.array.__dlpack__(**asked)

    def __dlpack_device__(self):
        return (dlpack.KDL_CUDA, 0)

    def __array__(self, *args, **kwargs):
        raise AssertionError("np.asarray of GPU memory: a host copy")


@pytest.mark.parametrize("kind", [CudaInterface, CudaDlpack])
def test_to_device_copies_a_foreign_gpu_array_device_to_device(monkeypatch, rng, kind):
    """simt.to_device(tensor) of a GPU array of another library: never through np.asarray
    (which cannot read GPU memory), a device-to-device copy into a new simt array."""
    cpu = devices.lookup("cpu")
    monkeypatch.setattr(interop, "_cuda_pointers", lambda device: True)
    monkeypatch.setattr(interop, "_gpu", lambda index: cpu)
    backend = type(cpu.backend)

    def no_host_copy(*args, **kwargs):
        raise AssertionError("to_device copied a GPU array from the host")
    monkeypatch.setattr(backend, "copy_htod", no_host_copy)
    with simt.use_device("cpu"):
        for a in (random_array(rng, (16, 8), np.float32),
                  np.asfortranarray(random_array(rng, (5, 9), np.int16))):
            source = kind(a)
            for copy in (simt.to_device(source), simt.cuda.to_device(source)):
                assert copy.ptr != a.ctypes.data and copy.strides == a.strides
                before = a.copy()
                a[...] = 0
                np.testing.assert_array_equal(np.asarray(copy._host_view()), before)
                a[...] = before
            if kind is CudaDlpack:       # simt's work is in the legacy default stream
                assert source.calls == [{"max_version": (1, 0), "stream": 1}] * 2


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_gpu_libraries_to_device_and_dlpack_1_0(device, rng, library):
    if device.kind != "cuda":
        pytest.skip("GPU libraries' arrays live in GPU memory")
    lib = pytest.importorskip(library)
    a = random_array(rng, (32, 24), np.float32)
    x = lib.asarray(a) if library == "cupy" else lib.as_tensor(a, device="cuda")
    copied = simt.to_device(x)                          # device to device
    assert copied.device == device
    np.testing.assert_array_equal(copied.copy_to_host(), a)
    mine = simt.from_dlpack(x, copy=True)
    np.testing.assert_array_equal(mine.copy_to_host(), a)
    theirs = lib.from_dlpack(copied)                   # a 1.0 consumer gets a 1.0 capsule
    got = theirs.get() if library == "cupy" else theirs.cpu().numpy()
    np.testing.assert_array_equal(got, a)
    on_host = np.from_dlpack(copied, device="cpu")    # dl_device=(1, 0): a host copy
    np.testing.assert_array_equal(on_host, a)
