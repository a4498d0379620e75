"""Arrays and streams of other libraries: DLPack both ways with no copy, foreign arrays as
kernel arguments, the CUDA array interface's stream and read-only fields, foreign streams."""
import types

import numpy as np
import pytest

import simt
from simt.runtime import dlpack
from conftest import poison, random_array


@simt.kernel
def scale_into(a, out, s):
    i = simt.grid(1)
    if i < out.size:
        out[i] = a[i] * s


class HostExporter:
    """A third-party CPU tensor: only the DLPack protocol (as a torch CPU tensor has)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None, **kwargs):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return (dlpack.KDL_CPU, 0)


def test_capsules_round_trip_through_the_c_structs(rng):
    """The ctypes DLPack layer against NumPy's own exporter and importer."""
    host = random_array(rng, (3, 5), np.float32)[:, 1:4]         # strided
    tensor = dlpack.Imported(host.__dlpack__())
    assert (tensor.shape, tensor.dtype, tensor.strides) == (host.shape, host.dtype, host.strides)
    assert tensor.ptr == host.__array_interface__["data"][0]
    with pytest.raises(ValueError, match="used once"):
        capsule = host.__dlpack__()
        dlpack.Imported(capsule)
        dlpack.Imported(capsule)
    with simt.use_device("cpu"):
        d = simt.to_device(random_array(rng, (4, 6), np.int16))
    capsule = dlpack.export(d, dlpack.KDL_CPU, 0)
    back = dlpack.Imported(capsule)
    assert (back.shape, back.dtype, back.ptr) == (d.shape, d.dtype, d.ptr)
    assert back.strides == d.strides
    del back                                   # runs the deleter: the export is released
    assert not dlpack._exported


def test_an_unconsumed_export_is_released(rng):
    with simt.use_device("cpu"):
        d = simt.to_device(random_array(rng, 10, np.float64))
    capsule = dlpack.export(d, dlpack.KDL_CPU, 0)
    assert dlpack._exported
    del capsule
    assert not dlpack._exported


def test_a_dlpack_tensor_is_a_kernel_argument_without_a_copy(rng):
    with simt.use_device("cpu"):
        a = random_array(rng, 100, np.float32)
        out = poison(100, np.float32)
        scale_into[4, 32](HostExporter(a), HostExporter(out), np.float32(3))
        np.testing.assert_array_equal(out, a * 3)
        wrapped = simt.from_dlpack(HostExporter(out))
        assert wrapped.ptr == out.__array_interface__["data"][0]


def test_gpu_arrays_export_and_import_dlpack(device, rng):
    a = random_array(rng, (8, 16), np.float64)
    d = simt.to_device(a)
    back = simt.from_dlpack(d)
    assert back.ptr == d.ptr and back.shape == d.shape and back.strides == d.strides
    out = simt.device_array(128, np.float64)
    scale_into[1, 128](simt.from_dlpack(d.reshape(128)), out, 2.0)
    np.testing.assert_array_equal(out.copy_to_host(), 2 * a.ravel())


def test_read_only_exports_are_not_written(device, rng):
    if device.kind != "cuda":
        pytest.skip("the read-only flag of __cuda_array_interface__ is a GPU memory flag")

    class ReadOnly:
        def __init__(self, d):
            face = dict(d.__cuda_array_interface__)
            face["data"] = (face["data"][0], True)
            self.__cuda_array_interface__ = face
    d = simt.to_device(random_array(rng, 64, np.float32))
    with pytest.raises(ValueError, match="read-only"):
        scale_into[1, 64](simt.to_device(np.ones(64, np.float32)), ReadOnly(d), np.float32(2))


def test_streams_of_other_libraries(device):
    if device.kind != "cuda":
        with pytest.raises(simt.NotSupportedError, match="GPU"):
            simt.Stream.from_handle(12345)
        return
    mine = simt.Stream()
    foreign = simt.Stream.from_handle(mine)            # via __cuda_stream__
    assert foreign.__cuda_stream__() == mine.__cuda_stream__()
    a = np.arange(64, dtype=np.float32)
    out = simt.device_array(64, np.float32)
    scale_into[1, 64, 0, foreign](simt.to_device(a), out, np.float32(2))
    foreign.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), 2 * a)


def test_not_a_stream_says_what_is():
    with pytest.raises(simt.InvalidConfiguration, match="__cuda_stream__"):
        scale_into[1, 1, 0, object()](np.zeros(1), np.zeros(1), 1.0)


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_gpu_libraries_both_ways(device, rng, library):
    if device.kind != "cuda":
        pytest.skip("GPU libraries share GPU memory")
    lib = pytest.importorskip(library)
    a = random_array(rng, 256, np.float32)
    d = simt.to_device(a)
    theirs = lib.from_dlpack(d)                                   # simt -> them, no copy
    if library == "cupy":
        assert theirs.data.ptr == d.ptr
        x, out = lib.asarray(a), lib.full(256, lib.nan, dtype=lib.float32)
    else:
        assert theirs.data_ptr() == d.ptr
        x = lib.as_tensor(a, device="cuda")
        out = lib.full((256,), float("nan"), dtype=lib.float32, device="cuda")
    scale_into[2, 128](x, out, np.float32(3))                    # them -> simt, in place
    got = out.get() if library == "cupy" else out.cpu().numpy()
    np.testing.assert_array_equal(got, a * 3)
    mine = simt.from_dlpack(x)
    assert mine.ptr == (x.data.ptr if library == "cupy" else x.data_ptr())


def test_foreign_arrays_reach_the_prepared_path(rng):
    """Launches with other libraries' arrays wrap them and use the launch function bound
    for the wrappers: new tensors at every launch, right results every time."""
    with simt.use_device("cpu"):
        for trial in range(4):
            a = random_array(rng, 64, np.float32)
            out = poison(64, np.float32)
            scale_into[2, 32](HostExporter(a), HostExporter(out), np.float32(trial))
            np.testing.assert_array_equal(out, a * np.float32(trial))
        assert scale_into.launches[(2, 32)].prepared


class InterfaceExporter:
    """GPU-style __cuda_array_interface__ over a host array (the CPU device's addresses are
    host addresses), read afresh at every access as CuPy and PyTorch build it."""
    def __init__(self, array):
        self.array = array

    @property
    def __cuda_array_interface__(self):
        a = self.array
        return {"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False),
                "strides": None, "version": 3, "stream": 1}


def test_a_foreign_array_passed_again_is_wrapped_once(monkeypatch, rng):
    """The same tensor at every launch is one DeviceArray (the launch function finds its
    packed values unchanged); a tensor whose memory moved is wrapped again; a dead tensor's
    entry goes."""
    from simt.runtime import interop, launch
    monkeypatch.setattr(interop, "_cuda_pointers", lambda device: True)
    with simt.use_device("cpu"):
        a = random_array(rng, 64, np.float32)
        x, out = InterfaceExporter(a), InterfaceExporter(poison(64, np.float32))
        for trial in range(3):
            scale_into[2, 32](x, out, np.float32(trial + 1))
            np.testing.assert_array_equal(out.array, a * np.float32(trial + 1))
        device = simt.get_device()
        assert launch._adopt(x, device) is launch._adopt(x, device)
        before = launch._adopt(x, device)
        x.array = random_array(rng, 64, np.float32)            # the tensor's memory moved
        assert launch._adopt(x, device) is not before
        out.array = poison(64, np.float32)
        scale_into[2, 32](x, out, np.float32(5))
        np.testing.assert_array_equal(out.array, x.array * np.float32(5))
        key = id(x)
        del x
        assert key not in launch._adopted


def test_a_torch_tensor_passed_again_is_not_described_again(monkeypatch, rng):
    """PyTorch builds __cuda_array_interface__ in Python at every access: a tensor passed
    again, unchanged, is recognised by its pointer, shape, strides and dtype instead; a
    tensor whose memory moved is described again. A stand-in of torch.Tensor over host
    memory (the CPU device's addresses are host addresses) counts the descriptions."""
    from simt.runtime import interop, launch
    monkeypatch.setattr(interop, "_cuda_pointers", lambda device: True)

    class Tensor:
        is_cuda, requires_grad, is_sparse = True, False, False
        device = types.SimpleNamespace(index=0)
        described = 0

        def __init__(self, array):
            self.array = array

        def data_ptr(self):
            return self.array.ctypes.data

        @property
        def shape(self):
            return self.array.shape

        def stride(self):
            return tuple(s // self.array.itemsize for s in self.array.strides)

        @property
        def dtype(self):
            return self.array.dtype

        @property
        def __cuda_array_interface__(self):
            Tensor.described += 1
            a = self.array
            return {"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False),
                    "strides": None, "version": 2}
    Tensor.__module__ = "torch"
    with simt.use_device("cpu"):
        a = random_array(rng, 64, np.float32)
        x, out = Tensor(a), Tensor(poison(64, np.float32))
        for trial in range(3):
            scale_into[2, 32](x, out, np.float32(trial + 1))
            np.testing.assert_array_equal(out.array, a * np.float32(trial + 1))
        assert Tensor.described == 2                      # once per tensor
        x.array = random_array(rng, 64, np.float32)      # its memory moved
        scale_into[2, 32](x, out, np.float32(2))
        np.testing.assert_array_equal(out.array, x.array * np.float32(2))
        assert Tensor.described == 3
    assert launch._KEYS[Tensor] is launch._torch_key


class _BadDlpackDevice:
    """A DLPack exporter whose __dlpack_device__ answers ``answer``."""

    def __init__(self, answer):
        self.host, self.answer = np.arange(4.0), answer

    def __dlpack__(self, stream=None):
        return self.host.__dlpack__()

    def __dlpack_device__(self):
        return self.answer


@simt.kernel
def _write_first(x):
    x[0] = 1.0


@pytest.mark.parametrize("answer", [None, 1, (1,), ("cpu", 0), (1.0, 0)], ids=repr)
def test_a_bad_dlpack_device_answer_is_named(device, answer):
    bad = _BadDlpackDevice(answer)
    rule = r"_BadDlpackDevice.__dlpack_device__\(\) returned .*; the DLPack protocol asks " \
           r"for a tuple of two ints"
    for use in (simt.asarray, simt.from_dlpack, lambda x: _write_first[1, 1](x)):
        with pytest.raises(TypeError, match=rule):
            use(bad)


def test_bfloat16_travels_through_dlpack(device, rng):
    """DLPack's bfloat16 (type code 4, 16 bits) both ways: a PyTorch bfloat16 tensor wraps as
    a simt.bfloat16 array (it was a TypeError), and simt's bfloat16 arrays export as it."""
    values = simt.to_bfloat16(rng.standard_normal(64).astype(np.float32))
    a = simt.to_device(np.asarray(values))
    assert a.dtype.itemsize == 2
    back = simt.from_dlpack(a, device=device)
    assert back.ptr == a.ptr and back.shape == a.shape
    np.testing.assert_array_equal(back.copy_to_host().view(np.uint16),
                                  np.asarray(values).view(np.uint16))


class _UntypedCudaInterface:
    """An exporter of both protocols whose __cuda_array_interface__ says only "<V2" (as
    PyTorch's bfloat16 tensors do): DLPack, which names bfloat16, must be the one used."""

    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = dict(array.__cuda_array_interface__, typestr="<V2")

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_an_untyped_cuda_interface_goes_by_dlpack(device, rng):
    if not device.backend.cuda_pointers:
        pytest.skip("__cuda_array_interface__ describes GPU memory")
    values = np.asarray(simt.to_bfloat16(rng.standard_normal(32).astype(np.float32)))
    a = simt.to_device(values)
    wrapped = simt.asarray(_UntypedCudaInterface(a))
    assert wrapped.dtype == a.dtype and wrapped.ptr == a.ptr


@simt.kernel
def scale_again(a, out, s):
    i = simt.grid(1)
    if i < out.size:
        out[i] = a[i] * s


def test_a_foreign_array_passed_after_the_bound_launch_takes_its_wrappers_function(
        rng, monkeypatch):
    """Once a launch function is bound (for the wrappers' classes), another library's
    array passed to it is wrapped and handed to that function, not to the full path that
    compiles types and binds again at every launch (113 us a launch on the H200 with
    PyTorch tensors, 2026-12-02, against 3.8 us for simt's own arrays)."""
    from simt.runtime import launch as launching
    with simt.use_device("cpu"):
        a = random_array(rng, 64, np.float32)
        out = simt.to_device(poison(64, np.float32))
        run = scale_again[2, 32]            # a kernel of its own: this is the Launch
        run(simt.to_device(a), out, np.float32(2))
        run(simt.to_device(a), out, np.float32(2))        # bound now, for DeviceArrays
        full = []
        real = launching.Launch._run
        monkeypatch.setattr(launching.Launch, "_run",
                            lambda self, *args: (full.append(1), real(self, *args))[1])
        for k in range(4):   # what a back end's own launch function (the GPU's) calls
            out2 = simt.to_device(poison(64, np.float32))      # with arguments it refuses
            run._retry(None, HostExporter(a), out2, np.float32(k))
            np.testing.assert_array_equal(out2.copy_to_host(), a * np.float32(k))
        assert len(full) <= 1, f"{len(full)} of 4 launches took the full path"
