"""Modules made elsewhere (simt.Module, simt.SourceModule, raw kernels): argument packing
and NVRTC's log handling are checked here without a GPU (NVRTC through a stand-in);
loading and launching run with ``--device cuda:0``; the CPU device refuses them."""
import ctypes
import re
import types

import numpy as np
import pytest

import simt
from simt.backends.cuda import nvrtc as nvrtc_wrapper
from simt.runtime import modules
from conftest import poison, random_array

SAXPY = r'''
extern "C" __global__ void saxpy(float a, const float *x, float *y, float *out, size_t n)
{
    size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        out[tid] = a * x[tid] + y[tid];
    }
}

__device__ int counter[4];

template <typename T>
__global__ void scale(T *data, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
'''


@simt.kernel
def add_one(a):
    i = simt.grid(1)
    if i < a.shape[0]:
        a[i] += np.float32(1)


def _gpu(device):
    return device.kind == "cuda"


# -- the CPU device refuses, naming the GPU ---------------------------------------------

def test_cpu_device_refuses_modules():
    with simt.use_device("cpu"):
        with pytest.raises(simt.NotSupportedError, match="CUDA modules.*NVIDIA GPUs"):
            simt.Module.load(b"// PTX\n.version 8.0\n")
        with pytest.raises(simt.NotSupportedError, match="NVRTC.*NVIDIA GPUs"):
            simt.SourceModule(SAXPY)


def test_image_kinds_and_paths(tmp_path):
    assert modules.image_kind(b"\x7fELF\x02\x01") == "cubin"
    assert modules.image_kind(b"\x50\xed\x55\xba\x01\x00") == "fatbin"
    assert modules.image_kind(b".version 8.0\n.target sm_90\n") == "ptx"
    with pytest.raises(FileNotFoundError, match="pass it as bytes"):
        simt.Module.load(".version 8.0\n.entry k()")
    with pytest.raises(TypeError, match="path or the image's bytes"):
        simt.Module.load(42)


# -- argument packing (the C rule) -------------------------------------------------------

def test_pack_arrays_numpy_scalars_and_signatures(rng):
    with simt.use_device("cpu") as cpu:
        d = simt.to_device(random_array(rng, 8, np.float32))
        kinds, values = modules.pack_args(
            "k", None, (d, np.float32(2.5), np.int64(-3), np.bool_(True)), cpu)
        assert kinds == ["pointer", np.dtype(np.float32), np.dtype(np.int64),
                         np.dtype(np.bool_)]
        assert values[0] == d.ptr and values[1] == np.float32(2.5)
        sig = [modules._param(s) for s in ("pointer", np.float32, "int32", "uint8")]
        kinds, values = modules.pack_args("k", sig, (d[2:], 1.5, 7, 255), cpu)
        assert values[0] == d.ptr + 8 and values[1].dtype == np.float32
        assert values[2].dtype == np.int32 and values[2] == 7 and values[3] == 255
        kinds, values = modules.pack_args("k", sig, (1234, 1.5, 7, 0), cpu)
        assert values[0] == 1234             # a raw device address


@pytest.mark.parametrize("args, sig, error, match", [
    ((5,), None, TypeError, r"argument 0: a Python int has no C width.*np\.int32"),
    ((2.0,), None, TypeError, r"a Python float has no C width.*np\.float32"),
    ((np.zeros(3),), None, TypeError, "a NumPy array is host memory"),
    ((np.complex64(1),), None, TypeError, "not complex64"),
    ((300,), ["uint8"], OverflowError, "300 does not fit"),
    ((1.5,), ["int32"], TypeError, "a float was given"),
    ((np.float64(1),), ["float32"], TypeError, r"the signature says float32.*np\.float32"),
    ((1, 2), ["int32"], TypeError, "signature of 1 parameters, got 2"),
    (("x",), None, TypeError, "cannot pass a str"),
])
def test_pack_errors_name_the_argument(args, sig, error, match):
    with simt.use_device("cpu") as cpu:
        sig = None if sig is None else [modules._param(s) for s in sig]
        with pytest.raises(error, match=match):
            modules.pack_args("k", sig, args, cpu)


def test_signature_entries_are_c_types():
    with pytest.raises(TypeError, match="C scalars"):
        modules._param(np.complex128)
    assert modules._param("ptr") == "pointer"


# -- NVRTC, through a stand-in with NVRTC's calling convention ----------------------------

class FakeNvrtc:
    """cuda.bindings.nvrtc's shape: (result, value...) tuples; a program that fails when
    its source contains 'BROKEN'."""

    nvrtcResult = types.SimpleNamespace(NVRTC_SUCCESS=0, NVRTC_ERROR_COMPILATION=6)
    LOG = ('saxpy.cu(3): warning: variable "unused" was declared but never referenced\n'
           'saxpy.cu(7): error: identifier "tid2" is undefined\n'
           '1 error detected in the compilation of "saxpy.cu".\n')

    def __init__(self):
        self.calls = []

    def nvrtcCreateProgram(self, src, name, n, headers, names):
        self.source, self.name = src, name
        return 0, "prog"

    def nvrtcAddNameExpression(self, prog, expr):
        self.calls.append(("name", expr))
        return (0,)

    def nvrtcCompileProgram(self, prog, n, options):
        assert n == len(options)
        self.options = options
        return (6 if b"BROKEN" in self.source else 0,)

    def nvrtcGetProgramLogSize(self, prog):
        return 0, len(self._log()) + 1

    def nvrtcGetProgramLog(self, prog, buffer):
        return self._write(buffer, self._log() + b"\0")

    @staticmethod
    def _write(buffer, data):
        """Fill the caller's bytes in place, as the binding's char* parameter does."""
        assert len(buffer) == len(data)
        ctypes.memmove(buffer, data, len(data))
        return (0,)

    def _log(self):
        return self.LOG.encode() if b"BROKEN" in self.source else b""

    def nvrtcGetCUBINSize(self, prog):
        return 0, 9

    def nvrtcGetCUBIN(self, prog, buffer):
        return self._write(buffer, b"\x7fELFcubin")

    def nvrtcGetLoweredName(self, prog, expr):
        return 0, b"_Z5scaleIfEvPT_S0_i"

    def nvrtcDestroyProgram(self, prog):
        self.calls.append(("destroy", prog))
        return (0,)

    def nvrtcGetErrorString(self, err):
        return 0, b"NVRTC_ERROR_COMPILATION"


def test_nvrtc_success_passes_arch_options_and_lowers_names():
    fake = FakeNvrtc()
    image, lowered, log = nvrtc_wrapper.compile_source(
        SAXPY, "saxpy.cu", ["-std=c++17"], ["scale<float>"], "sm_90", nvrtc=fake)
    assert fake.options == [b"--gpu-architecture=sm_90", b"-std=c++17"]
    assert lowered == [("scale<float>", "_Z5scaleIfEvPT_S0_i")]
    assert image == b"\x7fELFcubin" and log == ""
    assert fake.calls == [("name", b"scale<float>"), ("destroy", "prog")]


def test_nvrtc_failure_is_compile_error_with_the_log():
    fake = FakeNvrtc()
    with pytest.raises(simt.CompileError) as info:
        nvrtc_wrapper.compile_source("BROKEN", "saxpy.cu", [], [], "sm_80", nvrtc=fake)
    error = info.value
    assert error.line == 7 and error.filename == "saxpy.cu"
    assert error.why == FakeNvrtc.LOG.strip()
    assert 'saxpy.cu, line 7: identifier "tid2" is undefined' in str(error)
    assert "--gpu-architecture=sm_80" in str(error)
    assert ("destroy", "prog") in fake.calls          # destroyed on failure too


def test_first_error_without_a_line():
    assert nvrtc_wrapper.first_error("nvrtc: error: invalid value for --gpu-architecture\n") \
        == (None, "nvrtc: error: invalid value for --gpu-architecture")


# -- on a GPU -----------------------------------------------------------------------------

def test_source_module_saxpy(device, rng):
    if not _gpu(device):
        with pytest.raises(simt.NotSupportedError, match="NVIDIA GPUs"):
            simt.SourceModule(SAXPY)
        return
    module = _source_module(SAXPY, name_expressions=["scale<float>"])
    n = 1000
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    out = simt.to_device(poison(n, np.float32))
    saxpy = module.get_function("saxpy")
    saxpy[(n + 127) // 128, 128](np.float32(2.5), simt.to_device(x), simt.to_device(y), out,
                                 np.uint64(n))
    # NVRTC contracts a * x + y into one fma (--fmad=true), NumPy rounds twice
    np.testing.assert_allclose(out.copy_to_host(), np.float32(2.5) * x + y, rtol=1e-5, atol=1e-6)
    scale = module.get_function("scale<float>", signature=["pointer", np.float32, np.int32])
    d = simt.to_device(x)
    scale[(n + 255) // 256, 256](d, 3.0, n)
    np.testing.assert_allclose(d.copy_to_host(), x * np.float32(3), rtol=1e-6)


def test_source_module_globals(device, rng):
    if not _gpu(device):
        pytest.skip("GPU only: the CPU refusal is test_cpu_device_refuses_modules")
    module = _source_module(SAXPY)
    counter = module.get_global("counter", np.int32)
    assert counter.shape == (4,)
    values = random_array(rng, 4, np.int32)
    counter.copy_from(values)
    np.testing.assert_array_equal(module.get_global("counter", np.int32).copy_to_host(), values)


def test_missing_names_are_said_in_words(device):
    if not _gpu(device):
        pytest.skip("GPU only")
    module = _source_module(SAXPY)
    with pytest.raises(simt.CudaError, match=r"no kernel named 'scale<float>'.*name_expressions"):
        module.get_function("scale<float>")
    with pytest.raises(simt.CudaError, match="no global named 'nothing'"):
        module.get_global("nothing")


def test_source_module_compile_error(device):
    if not _gpu(device):
        pytest.skip("GPU only")
    with pytest.raises(simt.CompileError, match=r"broken\.cu, line 2") as info:
        _source_module('extern "C" __global__ void k(int *a)\n{ a[0] = undefined_name; }\n',
                       name="broken.cu")
    assert "undefined_name" in info.value.why


def test_module_load_ptx_of_a_simt_kernel(device, rng, tmp_path):
    """A simt kernel's own PTX, loaded as a module and launched raw: an array is its
    pointer and its extent (docs/modules.md says how simt lays arrays out)."""
    if not _gpu(device):
        pytest.skip("GPU only")
    ptx = add_one.inspect_ptx("void(float32[::1])")
    entry = re.search(r"\.entry\s+(\w+)", ptx).group(1)
    path = tmp_path / "add_one.ptx"
    path.write_text(ptx)
    for module in (simt.Module.load(ptx.encode()), simt.Module.load(path)):
        assert module.kind == "ptx"
        host = random_array(rng, 300, np.float32)
        d = simt.to_device(host)
        module.get_function(entry)[3, 128](d, np.int64(300))
        np.testing.assert_array_equal(d.copy_to_host(), host + np.float32(1))


def _source_module(source, **kw):
    try:
        return simt.SourceModule(source, **kw)
    except simt.CudaError as exc:
        if "NVRTC is not available" in str(exc):
            pytest.skip(str(exc))
        raise


def test_not_found_names_the_fix():
    module = simt.Module.__new__(simt.Module)
    module.kind, module._lowered = "cubin", {"scale<float>": "_Z5scaleIfEvPT_S0_i"}

    def lookup(symbol):
        if symbol != "_Z5scaleIfEvPT_S0_i":
            raise simt.CudaError("cuModuleGetFunction failed with CUDA_ERROR_NOT_FOUND")
        return "found"
    assert module._find("kernel", "scale<float>", lookup) == "found"     # lowered name
    with pytest.raises(simt.CudaError, match=r"cubin module has no kernel named 'scale'.*"
                                             r"extern \"C\""):
        module._find("kernel", "scale", lookup)
