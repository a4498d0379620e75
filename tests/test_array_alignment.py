"""``alignment=`` on shared and local arrays (CUDA's ``__align__(N)``, numba's keyword):
the arrays start on a multiple of N on every device, the LLVM IR and PTX say so, and an
alignment that is not a power of two is a CompileError at its line."""
import re

import numpy as np
import pytest

import simt
from simt import cg, cuda

RECORD = np.dtype([("a", np.uint8), ("b", np.int32), ("c", np.float64)], align=True)


def _numba_kernel(dtype, alignment, which, barrier):
    """A cuda.jit kernel that fills a (3, 5) aligned array from ``src``, writes it back
    reversed to ``dst`` and the array's address to ``addr``."""
    @cuda.jit
    def f(src, dst, addr):
        t = cuda.threadIdx.x
        b = cuda.blockIdx.x
        if which == 0:
            a = cuda.local.array(shape=(3, 5), dtype=dtype, alignment=alignment)
        else:
            a = cuda.shared.array(shape=(3, 5), dtype=dtype, alignment=alignment)
        if which == 0 or t == 0:
            for k in range(15):
                a[k // 5, k % 5] = src[b, k]
        if barrier:
            cuda.syncthreads()
        for k in range(15):
            dst[b, t, k] = a[(14 - k) // 5, (14 - k) % 5]
        addr[b, t] = a.ctypes.data
    return f


@pytest.mark.parametrize("which", [0, 1], ids=["local", "shared"])
@pytest.mark.parametrize("alignment", [32, 256])
@pytest.mark.parametrize("barrier", [False, True], ids=["plain", "barrier"])
def test_numba_arrays_start_at_the_alignment(device, rng, which, alignment, barrier):
    dtype = np.float32
    f = _numba_kernel(dtype, alignment, which, barrier)
    blocks, threads = 3, 4
    src = rng.standard_normal((blocks, 15)).astype(dtype)
    dst = np.full((blocks, threads, 15), np.nan, dtype)
    addr = np.full((blocks, threads), 0xDEADBEEF, np.uint64)
    f[blocks, threads](src, dst, addr)
    np.testing.assert_array_equal(dst, np.broadcast_to(src[:, None, ::-1], dst.shape))
    assert (addr != 0xDEADBEEF).all() and (addr % alignment == 0).all()


def test_numba_record_arrays_start_at_the_alignment(device, rng):
    @cuda.jit
    def f(src, dst, addr):
        a = cuda.local.array(7, dtype=RECORD, alignment=128)
        s = cuda.shared.array(5, dtype=RECORD, alignment=64)
        i = cuda.threadIdx.x
        a[i % 7].b = src[i]
        s[i % 5].c = src[i] * 0.5
        dst[i] = a[i % 7].b + s[i % 5].c
        addr[i, 0] = a.ctypes.data
        addr[i, 1] = s.ctypes.data

    src = rng.integers(1, 1000, 5).astype(np.int32)
    dst = np.full(5, np.nan)
    addr = np.full((5, 2), 0xDEADBEEF, np.uint64)
    f[1, 5](src, dst, addr)
    np.testing.assert_array_equal(dst, src + src * 0.5)
    assert (addr[:, 0] % 128 == 0).all() and (addr[:, 1] % 64 == 0).all()


def test_numba_names_and_alignment_in_the_llvm_ir(device):
    if device.kind != "cpu":
        pytest.skip("the CPU's LLVM IR: inspect_ptx below checks the GPU's")
    f = _numba_kernel(np.uint8, 64, 0, False)
    f[1, 1](np.ones((1, 15), np.uint8), np.zeros((1, 1, 15), np.uint8), np.zeros((1, 1), np.uint64))
    llvm = f.overloads[f.signatures[0]].inspect_llvm()
    assert re.findall(r'^\s*%"_cudapy_lmem" = alloca .*?align (\d+)', llvm, re.M) == ["64"]


def _simt_kernel():
    @simt.kernel
    def k(src, dst):
        s = simt.shared.array((4, 8), np.float64, alignment=512)
        loc = simt.local.array(6, np.int32, alignment=128)
        t = simt.threadIdx.x
        s[t // 8, t % 8] = src[t]
        for j in range(6):
            loc[j] = t + j
        simt.syncthreads()
        dst[t] = s[(31 - t) // 8, (31 - t) % 8] + loc[t % 6]
    return k


def test_simt_arrays_take_alignment(device, rng):
    k = _simt_kernel()
    src = rng.standard_normal(32)
    dst = np.full(32, np.nan)
    k[1, 32](src, dst)
    t = np.arange(32)
    np.testing.assert_array_equal(dst, src[::-1] + (t + t % 6))


SIG = "void(float64[::1], float64[::1])"


def test_ptx_declares_the_alignment():
    ptx = str(_simt_kernel().inspect_ptx(SIG))       # made without a GPU on other devices
    assert re.search(r"\.shared \.align 512 \.b8 simt_shared_s_\d+\[256\]", ptx), ptx
    assert re.search(r"\.local \.align 128 \.b8", ptx), ptx


def test_numba_names_in_the_ptx():
    shared = str(_numba_kernel(np.float32, 256, 1, True).inspect_ptx(NUMBA_SIG))
    assert re.search(r"\.shared \.align 256 \.b8 _cudapy_smem_\d+\[60\]", shared), shared
    local = str(_numba_kernel(np.float32, 64, 0, False).inspect_ptx(NUMBA_SIG))
    assert re.search(r"\.local \.align 64 \.b8", local), local


NUMBA_SIG = "void(float32[:, ::1], float32[:, :, ::1], uint64[:, ::1])"


@pytest.mark.parametrize("alignment, message", [
    (3, "power of two"), (0, "power of two"), (-16, "power of two"), (8192, "power of two"),
    (1.5, "constant integer"), ("16", "constant integer"), (True, "constant integer")])
@pytest.mark.parametrize("space", ["shared", "local"])
def test_bad_alignment_is_a_compile_error_at_its_line(alignment, message, space):
    array = getattr(simt, space).array

    def k(out):
        a = array(4, np.float32, alignment=alignment)   # <- here
        a[0] = 1.0
        out[0] = a[0]

    line = k.__code__.co_firstlineno + 1
    for jit in (simt.kernel, cuda.jit):
        with pytest.raises(simt.CompileError, match=message) as info:
            jit(k)[1, 1](np.zeros(1, np.float32))
        assert info.value.line == line and "alignment=" in str(info.value)



def _synced(sync):
    @cuda.jit
    def k(src, out, addr):
        s = cuda.shared.array(3, np.float32, alignment=1024)
        loc = cuda.local.array(3, np.float32, alignment=512)
        b, t = cuda.blockIdx.x, cuda.threadIdx.x
        loc[t % 3] = src[b, t]
        if t == 0:
            s[1] = src[b, 0] * 2
        if sync == 0:
            cg.this_grid().sync()
        else:
            cg.this_cluster().sync()
        out[b, t] = s[1] + loc[t % 3]
        addr[b, t, 0] = s.ctypes.data
        addr[b, t, 1] = loc.ctypes.data
    return k


@pytest.mark.parametrize("how", ["cooperative", "cluster"])
def test_aligned_arrays_in_cooperative_and_cluster_launches(device, rng, how):
    if device.kind == "cuda" and how == "cluster" and device.properties.cc < (9, 0):
        pytest.skip("clusters need cc 9.0")
    src = rng.standard_normal((4, 8)).astype(np.float32)
    out = np.full((4, 8), np.nan, np.float32)
    addr = np.full((4, 8, 2), 0xDEADBEEF, np.uint64)
    if how == "cooperative":
        _synced(0)[4, 8](src, out, addr)
    else:
        _synced(1)[4, 8, 0, 0, (2, 1, 1)](src, out, addr)
    np.testing.assert_array_equal(out, src[:, :1] * 2 + src)
    assert (addr[..., 0] % 1024 == 0).all() and (addr[..., 1] % 512 == 0).all()


def test_checked_mode_keeps_the_alignment(rng):
    with simt.use_device("cpu", checks=True):
        for which in (0, 1):
            f = _numba_kernel(np.float32, 256, which, True)
            src = rng.standard_normal((3, 15)).astype(np.float32)
            dst = np.full((3, 4, 15), np.nan, np.float32)
            addr = np.full((3, 4), 0xDEADBEEF, np.uint64)
            f[3, 4](src, dst, addr)
            np.testing.assert_array_equal(dst, np.broadcast_to(src[:, None, ::-1], dst.shape))
            assert (addr % 256 == 0).all()


def test_numba_dynamic_shared_array_refuses_more_than_16():
    def k(out):
        a = cuda.shared.array(0, np.float32, alignment=64)
        out[0] = a[0]

    with pytest.raises(simt.CompileError, match="dynamic shared array starts at a 16-byte"):
        cuda.jit(k)[1, 1, 0, 64](np.zeros(1, np.float32))
