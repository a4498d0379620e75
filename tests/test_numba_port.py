"""Porting numba-cuda programs with ``from simt import cuda`` (issue 36 item 3): numba's
profiler calls, its device attribute names, ``for v in array`` in kernels, and numba's
negative indices under ``cuda.jit`` (``simt.kernel`` keeps CUDA's rule)."""
import math

import numpy as np
import pytest

import simt
from simt import cuda


def test_profile_start_and_stop_do_nothing_off_the_gpu(device):
    if device.kind == "cuda":
        pytest.skip("on a GPU they call cuProfilerStart/Stop")
    cuda.profile_start()
    cuda.profile_stop()
    with cuda.profiling():
        pass


def test_numba_device_attribute_names(device):
    dev = cuda.get_current_device()
    p = device.properties
    assert (dev.MAX_BLOCK_DIM_X, dev.MAX_BLOCK_DIM_Y, dev.MAX_BLOCK_DIM_Z) == p.max_block_dim
    assert (dev.MAX_GRID_DIM_X, dev.MAX_GRID_DIM_Y, dev.MAX_GRID_DIM_Z) == p.max_grid_dim
    assert dev.MAX_THREADS_PER_BLOCK == p.max_threads_per_block
    assert dev.MULTIPROCESSOR_COUNT == p.multiprocessor_count
    assert dev.WARP_SIZE == 32 and dev.MAX_SHARED_MEMORY_PER_BLOCK == p.shared_memory_per_block
    assert (dev.COMPUTE_CAPABILITY_MAJOR, dev.COMPUTE_CAPABILITY_MINOR) == \
        dev.compute_capability
    assert dev.MAX_REGISTERS_PER_BLOCK == p.max_registers_per_block
    assert isinstance(dev.L2_CACHE_SIZE, int) and dev.CONCURRENT_KERNELS in (0, 1)
    assert set(dev.get_device_identity()) == {"pci_domain_id", "pci_bus_id", "pci_device_id"}
    assert not hasattr(dev, "NO_SUCH_ATTRIBUTE")
    with pytest.raises(AttributeError, match="CU_DEVICE_ATTRIBUTE_"):
        dev.NO_SUCH_ATTRIBUTE


@simt.kernel
def row_sums(m, out):
    i = simt.grid(1)
    if i < m.shape[0]:
        s = 0.0
        for v in m[i]:
            s += v
        out[i] = s


@simt.kernel
def each_row(m, out):
    k = 0
    for row in m:                      # rows of a 2-d array: views
        j = 0
        for v in row[::2]:             # an expression: evaluated once
            out[k, j] = v * 2
            j += 1
        k += 1


@cuda.jit
def count_positive(values, out):
    n = 0
    for v in values:
        if v > 0:
            n += 1
    out[cuda.grid(1)] = n


def test_for_v_in_array(device, rng):
    m = rng.standard_normal((6, 9))
    out = np.full(6, np.nan)
    row_sums[2, 4](m, out)
    np.testing.assert_allclose(out, m.sum(axis=1))
    out2 = np.full((6, 5), np.nan)
    each_row[1, 1](m, out2)
    np.testing.assert_array_equal(out2, m[:, ::2] * 2)
    values = rng.standard_normal(50).astype(np.float32)
    counts = np.full(4, -1, np.int64)
    count_positive[1, 4](values, counts)
    assert (counts == np.count_nonzero(values > 0)).all()


def test_for_over_a_scalar_is_a_compile_error():
    @simt.kernel
    def bad(x, out):
        for v in x:
            out[0] = v
    with pytest.raises(simt.CompileError, match="loop over range.*and over arrays") as e:
        bad[1, 1](np.float32(1), np.zeros(1, np.float32))
    assert "for v in x" in str(e.value)


def shift_body(a, b, out, hits):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a[i - 3] + b[-1, i - a.shape[0]]     # reads wrap
        out[i - a.shape[0]] += 1.0                      # a write: wraps to out[i]
        row = b[i % 2 - 2]                               # partial index: a row of b
        out[i] += row[0] * 0
        cuda.atomic.add(hits, -1, 1)                     # atomics wrap too (numba's)


def test_negative_indices_wrap_under_cuda_jit(device, rng):
    a, b = rng.standard_normal(8), rng.standard_normal((2, 8))
    out = np.full(8, np.nan)
    hits = np.zeros(3, np.int32)
    cuda.jit(shift_body)[1, 8](a, b, out, hits)
    ref = np.array([a[i - 3] + b[-1, i - 8] for i in range(8)]) + 1.0
    np.testing.assert_allclose(out, ref)
    assert hits.tolist() == [0, 0, 8]


def test_negative_indices_stay_out_of_bounds_under_simt_kernel(device, rng):
    if device.kind == "cuda":
        pytest.skip("GPUs do not check indices unless boundscheck=True")
    a, b = rng.standard_normal(8), rng.standard_normal((2, 8))
    with pytest.raises(simt.IllegalAddressError, match="index -3 is outside dimension 0"):
        simt.kernel(shift_body)[1, 8](a, b, np.zeros(8), np.zeros(3, np.int32))
        simt.synchronize()


def test_wraparound_is_not_a_simt_kernel_option():
    with pytest.raises(TypeError, match="has no option wraparound"):
        simt.kernel(wraparound=True)(shift_body)


@cuda.jit
def enumerate_zip(x, y, out):
    for i, (xv, yv) in enumerate(zip(x, y[1:])):
        out[i, 0] = xv * yv
    for (i, xv), yv in zip(enumerate(x, 10), y):
        out[i - 10, 1] = xv + yv + i
    for k, row in enumerate(out):
        row[2] = k


def test_enumerate_and_zip_over_arrays(device, rng):
    x, y = rng.standard_normal(6), rng.standard_normal(5)
    out = np.full((6, 3), np.nan)
    enumerate_zip[1, 1](x, y, out)
    n = 4                                     # zip stops at the shortest: y[1:] has 4
    np.testing.assert_allclose(out[:n, 0], x[:n] * y[1:])
    np.testing.assert_allclose(out[:5, 1], x[:5] + y + np.arange(10, 15))
    np.testing.assert_array_equal(out[:, 2], np.arange(6))
    assert np.isnan(out[n:, 0]).all() and np.isnan(out[5:, 1]).all()


@cuda.jit(device=True)
def _as_is(v):
    return v


@cuda.jit(device=True)
def _shared_binop(out, idx, operand, dtype, n, shape2, binop, cast):
    sm = cuda.shared.array(n, dtype)          # n and dtype: compile-time arguments
    tile = cuda.shared.array(shape2, dtype)
    tid = cuda.threadIdx.x
    sm[tid] = 0
    tile[tid % shape2[0], tid // shape2[0]] = tid
    cuda.syncthreads()
    binop(sm, cast(idx[tid] % n), operand)
    cuda.syncthreads()
    out[tid] = sm[tid] + tile[tid % shape2[0], tid // shape2[0]]


def _histogram_add(out, idx):
    _shared_binop(out, idx, 3, cuda.uint32, 32, (4, 8), cuda.atomic.add, _as_is)


def _histogram_max(out, idx):
    _shared_binop(out, idx, 7.5, np.float64, 32, (8, 4), cuda.atomic.max, _as_is)


def test_types_intrinsics_and_literals_are_compile_time_arguments(device, rng):
    idx = rng.integers(0, 1000, 32).astype(np.uint32)
    counts = np.bincount(idx % 32, minlength=32)
    out = np.full(32, 0xDEAD, np.uint32)
    cuda.jit(_histogram_add)[1, 32](out, idx)
    np.testing.assert_array_equal(out, counts * 3 + np.arange(32))
    hist = np.full(32, np.nan)
    cuda.jit(_histogram_max)[1, 32](hist, idx)
    np.testing.assert_array_equal(hist, np.where(counts > 0, 7.5, 0.0) + np.arange(32))


def test_types_are_not_arguments_of_simt_device_functions():
    with pytest.raises(simt.CompileError, match="cannot be used as a value"):
        simt.kernel(_histogram_add)[1, 32](np.zeros(32, np.uint32), np.zeros(32, np.uint32))


def test_numpy_globals_are_frozen_constants_under_cuda_jit(device, rng):
    prices = rng.standard_normal(5)
    weights = rng.standard_normal((2, 5)).astype(np.float32)
    frozen = prices.copy(), weights.copy()

    def totals(q, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = q[i] * prices[i] + weights[1, i] + prices[0]

    k = cuda.jit(totals)
    q = rng.standard_normal(5)
    out = np.full(5, np.nan)
    k[1, 32](q, out)
    ref = q * frozen[0] + frozen[1][1] + frozen[0][0]
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    prices[:] = 0                      # numba's rule: frozen at the first compile
    out[:] = np.nan
    k[1, 32](q, out)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    with pytest.raises(simt.CompileError, match="cannot be read inside a kernel"):
        simt.kernel(totals)[1, 32](q, out)


@simt.kernel
def _angles(x, out):
    i = simt.grid(1)
    if i < x.size:
        out[i, 0] = math.degrees(x[i])
        out[i, 1] = math.radians(x[i])
        out[i, 2] = np.rad2deg(x[i])
        out[i, 3] = np.deg2rad(x[i])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_math_degrees_and_radians_round_as_numpy(device, rng, dtype):
    x = (rng.standard_normal(50) * 4).astype(dtype)
    out = np.full((50, 4), np.nan, dtype)
    _angles[1, 64](x, out)
    for col, ref in enumerate((np.degrees(x), np.radians(x)) * 2):
        np.testing.assert_array_equal(out[:, col], ref)


@simt.kernel
def _bit_counts(a, b, c, d, out):
    i = simt.grid(1)
    if i < a.size:
        out[i, 0] = a[i].bit_count()
        out[i, 1] = b[i].bit_count()
        out[i, 2] = c[i].bit_count()
        out[i, 3] = d[i].bit_count()


def test_int_bit_count_counts_abs_as_python(device, rng):
    n = 64
    a = rng.integers(-128, 128, n).astype(np.int8)
    a[:2] = (-128, 0)
    b = rng.integers(0, 2 ** 16, n).astype(np.uint16)
    c = rng.integers(-2 ** 63, 2 ** 63 - 1, n, dtype=np.int64)
    c[0] = -2 ** 63
    d = rng.integers(0, 2 ** 64 - 1, n, dtype=np.uint64)
    out = np.full((n, 4), -1, np.int64)
    _bit_counts[1, n](a, b, c, d, out)
    ref = [[int(v).bit_count() for v in col] for col in (a, b, c, d)]
    np.testing.assert_array_equal(out, np.array(ref).T)


@cuda.jit
def _addresses(out, g):
    loc = cuda.local.array(5, np.uint64, alignment=None)
    sh = cuda.shared.array((4, 3), np.float64, alignment=None)
    i = cuda.grid(1)
    loc[0] = i
    sh[0, 0] = i
    out[i, 0] = loc.ctypes.data
    out[i, 1] = sh.ctypes.data
    out[i, 2] = g.ctypes.data
    out[i, 3] = g[2:].ctypes.data


def test_ctypes_data_is_the_address_under_cuda_jit(device, rng):
    g = cuda.to_device(rng.standard_normal(10))
    out = np.full((4, 4), 0xDEADBEEF, np.uint64)
    _addresses[1, 4](out, g)
    assert (out[:, 2] == out[0, 2]).all() and (out[:, 3] - out[:, 2] == 16).all()
    assert (out[:, 1] % 16 == 0).all() and (out[:, :2] != 0xDEADBEEF).all()
    assert int(out[0, 2]) == g.ptr
    overload = _addresses.overloads[_addresses.signatures[0]]     # numba's per-signature
    assert overload.inspect_llvm() == _addresses.inspect_llvm(_addresses.signatures[0])
    assert ".entry" in overload.inspect_asm()


def test_array_keywords_are_checked():
    def other(out):
        a = cuda.shared.array(4, np.float64, order="F")
        out[0] = a.ctypes.data

    for jit in (cuda.jit, simt.kernel):
        with pytest.raises(simt.CompileError, match="has no keyword 'order'"):
            jit(other)[1, 1](np.zeros(1, np.uint64))


def test_eager_signature_takes_any_integer_as_numba_converts(device, rng):
    def reverse(out, c):
        out[0] = cuda.brev(c)
        out[1] = cuda.clz(c)

    k = cuda.jit("void(uint32[:], uint32)")(reverse)
    value = int(rng.integers(1, 2 ** 31))
    out = np.full(2, 0xDEAD, np.uint32)
    k[1, 1](out, value)                       # a Python int: converted to uint32
    assert int(out[0]) == int(f"{value:032b}"[::-1], 2)
    assert int(out[1]) == 32 - value.bit_length()
    assert len(k.overloads) == 1


@simt.kernel
def _round_to(x, nd, out):
    i = simt.grid(1)
    if i < x.size:
        out[i] = round(x[i], nd[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_with_ndigits_as_python(device, rng, dtype):
    vals = np.concatenate([rng.random(24) * 10.0 ** rng.integers(-3, 6, 24),
                           [np.inf, -np.inf, np.nan, 2.5, -3.5, 0.125]]).astype(dtype)
    digits = np.arange(-5, 6)
    x, nd = (a.ravel() for a in np.meshgrid(vals, digits, indexing="ij"))
    nd = nd.astype(np.int32)
    out = np.full(x.size, -7, dtype)
    _round_to[(x.size + 63) // 64, 64](x, nd, out)
    ref = np.array([round(float(a), int(b)) if np.isfinite(a) else a
                    for a, b in zip(x, nd)]).astype(dtype)
    np.testing.assert_array_equal(out, ref)


class CPointer:
    """Stands for numba's types.CPointer (numba is not a test dependency): its class name
    and dtype are what cuda.jit reads."""

    def __init__(self, dtype):
        self.dtype = dtype


def _cached_copy(ptr, r, n):
    for i in range(n):
        r[i] = cuda.ldca(ptr, i) * 2


def test_c_pointer_parameters_compile_as_1d_arrays(device, rng):
    from simt.ir import types as T
    sig = (CPointer(np.float32), T.Array(np.dtype(np.float32), 1, "A"), np.int64)
    ptx, _ = cuda.compile_ptx(_cached_copy, sig)
    assert "ld.global.ca.b32" in ptx
    k = cuda.jit([sig])(_cached_copy)
    x = rng.standard_normal(9).astype(np.float32)
    r = np.full(9, np.nan, np.float32)
    k[1, 1](x, r, 7)
    np.testing.assert_array_equal(r[:7], x[:7] * 2)
    assert np.isnan(r[7:]).all()


@cuda.jit(inline="never")
def _scale_row(a, i, factor):
    a[i] = a[i] * factor


def _calls_a_kernel(a, lanes):
    i = cuda.grid(1)
    if i < a.size:
        _scale_row(a, i, 3.0)              # numba: a cuda.jit kernel called as a function
        lanes[i] = cuda.lanemask_lt()


def test_kernels_call_cuda_jit_kernels_as_functions(device, rng):
    a = rng.standard_normal(40)
    ref = a * 3.0
    lanes = np.full(40, 0xDEAD, np.uint32)
    cuda.jit(_calls_a_kernel)[2, 32](a, lanes)
    np.testing.assert_array_equal(a, ref)
    np.testing.assert_array_equal(lanes, [(1 << (i % 32)) - 1 for i in range(40)])
    with pytest.raises(simt.CompileError, match="named here without a launch"):
        simt.kernel(_calls_a_kernel)[2, 32](a, lanes)


def _widen(x):
    return np.float32(x) * np.float32(3)


def test_device_function_code_alone(device, rng):
    ptx, returns = cuda.compile_ptx(_widen, (np.float16,), device=True)
    assert "cvt.f32.f16" in ptx and returns == np.float32
    f = cuda.jit("float32(float16)", device=True)(_widen)
    assert "cvt.f32.f16" in f.inspect_asm((np.float16,))
    assert "fpext half" in f.inspect_llvm((np.float16,))

    @cuda.jit
    def apply(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = f(x[i])

    x = rng.standard_normal(20).astype(np.float16)
    out = np.full(20, np.nan, np.float32)
    apply[1, 32](x, out)
    np.testing.assert_array_equal(out, x.astype(np.float32) * 3)


class Signature:
    """Stands for a numba Signature (``.args``, ``.return_type``)."""

    def __init__(self, *args):
        self.args, self.return_type = args, None


def test_inspect_results_are_looked_up_by_numba_signatures(device):
    from simt.ir import types as T
    types = (T.Array(np.dtype(np.float64), 1, "C"),)
    k = cuda.jit([types])(_scale_only)
    ptx = k.inspect_asm()
    assert ".entry" in ptx[Signature(*types)] and ptx[types] is ptx[Signature(*types)]


def _scale_only(a):
    a[0] *= 2.0


def _dynamic_and_constant(ary, out):
    N = 64                                   # numba propagates it: a shape here
    tile = cuda.shared.array(N, np.float64)
    dyn = cuda.shared.array(0, np.float32)  # numba's spelling of the dynamic array
    i = cuda.grid(1)
    tile[i % N] = ary[i]
    dyn[i] = ary[i] * 2
    cuda.syncthreads()
    out[i, 0] = tile[(i + 1) % N]
    out[i, 1] = dyn[N - 1 - i]


def test_numba_dynamic_shared_and_constant_locals(device, rng):
    x = rng.standard_normal(64)
    out = np.full((64, 2), np.nan)
    cuda.jit(_dynamic_and_constant)[1, 64, 0, 64 * 4](x, out)
    np.testing.assert_array_equal(out[:, 0], np.roll(x, -1))
    np.testing.assert_array_equal(out[:, 1], (x.astype(np.float32) * 2)[::-1])
    with pytest.raises(simt.CompileError, match="compile-time constant"):
        simt.kernel(_dynamic_and_constant)[1, 64, 256](x, out)


class CPUDispatcher:
    """Stands for what ``@numba.jit`` makes (numba is not a test dependency): a callable
    from numba's package with the Python function as ``py_func``."""

    __module__ = "numba.core.registry"

    def __init__(self, py_func):
        self.py_func = py_func

    def __call__(self, *args):
        return self.py_func(*args)


def _logic(x, y, z):
    return 4 * z * (2 * x - (4 * y) / 2 * math.pi)


def test_numba_cpu_functions_are_device_functions_in_cuda_jit_kernels(device, rng):
    logic = CPUDispatcher(_logic)

    def body(res, x, y, z):
        i = cuda.grid(1)
        if i < len(x):
            res[i] = logic(x[i], y[i], z[i])

    x, y, z = (rng.integers(-50, 50, 40).astype(np.int64) for _ in range(3))
    res = np.full(40, np.nan)
    cuda.jit(body).forall(40)(res, x, y, z)
    np.testing.assert_allclose(res, [logic(*v) for v in zip(x, y, z)], rtol=1e-15)
    with pytest.raises(simt.CompileError, match="cannot be called in a kernel"):
        simt.kernel(body)[1, 64](res, x, y, z)


@simt.kernel
def _cpow(x, y, r):
    i = simt.grid(1)
    if i < r.size:
        r[i] = x[i] ** y[i]
        if i == 0:
            r[i] **= y[i]                     # in place
            r[i] = pow(r[i], y[i])


@pytest.mark.parametrize("dtype,rtol", [(np.complex128, 1e-13), (np.complex64, 1e-6)])
def test_complex_power(device, rng, dtype, rtol):
    n = 64
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    y = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    x[1], y[2], x[3], y[3] = 0, 0, 0, 0
    r = np.full(n, np.nan, dtype)
    _cpow[1, n](x, y, r)
    with np.errstate(all="ignore"):
        ref = (x.astype(np.complex128) ** y.astype(np.complex128))
        ref[0] = (ref[0] ** complex(y[0])) ** complex(y[0])
    ref[1], ref[3] = 0, 1                      # 0 ** y, 0 ** 0
    np.testing.assert_allclose(r, ref.astype(dtype), rtol=rtol, atol=1e-30)


def _larger(a, b):
    return max(a, b)


@pytest.mark.parametrize("n", [0, 1, 17, 1025, 70001])
def test_cuda_reduce(device, rng, n):
    _sum_reduce = cuda.Reduce(lambda a, b: a + b)         # a lambda: from its source line
    _max_reduce = cuda.reduce(_larger)
    a = rng.standard_normal(n)
    np.testing.assert_allclose(_sum_reduce(a), a.sum(), rtol=1e-12, atol=1e-12)
    assert _max_reduce(cuda.to_device(a), init=-np.inf) == (a.max() if n else -np.inf)
    ints = rng.integers(-100, 100, n)
    assert _sum_reduce(ints, init=7) == ints.sum() + 7
    res = cuda.to_device(np.full(1, np.nan))
    assert _sum_reduce(a, res=res) is None
    np.testing.assert_allclose(res.copy_to_host()[0], a.sum(), rtol=1e-12, atol=1e-12)


def _ufuncs(r, s, x, y):
    np.sin(x, r)
    np.hypot(x, y, s)
    np.power(s, 2.0, s)


def test_ufuncs_on_arrays_loop_under_cuda_jit(device, rng):
    x = rng.standard_normal(37).astype(np.float32)
    y = rng.standard_normal(37).astype(np.float32)
    r, s = np.full(37, np.nan, np.float32), np.full(37, np.nan, np.float32)
    cuda.jit(_ufuncs)[1, 1](r, s, x, y)
    np.testing.assert_allclose(r, np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(s, np.hypot(x, y) ** 2, rtol=1e-5)
    with pytest.raises(simt.CompileError, match="takes 1 argument, got 2"):
        simt.kernel(_ufuncs)[1, 1](r, s, x, y)
