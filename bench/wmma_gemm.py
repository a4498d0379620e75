"""Tensor-core GEMM, 4096^3 f16 -> f32 and tf32 -> f32: simt's WMMA kernel against the same
kernel in CUDA C (bench/gpu/wmma_gemm.cu, built here by nvcc) and cuBLAS through CuPy's
matmul, in one run on one GPU. Prints a table and writes JSON.

    python bench/wmma_gemm.py [out.json]          # needs a GPU (cc 8.0+), nvcc; CuPy optional
    python bench/wmma_gemm.py --check             # CPU device, n = 128: the kernel is right

The kernel: 128 x 128 block tiles, BK = 32, eight warps of 64 x 32 (4 x 2 accumulators), A and
B staged row-major through padded shared memory by element copies, fragments loaded from it.
cuBLAS: CuPy's float16 matmul (float16 out, float32 compute) and float32 matmul with
CUPY_TF32=1 (TF32 tensor cores); its FLOP rate is the ceiling the two kernels are held to.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

import simt
from simt import wmma

BM, BN, BK = 128, 128, 32


def make_kernel(kind, dtype, fk, pad):
    """The kernel of bench/gpu/wmma_gemm.cu for one precision (fk: the fragment's k)."""
    lda, ldb = BK + pad, BN + pad

    @simt.kernel
    def wmma_gemm(a, b, c):
        sa = simt.shared.array(BM * lda, dtype)
        sb = simt.shared.array(BK * ldb, dtype)
        a0 = wmma.fragment("matrix_a", 16, 16, fk, kind, "row")
        a1 = wmma.fragment("matrix_a", 16, 16, fk, kind, "row")
        a2 = wmma.fragment("matrix_a", 16, 16, fk, kind, "row")
        a3 = wmma.fragment("matrix_a", 16, 16, fk, kind, "row")
        b0 = wmma.fragment("matrix_b", 16, 16, fk, kind, "row")
        b1 = wmma.fragment("matrix_b", 16, 16, fk, kind, "row")
        c00 = wmma.fragment("accumulator", 16, 16, fk, np.float32)
        c01 = wmma.fragment("accumulator", 16, 16, fk, np.float32)
        c10 = wmma.fragment("accumulator", 16, 16, fk, np.float32)
        c11 = wmma.fragment("accumulator", 16, 16, fk, np.float32)
        c20 = wmma.fragment("accumulator", 16, 16, fk, np.float32)
        c21 = wmma.fragment("accumulator", 16, 16, fk, np.float32)
        c30 = wmma.fragment("accumulator", 16, 16, fk, np.float32)
        c31 = wmma.fragment("accumulator", 16, 16, fk, np.float32)
        n = np.int32(a.shape[1])
        tid = simt.threadIdx.x
        warp = tid // 32
        wr, wc = (warp // 4) * 64, (warp % 4) * 32
        row0, col0 = simt.blockIdx.y * BM, simt.blockIdx.x * BN
        wmma.fill_fragment(c00, 0)
        wmma.fill_fragment(c01, 0)
        wmma.fill_fragment(c10, 0)
        wmma.fill_fragment(c11, 0)
        wmma.fill_fragment(c20, 0)
        wmma.fill_fragment(c21, 0)
        wmma.fill_fragment(c30, 0)
        wmma.fill_fragment(c31, 0)
        for k0 in range(0, n, BK):
            for i in range(tid, BM * BK, 256):
                sa[(i // BK) * lda + i % BK] = a[row0 + i // BK, k0 + i % BK]
            for i in range(tid, BK * BN, 256):
                sb[(i // BN) * ldb + i % BN] = b[k0 + i // BN, col0 + i % BN]
            simt.syncthreads()
            for kk in range(0, BK, fk):
                wmma.load_matrix_sync(a0, sa, wr * lda + kk, lda)
                wmma.load_matrix_sync(a1, sa, (wr + 16) * lda + kk, lda)
                wmma.load_matrix_sync(a2, sa, (wr + 32) * lda + kk, lda)
                wmma.load_matrix_sync(a3, sa, (wr + 48) * lda + kk, lda)
                wmma.load_matrix_sync(b0, sb, kk * ldb + wc, ldb)
                wmma.load_matrix_sync(b1, sb, kk * ldb + wc + 16, ldb)
                wmma.mma_sync(c00, a0, b0, c00)
                wmma.mma_sync(c01, a0, b1, c01)
                wmma.mma_sync(c10, a1, b0, c10)
                wmma.mma_sync(c11, a1, b1, c11)
                wmma.mma_sync(c20, a2, b0, c20)
                wmma.mma_sync(c21, a2, b1, c21)
                wmma.mma_sync(c30, a3, b0, c30)
                wmma.mma_sync(c31, a3, b1, c31)
            simt.syncthreads()
        base = (row0 + wr) * n + col0 + wc
        wmma.store_matrix_sync(c, base, c00, n, "row")
        wmma.store_matrix_sync(c, base + 16, c01, n, "row")
        wmma.store_matrix_sync(c, base + 16 * n, c10, n, "row")
        wmma.store_matrix_sync(c, base + 16 * n + 16, c11, n, "row")
        wmma.store_matrix_sync(c, base + 32 * n, c20, n, "row")
        wmma.store_matrix_sync(c, base + 32 * n + 16, c21, n, "row")
        wmma.store_matrix_sync(c, base + 48 * n, c30, n, "row")
        wmma.store_matrix_sync(c, base + 48 * n + 16, c31, n, "row")
    return wmma_gemm


KERNELS = {"f16": (make_kernel(np.float16, np.float16, 16, 8), np.float16),
           "tf32": (make_kernel("tf32", np.float32, 8, 4), np.float32)}


def inputs(n):
    """Those of the .cu: multiples of 1/8 under 1, exact in float16 and tf32."""
    i = np.arange(n * n, dtype=np.int64).reshape(n, n)
    return ((i % 17 - 8) / 8).astype(np.float32), ((i % 13 - 6) / 8).astype(np.float32)


def check(n=128):
    """Both kernels against NumPy on the CPU device."""
    simt.set_device("cpu")
    fa, fb = inputs(n)
    for name, (kernel, dtype) in KERNELS.items():
        c = np.full((n, n), np.nan, np.float32)
        kernel[(n // BN, n // BM), 256](fa.astype(dtype), fb.astype(dtype), c)
        expected = fa.astype(np.float64) @ fb.astype(np.float64)
        assert np.allclose(c, expected, rtol=1e-5, atol=1e-3), name
        print(f"{name}: the {n}^3 GEMM matches NumPy on the CPU device")


def median_ms(launch, reps=20):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpu_timing import event_times
    return float(np.median(event_times(launch, reps)))


def cublas(fa, fb):
    """cuBLAS through CuPy, or None when CuPy is missing."""
    os.environ.setdefault("CUPY_TF32", "1")
    try:
        import cupy
    except ImportError:
        return None
    out = {}
    for name, dtype in (("f16", np.float16), ("tf32", np.float32)):
        a, b = cupy.asarray(fa.astype(dtype)), cupy.asarray(fb.astype(dtype))
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        cupy.matmul(a, b)
        times = []
        for _ in range(20):
            start.record()
            cupy.matmul(a, b)
            end.record()
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end))
        out[name] = float(np.median(times))
    return out


def gpu(n=4096):
    simt.set_device("cuda:0")
    fa, fb = inputs(n)
    flops = 2.0 * n ** 3
    result = {"device": simt.get_device().properties.name, "n": n,
              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "simt": {}, "check": {}}
    expected = float(fa[1].astype(np.float64) @ fb[:, 2].astype(np.float64))
    for name, (kernel, dtype) in KERNELS.items():
        a, b = simt.to_device(fa.astype(dtype)), simt.to_device(fb.astype(dtype))
        c = simt.to_device(np.full((n, n), np.nan, np.float32))
        grid = (n // BN, n // BM)
        result["simt"][name] = median_ms(lambda: kernel[grid, 256](a, b, c))
        host = c.copy_to_host()
        result["check"][name] = float(host[1, 2])
        rows = np.random.default_rng(0).integers(0, n, 8)
        ref = fa[rows].astype(np.float64) @ fb.astype(np.float64)
        result["check"][name + "_rows_ok"] = bool(np.allclose(host[rows], ref, rtol=1e-5,
                                                              atol=1e-2))
    here = os.path.dirname(os.path.abspath(__file__))
    exe = "/tmp/wmma_gemm_cu"
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-o", exe,
                    os.path.join(here, "gpu", "wmma_gemm.cu")], check=True)
    result["nvcc"] = json.loads(subprocess.run([exe], check=True, capture_output=True,
                                               text=True).stdout)
    result["cublas"] = cublas(fa, fb)
    result["expected_c12"] = expected
    rows = []
    for name in KERNELS:
        simt_ms, nvcc_ms = result["simt"][name], result["nvcc"][f"{name}_ms"]
        blas_ms = result["cublas"][name] if result["cublas"] else float("nan")
        rows.append((name, simt_ms, nvcc_ms, blas_ms))
        result[f"{name}_simt_over_nvcc"] = simt_ms / nvcc_ms
        result[f"{name}_simt_fraction_of_cublas"] = blas_ms / simt_ms
    print(f"{'4096^3':8} {'simt ms':>9} {'nvcc ms':>9} {'cuBLAS ms':>10} {'simt TFLOP/s':>13} "
          f"{'simt/nvcc':>10} {'of cuBLAS':>10}")
    for name, s, v, c in rows:
        print(f"{name:8} {s:9.3f} {v:9.3f} {c:10.3f} {flops / s / 1e9:13.1f} {s / v:10.2f} "
              f"{c / s:10.2f}")
    return result


if __name__ == "__main__":
    from common import gpu_script
    gpu_script(check, gpu)
