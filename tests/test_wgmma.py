"""Warpgroup MMA (lang/wgmma.py, backends/*/lower/wgmma.py): one warpgroup multiplies 64 x K
by K x N tiles staged in shared memory in each descriptor layout, against NumPy; the PTX the
GPU gets (assembled by ptxas for sm_90a when it is installed); the errors."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt import wgmma
from simt.errors import CompileError
from simt.ir import types as T
from conftest import poison

BYTES = {"f16": 2, "bf16": 2, "tf32": 4}
STEP = {"f16": 16, "bf16": 16, "tf32": 8}
DTYPES = {"f16": np.float16, "bf16": simt.bfloat16, "tf32": np.float32}
WIDTH = {None: 128, "128B": 128, "64B": 64, "32B": 32}


def make_gemm(n, swizzle, kind):
    """C[64, n] = A[64, K] @ Bt[n, K].T by one warpgroup, K in blocks of one tile row."""
    size = BYTES[kind]
    kb = WIDTH[swizzle] // size                  # elements of K in one staged tile
    chunk = 16 // size                           # elements in 16 bytes
    period = 128 // WIDTH[swizzle] if swizzle else 1
    mask = WIDTH[swizzle] // 16 - 1
    step = STEP[kind]
    dtype = DTYPES[kind]
    swizzled = swizzle is not None

    @simt.device
    def stage(tile, src, rows, k0):
        t = simt.threadIdx.x
        for i in range(t, rows * kb, 128):
            r, k = i // kb, i % kb
            if not swizzled:          # 8 x 16-byte core matrices, row-major by 8-row group
                f = ((r // 8) * (kb // chunk) + k // chunk) * 8 * chunk + (r % 8) * chunk + \
                    k % chunk
                tile[f // kb, f % kb] = src[r, k0 + k]
            else:                     # 16-byte chunk j of row r at j ^ (r // period % 8)
                tile[r, k ^ (((r // period) & mask) * chunk)] = src[r, k0 + k]

    @simt.kernel
    def gemm(a, bt, c, scale_first):
        sa = simt.shared.array((64, kb), dtype)
        sb = simt.shared.array((n, kb), dtype)
        acc = wgmma.accumulator(64, n)
        for i in simt.unroll(range(n // 2)):      # scale_d=0 on the first product drops it
            acc[i] = 1.0 - scale_first
        for k0 in range(0, a.shape[1], kb):
            stage(sa, a, 64, k0)
            stage(sb, bt, n, k0)
            wgmma.fence()
            simt.syncthreads()
            for kk in range(kb // step):
                keep = 1 if k0 + kk > 0 else scale_first
                wgmma.mma_async(acc, wgmma.descriptor(sa, swizzle=swizzle, k=kk * step),
                                wgmma.descriptor(sb, swizzle=swizzle, k=kk * step), keep)
            wgmma.commit_group()
            wgmma.wait_group(0)
            simt.syncthreads()
        acc.store(c, 0, n)
    return gemm


def _skip_unless_hopper(device):
    if device.name.startswith("cuda") and device.properties.compute_capability != (9, 0):
        pytest.skip("wgmma runs on compute capability 9.0 only (sm_90a); this GPU is "
                    f"{device.properties.compute_capability}")


def _inputs(rng, kind, n, k, integers):
    if integers:                  # small integers: exact in every precision and every sum
        a, bt = rng.integers(-4, 5, (64, k)), rng.integers(-4, 5, (n, k))
        a[a == 0], bt[bt == 0] = 3, -2
    else:
        a, bt = rng.standard_normal((64, k)), rng.standard_normal((n, k))
    if kind == "bf16":
        ah, bh = simt.to_bfloat16(a), simt.to_bfloat16(bt)
        return ah, bh, simt.from_bfloat16(ah).astype(np.float64), \
            simt.from_bfloat16(bh).astype(np.float64)
    ah, bh = a.astype(DTYPES[kind]), bt.astype(DTYPES[kind])
    if kind == "tf32":            # exact in tf32
        ah = (ah.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
        bh = (bh.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    return ah, bh, ah.astype(np.float64), bh.astype(np.float64)


def _run(device, rng, n, swizzle, kind, k=64, integers=True, out=np.float32, scale_first=0):
    _skip_unless_hopper(device)
    a, bt, a_ref, b_ref = _inputs(rng, kind, n, k, integers)
    c = poison((64, n), out) if out is not simt.bfloat16 else \
        simt.to_bfloat16(np.full((64, n), np.nan))
    kernel = make_gemm(n, swizzle, kind)
    kernel[1, 128](a, bt, c, scale_first)
    got = simt.from_bfloat16(c) if out is simt.bfloat16 else c
    return got.astype(np.float64), a_ref @ b_ref.T


@pytest.mark.parametrize("n", [64, 128, 256])
@pytest.mark.parametrize("swizzle", [None, "128B"])
def test_f16_product_is_exact(device, rng, n, swizzle):
    got, expected = _run(device, rng, n, swizzle, "f16")
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("swizzle", ["64B", "32B"])
def test_narrow_swizzles(device, rng, swizzle):
    got, expected = _run(device, rng, 64, swizzle, "f16", k=128)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kind", ["bf16", "tf32"])
def test_bf16_and_tf32(device, rng, kind):
    got, expected = _run(device, rng, 128, "128B", kind, k=128)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("scale_first", [0, 1])
def test_k_loop_of_random_floats(device, rng, scale_first):
    """K = 256: 4 staged blocks, 16 mma_async; the accumulator starts at 1 - scale_first, and
    the first mma_async has scale_d = scale_first."""
    got, expected = _run(device, rng, 128, "128B", "f16", k=256, integers=False,
                         scale_first=scale_first)
    scale = 256 * 4.0
    assert np.abs(got - expected).max() <= 1e-5 * scale


@pytest.mark.parametrize("swizzle, kind", [("128B", "f16"), (None, "tf32"), ("64B", "bf16")])
def test_the_sim_device_gives_the_cpu_devices_bits(rng, swizzle, kind):
    """Random floats: the sums round, in the same order on both devices."""
    a, bt, _, _ = _inputs(rng, kind, 64, 128, integers=False)
    results = []
    for name in ("cpu", "sim"):
        c = poison((64, 64), np.float32)
        with simt.use_device(name):
            make_gemm(64, swizzle, kind)[1, 128](a, bt, c, 1)
        results.append(c)
    assert results[0].tobytes() == results[1].tobytes()


@pytest.mark.parametrize("out", [np.float16, simt.bfloat16])
def test_store_converts(device, rng, out):
    got, expected = _run(device, rng, 64, "128B", "f16", out=out)
    np.testing.assert_array_equal(got, expected)   # small integers: exact in 16 bits


def make_mn_major_gemm(n, swizzle, a_major, dtype):
    """C[64, n] = A @ B by one warpgroup with B given as a row-major K x n array (N-major in
    shared memory, chunks of the swizzle's width) and A K-major (128-byte swizzle), or
    M-major (given as a column-major 64 x K array: its transpose, K x 64 row-major)."""
    width = WIDTH[swizzle] // 2                  # float16 elements in one swizzled row
    period = 128 // WIDTH[swizzle]               # rows sharing one XOR pattern
    mask = WIDTH[swizzle] // 16 - 1
    a_mn = a_major == "mn"
    a_shape = (64 * 64 // width, width) if a_mn else (64, 64)

    @simt.device
    def stage_mn(tile, src, k_rows, mn):
        """src (k_rows x mn, row-major) into tile: chunk j (columns j*width...) at rows
        j*k_rows..., each row's 16-byte pieces swizzled by the address."""
        t = simt.threadIdx.x
        for i in range(t, k_rows * mn, 128):
            k, col = i // mn, i % mn
            row = (col // width) * k_rows + k
            piece = ((col % width) // 8) ^ ((row // period) & mask)
            tile[row, piece * 8 + col % 8] = src[k, col]

    @simt.kernel
    def gemm_a_mn(a, b, c):
        sa = simt.shared.array(a_shape, dtype)
        sb = simt.shared.array((64 * n // width, width), dtype)
        acc = wgmma.accumulator(64, n)
        stage_mn(sb, b, 64, n)
        stage_mn(sa, a, 64, 64)
        wgmma.fence()
        simt.syncthreads()
        for kk in simt.unroll(range(64 // 16)):
            wgmma.mma_async(acc, wgmma.descriptor(sa, swizzle=swizzle, k=kk * 16, major="mn",
                                                  chunk_rows=64),
                            wgmma.descriptor(sb, swizzle=swizzle, k=kk * 16, major="mn",
                                             chunk_rows=64))
        wgmma.commit_group()
        wgmma.wait_group(0)
        acc.store(c, 0, n)

    @simt.kernel
    def gemm_a_k(a, b, c):
        sa = simt.shared.array((64, 64), dtype)
        sb = simt.shared.array((64 * n // width, width), dtype)
        acc = wgmma.accumulator(64, n)
        stage_mn(sb, b, 64, n)
        for i in range(simt.threadIdx.x, 64 * 64, 128):      # K-major, 128-byte swizzle
            r, kc = i // 64, i % 64
            sa[r, ((kc // 8) ^ (r & 7)) * 8 + kc % 8] = a[r, kc]
        wgmma.fence()
        simt.syncthreads()
        for kk in simt.unroll(range(64 // 16)):
            wgmma.mma_async(acc, wgmma.descriptor(sa, swizzle="128B", k=kk * 16),
                            wgmma.descriptor(sb, swizzle=swizzle, k=kk * 16, major="mn",
                                             chunk_rows=64))
        wgmma.commit_group()
        wgmma.wait_group(0)
        acc.store(c, 0, n)
    return gemm_a_mn if a_mn else gemm_a_k


@pytest.mark.parametrize("n, swizzle, a_major", [(128, "128B", "k"), (64, "128B", "mn"),
                                                  (64, "64B", "k"), (32, "32B", "mn")])
def test_mn_major_operands(device, rng, n, swizzle, a_major):
    """B (and A) stored M/N-major, as a row-major K x N array holds B: PTX's transposed
    operands (imm-trans-b), the layout attention's P @ V needs."""
    _skip_unless_hopper(device)
    a = rng.integers(-4, 5, (64, 64)).astype(np.float16)
    b = rng.integers(-4, 5, (64, n)).astype(np.float16)
    a_given = np.ascontiguousarray(a.T) if a_major == "mn" else a
    c = poison((64, n), np.float32)
    make_mn_major_gemm(n, swizzle, a_major, np.float16)[1, 128](a_given, b, c)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


@simt.kernel
def accumulator_layout(out):
    acc = wgmma.accumulator(64, 16)
    t = simt.threadIdx.x
    for i in range(8):
        acc[i] = t * 8 + i
    acc.store(out, 0, 16)


def test_accumulator_layout(device):
    """Register i of thread t lands at the PTX ISA's (row, column)."""
    _skip_unless_hopper(device)
    out = poison((64, 16), np.float32)
    accumulator_layout[1, 128](out)
    expected = np.zeros((64, 16))
    for t in range(128):
        w, lane = t // 32, t % 32
        for i in range(8):
            row = 16 * w + lane // 4 + 8 * (i % 4 // 2)
            col = 8 * (i // 4) + 2 * (lane % 4) + i % 2
            expected[row, col] = t * 8 + i
    np.testing.assert_array_equal(out, expected)


@simt.kernel
def accumulator_layout_at(out, offset, ldm):
    acc = wgmma.accumulator(64, 16)
    t = simt.threadIdx.x
    for i in range(8):
        acc[i] = t * 8 + i
    acc.store(out, offset, ldm)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("offset, ldm", [(0, 16), (1, 17), (3, 20), (2, 18)])
def test_store_at_any_offset_and_row_length(device, dtype, offset, ldm):
    """Pairs of registers are stored together where both the start and the row length keep
    them aligned, one at a time otherwise: the same elements either way."""
    _skip_unless_hopper(device)
    out = poison(64 * ldm + offset + 8, dtype)
    before = out.copy()
    accumulator_layout_at[1, 128](out, offset, ldm)
    expected = before.copy()
    for t in range(128):
        w, lane = t // 32, t % 32
        for i in range(8):
            row = 16 * w + lane // 4 + 8 * (i % 4 // 2)
            col = 8 * (i // 4) + 2 * (lane % 4) + i % 2
            expected[offset + row * ldm + col] = t * 8 + i
    np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))


# ------------------------------------------------------------------ the GPU's PTX, made here
def _ptx(kernel, types):
    from simt.backends.cuda.device import CudaBackend
    from simt.compiler.options import CompileOptions
    return CudaBackend.compile_for(kernel.typed_ir(types), CompileOptions(boundscheck=False),
                                   "sm_90").ptx


def _types(kind, out=np.float32):
    storage = simt.to_bfloat16(np.zeros(1)).dtype if kind == "bf16" else np.dtype(DTYPES[kind])
    tile = T.Array(storage, 2, "C")
    return [tile, tile, T.Array(np.dtype(out), 2, "C"), T.INT32]


@pytest.fixture(scope="module")
def gemm_ptx():
    cases = {(n, sw, "f16"): None for n in (64, 128, 256) for sw in (None, "128B")}
    cases.update({(64, "64B", "f16"): None, (64, "32B", "f16"): None,
                  (128, "128B", "bf16"): None, (128, "128B", "tf32"): None})
    return {case: _ptx(make_gemm(*case), _types(case[2])) for case in cases}


def test_ptx_has_the_wgmma_instructions(gemm_ptx):
    text = gemm_ptx[(256, "128B", "f16")]
    assert ".target sm_90a" in text
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in text
    assert "wgmma.fence.sync.aligned" in text and "fence.proxy.async.shared::cta" in text
    assert "wgmma.commit_group.sync.aligned" in text
    assert "wgmma.wait_group.sync.aligned 0" in text
    assert ".shared .align 1024" in text
    assert "local" not in text                    # the accumulator stays in registers
    assert "m64n128k16.f32.bf16.bf16" in gemm_ptx[(128, "128B", "bf16")]
    assert "m64n128k8.f32.tf32.tf32" in gemm_ptx[(128, "128B", "tf32")]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptxas_assembles_without_spills(gemm_ptx, tmp_path):
    for (n, swizzle, kind), text in gemm_ptx.items():
        path = tmp_path / "k.ptx"
        path.write_text(text)
        done = subprocess.run(["ptxas", "-arch=sm_90a", "-v", str(path), "-o",
                               str(tmp_path / "k.o")], capture_output=True, text=True)
        assert done.returncode == 0, (n, swizzle, kind, done.stderr)
        assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in \
            done.stderr, (n, swizzle, kind, done.stderr)
        assert "warning" not in done.stderr.lower(), (n, swizzle, kind, done.stderr)


# ------------------------------------------------------------------ errors
def _error(kernel, types):
    with pytest.raises(CompileError) as info:
        kernel.typed_ir(types)
    return str(info.value)


F16_2D = T.Array(np.dtype(np.float16), 2, "C")


@simt.kernel
def bad_n(a):
    acc = wgmma.accumulator(64, 12)


@simt.kernel
def bad_m(a):
    acc = wgmma.accumulator(128, 64)


@simt.kernel
def bad_acc_dtype(a):
    acc = wgmma.accumulator(64, 64, np.float16)


@simt.kernel
def global_tile(a):
    d = wgmma.descriptor(a, swizzle="128B")


@simt.kernel
def wrong_width(a):
    s = simt.shared.array((64, 32), np.float16)
    d = wgmma.descriptor(s, swizzle="128B")


@simt.kernel
def int_tile(a):
    s = simt.shared.array((64, 64), np.int32)
    d = wgmma.descriptor(s)


@simt.kernel
def bad_swizzle(a):
    s = simt.shared.array((64, 64), np.float16)
    d = wgmma.descriptor(s, swizzle="256B")


@simt.kernel
def mixed_precisions(a):
    s = simt.shared.array((64, 64), np.float16)
    t = simt.shared.array((64, 32), np.float32)
    acc = wgmma.accumulator(64, 64)
    wgmma.mma_async(acc, wgmma.descriptor(s, swizzle="128B"), wgmma.descriptor(t, swizzle="128B"))


@simt.kernel
def not_a_descriptor(a):
    s = simt.shared.array((64, 64), np.float16)
    acc = wgmma.accumulator(64, 64)
    wgmma.mma_async(acc, 5, wgmma.descriptor(s))


@simt.kernel
def bad_k(a):
    s = simt.shared.array((64, 64), np.float16)
    d = wgmma.descriptor(s, k=8)


@pytest.mark.parametrize("kernel, message", [
    (bad_n, "wgmma's n is a multiple of 8 from 8 to 256, got n=12"),
    (bad_m, "wgmma tiles have m=64, got m=128"),
    (bad_acc_dtype, "simt's wgmma accumulators are float32"),
    (global_tile, "wgmma.descriptor needs a shared array"),
    (wrong_width, "a tile with swizzle='128B' has rows of 128 bytes: shape (rows, 64)"),
    (int_tile, "wgmma reads float16, bfloat16 or float32 (as tf32) tiles, got int32"),
    (bad_swizzle, "swizzle is None, '32B', '64B' or '128B', got '256B'"),
    (mixed_precisions, "wgmma.mma_async multiplies tiles of one precision, got a: f16, b: tf32"),
    (not_a_descriptor, "wgmma.mma_async's a is a wgmma.descriptor"),
    (bad_k, "wgmma.descriptor's k is a multiple of 16, got 8"),
])
def test_errors_name_the_line(kernel, message):
    text = _error(kernel, [F16_2D])
    assert message in text, text
    assert "test_wgmma.py" in text
