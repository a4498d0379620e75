"""``from simt import cuda`` (the simt/cuda package): numba-cuda's documented kernels, written as
numba's docs write them, give NumPy's results on every device; numba's launch order,
array methods (copy_to_device copies INTO the array) and eager signatures."""
import math

import numpy as np
import pytest

import simt
from simt import cuda
from simt.ir import types as T
from conftest import poison

TPB = 16


@cuda.jit
def vecadd(a, b, c):
    tid = cuda.grid(1)
    if tid < len(c):
        c[tid] = a[tid] + b[tid]


@cuda.jit
def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = np.float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


@cuda.jit
def histogram(x, xmin, xmax, histogram_out):
    nbins = histogram_out.shape[0]
    bin_width = (xmax - xmin) / nbins
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        bin_number = np.int32((x[i] - xmin) / bin_width)
        if bin_number >= 0 and bin_number < histogram_out.shape[0]:
            cuda.atomic.add(histogram_out, bin_number, 1)


@cuda.jit
def block_sum(data, out):
    tid = cuda.threadIdx.x
    size = len(data)
    if tid < size:
        i = cuda.grid(1)
        shr = cuda.shared.array(128, np.int32)
        shr[tid] = data[i]
        cuda.syncthreads()
        s = 1
        while s < cuda.blockDim.x:
            if tid % (2 * s) == 0:
                shr[tid] += shr[tid + s]
            s *= 2
            cuda.syncthreads()
        if tid == 0:
            out[cuda.blockIdx.x] = shr[0]


@cuda.jit(device=True)
def polar_to_cartesian(rho, theta):
    return rho * math.cos(theta), rho * math.sin(theta)


@cuda.jit
def polar_distance(rho1, theta1, rho2, theta2, out):
    i = cuda.grid(1)
    if i < out.size:
        x1, y1 = polar_to_cartesian(rho1[i], theta1[i])
        x2, y2 = polar_to_cartesian(rho2[i], theta2[i])
        out[i] = ((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5


@cuda.jit(["void(float32[:], float32)", "void(float64[:], float64)"])
def scale(a, s):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] *= s


@cuda.jit
def warp_tools(x, out, lanes, flags):
    i = cuda.grid(1)
    v = x[i]
    total = v
    offset = 16
    while offset > 0:
        total += cuda.shfl_down_sync(0xFFFFFFFF, total, offset)
        offset //= 2
    lanes[i] = cuda.laneid + cuda.warpsize * 0
    flags[i] = cuda.selp(v > 0.5, 1, 0)
    if cuda.laneid == 0:
        out[i // 32] = total
    if i == 0:
        cuda.atomic.compare_and_swap(flags[64:], 0, 7)


@cuda.jit
def sequential_rows(M):
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    rows = M.shape[0]
    cols = M.shape[1]
    for row in range(1, rows):
        opposite = cols - col - 1
        M[row, col] = M[row - 1, opposite] + 1
        g.sync()


@cuda.jit
def nan_extrema(values, hi, lo):
    i = cuda.grid(1)
    if i < values.shape[0]:
        cuda.atomic.nanmax(hi, 0, values[i])
        cuda.atomic.nanmin(lo, 0, values[i])


def test_kernel_side_names_are_simts_own():
    assert cuda.threadIdx is simt.threadIdx and cuda.grid is simt.grid
    assert cuda.syncthreads is simt.syncthreads and cuda.shared is simt.shared
    assert cuda.atomic.add is simt.atomic.add and cuda.warpsize is simt.warpSize


def test_vector_add_launch_forall_and_stream(device, rng):
    n = 1000
    a, b = rng.random(n), rng.random(n)
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = cuda.to_device(poison(n, np.float64))
    vecadd.forall(n)(da, db, dc)
    np.testing.assert_array_equal(dc.copy_to_host(), a + b)
    dc.copy_to_device(poison(n, np.float64))
    s = cuda.stream()
    with s.auto_synchronize():
        vecadd[(n + 127) // 128, 128, s](da, db, dc)         # numba's [grid, block, stream]
    np.testing.assert_array_equal(dc.copy_to_host(), a + b)
    dc.copy_to_device(poison(n, np.float64))
    vecadd[(n + 127) // 128, 128, 0, 0](da, db, dc)          # [grid, block, stream, shared]
    np.testing.assert_array_equal(dc.copy_to_host(stream=0), a + b)


def test_fast_matmul_with_shared_memory(device, rng):
    A = rng.random((40, 24), dtype=np.float32)
    B = rng.random((24, 36), dtype=np.float32)
    dC = cuda.to_device(poison((40, 36), np.float32))
    blocks = (math.ceil(36 / TPB), math.ceil(40 / TPB))
    fast_matmul[blocks, (TPB, TPB)](cuda.to_device(A), cuda.to_device(B), dC)
    np.testing.assert_allclose(dC.copy_to_host(), A @ B, rtol=1e-5)


def test_atomic_histogram(device, rng):
    x = rng.normal(size=5000).astype(np.float32)
    out = cuda.to_device(np.zeros(16, np.int32))
    histogram[8, 64](cuda.to_device(x), np.float32(-3), np.float32(3), out)
    edges = np.float32(-3) + np.arange(17, dtype=np.float32) * np.float32(6 / 16)
    bins = ((x - np.float32(-3)) / np.float32(6 / 16)).astype(np.int32)
    expected = np.bincount(bins[(bins >= 0) & (bins < 16)], minlength=16)
    assert edges.size == 17 and expected.sum() > 4000
    np.testing.assert_array_equal(out.copy_to_host(), expected)


def test_block_reduction_with_syncthreads(device, rng):
    data = rng.integers(-100, 100, 128 * 4).astype(np.int32)
    out = cuda.to_device(poison(4, np.int32))
    block_sum[4, 128](cuda.to_device(data), out)
    np.testing.assert_array_equal(out.copy_to_host(), data.reshape(4, 128).sum(axis=1))


def test_device_function_returning_a_tuple(device, rng):
    n = 300
    r1, t1, r2, t2 = (rng.random(n) for _ in range(4))
    out = cuda.device_array(n)
    out.copy_to_device(poison(n, np.float64))
    polar_distance.forall(n, tpb=64)(*(cuda.to_device(v) for v in (r1, t1, r2, t2)), out)
    expected = np.hypot(r1 * np.cos(t1) - r2 * np.cos(t2), r1 * np.sin(t1) - r2 * np.sin(t2))
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-12)


def test_eager_signatures_serve_matching_launches(device, rng):
    compiled = len(scale.compiled)
    a32 = rng.random(50, dtype=np.float32)
    d32 = cuda.to_device(a32)                      # C-contiguous: float32[:] ('A') serves it
    scale[1, 64](d32, 3)                           # an int for the float32 parameter
    a64 = rng.random(50)
    d64 = cuda.to_device(a64)[::2]                 # strided: float64[:] serves it too
    scale[1, 64](d64, 0.5)
    np.testing.assert_allclose(d32.copy_to_host(), a32 * np.float32(3), rtol=1e-6)
    np.testing.assert_array_equal(d64.copy_to_host(), a64[::2] * 0.5)
    loaded = {id(v) for k, v in scale.compiled.items() if k[0] == device.name}
    assert len(loaded) == 2 and len(scale.compiled) >= compiled


def test_warp_functions_laneid_selp_and_compare_and_swap(device, rng):
    x = rng.random(64, dtype=np.float32)
    out = cuda.to_device(poison(2, np.float32))
    lanes = cuda.to_device(poison(64, np.int32))
    flags = cuda.to_device(np.zeros(65, np.int32))
    warp_tools[1, 64](cuda.to_device(x), out, lanes, flags)
    np.testing.assert_allclose(out.copy_to_host(), x.reshape(2, 32).sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(lanes.copy_to_host(), np.arange(64) % 32)
    expected = np.append((x > 0.5).astype(np.int32), 7)
    np.testing.assert_array_equal(flags.copy_to_host(), expected)


def test_nanmax_nanmin_skip_nans(device, rng):
    values = rng.normal(size=200)
    values[::7] = np.nan
    hi, lo = cuda.to_device(np.array([np.nan])), cuda.to_device(np.array([np.inf]))
    nan_extrema[4, 64](cuda.to_device(values), hi, lo)
    assert hi.copy_to_host()[0] == np.nanmax(values)
    assert lo.copy_to_host()[0] == np.nanmin(values)


def test_grid_sync_launches_cooperatively_unasked(device, rng):
    """numba's grid-sync example: a plain launch of a kernel that syncs its grid."""
    M = np.zeros((8, 64), np.int32)
    M[0] = rng.integers(0, 100, 64)
    d = cuda.to_device(M)
    sequential_rows[2, 32](d)
    expected = M.copy()
    for row in range(1, 8):
        expected[row] = expected[row - 1, ::-1] + 1
    np.testing.assert_array_equal(d.copy_to_host(), expected)
    assert sequential_rows.overloads[(T.Array(np.int32, 2, "C"),)] \
        .max_cooperative_grid_blocks(32) >= 2


def test_copy_to_device_copies_into_the_array(device, rng):
    """numba's meaning, the reverse of simt's DeviceArray.copy_to_device(other)."""
    host = rng.random((6, 5))
    d = cuda.device_array((6, 5))
    d.copy_to_device(host)
    np.testing.assert_array_equal(d.copy_to_host(), host)
    e = cuda.device_array_like(host)
    assert cuda.device_array_like(d.T).strides == np.empty_like(host.T).strides
    e.copy_to_device(d)
    np.testing.assert_array_equal(e.copy_to_host(), host)
    view = e[1:3]
    assert isinstance(view, cuda.DeviceNDArray) and type(view)._sig is not None
    view.copy_to_device(np.zeros((2, 5)))
    expected = host.copy()
    expected[1:3] = 0
    np.testing.assert_array_equal(e.copy_to_host(), expected)
    parts = cuda.to_device(host.ravel()).split(8)
    assert [p.shape for p in parts] == [(8,)] * 3 + [(6,)]
    np.testing.assert_array_equal(parts[3].copy_to_host(), host.ravel()[24:])
    plain = simt.to_device(host)
    target = simt.device_array((6, 5))
    plain.copy_to_device(target)                    # simt's own arrays keep simt's meaning
    np.testing.assert_array_equal(target.copy_to_host(), host)


def test_to_device_into_and_host_side_names(device, rng):
    host = rng.random(10)
    to = cuda.device_array(10)
    assert cuda.to_device(host, to=to) is to
    np.testing.assert_array_equal(to.copy_to_host(), host)
    assert cuda.to_device(host, copy=False).shape == (10,)
    assert cuda.is_cuda_array(to) == (device.kind == "cuda")
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total
    assert cuda.get_current_device().WARP_SIZE == 32
    assert cuda.list_devices()[cuda.get_current_device().id].simt_device.name == device.name
    start, stop = cuda.event(), cuda.event()
    start.record()
    stop.record()
    stop.synchronize()
    assert cuda.event_elapsed_time(start, stop) >= 0
    cuda.synchronize()


def test_numba_options_map_or_raise():
    with pytest.raises(simt.NotSupportedError, match="link="):
        cuda.jit(link=["f.cu"])(vecadd.pyfunc)
    with pytest.raises(simt.NotSupportedError, match="opt=False"):
        cuda.jit(opt=False)(vecadd.pyfunc)
    k = cuda.jit(max_registers=32, lineinfo=True, debug=True, opt=True)(vecadd.pyfunc)
    assert k.options["maxnreg"] == 32 and k.options["boundscheck"] is True


def test_gpu_code_of_a_numba_kernel_without_a_gpu():
    """The PTX LLVM's NVPTX back end makes here: numba's names lower to CUDA's own."""
    ptx = warp_tools.inspect_ptx("void(float32[:], float32[:], int32[:], int32[:])",
                                 arch="sm_80")
    assert "shfl.sync.down" in ptx and "%laneid" in ptx and ".global.cas.b32" in ptx
