"""The kernel language's core: indices, grids, arrays, tuples and control flow (API.md 1-2)."""

import numpy as np
import pytest

import simt
from conftest import poison, random_array
from simt import blockDim, blockIdx, gridDim, threadIdx


@simt.kernel
def copy1(a, out):
    i = blockIdx.x * blockDim.x + threadIdx.x
    if i < out.shape[0]:
        out[i] = a[i]


def test_vector_copy_numpy_and_device_arrays(device, rng):
    a = random_array(rng, 100, np.float32)
    out = poison(100, np.float32)
    copy1[4, 32](a, out)                       # NumPy arrays: copied in and back
    np.testing.assert_array_equal(out, a)
    d_out = simt.to_device(poison(100, np.float32))
    copy1[4, 32](simt.to_device(a), d_out)
    np.testing.assert_array_equal(d_out.copy_to_host(), a)


@simt.kernel
def record_indices(out):
    t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x
    b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x
    g = b * (blockDim.x * blockDim.y * blockDim.z) + t
    out[g, 0] = threadIdx.x
    out[g, 1] = threadIdx.y
    out[g, 2] = threadIdx.z
    out[g, 3] = blockIdx.x
    out[g, 4] = blockIdx.y
    out[g, 5] = blockIdx.z
    out[g, 6] = blockDim.x * 100 + blockDim.y * 10 + blockDim.z
    out[g, 7] = gridDim.x * 100 + gridDim.y * 10 + gridDim.z


@pytest.mark.parametrize("grid, block", [(3, 5), ((2, 3), (4, 2)), ((2, 2, 3), (3, 2, 2)),
                                         (simt.dim3(2, 1, 2), simt.dim3(1, 3, 2))], ids=str)
def test_index_variables(device, grid, block):
    g = tuple(grid) if isinstance(grid, tuple) else (grid,)
    b = tuple(block) if isinstance(block, tuple) else (block,)
    g, b = (g + (1, 1))[:3], (b + (1, 1))[:3]
    if isinstance(grid, simt.dim3):
        g, b = (grid.x, grid.y, grid.z), (block.x, block.y, block.z)
    n = int(np.prod(g) * np.prod(b))
    out = poison((n, 8), np.int32)
    record_indices[grid, block](out)
    expect = []
    for bz in range(g[2]):
        for by in range(g[1]):
            for bx in range(g[0]):
                for tz in range(b[2]):
                    for ty in range(b[1]):
                        for tx in range(b[0]):
                            expect.append([tx, ty, tz, bx, by, bz, b[0] * 100 + b[1] * 10 + b[2],
                                           g[0] * 100 + g[1] * 10 + g[2]])
    np.testing.assert_array_equal(out, np.array(expect, np.int32))


@simt.kernel
def grid1(out, sizes):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = i
        sizes[i] = simt.gridsize(1)


@simt.kernel
def grid2(out):
    x, y = simt.grid(2)
    w, h = simt.gridsize(2)
    if x < out.shape[1] and y < out.shape[0]:
        out[y, x] = y * w + x + h * 0


@simt.kernel
def grid3(out):
    x, y, z = simt.grid(3)
    sx, sy, sz = simt.gridsize(3)
    if x < out.shape[2] and y < out.shape[1] and z < out.shape[0]:
        out[z, y, x] = (z * sy + y) * sx + x + sz * 0


def test_grid_and_gridsize(device):
    out, sizes = poison(50, np.int64), poison(50, np.int64)
    grid1[4, 16](out, sizes)
    np.testing.assert_array_equal(out, np.arange(50))
    np.testing.assert_array_equal(sizes, np.full(50, 64))
    out2 = poison((6, 8), np.int64)
    grid2[(2, 3), (4, 2)](out2)
    np.testing.assert_array_equal(out2, np.arange(48).reshape(6, 8))
    out3 = poison((2, 4, 4), np.int64)
    grid3[(2, 2, 1), (2, 2, 2)](out3)
    np.testing.assert_array_equal(out3, np.arange(32).reshape(2, 4, 4))


@simt.kernel
def scale_1d(a, out):
    i = simt.grid(1)
    if i < out.size:
        out[i] = a[i] * 2


@simt.kernel
def scale_2d(a, out):
    i = simt.grid(1)
    if i < out.size:
        r = i // out.shape[1]
        c = i % out.shape[1]
        out[r, c] = a[r, c] * 2


@simt.kernel
def scale_3d(a, out):
    i = simt.grid(1)
    if i < out.size:
        k = i % out.shape[2]
        j = i // out.shape[2] % out.shape[1]
        h = i // (out.shape[2] * out.shape[1])
        out[h, j, k] = a[h, j, k] * 2


@simt.kernel
def scale_4d(a, out):
    i = simt.grid(1)
    if i < out.size:
        idx = (i // (out.shape[3] * out.shape[2] * out.shape[1]),
               i // (out.shape[3] * out.shape[2]) % out.shape[1],
               i // out.shape[3] % out.shape[2], i % out.shape[3])
        out[idx] = a[idx] * 2                 # a tuple as the index


SCALE = {1: scale_1d, 2: scale_2d, 3: scale_3d, 4: scale_4d}


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
@pytest.mark.parametrize("shape", [(13,), (3, 5), (2, 3, 4), (2, 2, 3, 2)], ids=str)
def test_arrays_any_ndim_and_layout(device, rng, shape, layout):
    big = random_array(rng, tuple(2 * s for s in shape), np.float64)
    a = big[tuple(slice(None, None, 2) for _ in shape)] if layout == "strided" else \
        np.asfortranarray(big[tuple(slice(0, s) for s in shape)]) if layout == "F" else \
        np.ascontiguousarray(big[tuple(slice(0, s) for s in shape)])
    out = poison(shape, np.float64)
    out = np.asfortranarray(out) if layout == "F" else out
    SCALE[len(shape)][4, 32](simt.to_device(a), out)
    np.testing.assert_array_equal(out, a * 2)


@simt.kernel
def attributes(a, out):
    out[0] = a.shape[0]
    out[1] = a.shape[1]
    out[2] = a.size
    out[3] = a.ndim
    out[4] = len(a)


def test_shape_size_ndim(device, rng):
    out = poison(5, np.int64)
    attributes[1, 1](random_array(rng, (3, 7), np.int16), out)
    np.testing.assert_array_equal(out, [3, 7, 21, 2, 3])


@simt.device
def divmod_pair(x, y):
    return x // y, x % y


@simt.kernel
def tuples(a, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        t = (a[i], 7)
        q, r = divmod_pair(t[0], t[1])
        p = q, r
        q, r = r, q                    # swap through a tuple
        out[i, 0] = p[0]
        out[i, 1] = p[1]
        out[i, 2] = q


def test_tuples(device, rng):
    a = random_array(rng, 40, np.int64)
    out = poison((40, 3), np.int64)
    tuples[2, 32](a, out)
    np.testing.assert_array_equal(out, np.stack([a // 7, a % 7, a % 7], axis=1))


@simt.kernel
def branches(a, out):
    i = simt.grid(1)
    if i >= a.shape[0]:
        return                          # early return
    x = a[i]
    if x < -50:
        out[i] = 1
    elif x < 0:
        out[i] = 2
    elif x == 0 or x > 1000:
        out[i] = 3
    elif not (x < 50):
        out[i] = 4
    else:
        out[i] = 5


def test_if_elif_else_and_early_return(device, rng):
    a = random_array(rng, 70, np.int32)
    out = poison(80, np.int32)
    branches[3, 32](a, out)
    expect = np.select([a < -50, a < 0, a >= 50], [1, 2, 4], 5)
    np.testing.assert_array_equal(out[:70], expect)
    np.testing.assert_array_equal(out[70:], poison(10, np.int32))    # returned threads wrote nothing


@simt.kernel
def loops(a, n, step, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        s0 = 0
        for k in range(n):
            s0 += a[i] * k
        s1 = 0
        for k in range(n, -3, -2):               # negative literal step
            s1 += k
        s2 = 0
        for k in range(1, n * 3, step):          # variable step
            s2 += k
        s3 = 0
        for k in range(n * 2, 0, -step):         # variable negative step
            s3 += k
        w = 0
        k = 0
        while k < 100:
            k += 1
            if k % 3 == 0:
                continue
            if k > n + a[i] % 5:
                break
            w += k
        out[i, 0] = s0
        out[i, 1] = s1
        out[i, 2] = s2
        out[i, 3] = s3
        out[i, 4] = w


def reference_loops(x, n, step):
    w, k = 0, 0
    while k < 100:
        k += 1
        if k % 3 == 0:
            continue
        if k > n + x % 5:
            break
        w += k
    return [x * sum(range(n)), sum(range(n, -3, -2)), sum(range(1, n * 3, step)),
            sum(range(n * 2, 0, -step)), w]


@pytest.mark.parametrize("n, step", [(0, 1), (5, 2), (9, 4), (-2, 3)])
def test_for_while_break_continue(device, rng, n, step):
    a = random_array(rng, 20, np.int64)
    out = poison((20, 5), np.int64)
    loops[1, 32](a, n, step, out)
    expect = np.array([reference_loops(int(x), n, step) for x in a])
    np.testing.assert_array_equal(out, expect)


@simt.device
def cube(x):
    return x * square(x)


@simt.device
def square(x):
    return x * x


@simt.device
def poly(x):
    if x < 0:
        return -cube(x)
    return cube(x) + square(x) + 1


@simt.kernel
def call_chain(a, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[i] = poly(a[i])


def test_device_functions_call_device_functions(device, rng):
    a = random_array(rng, 33, np.float64)
    out = poison(33, np.float64)
    call_chain[2, 32](a, out)
    np.testing.assert_allclose(out, np.where(a < 0, -a ** 3, a ** 3 + a ** 2 + 1), rtol=1e-14)


@simt.kernel
def read_bools(out, a, copy):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[i, 0] = 1 if a[i] else 0
        out[i, 1] = 1 if simt.ldg(a, i) else 0
        copy[i] = a[i]             # stored as 0 or 1


@simt.kernel
def read_bool_fields(out, recs):
    i = simt.grid(1)
    if i < recs.shape[0]:
        out[i] = 1 if recs[i].flag else 0
        recs[i].copy = recs[i].flag


def test_a_bool_byte_other_than_1_reads_as_true(device):
    # NumPy reads any nonzero byte as True; a trunc to i1 read 2 as False (issue 33)
    raw = np.array([0, 1, 2, 255, 128, 3], np.uint8)
    want = (raw != 0).astype(np.int32)
    out, copy = poison((6, 2), np.int32), np.zeros(6, np.bool_)
    read_bools[1, 8](out, raw.view(np.bool_), copy)
    np.testing.assert_array_equal(out, np.stack([want] * 2, axis=1))
    np.testing.assert_array_equal(copy.view(np.uint8), want)
    recs = np.zeros(6, np.dtype([("x", "<i4"), ("flag", "?"), ("copy", "?")], align=True))
    recs.view(np.uint8).reshape(6, -1)[:, 4] = raw
    out = poison(6, np.int32)
    read_bool_fields[1, 8](out, recs)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(recs["copy"].view(np.uint8), want)


def test_bool_loads_compare_the_byte_with_zero_in_ptx():
    ptx = copy1.ptx("(bool[::1], int32[::1])")
    assert "setp.ne.b16" in ptx


@simt.device
def δ(x):
    return x + 1.0


@simt.kernel
def κ(a):
    ψ = simt.shared.array(8, np.float32)
    i = simt.grid(1)
    ψ[simt.threadIdx.x] = 2.0
    simt.syncthreads()
    if i < a.shape[0]:
        a[i] = δ(a[i]) + ψ[simt.threadIdx.x]


def test_non_ascii_kernel_names(device):
    # the symbol of a kernel named κ was a raw UnicodeEncodeError from llvmlite's JIT (issue 33)
    a = np.arange(8, dtype=np.float32)
    κ[1, 8](a)
    np.testing.assert_array_equal(a, np.arange(8) + 3.0)


def test_non_ascii_names_get_ascii_ptx_symbols():
    # LLVM's NVPTX back end stopped the process ("Symbol name with unsupported characters")
    ptx = κ.ptx("(float32[::1],)")
    assert ptx.isascii()
    assert ".entry simt_kernel_u03ba_" in ptx and ptx == κ.ptx("(float32[::1],)")


def _chain_module(tmp_path, n):
    """A module of device functions f0 -> f1 -> ... -> f{n} and a kernel k calling f0."""
    import importlib.util
    src = ["import simt\n"] + [f"@simt.device\ndef f{i}(x):\n    return f{i + 1}(x) + 1\n"
                               for i in range(n)]
    src.append(f"@simt.device\ndef f{n}(x):\n    return x\n\n"
               "@simt.kernel\ndef k(a):\n    a[0] = f0(a[0])\n")
    path = tmp_path / f"chain{n}.py"
    path.write_text("\n".join(src))
    spec = importlib.util.spec_from_file_location(f"chain{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_deep_chain_of_device_functions(device, tmp_path):
    # 1000 deep was a raw RecursionError (issue 33); deeper is a CompileError that says so
    a = np.zeros(1, np.int64)
    _chain_module(tmp_path, 1000).k[1, 1](a)
    assert a[0] == 1000
    with pytest.raises(simt.CompileError, match=r"nest 1200 deep here, from 'k' \(k -> f0"):
        _chain_module(tmp_path, 1300).k[1, 1](a)


@simt.kernel
def printer(a):
    i = simt.grid(1)
    if i < 3:
        print("thread", i, a[i], 2.5)


def test_print(device, capfd):
    capfd.readouterr()
    printer[1, 4](np.array([1.5, -2.0, 0.25]))
    simt.synchronize()
    lines = sorted(capfd.readouterr().out.splitlines())
    assert lines == ["thread 0 1.5 2.5", "thread 1 -2 2.5", "thread 2 0.25 2.5"]


@simt.kernel
def asserting(a):
    i = simt.grid(1)
    if i < a.shape[0]:
        assert a[i] > 0, "values must be positive"


def test_assert_raises_device_assert_error(device):
    a = np.ones(40, np.float32)
    asserting[2, 32](a)                            # passes
    a[37] = -1.0
    with pytest.raises(simt.DeviceAssertError) as info:
        asserting[2, 32](a)
        simt.synchronize()
    message = str(info.value)
    assert "values must be positive" in message and "test_kernels_basic.py" in message
    assert "(1, 0, 0)" in message and "(5, 0, 0)" in message      # block 1, thread 5


@simt.kernel
def slices_in_kernel(a, m, out):
    if threadIdx.x == 0:
        out[0], out[1] = a[3:].shape[0], a[3:][8]
        out[2], out[3] = a[:-2].shape[0], a[:-2][9]
        out[4], out[5] = a[1:10:3].shape[0], a[1:10:3][2]
        out[6], out[7] = a[::-1].shape[0], a[::-1][11]
        out[8], out[9] = m[1, 2:].shape[0], m[1, 2:][2]
        out[10], out[11] = m[:, 1].shape[0], m[:, 1][3]
        out[12], out[13] = a[-4:-1].shape[0], a[-4:-1][2]
        out[14] = a[20:30].shape[0]
        tail = a[a.shape[0] - 2:]
        tail[0] = -1                        # writes through a view reach the parent


def test_slices_in_kernels_follow_python(device, rng):
    a = random_array(rng, 12, np.int64)
    m = random_array(rng, (4, 5), np.int64)
    out = poison(15, np.int64)
    host = a.copy()
    slices_in_kernel[1, 1](a, m, out)
    views = (host[3:], host[:-2], host[1:10:3], host[::-1], m[1, 2:], m[:, 1], host[-4:-1])
    expect = [x for v in views for x in (len(v), v[-1])] + [0]
    np.testing.assert_array_equal(out, expect)
    host[-2] = -1
    np.testing.assert_array_equal(a, host)
