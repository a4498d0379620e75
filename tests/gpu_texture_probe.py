"""Record what a GPU's texture unit returns, independently of simt (CuPy texture objects
and CUDA C kernels), so that simt's CPU model of appendix H can be checked against it.

Usage (on a GPU machine): python tests/gpu_texture_probe.py OUT.npz
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


def main(path):
    import cupy as cp
    from cupy.cuda import runtime, texture
    module = cp.RawModule(code=SOURCE, options=("-std=c++11",))
    kinds = {"f": runtime.cudaChannelFormatKindFloat, "i": runtime.cudaChannelFormatKindSigned,
             "u": runtime.cudaChannelFormatKindUnsigned}
    modes = {"clamp": runtime.cudaAddressModeClamp, "wrap": runtime.cudaAddressModeWrap,
             "mirror": runtime.cudaAddressModeMirror, "border": runtime.cudaAddressModeBorder}
    rng = np.random.default_rng(7)
    results = {}
    for name, dtype, shape, filt, address, normalized, read, gather in CONFIGS:
        data = texels(rng, dtype, shape)
        dt = np.dtype(dtype)
        ch = texture.ChannelFormatDescriptor(8 * dt.itemsize, 0, 0, 0, kinds[dt.kind])
        dims = list(reversed(shape)) + [0] * (3 - len(shape))
        flags = 0x08 if gather else 0      # cudaArrayTextureGather
        arr = texture.CUDAarray(ch, dims[0], dims[1], dims[2], flags)
        arr.copy_from(data)
        res = texture.ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=arr)
        tdesc = texture.TextureDescriptor(
            (modes[address],) * 3,
            runtime.cudaFilterModeLinear if filt == "linear" else runtime.cudaFilterModePoint,
            runtime.cudaReadModeNormalizedFloat if read == "normalized" else
            runtime.cudaReadModeElementType, normalizedCoords=int(normalized))
        tobj = texture.TextureObject(res, tdesc)
        x, y, z = coordinates(rng, shape, normalized)
        fn = module.get_function("g2" if gather else f"f{len(shape)}")
        out = cp.zeros((N, 4) if gather else N, np.float32)
        fn(((N + 255) // 256,), (256,), (tobj, cp.asarray(x), cp.asarray(y), cp.asarray(z), out,
                                         np.int32(N)))
        results[name + ":texels"] = data
        results[name + ":x"], results[name + ":y"], results[name + ":z"] = x, y, z
        results[name + ":out"] = out.get()
        print(name, "done")
    np.savez(path, **results)


if __name__ == "__main__":
    main(sys.argv[1])
