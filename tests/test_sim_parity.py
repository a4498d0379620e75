"""What the sim device runs as the CPU device does (issue 34 item 1): each test runs on
both, on random inputs against a NumPy reference, outputs poisoned before the launch."""
import re

import numpy as np
import pytest

import simt
from conftest import poison

BOTH = pytest.mark.parametrize("dev", ["cpu", "sim"])


def bf16(x):
    """float32 values rounded once to bfloat16, as float32."""
    return simt.from_bfloat16(simt.to_bfloat16(np.asarray(x, np.float32)))


def f32(x):
    return np.asarray(x, np.float32)


# ---------------------------------------------------------------- bfloat16 and float16
@simt.kernel
def bf16_intrinsics(a, b, c, out, bits):
    i = simt.grid(1)
    if i < a.size:
        out[0, i] = simt.hfma(a[i], b[i], c[i])
        out[1, i] = simt.hmax(a[i], b[i])
        out[2, i] = simt.hmin(a[i], c[i])
        out[3, i] = simt.hsqrt(simt.habs(c[i]))
        out[4, i] = simt.hneg(a[i]) * b[i]
        out[5, i] = simt.hfloor(a[i] * c[i])
        bits[i] = simt.bfloat16_as_ushort(simt.ushort_as_bfloat16(simt.bfloat16_as_ushort(a[i])))


@BOTH
def test_bfloat16_intrinsics(dev, rng):
    n = 50
    a, b = (simt.to_bfloat16(rng.uniform(0.5, 3, n)) for _ in range(2))
    c = simt.to_bfloat16(rng.uniform(-3, 3, n))
    out, bits = poison((6, n), simt.bfloat16), poison(n, np.uint16)
    with simt.use_device(dev):
        bf16_intrinsics[2, 32](a, b, c, out, bits)
    A, B, C = (simt.from_bfloat16(x).astype(np.float64) for x in (a, b, c))
    want = [bf16(f32(A * B + C)), np.maximum(A, B), np.minimum(A, C),
            bf16(np.sqrt(f32(np.abs(C)))), bf16(f32(-A * B)), np.floor(bf16(f32(A * C)))]
    np.testing.assert_array_equal(simt.from_bfloat16(out), np.array(want, np.float32))
    np.testing.assert_array_equal(bits, a.view(np.uint16))


@simt.kernel
def pair_intrinsics(p, q, out, h, hout):
    i = simt.grid(1)
    if i < p.size:
        out[0, i] = simt.hfma2(p[i], q[i], p[i])
        out[1, i] = simt.hmul2(simt.hneg2(p[i]), q[i]) + p[i]
        out[2, i] = simt.h2sqrt(simt.habs2(q[i]))
        hout[0, i] = simt.hfma2(h[i], h[i], h[i])
        hout[1, i] = simt.hmax2(h[i], simt.hneg2(h[i]))


@BOTH
def test_bfloat162_and_half2_lane_by_lane(dev, rng):
    n = 40
    p = simt.bfloat162.view(simt.to_bfloat16(rng.uniform(-3, 3, (n, 2))))
    q = simt.bfloat162.view(simt.to_bfloat16(rng.uniform(-3, 3, (n, 2))))
    h = simt.half2.view(rng.uniform(-3, 3, (n, 2)).astype(np.float16))
    out, hout = poison((3, n), simt.bfloat162.dtype), poison((2, n), simt.half2.dtype)
    with simt.use_device(dev):
        pair_intrinsics[2, 32](p, q, out, h, hout)
    P, Q = (simt.from_bfloat16(np.stack([x["x"], x["y"]], -1)).astype(np.float64)
            for x in (p, q))
    H = np.stack([h["x"], h["y"]], -1).astype(np.float64)
    want = [bf16(f32(P * Q + P)), bf16(f32(bf16(f32(-P * Q)) + P)),
            bf16(np.sqrt(f32(np.abs(Q))))]
    got = simt.from_bfloat16(np.stack([out["x"], out["y"]], -1))
    np.testing.assert_array_equal(got, np.array(want, np.float32))
    hwant = [f32(H * H + H).astype(np.float16), np.abs(H).astype(np.float16)]
    np.testing.assert_array_equal(np.stack([hout["x"], hout["y"]], -1), np.array(hwant))


@simt.kernel
def half_atomics(values, bf, h, bf2):
    i = simt.grid(1)
    if i < values.size:
        v = values[i]
        simt.atomic.add(bf, i % 4, simt.float2bfloat16(v))
        simt.atomic.add(h, i % 4, simt.float2half(v))
        simt.atomic.add(bf2, i % 2, simt.floats2bfloat162_rn(v, 2 * v))


@BOTH
def test_bfloat16_and_half_atomic_add(dev, rng):
    # small integers: every partial sum is exact, so the order of the adds does not matter
    values = rng.integers(0, 4, 96).astype(np.float32)
    bf, h = simt.to_bfloat16(np.ones(4)), np.ones(4, np.float16)
    bf2 = simt.bfloat162.view(simt.to_bfloat16(np.ones((2, 2))))
    with simt.use_device(dev):
        half_atomics[3, 32](values, bf, h, bf2)
    sums = values.reshape(-1, 4).sum(0) + 1
    np.testing.assert_array_equal(simt.from_bfloat16(bf), sums)
    np.testing.assert_array_equal(h, sums.astype(np.float16))
    pairs = values.reshape(-1, 2).sum(0)
    np.testing.assert_array_equal(simt.from_bfloat16(bf2["x"]), pairs + 1)
    np.testing.assert_array_equal(simt.from_bfloat16(bf2["y"]), 2 * pairs + 1)


# ---------------------------------------------------------------- vector types
@simt.kernel
def vector_math(a, b, s, out, dots, lens, norm, cr):
    i = simt.grid(1)
    if i < a.size:
        u, v = a[i], b[i]
        w = (u + v) * s - u / v
        w.y = -w.y
        out[i] = w
        dots[i] = simt.dot(u, v)
        lens[i] = simt.length(u)
        norm[i] = simt.normalize(v)
        cr[i] = simt.cross(simt.make_float3(u.x, u.y, u.z), simt.make_float3(v.x, v.y, v.z))


@BOTH
def test_float4_arithmetic_and_helper_math(dev, rng):
    n = 45
    a = simt.float4.view(rng.uniform(0.5, 2, (n, 4)).astype(np.float32))
    b = simt.float4.view(rng.uniform(0.5, 2, (n, 4)).astype(np.float32))
    s = np.float32(1.5)
    out, norm = poison(n, simt.float4.dtype), poison(n, simt.float4.dtype)
    dots, lens, cr = poison(n, np.float32), poison(n, np.float32), poison(n, simt.float3.dtype)
    with simt.use_device(dev):
        vector_math[2, 32](a, b, s, out, dots, lens, norm, cr)
    A = np.stack([a[c] for c in "xyzw"], -1)
    B = np.stack([b[c] for c in "xyzw"], -1)
    want = (A + B) * s - A / B
    want[:, 1] *= -1
    np.testing.assert_allclose(np.stack([out[c] for c in "xyzw"], -1), want, rtol=1e-6)
    np.testing.assert_allclose(dots, (A * B).sum(-1), rtol=1e-6)
    np.testing.assert_allclose(lens, np.sqrt((A * A).sum(-1)), rtol=1e-6)
    unit = B / np.sqrt((B * B).sum(-1, keepdims=True))
    np.testing.assert_allclose(np.stack([norm[c] for c in "xyzw"], -1), unit, rtol=1e-6)
    np.testing.assert_allclose(np.stack([cr[c] for c in "xyz"], -1),
                               np.cross(A[:, :3], B[:, :3]), rtol=1e-5, atol=1e-6)


@simt.kernel
def int_vectors(a, out, shift):
    i = simt.grid(1)
    if i < a.size:
        v = a[i]
        out[i] = v * simt.make_int2(3, -1) + shift
        out[i].y = simt.dot(v, v)


@BOTH
def test_int2_wraps_and_component_stores(dev, rng):
    n = 40
    a = simt.int2.view(rng.integers(-2 ** 31, 2 ** 31, (n, 2)).astype(np.int32))
    out = poison(n, simt.int2.dtype)
    with simt.use_device(dev):
        int_vectors[2, 32](a, out, simt.int2(7, -9))
    A = np.stack([a["x"], a["y"]], -1).astype(np.int64)
    wrap = lambda x: ((x + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)   # noqa: E731
    np.testing.assert_array_equal(out["x"], wrap(A[:, 0] * 3 + 7))
    np.testing.assert_array_equal(out["y"], wrap((A * A).sum(-1)))


@simt.kernel
def shared_components(src, out):
    s = simt.shared.array(16, simt.float2.dtype)
    t = simt.threadIdx.x
    if t % 2 == 0:
        s[t // 2].x = src[t]           # two threads write the two halves of one element
    else:
        s[t // 2].y = src[t]
    simt.syncthreads()
    out[t] = s[t // 2].x + s[t // 2]["y"]


@BOTH
def test_threads_writing_different_components_do_not_race(dev, rng):
    src = rng.uniform(-1, 1, 32).astype(np.float32)
    out = poison(32, np.float32)
    with simt.use_device(dev):
        shared_components[1, 32](src, out)
    np.testing.assert_array_equal(out, np.repeat(src[0::2] + src[1::2], 2))


@simt.kernel
def dim3_indices(out):
    g = simt.cg.this_thread_block()
    b, t, d = g.group_index(), g.thread_index(), g.group_dim()
    i = simt.blockIdx.x * 8 + simt.threadIdx.y * 4 + simt.threadIdx.x
    out[i] = simt.make_int4(b.x, t.x, t.y, d.x * d.y)


@BOTH
def test_group_index_and_thread_index(dev):
    out = poison(16, simt.int4.dtype)
    with simt.use_device(dev):
        dim3_indices[2, (4, 2)](out)
    blocks, lanes = np.arange(16) // 8, np.arange(16) % 8
    np.testing.assert_array_equal(out["x"], blocks)
    np.testing.assert_array_equal(out["y"], lanes % 4)
    np.testing.assert_array_equal(out["z"], lanes // 4)
    np.testing.assert_array_equal(out["w"], np.full(16, 8))


# ---------------------------------------------------------------- memory and the runtime
@simt.kernel
def pitched_rows(p, out, fill):
    x, y, z = simt.threadIdx.x, simt.threadIdx.y, simt.threadIdx.z
    out[z, y, x] = p[z, y, x] * 2 + fill[x]


@BOTH
def test_memsets_and_2d_3d_copies(dev, rng):
    src = rng.uniform(-1, 1, (2, 3, 5)).astype(np.float32)
    with simt.use_device(dev):
        fills = {dt: simt.memset(simt.device_array(5, dt), 0x41).copy_to_host()
                 for dt in (np.uint8, np.int16, np.uint32, np.float32)}
        p = simt.pitched_array((2, 3, 5), np.float32)
        simt.copy_3d(p, src)                 # the only writes of p: not uninitialized
        out = simt.pitched_array((2, 3, 5), np.float32)
        pitched_rows[1, (5, 3, 2)](p, out, simt.to_device(fills[np.float32]))
        back, plane = poison((2, 3, 5), np.float32), poison((3, 5), np.float32)
        simt.copy_3d(back, out)
        simt.copy_2d(plane, p[1])
    for dt in (np.uint8, np.int16, np.uint32):
        np.testing.assert_array_equal(fills[dt], np.full(5, 0x41, dt))
    np.testing.assert_array_equal(fills[np.float32], np.full(5, 0x41, np.float32))
    np.testing.assert_array_equal(back, src * 2 + np.float32(0x41))
    np.testing.assert_array_equal(plane, src[1])


@simt.kernel
def shared_user(a):
    s = simt.shared.array(256, np.float32)
    s[simt.threadIdx.x] = 1.0
    a[0] = s[0]


@BOTH
def test_limits_flags_occupancy_and_host_register(dev):
    with simt.use_device(dev) as device:
        # (not malloc_heap_size: the cpu device fixes it once a kernel of the session used it)
        pending = simt.get_limit("dev_runtime_pending_launch_count")
        simt.set_limit("dev_runtime_pending_launch_count", 4096)
        assert simt.get_limit("dev_runtime_pending_launch_count") == 4096
        simt.set_limit("dev_runtime_pending_launch_count", pending)
        with pytest.raises(simt.NotSupportedError, match="'printf_fifo_size': its print"):
            simt.set_limit("printf_fifo_size", 4096)
        simt.set_device_flags("schedule_yield")
        simt.set_device_flags("schedule_auto")
        a = np.zeros(1, np.float32)
        props = device.properties
        blocks = shared_user.max_active_blocks_per_multiprocessor(128, args=(a,))
        assert blocks == min(props.max_blocks_per_multiprocessor,
                             props.max_threads_per_multiprocessor // 128,
                             props.shared_memory_per_multiprocessor // 1024)
        grid, block = shared_user.max_potential_block_size(args=(a,))
        assert block % 32 == 0 and grid % props.multiprocessor_count == 0
        h = np.zeros(64)
        simt.host_register(h)
        with pytest.raises(simt.CudaError, match="registered already"):
            simt.host_register(h[8:])
        simt.host_unregister(h)
        with pytest.raises(simt.CudaError, match="not registered"):
            simt.host_unregister(h)


@simt.kernel
def norms(v, out):
    i = simt.grid(1)
    if i < v.shape[0]:
        p = v[i]
        out[i] = p.x * p.x + p.y * p.y + p.z * p.z + p.w * p.w


def test_sim_refuses_a_misaligned_vector_array_as_checked_mode_does():
    with simt.use_device("sim"):
        raw = simt.to_device(np.ones(33, np.float32))
        v = raw[1:].reshape(8, 4).retyped((8,), simt.float4.dtype, (16,))   # 4 bytes off
        with pytest.raises(simt.MisalignedAddressError, match="argument 'v'.* 16 bytes"):
            norms[1, 8](v, simt.device_array(8, np.float32))


def test_what_the_sim_refuses_says_why_and_what_to_do():
    """The error of a runtime feature the sim device lacks (none of the runtime's since
    textures and mipmapped arrays run there: checked through the backend's hook)."""
    with simt.use_device("sim") as device:
        error = device.backend.unsupported("a feature")
        assert isinstance(error, simt.NotSupportedError)
        assert re.search("a feature yet: .* Limits.* run this on the 'cpu' device", str(error))