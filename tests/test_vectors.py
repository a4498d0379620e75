"""CUDA's vector types (lang/vectors.py): components, make_*, helper_math arithmetic, arrays
of them as NumPy structs or (n, 4) views, vector kernel arguments, device functions, one
vector access per element on the GPU, dim3 group indices and textures returning them."""
import re

import numpy as np
import pytest

import simt
from simt.backends.cuda.compile import compile_kernel
from simt.compiler.options import CompileOptions
from simt.ir import types as T
from conftest import poison


def components(a, n):
    """A (len, n) float or int view of an array of a vector type."""
    return np.stack([a[c] for c in "xyzw"[:n]], axis=-1)


@simt.device
def scaled(v, s):
    return v * s


@simt.kernel
def float4_math(a, b, out, s, c):
    i = simt.grid(1)
    if i < out.shape[0]:
        v = a[i] + b[i]
        w = scaled(v, 2.0) - simt.make_float4(1.0, 2, 3, 4)
        w.x += c.y
        x, y, z, q = w
        out[i] = simt.float4(x, y * s, -z / b[i].w, simt.dot(a[i], b[i]) + q * 0)


def test_float4_components_arithmetic_and_device_functions(device, rng):
    n = 50
    a = simt.float4.view(rng.uniform(-2, 2, (n, 4)).astype(np.float32))
    b = simt.float4.view(rng.uniform(0.5, 2, (n, 4)).astype(np.float32))
    out = poison(n, simt.float4.dtype)
    c = simt.make_float2(5.5, -1.25)
    s = np.float32(rng.uniform(1, 3))
    float4_math[2, 32](a, b, out, s, c)
    A, B = components(a, 4).astype(np.float64), components(b, 4).astype(np.float64)
    w = (A + B) * 2 - [1, 2, 3, 4]
    w[:, 0] += -1.25
    want = np.stack([w[:, 0], w[:, 1] * s, -w[:, 2] / B[:, 3], (A * B).sum(1)], axis=1)
    np.testing.assert_allclose(components(out, 4), want, rtol=2e-6, atol=2e-6)


@simt.kernel
def mix(a, out, k):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] * k + a[i] - a[out.shape[0] - 1 - i]


@pytest.mark.parametrize("name", ["char4", "ushort2", "uint3", "longlong2", "double2"])
def test_integer_and_double_vectors(device, rng, name):
    cls = getattr(simt, name)
    t = cls._simt_type
    n = 40
    raw = rng.integers(-50, 50, (n, t.n)) if t.kind != "f" else rng.uniform(-9, 9, (n, t.n))
    a = cls.view(np.ascontiguousarray(raw.astype(t.dtype)))
    out = poison(n, cls.dtype)
    k = t.dtype.type(3)
    mix[2, 32](simt.to_device(a), out, k)
    A = components(a, t.n)
    with np.errstate(over="ignore"):
        want = A * k + A - A[::-1]
    if t.kind == "f":         # a * k + a may be one fma on the GPU
        np.testing.assert_allclose(components(out, t.n), want, rtol=1e-15)
    else:
        np.testing.assert_array_equal(components(out, t.n), want.astype(t.dtype))


@simt.kernel
def cross_length(a, b, out, lengths):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = simt.cross(simt.normalize(a[i]), b[i])
        lengths[i] = simt.length(a[i])


def test_cross_normalize_length(device, rng):
    n = 33
    a = simt.double3.view(rng.uniform(-3, 3, (n, 3)))
    b = simt.double3.view(rng.uniform(-3, 3, (n, 3)))
    out, lengths = poison(n, simt.double3.dtype), poison(n, np.float64)
    cross_length[2, 32](a, b, out, lengths)
    A, B = components(a, 3), components(b, 3)
    norm = np.sqrt((A * A).sum(1))
    np.testing.assert_allclose(lengths, norm, rtol=1e-15)
    np.testing.assert_allclose(components(out, 3), np.cross(A / norm[:, None], B), rtol=1e-12,
                               atol=1e-14)


@simt.kernel
def block_coords(out):
    g = simt.cg.this_thread_block()
    if g.thread_rank() == 0:
        b = g.group_index()
        t = g.thread_index()
        out[b.y, b.x] = simt.make_int4(b.x, b.y, b.z + t.x + t.y, g.group_dim().x)


def test_group_index_is_a_dim3(device):
    out = poison((3, 4), simt.int4.dtype)
    block_coords[(4, 3), (8, 2)](out)
    y, x = np.mgrid[0:3, 0:4]
    np.testing.assert_array_equal(components(out, 4), np.stack([x, y, 0 * x, 8 + 0 * x], -1))


@simt.kernel
def shared_vectors(a, out):
    buf = simt.shared.array(64, simt.float2)
    local = simt.local.array(2, simt.float2)
    i = simt.threadIdx.x
    k = simt.make_int3(i, 1, 2)
    v = a[i] * 2.0                       # lives across the barrier
    local[0] = a[i]
    local[1] = simt.make_float2(local[0].y, local[0].x)
    buf[i] = local[1]
    simt.syncthreads()
    out[i] = buf[63 - k.x] + (v - a[i] - a[i])


def test_shared_and_local_arrays_of_vectors(device, rng):
    a = simt.float2.view(rng.standard_normal((64, 2)).astype(np.float32))
    out = poison(64, simt.float2.dtype)
    shared_vectors[1, 64](a, out)
    np.testing.assert_array_equal(components(out, 2), components(a, 2)[::-1, ::-1])


@simt.kernel
def texels(tex, out):
    i = simt.threadIdx.x
    j = simt.blockIdx.x
    v = simt.tex2D(tex, i + 0.5, j + 0.5)
    out[j, i] = v.w * 1000 + v.z * 100 + v.y * 10 + v.x


def test_four_channel_texture_returns_float4(device, rng):
    host = rng.integers(0, 9, (3, 5, 4)).astype(np.float32)
    array = simt.CudaArray((3, 5), np.float32, channels=4)
    array.copy_from(host)
    out = poison((3, 5), np.float32)
    texels[3, 5](simt.Texture(array), out)
    np.testing.assert_array_equal(out, host @ np.array([1, 10, 100, 1000], np.float32))


# ------------------------------------------------------------------ the GPU's vector accesses
def ptx(kernel, types):
    return compile_kernel(kernel.typed_ir(types), CompileOptions(boundscheck=False),
                          "sm_90").ptx


@simt.kernel
def copy(a, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = a[i]


@pytest.mark.parametrize("name, load, store", [
    ("float4", r"ld\.global\.v4\.(f32|b32)", r"st\.global\.v4\.(f32|b32)"),
    ("double2", r"ld\.global\.v2\.(f64|b64)", r"st\.global\.v2\.(f64|b64)"),
    ("uchar4", r"ld\.global\.(v4\.(u8|b8)|(u32|b32))", r"st\.global\.(v4\.(u8|b8)|(u32|b32))"),
    ("half2", r"ld\.global\.(b32|v2\.(b16|f16))", r"st\.global\.(b32|v2\.(b16|f16))")])
def test_an_element_is_one_vector_access(name, load, store):
    array = T.Array(getattr(simt, name).dtype, 1, "C")
    text = ptx(copy, [array, array])
    assert len(re.findall(r"\bld\.global", text)) == 1 and re.search(load, text), text
    assert len(re.findall(r"\bst\.global", text)) == 1 and re.search(store, text), text


@simt.kernel
def element_components(a, src):
    i = simt.grid(1)
    if i < src.shape[0]:
        k = i // 2
        if i % 2 == 0:
            a[k].x = src[i]                       # threads 2k and 2k+1 share element k
        else:
            a[k]["y"] += src[i]


def test_element_components_are_written_alone(device, rng):
    """a[i].x = v writes x's bytes alone, as CUDA does (it was refused: a read-modify-write
    of the element would lose the other thread's write of y)."""
    n = 300
    a = simt.float2.view(rng.uniform(-2, 2, (n, 2)).astype(np.float32))
    src = rng.uniform(-2, 2, 2 * n).astype(np.float32)
    want = components(a, 2).copy()
    element_components[(2 * n + 127) // 128, 128](a, src)
    want[:, 0] = src[0::2]
    want[:, 1] += src[1::2]
    np.testing.assert_array_equal(components(a, 2), want)
    text = ptx(element_components, [T.Array(simt.float2.dtype, 1, "C"),
                                    T.Array(np.float32, 1, "C")])
    stores = re.findall(r"\bst\.global\S*", text)
    assert sorted(stores) == sorted(["st.global.f32"] * 2) or \
        sorted(stores) == sorted(["st.global.b32"] * 2), stores


# ------------------------------------------------------------------ host side and errors
def test_host_values_dtypes_and_views():
    v = simt.make_float4(1, 2.5, 3, 4)
    assert isinstance(v, simt.float4) and (v.x, v.y, v.w) == (1.0, 2.5, 4.0)
    assert v.x.dtype == np.float32 and tuple(v) == (1, 2.5, 3, 4)
    assert simt.int2(7.9, -1).x == 7
    mine = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("w", "<f4")], align=True)
    assert simt.float4.dtype == mine and np.dtype(simt.float4) == mine
    assert simt.long2.dtype == simt.longlong2.dtype and simt.double2.dtype.itemsize == 16
    raw = np.zeros(12, np.float32)
    start = 1 if raw.ctypes.data % 16 == 0 else 0          # a start that is not 16-aligned
    with pytest.raises(ValueError, match="not aligned to 16 bytes"):
        simt.float4.view(raw[start:start + 8].reshape(2, 4))
    with pytest.raises(ValueError, match="last axis"):
        simt.float4.view(np.zeros((3, 3), np.float32))
    with pytest.raises(TypeError, match="4 components"):
        simt.float4(1, 2)


@simt.kernel
def int_division(a, out):
    out[0] = a[0] / a[1]


@simt.kernel
def mixed(a, b, out):
    out[0] = a[0] + b[0]


@simt.kernel
def bad_component(a, out):
    out[0] = a[0].w


def test_errors_name_the_problem(device):
    i2, f2 = np.zeros(2, simt.int2), np.zeros(2, simt.float2)
    with pytest.raises(simt.CompileError, match=r"operator 'truediv' is not defined for int2 "
                       r"\(vector types offer \+ - \*"):
        int_division[1, 1](i2, i2)
    with pytest.raises(simt.CompileError, match="two vectors of one type, got int2 and float2"):
        mixed[1, 1](i2, f2, f2)
    with pytest.raises(simt.CompileError, match="int2 has no attribute 'w'"):
        bad_component[1, 1](i2, i2)
