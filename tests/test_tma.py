"""TMA (simt.tensor_map, simt.tma.*) and the barrier's transaction counts, on every device:
loads through each swizzle against a NumPy model of the PTX ISA's swizzle modes (the
shared-memory bytes copied out raw), out-of-bounds fills, store round trips, a
producer/consumer loop on expect_tx / arrive_expect_tx / try_wait / wait_parity, bulk
copies; the host's checks of tensor maps; the PTX of every form, assembled by ptxas."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.errors import CompileError
from simt.ir import types as T
from conftest import poison

SPAN_BITS = {"none": 0, "32B": 1, "64B": 2, "128B": 3}


def swizzle_model(data, mode):
    """The bytes of a box as a TMA load leaves them in shared memory (PTX ISA, tensor
    swizzling modes): memory is rows of 128 bytes, each 8 chunks of 16 bytes; chunk c of
    row r goes to chunk c ^ (r mod 2**B) of the same row, B = 1, 2, 3 for 32B, 64B, 128B
    (so a 32B span repeats every 256 bytes, 64B every 512, 128B every 1024)."""
    chunks = np.frombuffer(data.tobytes(), np.uint8).reshape(-1, 16)
    out = np.empty_like(chunks)
    for c in range(len(chunks)):
        row, col = divmod(c, 8)
        out[row * 8 + (col ^ (row % (1 << SPAN_BITS[mode])))] = chunks[c]
    return out.ravel()


def _need_tma(device):
    if device.kind == "cuda" and device.properties.compute_capability < (9, 0):
        pytest.skip("TMA needs compute capability 9.0 (Hopper) or newer")


def _loader(dtype, count):
    """A kernel copying the box at coords into shared memory, then the shared array out raw."""
    nbytes = count * np.dtype(dtype).itemsize

    @simt.kernel
    def load_box(tmap, out, coords):
        buf = simt.shared.array(count, dtype)
        bar = simt.shared.barrier(simt.blockDim.x)
        if simt.threadIdx.x == 0:
            token = bar.arrive_expect_tx(nbytes)
            simt.tma.load(buf, tmap, coords, bar)
        else:
            token = bar.arrive()
        bar.wait(token)
        i = simt.threadIdx.x
        while i < count:
            out[i] = buf[i]
            i += simt.blockDim.x
    return load_box


def _host(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) + 3).astype(dtype)
    return rng.integers(1, 100, shape).astype(dtype)


def _reference_box(a, box, coords, fill=0):
    """The box of a at coords, out-of-bounds elements as fill."""
    out = np.full(box, fill, a.dtype)
    src = tuple(slice(max(c, 0), min(c + b, n)) for c, b, n in zip(coords, box, a.shape))
    dst = tuple(slice(s.start - c, s.stop - c) for s, c in zip(src, coords))
    if all(s.stop > s.start for s in src):
        out[dst] = a[src]
    return out


CASES = [(np.float32, (20, 72), (8, 32), "128B", (4, 16)),
         (np.float16, (40, 104), (16, 32), "64B", (8, 32)),
         (np.uint8, (9, 64), (4, 32), "32B", (2, 16)),
         (np.int32, (5, 7, 16), (3, 4, 8), "none", (1, 2, 4)),
         (np.float16, (64, 128), (64, 64), "128B", (0, 64)),
         (simt.bfloat16, (16, 64), (8, 64), "128B", (8, 0)),
         (simt.float8_e4m3, (16, 256), (8, 128), "128B", (8, 128))]


@pytest.mark.parametrize("dtype, shape, box, swizzle, coords", CASES,
                         ids=[f"{np.dtype(c[0]).name}-{c[3]}" for c in CASES])
def test_load_swizzles_as_the_ptx_isa_says(device, rng, dtype, shape, box, swizzle, coords):
    _need_tma(device)
    a = _host(rng, shape, dtype)
    tmap = simt.tensor_map(simt.to_device(a), box, swizzle=swizzle)
    count = int(np.prod(box))
    out = simt.to_device(poison(count, dtype))
    _loader(dtype, count)[1, 64](tmap, out, coords)
    expected = swizzle_model(_reference_box(a, box, coords), swizzle)
    assert np.array_equal(out.copy_to_host().view(np.uint8), expected)


@pytest.mark.parametrize("coords", [(-3, -8), (15, 60), (-5, 64)])
@pytest.mark.parametrize("fill", ["zero", "nan"])
def test_out_of_bounds_elements_are_filled(device, rng, coords, fill):
    _need_tma(device)
    a = _host(rng, (20, 72), np.float32)
    tmap = simt.tensor_map(simt.to_device(a), (8, 16), oob_fill=fill)
    out = simt.to_device(np.full(128, 7.5, np.float32))
    _loader(np.float32, 128)[1, 32](tmap, out, coords)
    expected = _reference_box(a, (8, 16), coords, 0 if fill == "zero" else np.nan)
    np.testing.assert_array_equal(out.copy_to_host().reshape(8, 16), expected)


def _round_trip(dtype, count):
    nbytes = count * np.dtype(dtype).itemsize

    @simt.kernel
    def round_trip(src_map, dst_map, at, to):
        buf = simt.shared.array(count, dtype)
        bar = simt.shared.barrier(simt.blockDim.x)
        if simt.threadIdx.x == 0:
            token = bar.arrive_expect_tx(nbytes)
            simt.tma.load(buf, src_map, at, bar)
        else:
            token = bar.arrive()
        bar.wait(token)
        i = simt.threadIdx.x
        while i < count:                  # every thread writes some of the box first
            buf[i] = buf[i] * 2
            i += simt.blockDim.x
        simt.fence_proxy_async()          # the writers' stores, before the copy engine reads
        simt.syncthreads()
        if simt.threadIdx.x == 0:
            simt.tma.store(dst_map, to, buf)
            simt.tma.commit_group()
            simt.tma.wait_group(0)
    return round_trip


@pytest.mark.parametrize("swizzle", ["none", "64B", "128B"])
@pytest.mark.parametrize("to", [(8, 32), (28, 56)])
def test_tile_store_round_trip(device, rng, swizzle, to):
    _need_tma(device)
    a = _host(rng, (40, 96), np.float16)
    out = poison((32, 72), np.float16)
    box = (16, 32 if swizzle == "64B" else 64)
    src, dst = simt.to_device(a), simt.to_device(out)
    kernel = _round_trip(np.float16, int(np.prod(box)))
    kernel[1, 128](simt.tensor_map(src, box, swizzle=swizzle),
                   simt.tensor_map(dst, box, swizzle=swizzle), (4, 8), to)
    tile = _reference_box(a, box, (4, 8)) * 2
    expected = out.copy()
    region = tuple(slice(t, min(t + b, n)) for t, b, n in zip(to, box, out.shape))
    expected[region] = tile[tuple(slice(0, s.stop - s.start) for s in region)]
    np.testing.assert_array_equal(dst.copy_to_host(), expected)


BOX_ROWS, COLS = 4, 32


@simt.kernel
def producer_consumer(tmap, rows, out, steps):
    """Each step: thread 0 loads the next box and the next rows (a bulk copy) on one barrier
    phase; every thread waits on the phase's parity (even steps) or its token (odd steps)
    and adds its column of both into out."""
    buf = simt.shared.array(BOX_ROWS * COLS, np.float32)
    line = simt.shared.array(COLS, np.float32)
    bar = simt.shared.barrier(simt.blockDim.x)
    t = simt.threadIdx.x
    total = np.float32(0)
    for step in range(steps):
        if t == 0:
            bar.expect_tx(COLS * 4)
            token = bar.arrive_expect_tx(BOX_ROWS * COLS * 4)
            simt.tma.load(buf, tmap, (step * BOX_ROWS, 0), bar)
            simt.tma.copy(line, rows[step * COLS:], COLS * 4, bar)
        else:
            token = bar.arrive()
        if step % 2 == 0:
            bar.wait_parity(step % 2)
        else:
            while not bar.try_wait(token):
                pass
        for r in range(BOX_ROWS):
            total += buf[r * COLS + t]
        total += line[t]
        simt.syncthreads()                 # the buffers are free for the next step
    out[t] = total


def test_producer_consumer_with_transaction_counts(device, rng):
    _need_tma(device)
    steps = 5
    a = _host(rng, (steps * BOX_ROWS, COLS), np.float32)
    rows = _host(rng, steps * COLS, np.float32)
    out = simt.to_device(poison(COLS, np.float32))
    tmap = simt.tensor_map(simt.to_device(a), (BOX_ROWS, COLS))
    producer_consumer[1, COLS](tmap, simt.to_device(rows), out, steps)
    expected = a.sum(axis=0) + rows.reshape(steps, COLS).sum(axis=0)
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-5)


# ------------------------------------------------------------------ host checks
@pytest.mark.parametrize("shape, dtype, box, swizzle, rule", [
    ((16, 64), np.float32, (8, 300), None, "1 to 256"),
    ((16, 64), np.float32, (8, 64), "128B", "at most 128 bytes"),
    ((16, 64), np.float32, (8, 3), None, "multiple of 16 bytes"),
    ((16, 13), np.float32, (8, 4), None, "multiple of 16 bytes below"),
    ((16, 64), np.float32, (8,), None, "one extent per dimension"),
    ((16, 64), np.float32, (8, 16), "16B", "swizzle must be"),
    ((16, 64), np.int32, (8, 16), None, "floating-point"),
])
def test_bad_tensor_maps_are_value_errors(shape, dtype, box, swizzle, rule):
    with simt.use_device("cpu"):
        array = simt.to_device(np.ones(shape, dtype))
        fill = "nan" if rule == "floating-point" else "zero"
        with pytest.raises(ValueError, match=rule):
            simt.tensor_map(array, box, swizzle=swizzle, oob_fill=fill)


def _map_type(dtype=np.float32, box=(8, 16), swizzle="none"):
    return T.TensorMap(dtype, len(box), box, swizzle, "zero")


def test_wrong_coordinates_are_compile_errors():
    @simt.kernel
    def three_coords(tmap):
        buf = simt.shared.array(128, np.float32)
        bar = simt.shared.barrier(1)
        simt.tma.load(buf, tmap, (0, 0, 0), bar)

    with pytest.raises(CompileError, match="2-d, so coords needs 2 coordinates") as info:
        three_coords.typed_ir([_map_type()])
    assert "simt.tma.load(buf, tmap, (0, 0, 0), bar)" in str(info.value)


def test_wrong_shared_arrays_are_compile_errors():
    @simt.kernel
    def small(tmap):
        buf = simt.shared.array(64, np.float32)
        bar = simt.shared.barrier(1)
        simt.tma.load(buf, tmap, (0, 0), bar)

    @simt.kernel
    def other_type(tmap):
        buf = simt.shared.array(128, np.int32)
        simt.tma.store(tmap, (0, 0), buf)

    with pytest.raises(CompileError, match="64 elements, fewer than the box's 128"):
        small.typed_ir([_map_type()])
    with pytest.raises(CompileError, match="holds int32, the tensor map float32"):
        other_type.typed_ir([_map_type()])


# ------------------------------------------------------------------ PTX without a GPU
@simt.kernel
def every_form(tmap, tmap3, src, out, mask):
    buf = simt.shared.array(4096, np.float16)
    bar = simt.shared.barrier(simt.blockDim.x)
    if simt.threadIdx.x == 0:
        token = bar.arrive_expect_tx(4096)
        simt.tma.load(buf, tmap, (0, 64), bar)
        simt.tma.load(buf, tmap3, (1, 2, 3), bar, multicast=mask)
        simt.tma.copy(buf, src, 256, bar)
    else:
        token = bar.arrive()
    while not bar.try_wait(token):
        pass
    bar.wait_parity(0)
    out[simt.threadIdx.x] = buf[simt.threadIdx.x]
    buf[simt.threadIdx.x] = 1
    simt.fence_proxy_async()
    simt.syncthreads()
    if simt.threadIdx.x == 0:
        simt.tma.store(tmap, (8, 0), buf)
        simt.tma.commit_group()
        simt.tma.wait_group(1, read=True)
        simt.tma.wait_group(0)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas (the CUDA toolkit)")
def test_ptx_of_every_form_assembles(tmp_path):
    from simt.backends.cuda.device import CudaBackend
    from simt.compiler.options import CompileOptions
    f16 = T.Array(np.dtype(np.float16), 1, "C")
    types = [_map_type(np.float16, (16, 64), "128B"), _map_type(np.float16, (2, 8, 32), "64B"),
             f16, f16, T.INT32]
    binary = CudaBackend.compile_for(every_form.typed_ir(types),
                                     CompileOptions(boundscheck=False), "sm_90")
    ptx = binary.ptx
    assert ptx.count("fence.proxy.async.shared::cta;") == 5    # 4 copies' and the writers'
    assert ".param .align 64 .b8" in ptx and "cvta.param.u64" in ptx
    assert ".shared .align 1024 .b8" in ptx
    for form in ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                 "complete_tx::bytes.multicast::cluster",
                 "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group",
                 "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
                 "cp.async.bulk.commit_group;", "cp.async.bulk.wait_group.read 1;",
                 "cp.async.bulk.wait_group 0;", "mbarrier.arrive.expect_tx.shared::cta.b64",
                 "mbarrier.try_wait.shared::cta.b64", "mbarrier.try_wait.parity.shared::cta.b64"):
        assert form in ptx, form
    path = tmp_path / "every_form.ptx"
    path.write_text(ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "out.cubin")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@simt.kernel
def store_from_a_view(tmap, out):
    pad = simt.shared.array(48, np.float16)
    tiles = simt.shared.array((128, 64), np.float16)
    pad[simt.threadIdx.x % 48] = 1
    tiles[simt.threadIdx.x, 0] = pad[3]
    simt.fence_proxy_async()
    simt.syncthreads()
    if simt.threadIdx.x == 0:
        simt.tma.store(tmap, (0, 0), tiles[64:128])
        simt.tma.commit_group()
        simt.tma.wait_group(0)


def test_an_array_stored_through_a_view_is_aligned_for_the_swizzle():
    """tma.store (or load) of a slice of a static shared array: the array starts on the
    swizzle's repeat (1024 bytes for 128B) on the GPU, as the CPU device's swizzle (by
    offset in the box) assumes; a view's own start is the program's (here 8 KiB on)."""
    types = [_map_type(np.float16, (64, 64), "128B"), T.Array(np.dtype(np.float16), 2, "C")]
    ptx = store_from_a_view.inspect_ptx(types, arch="sm_90a")
    assert ".shared .align 1024 .b8 simt_shared_tiles" in ptx
