"""Device code from other files (simt.declare_device, @simt.kernel(link=...)): on GPUs the
kernel calls the external symbol and is linked with the files (NVRTC, nvJitLink); the cpu
and sim devices run the fallback. Offline checks (no GPU): the PTX calls the symbol,
ptxas/nvcc/nvlink link it, nvJitLink (where cuda-bindings has it) makes the cubin."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.compiler import pipeline
from simt.compiler.options import CompileOptions
from simt.errors import CompileError, NotSupportedError
from simt.ir import types as T
from conftest import poison, random_array

HERE = os.path.dirname(os.path.abspath(__file__))
FMA_CU = os.path.join(HERE, "linking", "fma.cu")
AXPY_PTX = os.path.join(HERE, "linking", "axpy.ptx")
N = 300


@simt.device
def fma_fallback(a, b, c):
    return a * b + c


@simt.device
def scaled_at_fallback(i, p):
    return np.float32(2.0) * p[i]


@simt.device
def add_to_fallback(out, i, v):
    out[i] += np.float32(v)


my_fma = simt.declare_device("my_fma", "float32(float32, float32, float32)",
                             link=["linking/fma.cu"], fallback=fma_fallback)
scaled_at = simt.declare_device("scaled_at", "float32(int32, float32*)", link=FMA_CU,
                                fallback=scaled_at_fallback)
add_to = simt.declare_device("add_to", "void(float32*, int32, float64)", link=FMA_CU,
                             fallback=add_to_fallback)
ptx_axpy = simt.declare_device("ptx_axpy", "float32(float32, float32, float32)",
                               link=[AXPY_PTX], fallback=fma_fallback)


@simt.device
def through_device_function(a, b, c):
    return my_fma(a, b, c) + np.float32(1.0)


@simt.kernel
def fma_kernel(out, a, b, c):
    i = simt.grid(1)
    if i < out.size:
        out[i] = my_fma(a[i], b[i], c[i])


@simt.kernel
def pointer_kernel(out, a, b):
    i = simt.grid(1)
    if i < out.size:
        out[i] = scaled_at(i, a)
        add_to(out, i, b[i])


@simt.kernel
def nested_kernel(out, a, b, c):
    i = simt.grid(1)
    if i < out.size:
        out[i] = through_device_function(a[i], b[i], c[i])


@simt.kernel
def ptx_kernel(out, a, b, c):
    i = simt.grid(1)
    if i < out.size:
        out[i] = ptx_axpy(a[i], b[i], c[i])


def _inputs(rng, count=3):
    return [random_array(rng, N, np.float32) for _ in range(count)]


def _launch(kernel, out, *args):
    kernel[(N + 127) // 128, 128](out, *args)
    return out


# ------------------------------------------------------------------ every device
def test_a_cu_function_is_called(device, rng):
    a, b, c = _inputs(rng)
    out = _launch(fma_kernel, poison(N, np.float32), a, b, c)
    np.testing.assert_allclose(out, a * b + c, rtol=1e-6, atol=1e-6)


def test_int_and_pointer_arguments_and_a_void_function(device, rng):
    a, b = _inputs(rng, 2)
    b = b.astype(np.float64)
    out = _launch(pointer_kernel, poison(N, np.float32), a, b)
    np.testing.assert_allclose(out, 2 * a + b.astype(np.float32), rtol=1e-6, atol=1e-6)


def test_called_from_a_device_function(device, rng):
    a, b, c = _inputs(rng)
    out = _launch(nested_kernel, poison(N, np.float32), a, b, c)
    np.testing.assert_allclose(out, a * b + c + 1, rtol=1e-6, atol=1e-6)


def test_hand_written_ptx_is_linked(device, rng):
    a, b, c = _inputs(rng)
    out = _launch(ptx_kernel, poison(N, np.float32), a, b, c)
    np.testing.assert_allclose(out, a * b + c, rtol=1e-6, atol=1e-6)


def test_kernel_link_option_defines_functions_declared_without_files(device, rng):
    bare = simt.declare_device("my_fma", "float32(float32, float32, float32)",
                               fallback=fma_fallback)

    @simt.kernel(link=["linking/fma.cu"])
    def linked_whole(out, a, b, c):
        i = simt.grid(1)
        if i < out.size:
            out[i] = bare(a[i], b[i], c[i])
    a, b, c = _inputs(rng)
    out = _launch(linked_whole, poison(N, np.float32), a, b, c)
    np.testing.assert_allclose(out, a * b + c, rtol=1e-6, atol=1e-6)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to make LTO-IR")
def test_ltoir_from_nvcc_is_linked(device, rng, tmp_path):
    path = tmp_path / "fma.ltoir"
    subprocess.run(["nvcc", "-arch=sm_90", "-dlto", "-dc", "--ltoir", FMA_CU, "-o",
                    str(path)], check=True, capture_output=True)
    lto_fma = simt.declare_device("my_fma", "float32(float32, float32, float32)",
                                  link=[str(path)], fallback=fma_fallback)

    @simt.kernel
    def lto_kernel(out, a, b, c):
        i = simt.grid(1)
        if i < out.size:
            out[i] = lto_fma(a[i], b[i], c[i])
    a, b, c = _inputs(rng)
    out = _launch(lto_kernel, poison(N, np.float32), a, b, c)
    np.testing.assert_allclose(out, a * b + c, rtol=1e-6, atol=1e-6)


def test_without_a_fallback_only_gpus_run_it(device, rng):
    no_fallback = simt.declare_device("my_fma", "float32(float32, float32, float32)",
                                      link=FMA_CU)

    @simt.kernel
    def gpu_only(out, a, b, c):
        i = simt.grid(1)
        if i < out.size:
            out[i] = no_fallback(a[i], b[i], c[i])
    a, b, c = _inputs(rng)
    out = poison(N, np.float32)
    if device.kind == "cuda":
        _launch(gpu_only, out, a, b, c)
        np.testing.assert_allclose(out, a * b + c, rtol=1e-6, atol=1e-6)
        return
    with pytest.raises(NotSupportedError) as err:
        _launch(gpu_only, out, a, b, c)
    text = str(err.value)
    assert "my_fma" in text and "fallback=" in text and "test_linking.py" in text


def test_a_missing_symbol_names_the_files_and_the_log(device):
    lost = simt.declare_device("not_defined_anywhere", "float32(float32)", link=FMA_CU)

    @simt.kernel
    def calls_lost(out):
        out[0] = lost(out[0])
    if device.kind != "cuda":
        with pytest.raises(NotSupportedError, match="not_defined_anywhere"):
            calls_lost[1, 1](np.ones(1, np.float32))
        return
    with pytest.raises(CompileError) as err:
        calls_lost[1, 1](np.ones(1, np.float32))
    assert "fma.cu" in str(err.value) and "not_defined_anywhere" in str(err.value)


# ------------------------------------------------------------------ errors at the call site
def test_bad_signatures_are_value_errors():
    for signature, words in [("float32 float32", "cannot read the signature"),
                             ("float32(complex64)", "'complex64'"),
                             ("float32*(float32)", "cannot return a pointer"),
                             ("float32(float32**)", "'float32**'")]:
        with pytest.raises(ValueError, match=words.replace("*", r"\*").replace("(", r"\(")):
            simt.declare_device("f", signature)
    with pytest.raises(ValueError, match="not a symbol name"):
        simt.declare_device("no spaces", "void()")
    with pytest.raises(TypeError, match="@simt.device"):
        simt.declare_device("f", "void()", fallback=lambda: None)


def test_files_are_checked_when_named():
    with pytest.raises(FileNotFoundError, match="nowhere.cu"):
        simt.declare_device("f", "void()", link=["nowhere.cu"])
    with pytest.raises(ValueError, match="suffix"):
        simt.declare_device("f", "void()", link=[__file__])
    with pytest.raises(FileNotFoundError, match="nowhere.ptx"):
        simt.kernel(link=["nowhere.ptx"])(lambda_free_kernel)


def lambda_free_kernel(out):
    out[0] = 1


def test_wrong_arguments_and_fallback_types_are_compile_errors():
    @simt.kernel
    def too_few(out):
        out[0] = my_fma(out[0], out[0])

    @simt.kernel
    def not_an_array(out):
        out[0] = scaled_at(0, out[0])
    returns_double = simt.declare_device("my_fma", "float32(float32, float32, float32)",
                                         fallback=simt.device(_double_fma))

    @simt.kernel
    def wrong_fallback(out):
        out[0] = returns_double(out[0], out[0], out[0])
    for kernel, words in [(too_few, "takes 3 arguments"), (not_an_array, "pass an array"),
                          (wrong_fallback, "returns float64")]:
        with simt.use_device("cpu"):
            with pytest.raises(CompileError, match=words):
                kernel[1, 1](np.ones(2, np.float32))


def _double_fma(a, b, c):
    return np.float64(a) * b + c


def test_calling_from_python_is_an_error():
    with pytest.raises(RuntimeError, match="only be called from kernels"):
        my_fma(1.0, 2.0, 3.0)


# ------------------------------------------------------------------ caches
def test_cache_keys_hold_the_contents_of_the_files(tmp_path):
    from simt.runtime.cache import value_key
    path = tmp_path / "f.cu"
    path.write_text('extern "C" __device__ float f(float x) { return x; }\n')
    first = simt.declare_device("f", "float32(float32)", link=[str(path)])
    kernel_first = simt.kernel(link=[str(path)])(lambda_free_kernel)
    path.write_text('extern "C" __device__ float f(float x) { return 2 * x; }\n')
    second = simt.declare_device("f", "float32(float32)", link=[str(path)])
    kernel_second = simt.kernel(link=[str(path)])(lambda_free_kernel)
    assert value_key(first) != value_key(second)
    assert value_key(second) == value_key(simt.declare_device("f", "float32(float32)",
                                                              link=[str(path)]))
    options = [CompileOptions(link=k.options["link"]).key() for k in (kernel_first, kernel_second)]
    assert options[0] != options[1]
    assert "link" not in CompileOptions().key()     # kernels without files keep their keys
    with_fallback = simt.declare_device("f", "float32(float32)", link=[str(path)],
                                        fallback=fma_fallback)
    assert "fallback:" in value_key(with_fallback)


# ------------------------------------------------------------------ offline: no GPU
def _ptx(kernel, *types, link=False):
    from simt.backends.cuda.compile import compile_kernel
    fn = pipeline.typed_ir(kernel.pyfunc, types)
    return compile_kernel(fn, CompileOptions(), "sm_90", link=link)


ARRAY = T.Array(np.float32, 1, "C", "global")
DOUBLES = T.Array(np.float64, 1, "C", "global")


def test_gpu_code_calls_the_external_symbols():
    ptx = _ptx(pointer_kernel, ARRAY, ARRAY, DOUBLES).ptx
    assert re.search(r"\.extern \.func\s+\(\.param \.b32 func_retval0\) scaled_at", ptx)
    assert re.search(r"\.extern \.func\s+add_to", ptx)
    assert "call.uni (retval0), scaled_at," in ptx
    assert "cvta.global.u64" in ptx            # the array's pointer, made generic
    assert "scaled_at_fallback" not in ptx     # the GPU never runs the fallback


@pytest.mark.skipif(not all(shutil.which(t) for t in ("ptxas", "nvcc", "nvlink")),
                    reason="needs CUDA's ptxas, nvcc and nvlink")
def test_nvcc_and_nvlink_link_the_kernel_with_the_files(tmp_path):
    """The chain the GPU runs, with the toolkit's tools: simt's PTX as relocatable code,
    the .cu compiled -rdc, the hand-written PTX, linked by nvlink."""
    objects = []
    for name, kernel, types in [("pointer", pointer_kernel, (ARRAY, ARRAY, DOUBLES)),
                                ("ptx", ptx_kernel, (ARRAY,) * 4)]:
        path = tmp_path / f"{name}.ptx"
        path.write_text(_ptx(kernel, *types).ptx)
        objects.append(str(tmp_path / f"{name}.o"))
        done = subprocess.run(["ptxas", "-arch=sm_90", "-c", str(path), "-o", objects[-1]],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    commands = [["nvcc", "-arch=sm_90", "-rdc=true", "-c", FMA_CU, "-o",
                 str(tmp_path / "fma.o")],
                ["ptxas", "-arch=sm_90", "-c", AXPY_PTX, "-o", str(tmp_path / "axpy.o")]]
    for command in commands:
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    for kernel_object, device_code in [(objects[0], "fma.o"), (objects[1], "axpy.o")]:
        done = subprocess.run(["nvlink", "-arch=sm_90", kernel_object,
                               str(tmp_path / device_code), "-o", str(tmp_path / "k.cubin")],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    done = subprocess.run(["nvlink", "-arch=sm_90", objects[0], "-o",
                           str(tmp_path / "alone.cubin")], capture_output=True, text=True)
    assert done.returncode != 0 and "scaled_at" in done.stderr + done.stdout


def _nvjitlink_missing():
    try:
        from cuda.bindings import nvjitlink, nvrtc
        nvjitlink.version()
        nvrtc.nvrtcVersion()
    except Exception:
        return True
    return False


@pytest.mark.skipif(_nvjitlink_missing(), reason="needs cuda-bindings with nvJitLink, NVRTC")
def test_nvjitlink_makes_the_cubin_without_a_gpu(tmp_path):
    binary = _ptx(pointer_kernel, ARRAY, ARRAY, DOUBLES, link=True)
    assert binary.linked[:4] == b"\x7fELF" and binary.link_files == ("fma.cu",)
    assert _ptx(ptx_kernel, *(ARRAY,) * 4, link=True).link_files == ("axpy.ptx",)
    assert "linked" in binary.stages
    other = tmp_path / "other.cu"
    other.write_text('extern "C" __device__ float other(float x) { return x; }\n')
    lost = simt.declare_device("scaled_at", "float32(int32, float32*)", link=[str(other)])

    @simt.kernel
    def calls_lost(out):
        out[0] = lost(0, out)
    with pytest.raises(CompileError) as err:
        _ptx(calls_lost, ARRAY, link=True)
    text = str(err.value)
    assert "other.cu" in text and "nvJitLink" in text and "scaled_at" in text
