"""Record what a GPU's texture unit returns, independently of simt (CuPy texture objects
and CUDA C kernels), so that simt's CPU model of appendix H can be checked against it.

Usage (on a GPU machine): python tests/gpu_texture_probe.py OUT.npz
                          python tests/gpu_texture_probe.py --snorm OUT.npz
The second form records the arithmetic of linear filtering of signed normalized texels
(see snorm_probe below).
"""
import sys

import numpy as np

SOURCE = r"""
extern "C" __global__ void f1(cudaTextureObject_t t, const float* x, const float* y,
                              const float* z, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, x[i]);
}
extern "C" __global__ void f2(cudaTextureObject_t t, const float* x, const float* y,
                              const float* z, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, x[i], y[i]);
}
extern "C" __global__ void f3(cudaTextureObject_t t, const float* x, const float* y,
                              const float* z, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(t, x[i], y[i], z[i]);
}
extern "C" __global__ void g2(cudaTextureObject_t t, const float* x, const float* y,
                              const float* z, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2Dgather<float4>(t, x[i], y[i], 0);
}
// snorm_probe: pair k of a 1D texture laid out (p0, q0, p1, q1, ...), every weight a/256
extern "C" __global__ void pairs1(cudaTextureObject_t t, float* out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        int k = (int)(i / 257), a = (int)(i % 257);
        out[i] = tex1D<float>(t, 2 * k + 0.5f + a / 256.0f);
    }
}
// snorm_probe: 2x2 block (bx, by) of a 2D texture, every pair of weights (a/256, b/256)
extern "C" __global__ void quads2(cudaTextureObject_t t, float* out, long long n, int bw) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        int blk = (int)(i / 66049), r = (int)(i % 66049), a = r / 257, b = r % 257;
        float x = 2 * (blk % bw) + 0.5f + a / 256.0f, y = 2 * (blk / bw) + 0.5f + b / 256.0f;
        out[i] = tex2D<float>(t, x, y);
    }
}
"""

# (name, dtype, shape (numpy order), filter, address, normalized, read mode, gather)
CONFIGS = [
    ("f32_2d_linear_clamp", "float32", (13, 17), "linear", "clamp", False, "element", False),
    ("f32_2d_point_clamp", "float32", (13, 17), "point", "clamp", False, "element", False),
    ("f32_2d_linear_border", "float32", (13, 17), "linear", "border", False, "element", False),
    ("f32_2d_point_wrap_n", "float32", (13, 17), "point", "wrap", True, "element", False),
    ("f32_2d_linear_wrap_n", "float32", (13, 17), "linear", "wrap", True, "element", False),
    ("f32_2d_point_mirror_n", "float32", (13, 17), "point", "mirror", True, "element", False),
    ("f32_2d_linear_mirror_n", "float32", (13, 17), "linear", "mirror", True, "element", False),
    ("f32_2d_linear_clamp_n", "float32", (13, 17), "linear", "clamp", True, "element", False),
    ("f32_2d_point_border_n", "float32", (13, 17), "point", "border", True, "element", False),
    ("u8_2d_linear_clamp", "uint8", (13, 17), "linear", "clamp", False, "normalized", False),
    ("u8_2d_point_clamp", "uint8", (13, 17), "point", "clamp", False, "normalized", False),
    ("i8_2d_linear_clamp", "int8", (13, 17), "linear", "clamp", False, "normalized", False),
    ("u16_2d_linear_clamp", "uint16", (13, 17), "linear", "clamp", False, "normalized", False),
    ("i16_2d_point_clamp", "int16", (13, 17), "point", "clamp", False, "normalized", False),
    ("f16_2d_linear_clamp", "float16", (13, 17), "linear", "clamp", False, "element", False),
    ("f32_1d_linear_clamp", "float32", (37,), "linear", "clamp", False, "element", False),
    ("f32_3d_linear_clamp", "float32", (5, 6, 7), "linear", "clamp", False, "element", False),
    ("f32_3d_linear_border", "float32", (5, 6, 7), "linear", "border", False, "element", False),
    ("f32_2d_gather_clamp", "float32", (13, 17), "point", "clamp", False, "element", True),
    ("f32_2d_gather_border", "float32", (13, 17), "point", "border", False, "element", True),
]
N = 20000


def texels(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def coordinates(rng, shape, normalized):
    coords = []
    for n in reversed(shape):                 # x follows the last axis
        whole = rng.integers(-3, n + 3, size=N).astype(np.float64)
        frac = rng.integers(0, 1024, size=N) / 1024.0          # near the 1/256 steps too
        frac[: N // 2] = rng.random(N // 2)
        c = whole + frac
        coords.append((c / n if normalized else c).astype(np.float32))
    while len(coords) < 3:
        coords.append(np.zeros(N, np.float32))
    return coords


def _texture(data, filt, address, normalized, read, gather=False):
    """A CuPy texture object over a CUDA array holding ``data`` (NumPy order); returns
    (texture object, array): keep the array alive while the texture is used."""
    from cupy.cuda import runtime, texture
    kinds = {"f": runtime.cudaChannelFormatKindFloat, "i": runtime.cudaChannelFormatKindSigned,
             "u": runtime.cudaChannelFormatKindUnsigned}
    modes = {"clamp": runtime.cudaAddressModeClamp, "wrap": runtime.cudaAddressModeWrap,
             "mirror": runtime.cudaAddressModeMirror, "border": runtime.cudaAddressModeBorder}
    dt = data.dtype
    ch = texture.ChannelFormatDescriptor(8 * dt.itemsize, 0, 0, 0, kinds[dt.kind])
    dims = list(reversed(data.shape)) + [0] * (3 - data.ndim)
    flags = 0x08 if gather else 0      # cudaArrayTextureGather
    arr = texture.CUDAarray(ch, dims[0], dims[1], dims[2], flags)
    arr.copy_from(np.ascontiguousarray(data))
    res = texture.ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=arr)
    tdesc = texture.TextureDescriptor(
        (modes[address],) * 3,
        runtime.cudaFilterModeLinear if filt == "linear" else runtime.cudaFilterModePoint,
        runtime.cudaReadModeNormalizedFloat if read == "normalized" else
        runtime.cudaReadModeElementType, normalizedCoords=int(normalized))
    return texture.TextureObject(res, tdesc), arr


def _record(module, rng, configs, results, keep=None):
    import cupy as cp
    for name, dtype, shape, filt, address, normalized, read, gather in configs:
        data = texels(rng, dtype, shape)
        tobj, arr = _texture(data, filt, address, normalized, read, gather)
        x, y, z = coordinates(rng, shape, normalized)
        fn = module.get_function("g2" if gather else f"f{len(shape)}")
        out = cp.zeros((N, 4) if gather else N, np.float32)
        fn(((N + 255) // 256,), (256,), (tobj, cp.asarray(x), cp.asarray(y), cp.asarray(z), out,
                                         np.int32(N)))
        part = slice(0, keep)
        results[name + ":texels"] = data
        results[name + ":x"], results[name + ":y"], results[name + ":z"] = x[part], y[part], z[part]
        results[name + ":out"] = out.get()[part]
        print(name, "done")


def main(path):
    import cupy as cp
    module = cp.RawModule(code=SOURCE, options=("-std=c++11",))
    results = {}
    _record(module, np.random.default_rng(7), CONFIGS, results)
    np.savez(path, **results)


# ------------------------------------------------------------------ snorm arithmetic
# Random textures and coordinates of signed (and, as controls, unsigned) normalized linear
# filtering, in the format of CONFIGS (5,000 fetches kept each).
SNORM_CONFIGS = [
    ("i8_1d_linear_clamp", "int8", (37,), "linear", "clamp", False, "normalized", False),
    ("i8_2d_linear_border", "int8", (13, 17), "linear", "border", False, "normalized", False),
    ("i8_2d_linear_wrap_n", "int8", (13, 17), "linear", "wrap", True, "normalized", False),
    ("i8_3d_linear_clamp", "int8", (5, 6, 7), "linear", "clamp", False, "normalized", False),
    ("i16_1d_linear_clamp", "int16", (37,), "linear", "clamp", False, "normalized", False),
    ("i16_2d_linear_clamp", "int16", (13, 17), "linear", "clamp", False, "normalized", False),
    ("i16_3d_linear_clamp", "int16", (5, 6, 7), "linear", "clamp", False, "normalized", False),
    ("u8_1d_linear_clamp", "uint8", (37,), "linear", "clamp", False, "normalized", False),
    ("u16_3d_linear_clamp", "uint16", (5, 6, 7), "linear", "clamp", False, "normalized", False),
]
PAIRS_PER_TEXTURE = 16384              # 1D textures of 32,768 texels: x stays exact in float32


def _scale(dtype):
    """(largest texel, K's denominator): a normalized fetch returns K / denominator."""
    info = np.iinfo(dtype)
    return info.max, (32767 if info.min < 0 else 65535)


def reference_k(dtype, weighted):
    """The reference K that snorm_probe subtracts from the recorded one: the weighted sum
    of texels (weights out of 256, texels clamped at -max) in units of 1/denominator,
    rounded half up. ``weighted`` is [(weight, texel)] of int64 arrays."""
    top, den = _scale(dtype)
    s = sum(w * np.maximum(v.astype(np.int64), -top) for w, v in weighted)
    return (s * den + top * 128) // (top * 256)


def weights_2d(a, b):
    """The 2D weights out of 256 (docs/textures.md): {(x tap, y tap): weight}."""
    x1, x0 = a, 256 - a
    w00, w11 = (x0 * (256 - b) + 128) >> 8, (x1 * b + 128) >> 8
    return {(0, 0): w00, (0, 1): x0 - w00, (1, 0): x1 - w11, (1, 1): w11}


def _store_k(results, label, dtype, out, ref):
    """K as deltas from the reference (small integers: they compress)."""
    top, den = _scale(dtype)
    k = np.rint(out.astype(np.float64) * den).astype(np.int64)
    off_grid = np.float32(k) / np.float32(den) != out
    delta = k - ref
    small = np.abs(delta).max() < 128
    results[label + ":dK"] = delta.astype(np.int8 if small else np.int32)
    results[label + ":off_grid"] = np.int64(off_grid.sum())
    results[label + ":out_head"] = out.reshape(-1)[:257 * 64]
    print(label, "done: delta range", delta.min(), delta.max(), "off grid", off_grid.sum())


def _pairs(module, results, label, dtype, pairs):
    """Every weight (256 - a, a), a = 0..256, on each ordered pair of texels (1D)."""
    import cupy as cp
    fn = module.get_function("pairs1")
    outs = []
    for start in range(0, len(pairs), PAIRS_PER_TEXTURE):
        chunk = pairs[start:start + PAIRS_PER_TEXTURE]
        tobj, arr = _texture(chunk.reshape(-1), "linear", "clamp", False, "normalized")
        n = len(chunk) * 257
        out = cp.zeros(n, np.float32)
        fn(((n + 255) // 256,), (256,), (tobj, out, np.int64(n)))
        outs.append(out.get().reshape(len(chunk), 257))
    out = np.concatenate(outs)
    a = np.arange(257)[None, :]
    ref = reference_k(dtype, [(256 - a, pairs[:, :1]), (a, pairs[:, 1:])])
    results[label + ":pairs"] = pairs
    _store_k(results, label, dtype, out, ref)


def _quads(module, results, label, dtype, quads, bw=8):
    """Every pair of weights (a, b), a, b = 0..256, on each 2x2 block of texels (2D);
    quads[m] is [[T(x0,y0), T(x1,y0)], [T(x0,y1), T(x1,y1)]] (NumPy order [y][x])."""
    import cupy as cp
    m = len(quads)
    bh = (m + bw - 1) // bw
    data = np.zeros((2 * bh, 2 * bw), dtype)
    for k, q in enumerate(quads):
        data[2 * (k // bw):2 * (k // bw) + 2, 2 * (k % bw):2 * (k % bw) + 2] = q
    tobj, arr = _texture(data, "linear", "clamp", False, "normalized")
    n = m * 66049
    out = cp.zeros(n, np.float32)
    module.get_function("quads2")(((n + 255) // 256,), (256,), (tobj, out, np.int64(n),
                                                                 np.int32(bw)))
    out = out.get().reshape(m, 257, 257)
    a, b = np.arange(257)[None, :, None], np.arange(257)[None, None, :]
    w = weights_2d(a, b)
    ref = reference_k(dtype, [(w[(i, j)], quads[:, j, i][:, None, None]) for i, j in w])
    results[label + ":quads"] = quads
    _store_k(results, label, dtype, out, ref)


def _value_set(rng, dtype, specials, count):
    info = np.iinfo(dtype)
    extra = rng.integers(info.min, info.max + 1, size=4 * count)
    values = list(dict.fromkeys(list(specials) + list(extra)))[:count]
    return np.array(values, np.int64)


def _quad_set(rng, dtype, specials, count):
    info = np.iinfo(dtype)
    special = np.array(specials)
    quads = [np.full((2, 2), v) for v in (info.min, info.min + 1, info.max, -1, 1)]
    quads.append(np.array([[info.min, info.max], [info.max, info.min]]))
    while len(quads) < count // 2:
        quads.append(rng.choice(special, size=(2, 2)))
    while len(quads) < count:
        quads.append(rng.integers(info.min, info.max + 1, size=(2, 2)))
    return np.array(quads, np.int64).astype(dtype)


def snorm_probe(path):
    """Linear filtering of normalized integers with controlled texels and weights: int8
    every ordered pair of values x every 1D weight; int16 pairs of 128 values (edges, powers
    of two, random); 2x2 blocks in 2D with every weight pair (int8 64 blocks, int16 32);
    uint8 pairs and blocks as controls; plus SNORM_CONFIGS. K is stored as its difference
    from reference_k (":dK"), the values as ":pairs" / ":quads"."""
    import cupy as cp
    module = cp.RawModule(code=SOURCE, options=("-std=c++11",))
    rng = np.random.default_rng(11)
    results = {}
    _record(module, rng, SNORM_CONFIGS, results, keep=5000)
    v8 = np.arange(-128, 128)
    _pairs(module, results, "i8_pairs", np.int8,
           np.stack(np.meshgrid(v8, v8, indexing="ij"), -1).reshape(-1, 2).astype(np.int8))
    s16 = [-32768, -32767, -32766, -32765, -32513, -32512, -16385, -16384, -16383, -258, -257,
           -256, -255, -129, -128, -127, -2, -1, 0, 1, 2, 127, 128, 129, 255, 256, 257, 258,
           16383, 16384, 16385, 32512, 32513, 32765, 32766, 32767]
    v16 = _value_set(rng, np.int16, s16, 128)
    _pairs(module, results, "i16_pairs", np.int16,
           np.stack(np.meshgrid(v16, v16, indexing="ij"), -1).reshape(-1, 2).astype(np.int16))
    u8 = rng.integers(0, 256, size=(4096, 2)).astype(np.uint8)
    u8[:4] = [[0, 255], [255, 0], [1, 254], [128, 127]]
    _pairs(module, results, "u8_pairs", np.uint8, u8)
    s8 = [-128, -127, -126, -65, -64, -63, -2, -1, 0, 1, 2, 63, 64, 65, 126, 127]
    _quads(module, results, "i8_quads", np.int8, _quad_set(rng, np.int8, s8, 64))
    _quads(module, results, "i16_quads", np.int16, _quad_set(rng, np.int16, s16, 32))
    _quads(module, results, "u8_quads", np.uint8, _quad_set(rng, np.uint8, [0, 1, 127, 128,
                                                                             254, 255], 16))
    np.savez_compressed(path, **results)


if __name__ == "__main__":
    if sys.argv[1] == "--snorm":
        snorm_probe(sys.argv[2])
    else:
        main(sys.argv[1])
