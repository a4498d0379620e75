"""Warp matrix functions (lang/wmma.py, backends/*/lower/wmma.py): tiled GEMMs through shared memory
for every supported precision against NumPy, the PTX the GPU gets, and the errors."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt import wmma
from simt.ir import types as T
from conftest import poison, random_array

M = N = K = 64


def make_gemm(tm, tn, tk, kind, acc, store_dtype):
    """C = alpha * (A @ B) + C0 by one warp per tm x tn tile of C; A's tiles staged row-major
    and B's column-major in shared memory, C0 loaded column-major from its transpose."""
    @simt.kernel
    def gemm(a, b, c0t, c, alpha):
        sa = simt.shared.array(tm * tk, store_dtype)
        sb = simt.shared.array(tk * tn, store_dtype)
        af = wmma.fragment("matrix_a", tm, tn, tk, kind, "row")
        bf = wmma.fragment("matrix_b", tm, tn, tk, kind, "col")
        cf = wmma.fragment("accumulator", tm, tn, tk, acc)
        pf = wmma.fragment("accumulator", tm, tn, tk, acc)
        lane = simt.threadIdx.x
        row0, col0 = simt.blockIdx.y * tm, simt.blockIdx.x * tn
        wmma.fill_fragment(pf, 0)
        for k0 in range(0, a.shape[1], tk):
            for i in range(lane, tm * tk, 32):
                sa[i] = a[row0 + i // tk, k0 + i % tk]
            for i in range(lane, tk * tn, 32):           # column j of the tile at j * tk
                sb[i] = b[k0 + i % tk, col0 + i // tk]
            simt.syncthreads()
            wmma.load_matrix_sync(af, sa, 0, tk)
            wmma.load_matrix_sync(bf, sb, 0, tk)
            wmma.mma_sync(pf, af, bf, pf)
            simt.syncthreads()
        wmma.load_matrix_sync(cf, c0t, col0 * c0t.shape[1] + row0, c0t.shape[1], "col")
        for i in range(pf.num_elements):
            cf[i] = cf[i] + alpha * pf[i]
        wmma.store_matrix_sync(c, row0 * c.shape[1] + col0, cf, c.shape[1], "row")
    return gemm


def _tf32(x):
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


# kind, fragment dtype, shape, accumulator, host input dtype, accumulator dtype, rtol
CASES = {
    "f16_f32": ((16, 16, 16), np.float16, np.float32, np.float16, np.float32, 1e-5),
    "f16_f16": ((16, 16, 16), np.float16, np.float16, np.float16, np.float16, 2e-2),
    "bf16_f32": ((16, 16, 16), simt.bfloat16, np.float32, simt.bfloat16, np.float32, 1e-5),
    "tf32_f32": ((16, 16, 8), "tf32", np.float32, np.float32, np.float32, 1e-5),
    "f64": ((8, 8, 4), np.float64, np.float64, np.float64, np.float64, 1e-12),
    "s8": ((16, 16, 16), np.int8, np.int32, np.int8, np.int32, 0),
    "u8": ((16, 16, 16), np.uint8, np.int32, np.uint8, np.int32, 0),
    "f16_32x8": ((32, 8, 16), np.float16, np.float32, np.float16, np.float32, 1e-5),
    "bf16_8x32": ((8, 32, 16), simt.bfloat16, np.float32, simt.bfloat16, np.float32, 1e-5),
    "s8_32x8": ((32, 8, 16), np.int8, np.int32, np.int8, np.int32, 0),
    "u8_8x32": ((8, 32, 16), np.uint8, np.int32, np.uint8, np.int32, 0),
}


def _inputs(rng, host, acc):
    if host is simt.bfloat16:
        a = simt.to_bfloat16(rng.standard_normal((M, K)))
        b = simt.to_bfloat16(rng.standard_normal((K, N)))
        return a, b, simt.from_bfloat16(a), simt.from_bfloat16(b)
    if np.dtype(host).kind in "iu":
        a = rng.integers(1, 20, (M, K)).astype(host) * (1 if host == np.uint8 else
                                                         rng.choice([-1, 1], (M, K)).astype(host))
        b = random_array(rng, (K, N), host)
        return a, b, a.astype(np.int64), b.astype(np.int64)
    a, b = random_array(rng, (M, K), host), random_array(rng, (K, N), host)
    if host == np.float32:
        a, b = _tf32(a), _tf32(b)                       # exact in tf32: the GPU agrees
    return a, b, a.astype(np.float64), b.astype(np.float64)


@pytest.mark.parametrize("case", list(CASES))
def test_tiled_gemm_matches_numpy(device, rng, case):
    (tm, tn, tk), kind, acc, host, acc_host, rtol = CASES[case]
    a, b, a_ref, b_ref = _inputs(rng, host, acc)
    c0 = random_array(rng, (M, N), acc_host)
    alpha = 3 if rtol == 0 else 0.5
    c = poison((M, N), acc_host)
    make_gemm(tm, tn, tk, kind, acc, a.dtype)[(N // tn, M // tm), 32](
        a, b, np.ascontiguousarray(c0.T), c, alpha)
    product = a_ref @ b_ref
    if rtol == 0:
        expected = (c0.astype(np.int64) + alpha * product).astype(np.int32)
        np.testing.assert_array_equal(c, expected)
    else:
        expected = c0.astype(np.float64) + alpha * product
        scale = np.abs(a_ref) @ np.abs(b_ref) + np.abs(c0)
        assert np.all(np.abs(c.astype(np.float64) - expected) <= rtol * scale), case


def test_accumulator_rounds_like_float16_per_mma(device, rng):
    """f16 accumulators hold float16 between mma_sync calls: the CPU device rounds there."""
    (tm, tn, tk), kind, acc, host, acc_host, _ = CASES["f16_f16"]
    a, b = random_array(rng, (M, K), host), random_array(rng, (K, N), host)
    c0 = np.zeros((M, N), np.float16) + np.float16(1)
    c = poison((M, N), np.float16)
    make_gemm(tm, tn, tk, kind, acc, a.dtype)[(N // tn, M // tm), 32](a, b, c0, c, 1.0)
    assert c.dtype == np.float16 and np.isfinite(c).all()
    expected = a.astype(np.float64) @ b.astype(np.float64) + 1
    assert np.abs(c - expected).max() < 0.1 * np.abs(expected).max()


@simt.kernel
def elementwise(c, x):
    cf = wmma.fragment("accumulator", 16, 16, 16, np.float32)
    wmma.load_matrix_sync(cf, c, 0, 16, "row")
    for i in range(cf.num_elements):
        cf[i] = cf[i] * x
    x_count = cf.num_elements
    wmma.store_matrix_sync(c, 0, cf, 16, "col")
    if simt.threadIdx.x == 0:
        c[0, 0] = x_count


def test_element_access_and_transposed_store(device, rng):
    c = random_array(rng, (16, 16), np.float32)
    out = c.copy()
    elementwise[1, 32](out, np.float32(2))
    expected = (2 * c).T.copy()
    count = out[0, 0]
    expected[0, 0] = count
    np.testing.assert_array_equal(out, expected)
    assert count == (8 if device.name.startswith("cuda") else 256)


# ------------------------------------------------------------------ the GPU's PTX, made here
def ptx(kernel, types):
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions
    return compile_kernel(kernel.typed_ir(types), CompileOptions(), "sm_90").ptx


def _host_dtype(host):
    return simt.to_bfloat16(np.zeros(1)).dtype if host is simt.bfloat16 else np.dtype(host)


@pytest.fixture(scope="module")
def gemm_ptx():
    out = {}
    for case in ("f16_f32", "tf32_f32", "s8", "bf16_8x32", "s8_32x8"):
        (tm, tn, tk), kind, acc, host, acc_host, _ = CASES[case]
        h, o = (T.Array(_host_dtype(d), 2, "C") for d in (host, acc_host))
        out[case] = ptx(make_gemm(tm, tn, tk, kind, acc, _host_dtype(host)),
                        [h, h, o, o, T.Scalar(np.float32)])
    return out


def test_ptx_has_the_wmma_instructions(gemm_ptx):
    f16 = gemm_ptx["f16_f32"]
    assert "wmma.load.a.sync.aligned.row.m16n16k16.shared.f16" in f16
    assert "wmma.load.b.sync.aligned.col.m16n16k16.shared.f16" in f16
    assert "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32" in f16
    assert "wmma.load.c.sync.aligned.col.m16n16k16.global.f32" in f16
    assert "wmma.store.d.sync.aligned.row.m16n16k16.global.f32" in f16
    assert "wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32" in gemm_ptx["tf32_f32"]
    assert "wmma.mma.sync.aligned.row.col.m16n16k16.s32.s8.s8.s32" in gemm_ptx["s8"]
    assert "local" not in f16                     # fragments stay in registers
    assert "wmma.mma.sync.aligned.row.col.m8n32k16.f32.bf16.bf16.f32" in gemm_ptx["bf16_8x32"]
    assert "wmma.load.b.sync.aligned.col.m32n8k16.shared.s8" in gemm_ptx["s8_32x8"]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptxas_accepts_the_wmma_ptx(gemm_ptx, tmp_path):
    for name, text in gemm_ptx.items():
        path = tmp_path / f"{name}.ptx"
        path.write_text(text)
        done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                              capture_output=True, text=True)
        assert done.returncode == 0, (name, done.stderr)


# ------------------------------------------------------------------ errors
@simt.kernel
def bad_shape(a):
    f = wmma.fragment("matrix_a", 16, 16, 8, np.float16, "row")
    wmma.load_matrix_sync(f, a, 0, 16)


@simt.kernel
def bad_dtype(a):
    f = wmma.fragment("matrix_a", 16, 16, 16, np.float16, "row")
    wmma.load_matrix_sync(f, a, 0, 16)


@simt.kernel
def no_layout(a):
    f = wmma.fragment("accumulator", 16, 16, 16, np.float32)
    wmma.load_matrix_sync(f, a, 0, 16)


@simt.kernel
def wrong_use(a):
    x = wmma.fragment("matrix_a", 16, 16, 16, np.float16, "row")
    y = wmma.fragment("matrix_b", 16, 16, 16, np.float16, "row")
    c = wmma.fragment("accumulator", 16, 16, 16, np.float32)
    wmma.mma_sync(c, y, x, c)


@pytest.mark.parametrize("kernel, arg, message", [
    (bad_shape, np.zeros(256, np.float16), "a matrix_a fragment of shape m16n16k8 holds tf32"),
    (bad_dtype, np.zeros(256, np.float32), "a f16 fragment moves float16 data; a holds float32"),
    (no_layout, np.zeros(256, np.float32), "loading an accumulator needs its layout"),
    (wrong_use, np.zeros(256, np.float32), "a must be a matrix_a fragment"),
])
def test_errors_name_the_mistake(kernel, arg, message):
    with pytest.raises(simt.CompileError, match=message):
        kernel[1, 32](arg)
