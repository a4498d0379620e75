"""Warpgroup MMA (lang/wgmma.py, backends/*/lower/wgmma.py): one warpgroup multiplies 64 x K
by K x N tiles staged in shared memory in each descriptor layout, or with A in register
fragments, in every precision, against NumPy; the PTX the GPU gets (assembled by ptxas for
sm_90a when it is installed); the errors."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt import wgmma
from simt.errors import CompileError
from simt.ir import types as T
from conftest import poison

BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}
STEP = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}
DTYPES = {"f16": np.float16, "bf16": simt.bfloat16, "tf32": np.float32,
          "e4m3": simt.float8_e4m3, "e5m2": simt.float8_e5m2, "s8": np.int8, "u8": np.uint8}
WIDTH = {None: 128, "128B": 128, "64B": 64, "32B": 32}
INTEGER = ("s8", "u8")


def _kinds(kind):
    """(A's precision, B's): 'e4m3/e5m2' names a mix."""
    a, _, b = kind.partition("/")
    return a, b or a


def _accumulator_dtype(kind):
    return np.int32 if _kinds(kind)[0] in INTEGER else np.float32


def make_stage(kb, swizzle, size):
    """A device function staging rows x kb elements of src (from column k0) into a tile in
    the layout of the swizzle mode (docs/hopper.md)."""
    chunk = 16 // size                           # elements in 16 bytes
    period = 128 // WIDTH[swizzle] if swizzle else 1
    mask = WIDTH[swizzle] // 16 - 1
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
    return stage


def make_gemm(n, swizzle, kind):
    """C[64, n] = A[64, K] @ Bt[n, K].T by one warpgroup, K in blocks of one tile row."""
    a_kind, b_kind = _kinds(kind)
    size = BYTES[a_kind]
    kb = WIDTH[swizzle] // size                  # elements of K in one staged tile
    step = STEP[a_kind]
    a_dtype, b_dtype, acc_dtype = DTYPES[a_kind], DTYPES[b_kind], _accumulator_dtype(kind)
    stage = make_stage(kb, swizzle, size)

    @simt.kernel
    def gemm(a, bt, c, scale_first):
        sa = simt.shared.array((64, kb), a_dtype)
        sb = simt.shared.array((n, kb), b_dtype)
        acc = wgmma.accumulator(64, n, dtype=acc_dtype)
        for i in simt.unroll(range(n // 2)):      # scale_d=0 on the first product drops it
            acc[i] = 1 - scale_first
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


def _fragment_geometry(kind):
    a_kind, b_kind = _kinds(kind)
    size = BYTES[a_kind]
    return a_kind, b_kind, size, 4 // size, 16 // size    # elements per register, per thread


def make_gemm_registers(n, swizzle, kind):
    """make_gemm with A read from global memory straight into each thread's register
    fragment, element i at the PTX ISA's (row, k) (docs/hopper.md)."""
    a_kind, b_kind, size, per, count = _fragment_geometry(kind)
    kb = WIDTH[swizzle] // size
    step = STEP[a_kind]
    a_dtype, b_dtype, acc_dtype = DTYPES[a_kind], DTYPES[b_kind], _accumulator_dtype(kind)
    stage = make_stage(kb, swizzle, size)

    @simt.kernel
    def gemm(a, bt, c, scale_first):
        sb = simt.shared.array((n, kb), b_dtype)
        acc = wgmma.accumulator(64, n, dtype=acc_dtype)
        frag = simt.local.array(count, a_dtype)
        t = simt.threadIdx.x
        lane, warp = t % 32, t // 32
        for i in simt.unroll(range(n // 2)):
            acc[i] = 1 - scale_first
        for k0 in range(0, a.shape[1], kb):
            stage(sb, bt, n, k0)
            for kk in range(kb // step):
                for i in simt.unroll(range(count)):
                    register = i // per
                    row = 16 * warp + lane // 4 + 8 * (register % 2)
                    k = per * (lane % 4) + i % per + 4 * per * (register // 2)
                    frag[i] = a[row, k0 + kk * step + k]
                wgmma.fence()                 # the stores (tile and fragment) before wgmma
                simt.syncthreads()
                keep = 1 if k0 + kk > 0 else scale_first
                wgmma.mma_async(acc, frag, wgmma.descriptor(sb, swizzle=swizzle, k=kk * step),
                                keep)
                wgmma.commit_group()
                wgmma.wait_group(0)           # before the fragment is written again
            simt.syncthreads()
        acc.store(c, 0, n)
    return gemm


def make_gemm_ldmatrix(n, swizzle, kind):
    """make_gemm with A's 16-column steps staged row-major and each warp's 16 rows loaded
    into its register fragments by simt.ldmatrix(n=4) (float16, bfloat16)."""
    a_kind, b_kind, size, _, _ = _fragment_geometry(kind)
    kb = WIDTH[swizzle] // size
    a_dtype, b_dtype = DTYPES[a_kind], DTYPES[b_kind]
    stage = make_stage(kb, swizzle, size)

    @simt.kernel
    def gemm(a, bt, c, scale_first):
        sa = simt.shared.array((64, 16), a_dtype)
        sb = simt.shared.array((n, kb), b_dtype)
        acc = wgmma.accumulator(64, n)
        t = simt.threadIdx.x
        warp = t // 32
        for i in simt.unroll(range(n // 2)):
            acc[i] = 1 - scale_first
        for k0 in range(0, a.shape[1], kb):
            stage(sb, bt, n, k0)
            for kk in range(kb // 16):
                for i in range(t, 64 * 16, 128):
                    sa[i // 16, i % 16] = a[i // 16, k0 + kk * 16 + i % 16]
                simt.syncthreads()
                frag = simt.ldmatrix(sa, 16 * warp * 16, n=4)
                wgmma.fence()
                simt.syncthreads()
                keep = 1 if k0 + kk > 0 else scale_first
                wgmma.mma_async(acc, frag, wgmma.descriptor(sb, swizzle=swizzle, k=kk * 16),
                                keep)
                wgmma.commit_group()
                wgmma.wait_group(0)
                simt.syncthreads()            # before sa is written again
        acc.store(c, 0, n)
    return gemm


MAKERS = {"descriptors": make_gemm, "registers": make_gemm_registers,
          "ldmatrix": make_gemm_ldmatrix}


def _skip_unless_hopper(device):
    if device.name.startswith("cuda") and device.properties.compute_capability != (9, 0):
        pytest.skip("wgmma runs on compute capability 9.0 only (sm_90a); this GPU is "
                    f"{device.properties.compute_capability}")


def _operand(rng, kind, shape, integers):
    """(the operand as the kernel gets it, its values as float64 or int64)."""
    if kind in INTEGER:               # the whole range, negatives included
        low, high = (-128, 128) if kind == "s8" else (0, 256)
        x = rng.integers(low, high, shape)
        return x.astype(DTYPES[kind]), x
    if kind in ("e4m3", "e5m2"):      # halves up to 4: exact in both formats
        x = rng.integers(1, 9, shape) / 2 * rng.choice([-1, 1], shape)
        return x.astype(DTYPES[kind]), x
    if integers:                      # small integers: exact in every precision and every sum
        x = rng.integers(-4, 5, shape)
        x[x == 0] = 3
    else:
        x = rng.standard_normal(shape)
    if kind == "bf16":
        xh = simt.to_bfloat16(x)
        return xh, simt.from_bfloat16(xh).astype(np.float64)
    xh = x.astype(DTYPES[kind])
    if kind == "tf32":                # exact in tf32
        xh = (xh.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    return xh, xh.astype(np.float64)


def _inputs(rng, kind, n, k, integers):
    a_kind, b_kind = _kinds(kind)
    a, a_ref = _operand(rng, a_kind, (64, k), integers)
    bt, b_ref = _operand(rng, b_kind, (n, k), integers)
    return a, bt, a_ref, b_ref


def _output(shape, out):
    if out is simt.bfloat16:
        return simt.to_bfloat16(np.full(shape, np.nan))
    return poison(shape, out)


def _run(device, rng, n, swizzle, kind, k=64, integers=True, out=np.float32, scale_first=0,
         make=None):
    _skip_unless_hopper(device)
    a, bt, a_ref, b_ref = _inputs(rng, kind, n, k, integers)
    if _kinds(kind)[0] in INTEGER:
        out = np.int32
    c = _output((64, n), out)
    kernel = (make or make_gemm)(n, swizzle, kind)
    kernel[1, 128](a, bt, c, scale_first)
    got = simt.from_bfloat16(c) if out is simt.bfloat16 else c
    if out is np.int32:
        return got.astype(np.int64), a_ref @ b_ref.T
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


@pytest.mark.parametrize("kind, swizzle", [
    ("e4m3", "128B"), ("e5m2", None), ("e4m3/e5m2", "64B"), ("e5m2/e4m3", "32B")])
def test_fp8_products_are_exact(device, rng, kind, swizzle):
    """K = 32 per instruction, 8-bit elements: 16-byte chunks hold 16 of them."""
    got, expected = _run(device, rng, 64, swizzle, kind, k=256)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kind, swizzle, n", [
    ("s8", "128B", 64), ("u8", None, 48), ("s8/u8", "32B", 64), ("u8/s8", "64B", 24)])
def test_int8_products_are_exact_in_int32(device, rng, kind, swizzle, n):
    """The whole int8 and uint8 ranges; products summed in an int32 accumulator, stored to
    int32; the accumulator starts at 1 and the first product drops it (scale_d=0), or at 0
    and the first product adds to it."""
    for scale_first in (0, 1):
        got, expected = _run(device, rng, n, swizzle, kind, k=128, scale_first=scale_first)
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kind, swizzle", [
    ("f16", "128B"), ("bf16", None), ("tf32", "64B"), ("e4m3/e5m2", "128B"),
    ("u8/s8", "32B")])
def test_a_from_register_fragments(device, rng, kind, swizzle):
    """Each thread fills its fragment of A at the PTX ISA's (row, k) from global memory."""
    got, expected = _run(device, rng, 64, swizzle, kind, k=128, make=make_gemm_registers)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_a_from_ldmatrix(device, rng, kind):
    """simt.ldmatrix(n=4) on a warp's 16 rows gives the register fragment of A."""
    got, expected = _run(device, rng, 32, "128B", kind, k=128, make=make_gemm_ldmatrix,
                         scale_first=1)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kind, maker", [("e4m3/e5m2", "descriptors"),
                                         ("e5m2/e4m3", "registers")])
def test_fp8_sums_round_alike_on_cpu_and_sim(rng, kind, maker):
    """Every finite FP8 code: the float32 sums round, in the same order on both devices."""
    a_kind, b_kind = _kinds(kind)
    codes = {"e4m3": np.r_[0:0x7F, 0x80:0xFF], "e5m2": np.r_[0:0x7C, 0x80:0xFC]}
    a = rng.choice(codes[a_kind], (64, 128)).astype(np.uint8).view(DTYPES[a_kind])
    bt = rng.choice(codes[b_kind], (64, 128)).astype(np.uint8).view(DTYPES[b_kind])
    results = []
    for name in ("cpu", "sim"):
        c = poison((64, 64), np.float32)
        with simt.use_device(name):
            MAKERS[maker](64, "128B", kind)[1, 128](a, bt, c, 1)
        results.append(c)
    assert results[0].tobytes() == results[1].tobytes()
    want = a.astype(np.float64) @ bt.astype(np.float64).T
    np.testing.assert_allclose(results[0], want, rtol=1e-4, atol=1e-3 * np.abs(want).max())


@pytest.mark.parametrize("kind", ["f16", "tf32", "e4m3"])
def test_fragment_layout_is_mma_syncs_a(kind):
    """Each (row, k) of a warp's 16 rows x K is in one lane's fragment exactly once, and for
    float16 the layout is simt.mma.sync's a (m16n8k16, lang/mma.py); the emulations read the
    fragments through fragment_source, the inverse."""
    from simt.lang.wgmma import fragment_place, fragment_size, fragment_source
    seen = {}
    for lane in range(32):
        for i in range(fragment_size(kind)):
            place = fragment_place(i, lane, kind)
            assert place not in seen and fragment_source(*place, kind) == (lane, i)
            seen[place] = lane, i
            g, t = lane // 4, lane % 4
            if kind == "f16":
                assert place == (g + 8 * (i // 2 % 2), 2 * t + i % 2 + 8 * (i // 4))
    assert sorted(seen) == [(r, k) for r in range(16) for k in range(STEP[kind])]


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


STORAGE = {"bf16": T.BF16_STORAGE, "e4m3": T.F8E4M3_STORAGE, "e5m2": T.F8E5M2_STORAGE}


def _types(kind):
    a_kind, b_kind = _kinds(kind)
    a, b = (T.Array(STORAGE.get(k, np.dtype(DTYPES[k])), 2, "C") for k in (a_kind, b_kind))
    out = np.dtype(_accumulator_dtype(kind))
    return [a, b, T.Array(out, 2, "C"), T.INT32]


PTX_CASES = [(n, sw, "f16", "descriptors") for n in (64, 128, 256) for sw in (None, "128B")] + [
    (64, "64B", "f16", "descriptors"), (64, "32B", "f16", "descriptors"),
    (128, "128B", "bf16", "descriptors"), (128, "128B", "tf32", "descriptors"),
    (256, "128B", "e4m3", "descriptors"), (128, None, "e5m2/e4m3", "descriptors"),
    (256, "128B", "s8", "descriptors"), (64, "64B", "u8/s8", "descriptors"),
    (256, "128B", "f16", "registers"), (64, "128B", "bf16", "ldmatrix"),
    (64, "128B", "tf32", "registers"), (128, "128B", "e4m3/e5m2", "registers"),
    (128, "128B", "s8/u8", "registers"), (64, "128B", "u8", "registers")]


@pytest.fixture(scope="module")
def gemm_ptx():
    return {case: _ptx(MAKERS[case[3]](*case[:3]), _types(case[2])) for case in PTX_CASES}


def test_ptx_has_the_wgmma_instructions(gemm_ptx):
    text = gemm_ptx[(256, "128B", "f16", "descriptors")]
    assert ".target sm_90a" in text
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in text
    assert "wgmma.fence.sync.aligned" in text and "fence.proxy.async.shared::cta" in text
    assert "wgmma.commit_group.sync.aligned" in text
    assert "wgmma.wait_group.sync.aligned 0" in text
    assert ".shared .align 1024" in text
    assert "local" not in text                    # the accumulator stays in registers
    assert "m64n128k16.f32.bf16.bf16" in gemm_ptx[(128, "128B", "bf16", "descriptors")]
    assert "m64n128k8.f32.tf32.tf32" in gemm_ptx[(128, "128B", "tf32", "descriptors")]
    assert ".version 8.0" in text


@pytest.mark.parametrize("case, instruction", [
    ((256, "128B", "e4m3", "descriptors"), "m64n256k32.f32.e4m3.e4m3"),
    ((128, None, "e5m2/e4m3", "descriptors"), "m64n128k32.f32.e5m2.e4m3"),
    ((256, "128B", "s8", "descriptors"), "m64n256k32.s32.s8.s8"),
    ((64, "64B", "u8/s8", "descriptors"), "m64n64k32.s32.u8.s8"),
    ((256, "128B", "f16", "registers"), "m64n256k16.f32.f16.f16"),
    ((64, "128B", "bf16", "ldmatrix"), "m64n64k16.f32.bf16.bf16"),
    ((64, "128B", "tf32", "registers"), "m64n64k8.f32.tf32.tf32"),
    ((128, "128B", "e4m3/e5m2", "registers"), "m64n128k32.f32.e4m3.e5m2"),
    ((128, "128B", "s8/u8", "registers"), "m64n128k32.s32.s8.u8"),
    ((64, "128B", "u8", "registers"), "m64n64k32.s32.u8.u8")])
def test_ptx_of_every_new_form(gemm_ptx, case, instruction):
    """fp8 and int8 (with their mixes), and A in registers: 4 .b32 registers in braces
    where a descriptor is a .b64; mixed integers need PTX ISA 8.4."""
    text = gemm_ptx[case]
    line = next(x for x in text.splitlines() if "wgmma.mma_async" in x)
    assert "wgmma.mma_async.sync.aligned." + instruction in line, line
    operands = line.split("}, ", 1)[1]            # after D's registers
    if case[3] == "descriptors":
        assert operands.startswith("%rd"), line
    else:
        a = operands[1:operands.index("}")].split(", ")
        assert operands.startswith("{") and len(a) == 4 and "%rd" not in a[0], line
    mixed = case[2] in ("u8/s8", "s8/u8")
    assert (".version 8.4" if mixed else ".version 8.0") in text
    assert "local" not in text


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptxas_assembles_without_spills(gemm_ptx, tmp_path):
    for (n, swizzle, kind, _), text in gemm_ptx.items():
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


@simt.kernel
def fp8_with_f16(a):
    s = simt.shared.array((64, 128), simt.float8_e4m3)
    t = simt.shared.array((64, 64), np.float16)
    acc = wgmma.accumulator(64, 64)
    wgmma.mma_async(acc, wgmma.descriptor(s, swizzle="128B"), wgmma.descriptor(t, swizzle="128B"))


@simt.kernel
def int8_into_float32(a):
    s = simt.shared.array((64, 128), np.int8)
    acc = wgmma.accumulator(64, 64)
    wgmma.mma_async(acc, wgmma.descriptor(s, swizzle="128B"), wgmma.descriptor(s, swizzle="128B"))


@simt.kernel
def fp8_into_int32(a):
    s = simt.shared.array((64, 128), simt.float8_e5m2)
    acc = wgmma.accumulator(64, 64, dtype=np.int32)
    wgmma.mma_async(acc, wgmma.descriptor(s, swizzle="128B"), wgmma.descriptor(s, swizzle="128B"))


@simt.kernel
def int32_odd_n(a):
    acc = wgmma.accumulator(64, 40, dtype=np.int32)


@simt.kernel
def int32_stored_as_float(a):
    acc = wgmma.accumulator(64, 64, dtype=np.int32)
    acc.store(a, 0, 64)


@simt.kernel
def short_fragment(a):
    s = simt.shared.array((64, 64), np.float16)
    frag = simt.local.array(4, np.float16)
    acc = wgmma.accumulator(64, 64)
    wgmma.mma_async(acc, frag, wgmma.descriptor(s, swizzle="128B"))


@simt.kernel
def int_fragment(a):
    s = simt.shared.array((64, 64), np.float16)
    frag = simt.local.array(4, np.int32)
    acc = wgmma.accumulator(64, 64)
    wgmma.mma_async(acc, frag, wgmma.descriptor(s, swizzle="128B"))


@simt.kernel
def fragment_for_b(a):
    s = simt.shared.array((64, 64), np.float16)
    frag = simt.local.array(8, np.float16)
    acc = wgmma.accumulator(64, 64)
    wgmma.mma_async(acc, wgmma.descriptor(s, swizzle="128B"), frag)


@simt.kernel
def fp8_k16(a):
    s = simt.shared.array((64, 128), simt.float8_e4m3)
    d = wgmma.descriptor(s, swizzle="128B", k=16)


@pytest.mark.parametrize("kernel, message", [
    (bad_n, "wgmma's n is a multiple of 8 from 8 to 256, got n=12"),
    (bad_m, "wgmma tiles have m=64, got m=128"),
    (bad_acc_dtype, "simt's wgmma accumulators are float32"),
    (global_tile, "wgmma.descriptor needs a shared array"),
    (wrong_width, "a tile with swizzle='128B' has rows of 128 bytes: shape (rows, 64)"),
    (int_tile, "wgmma reads float16, bfloat16, float32 (as tf32), float8_e4m3, float8_e5m2, "
               "int8 or uint8 tiles, got int32"),
    (bad_swizzle, "swizzle is None, '32B', '64B' or '128B', got '256B'"),
    (mixed_precisions, "wgmma.mma_async multiplies a and b of one precision (e4m3 with e5m2 "
                       "and s8 with u8 may mix), got a: f16, b: tf32"),
    (fp8_with_f16, "got a: e4m3, b: f16"),
    (int8_into_float32, "wgmma.mma_async: s8 x s8 products accumulate in int32, and acc holds "
                        "float32"),
    (fp8_into_int32, "e5m2 x e5m2 products accumulate in float32, and acc holds int32"),
    (int32_odd_n, "wgmma's int32 accumulators have n 8, 16, 24 or a multiple of 16 from 32 to "
                  "256 (the PTX ISA's .s32 shapes), got n=40"),
    (int32_stored_as_float, "acc.store of an int32 accumulator writes int32, got float16"),
    (short_fragment, "a register fragment of A holds 8 float16 elements per thread (4 32-bit "
                     "registers), got a local array of 4"),
    (int_fragment, "wgmma reads float16, bfloat16, float32 (as tf32), float8_e4m3, "
                   "float8_e5m2, int8 or uint8 fragments, got int32"),
    (fragment_for_b, "wgmma.mma_async's b is a wgmma.descriptor, got float16[:]"),
    (fp8_k16, "wgmma.descriptor's k is a multiple of 32, got 16"),
    (not_a_descriptor, "wgmma.mma_async's a is a wgmma.descriptor or a register fragment (a "
                       "1-d simt.local.array of A's elements in the PTX ISA's order), got "
                       "weak int64"),
    (bad_k, "wgmma.descriptor's k is a multiple of 16, got 8"),
])
def test_errors_name_the_line(kernel, message):
    text = _error(kernel, [F16_2D])
    assert message in text, text
    assert "test_wgmma.py" in text
