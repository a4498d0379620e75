"""Warp-level matrix instructions (lang/mma.py, backends/*/lower/mma.py): one warp's
m16n8k16 and m16n8k8 tiles through ldmatrix and mma.sync against NumPy, each lane's
registers against the PTX ISA's fragment layouts (a NumPy model of them), stmatrix, the
PTX ptxas accepts, and the errors. Small integers in float16/bfloat16: every product and
sum is exact, so every device gives the same bits."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.compiler.options import CompileOptions
from simt.ir import types as T
from conftest import poison

WIDTH = 40            # the shared arrays' row length: rows 80 bytes apart (16-byte aligned)


def _needs(device, major):
    cc = device.properties.compute_capability
    if cc < (major, 0):
        pytest.skip(f"needs compute capability {major}.0 (this GPU is {cc[0]}.{cc[1]})")


def _ints(rng, shape, dtype):
    values = rng.integers(-4, 5, shape)
    values[values == 0] = 3                      # never all-zero
    return values.astype(np.float32).astype(dtype)


# ------------------------------------------------------------------ NumPy models (PTX ISA)
def ldmatrix_model(tile, offsets, n, trans):
    """Each lane's 2n elements: lane s supplies row s % 16, column 8 * (s // 16) of the tile
    at its own flat offset; matrix j's row r is lane 8j + r's; lane l gets row g, columns
    2t, 2t+1 of matrix j (trans: rows 2t, 2t+1 of column g)."""
    flat, ld = tile.ravel(), tile.shape[1]

    def row(s):
        start = offsets[s] + (s % 16) * ld + (s // 16) * 8
        return flat[start:start + 8]
    out = np.empty((32, 2 * n), tile.dtype)
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for j in range(n):
            matrix = np.stack([row(8 * j + r) for r in range(8)])
            for i in range(2):
                out[lane, 2 * j + i] = matrix[2 * t + i, g] if trans else matrix[g, 2 * t + i]
    return out


def a_fragments(a):
    """m16n8k16 (a 16x16) or m16n8k8 (16x8): lane l's a[i], row g + 8*((i//2)%2), column
    2t + i%2 + 8*(i//4)."""
    count = a.shape[1] // 2
    return np.array([[a[lane // 4 + 8 * ((i // 2) % 2), 2 * (lane % 4) + i % 2 + 8 * (i // 4)]
                      for i in range(count)] for lane in range(32)])


def b_fragments(b):
    count = b.shape[0] // 4
    return np.array([[b[2 * (lane % 4) + i % 2 + 8 * (i // 2), lane // 4]
                      for i in range(count)] for lane in range(32)])


# ------------------------------------------------------------------ a tile of D = A @ B + C
def make_tile(k, dtype, acc):
    """One warp: A (16 x k) and B (k x 8) staged row-major at (row0, col0) of wider shared
    arrays, ldmatrix(n=k//4) for a, ldmatrix(n=k//8, trans) for b, C loaded by the C
    layout, D = mma.sync, stored by it."""
    @simt.kernel
    def tile(a, b, c, d, row0, col0):
        sa = simt.shared.array((24, WIDTH), dtype)
        sb = simt.shared.array((24, WIDTH), dtype)
        lane = simt.threadIdx.x
        for i in range(lane, 16 * k, 32):
            sa[row0 + i // k, col0 + i % k] = a[i // k, i % k]
        for i in range(lane, k * 8, 32):
            sb[row0 + i // 8, col0 + i % 8] = b[i // 8, i % 8]
        simt.syncthreads()
        af = simt.ldmatrix(sa, row0 * WIDTH + col0, n=k // 4)
        bf = simt.ldmatrix(sb, row0 * WIDTH + col0, n=k // 8, trans=True)
        cf = simt.local.array(4, acc)
        df = simt.local.array(4, acc)
        g, t = lane // 4, lane % 4
        for i in range(4):
            cf[i] = c[g + 8 * (i // 2), 2 * t + i % 2]
        simt.mma.sync(df, af, bf, cf, shape=(16, 8, k))
        for i in range(4):
            d[g + 8 * (i // 2), 2 * t + i % 2] = df[i]
    return tile


CASES = {"f16_f32_k16": (16, np.float16, np.float32), "f16_f16_k16": (16, np.float16, np.float16),
         "bf16_f32_k16": (16, simt.bfloat16, np.float32), "f16_f32_k8": (8, np.float16, np.float32),
         "bf16_f32_k8": (8, simt.bfloat16, np.float32)}


@pytest.mark.parametrize("case", list(CASES))
def test_a_warp_computes_one_tile(device, rng, case):
    _needs(device, 8)
    k, dtype, acc = CASES[case]
    a, b = _ints(rng, (16, k), dtype), _ints(rng, (k, 8), dtype)
    c = _ints(rng, (16, 8), acc)
    d = poison((16, 8), acc)
    make_tile(k, dtype, acc)[1, 32](a, b, c, d, np.int64(5), np.int64(16))
    want = a.astype(np.float32) @ b.astype(np.float32) + c.astype(np.float32)
    assert np.array_equal(d.astype(np.float32), want)


def test_d_may_be_c(device, rng):
    _needs(device, 8)

    @simt.kernel
    def twice(a, b, d):
        sa = simt.shared.array((16, 16), np.float16)
        sb = simt.shared.array((16, 8), np.float16)
        lane = simt.threadIdx.x
        for i in range(lane, 256, 32):
            sa[i // 16, i % 16] = a[i // 16, i % 16]
        for i in range(lane, 128, 32):
            sb[i // 8, i % 8] = b[i // 8, i % 8]
        simt.syncthreads()
        af = simt.ldmatrix(sa, 0, n=4)
        bf = simt.ldmatrix(sb, 0, n=2, trans=True)
        acc = simt.local.array(4, np.float32)
        for i in range(4):
            acc[i] = 1.0
        for step in range(2):
            simt.mma.sync(acc, af, bf, acc)
        g, t = lane // 4, lane % 4
        for i in range(4):
            d[g + 8 * (i // 2), 2 * t + i % 2] = acc[i]

    a, b = _ints(rng, (16, 16), np.float16), _ints(rng, (16, 8), np.float16)
    d = poison((16, 8), np.float32)
    twice[1, 32](a, b, d)
    assert np.array_equal(d, 2 * (a.astype(np.float32) @ b.astype(np.float32)) + 1)


# ------------------------------------------------------------------ each lane's registers
def make_layout(n, trans):
    @simt.kernel
    def layout(src, out, offsets):
        s = simt.shared.array((40, WIDTH), np.uint16)
        lane = simt.threadIdx.x
        for i in range(lane, 40 * WIDTH, 32):
            s[i // WIDTH, i % WIDTH] = src[i // WIDTH, i % WIDTH]
        simt.syncthreads()
        f = simt.ldmatrix(s, offsets[lane], n=n, trans=trans)
        for i in range(2 * n):
            out[lane, i] = f[i]
    return layout


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_gives_each_lane_its_ptx_registers(device, rng, n, trans):
    _needs(device, 8)
    src = rng.permutation(40 * WIDTH).astype(np.uint16).reshape(40, WIDTH) + 1
    offsets = (8 * rng.integers(0, 3, 32) + WIDTH * rng.integers(0, 8, 32)).astype(np.int64)
    out = poison((32, 2 * n), np.uint16)
    make_layout(n, trans)[1, 32](src, out, offsets)
    assert np.array_equal(out, ldmatrix_model(src, offsets, n, trans))


def test_ldmatrix_fragments_are_the_mma_operands(rng):
    """The contract the entry's doc states: ldmatrix(n=4) of a row-major A tile and
    ldmatrix(n=2, trans=True) of a row-major B tile are mma.sync's a and b, by the PTX
    ISA's layouts (models only: no device)."""
    a = rng.permutation(256).reshape(16, 16).astype(np.uint16)
    b = rng.permutation(128).reshape(16, 8).astype(np.uint16)
    zeros = np.zeros(32, np.int64)
    assert np.array_equal(ldmatrix_model(a, zeros, 4, False), a_fragments(a))
    assert np.array_equal(ldmatrix_model(b, zeros, 2, True), b_fragments(b))
    assert np.array_equal(ldmatrix_model(a[:, :8].copy(), zeros, 2, False), a_fragments(a[:, :8]))
    assert np.array_equal(ldmatrix_model(b[:8].copy(), zeros, 1, True), b_fragments(b[:8]))


def make_store(n, trans):
    @simt.kernel
    def store(frags, out, offsets):
        s = simt.shared.array((40, WIDTH), np.uint16)
        lane = simt.threadIdx.x
        for i in range(lane, 40 * WIDTH, 32):
            s[i // WIDTH, i % WIDTH] = 0
        f = simt.local.array(2 * n, np.uint16)
        for i in range(2 * n):
            f[i] = frags[lane, i]
        simt.syncthreads()
        simt.stmatrix(s, offsets[lane], f, n=n, trans=trans)
        simt.syncthreads()
        for i in range(lane, 40 * WIDTH, 32):
            out[i // WIDTH, i % WIDTH] = s[i // WIDTH, i % WIDTH]
    return store


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_is_the_inverse_of_ldmatrix(device, rng, n, trans):
    _needs(device, 9)
    offsets = np.full(32, 3 * WIDTH + 8, np.int64)
    tile = rng.permutation(40 * WIDTH).astype(np.uint16).reshape(40, WIDTH) + 1
    frags = ldmatrix_model(tile, offsets, n, trans)     # the registers that tile gives
    out = poison((40, WIDTH), np.uint16)
    make_store(n, trans)[1, 32](frags, out, offsets)
    want = np.zeros_like(tile)                          # the rows the lanes named, written
    for s in range(8 * n):
        start = offsets[s] + (s % 16) * WIDTH + (s // 16) * 8
        want.ravel()[start:start + 8] = tile.ravel()[start:start + 8]
    assert np.array_equal(out, want)


@pytest.mark.parametrize("case", ["f16_f32_k16", "f16_f16_k16", "bf16_f32_k8"])
def test_the_sim_device_gives_the_cpu_devices_bits(rng, case):
    """Random (not integer) elements: the sums round, in the same order on both devices."""
    k, dtype, acc = CASES[case]
    normal = (lambda shape: simt.to_bfloat16(rng.standard_normal(shape))) \
        if dtype is simt.bfloat16 else (lambda shape: rng.standard_normal(shape).astype(dtype))
    a, b, c = normal((16, k)), normal((k, 8)), rng.standard_normal((16, 8)).astype(acc)
    results = []
    for name in ("cpu", "sim"):
        d = poison((16, 8), acc)
        with simt.use_device(name):
            make_tile(k, dtype, acc)[1, 32](a, b, c, d, np.int64(3), np.int64(8))
        results.append(d)
    assert results[0].tobytes() == results[1].tobytes()


@simt.kernel
def a_lane_missing(a, out):
    s = simt.shared.array((16, 16), np.float16)
    lane = simt.threadIdx.x
    for i in range(lane, 256, 32):
        s[i // 16, i % 16] = a[i // 16, i % 16]
    simt.syncthreads()
    if lane == 5:
        return
    f = simt.ldmatrix(s, 0, n=4)
    out[lane] = f[0]


def test_the_sim_device_reports_a_lane_that_does_not_take_part():
    with simt.use_device("sim"), pytest.raises(simt.BarrierDivergenceError,
                                               match=r"thread \(5, 0, 0\), which has exited"):
        a_lane_missing[1, 32](np.ones((16, 16), np.float16), np.zeros(32, np.float16))


# ------------------------------------------------------------------ PTX
def _ptx(kernel, types):
    from simt.backends.cuda.device import CudaBackend
    return CudaBackend.compile_for(kernel.typed_ir(types), CompileOptions(boundscheck=False),
                                   "sm_90").ptx


def _arr(dtype, ndim):
    return T.Array(np.dtype(dtype) if dtype is not simt.bfloat16 else T.BF16_STORAGE, ndim, "C")


@pytest.fixture(scope="module")
def mma_ptx():
    out = {}
    for case, (k, dtype, acc) in CASES.items():
        out[case] = _ptx(make_tile(k, dtype, acc), [_arr(dtype, 2), _arr(dtype, 2), _arr(acc, 2),
                                                    _arr(acc, 2), T.INT64, T.INT64])
    for n in (1, 2, 4):
        for trans in (False, True):
            u16, i64 = _arr(np.uint16, 2), _arr(np.int64, 1)
            out[f"ld_x{n}_{trans}"] = _ptx(make_layout(n, trans), [u16, u16, i64])
            out[f"st_x{n}_{trans}"] = _ptx(make_store(n, trans), [u16, u16, i64])
    return out


def test_the_gpu_gets_one_instruction_each(mma_ptx):
    f16 = mma_ptx["f16_f32_k16"]
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in f16
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in f16
    assert "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16" in f16
    assert "local" not in f16                            # fragments stay in registers
    assert "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16" in mma_ptx["f16_f16_k16"]
    assert "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32" in mma_ptx["bf16_f32_k8"]
    assert "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in mma_ptx["st_x4_True"]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptxas_accepts_the_ptx(mma_ptx, tmp_path):
    for name, text in mma_ptx.items():
        path = tmp_path / f"{name}.ptx"
        path.write_text(text)
        done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                              capture_output=True, text=True)
        assert done.returncode == 0, (name, done.stderr)


# ------------------------------------------------------------------ errors
@simt.kernel
def bad_shape(a):
    s = simt.shared.array((16, 16), np.float16)
    f = simt.ldmatrix(s, 0, n=4)
    b = simt.ldmatrix(s, 0, n=2)
    c = simt.local.array(4, np.float32)
    simt.mma.sync(c, f, b, c, shape=(16, 16, 16))


@simt.kernel
def bad_n(a):
    s = simt.shared.array((16, 16), np.float16)
    f = simt.ldmatrix(s, 0, n=3)


@simt.kernel
def wrong_a_size(a):
    s = simt.shared.array((16, 16), np.float16)
    f = simt.ldmatrix(s, 0, n=2)
    b = simt.ldmatrix(s, 0, n=2)
    c = simt.local.array(4, np.float32)
    simt.mma.sync(c, f, b, c)


@simt.kernel
def wrong_acc(a):
    s = simt.shared.array((16, 16), simt.bfloat16)
    f = simt.ldmatrix(s, 0, n=4)
    b = simt.ldmatrix(s, 0, n=2)
    c = simt.local.array(4, np.float16)
    simt.mma.sync(c, f, b, c)


@simt.kernel
def int_fragments(a):
    f = simt.local.array(8, np.int16)
    b = simt.local.array(4, np.int16)
    c = simt.local.array(4, np.float32)
    simt.mma.sync(c, f, b, c)


@simt.kernel
def global_source(a):
    f = simt.ldmatrix(a, 0, n=1)


@simt.kernel
def one_d_shared(a):
    s = simt.shared.array(256, np.float16)
    f = simt.ldmatrix(s, 0, n=1)


@simt.kernel
def unbound(a):
    s = simt.shared.array((16, 16), np.float16)
    a[0] = simt.ldmatrix(s, 0)[0]


@simt.kernel
def wide_store(a):
    s = simt.shared.array((16, 16), np.float16)
    f = simt.local.array(2, np.float16)
    simt.stmatrix(s, 0, f, n=4)


@pytest.mark.parametrize("kernel,message,line", [
    (bad_shape, r"simt.mma.sync has the shapes \(16, 8, 16\), \(16, 8, 8\)", "simt.mma.sync"),
    (bad_n, "n is the number of 8x8 matrices, 1, 2 or 4; got 3", "n=3"),
    (wrong_a_size, "a holds 8 elements per lane, got a local array of 4", "simt.mma.sync"),
    (wrong_acc, "bf16 products accumulate in float32; c holds float16", "simt.mma.sync"),
    (int_fragments, "multiplies float16 or bfloat16 fragments", "simt.mma.sync"),
    (global_source, "needs a 2-D C-contiguous shared array", "simt.ldmatrix"),
    (one_d_shared, "needs a 2-D C-contiguous shared array", "simt.ldmatrix"),
    (unbound, "bind the fragment simt.ldmatrix returns to a name", "simt.ldmatrix"),
    (wide_store, r"simt.stmatrix\(n=4\) stores 8 16-bit elements per lane; frag holds 2",
     "simt.stmatrix"),
])
def test_errors_name_the_mistake(kernel, message, line):
    with pytest.raises(simt.CompileError, match=message) as info:
        kernel.typed_ir([T.Array(np.dtype(np.float16), 2, "C")])
    assert line in str(info.value)


# ------------------------------------------------------------------ checked mode (cpu)
def test_checked_mode_runs_a_tile_and_reports_a_row_past_the_end(rng):
    a, b = _ints(rng, (16, 16), np.float16), _ints(rng, (16, 8), np.float16)
    c, d = _ints(rng, (16, 8), np.float32), poison((16, 8), np.float32)
    with simt.use_device("cpu", checks=True):
        make_tile(16, np.float16, np.float32)[1, 32](a, b, c, d, np.int64(8), np.int64(24))
        assert np.array_equal(d, a.astype(np.float32) @ b.astype(np.float32) + c)
        layout = make_layout(4, False)
        src = np.ones((40, WIDTH), np.uint16)
        offsets = np.full(32, 30 * WIDTH, np.int64)          # rows 30..45 of 40
        with pytest.raises(simt.errors.IllegalAddressError, match="simt.ldmatrix"):
            layout[1, 32](src, poison((32, 8), np.uint16), offsets)
