"""Mipmapped, cubemap and layered textures and surfaces (guide 3.2.12.1.5-6, 3.2.12.2.3-4,
B.8.1 Lod/Grad/Cubemap, B.9.1 layered and cubemap surfaces): each device against the NumPy
model (texture_model.py) bit for bit, and the CPU device against a GPU when one is present."""
import functools
import os
import shutil
import subprocess
import zlib

import numpy as np
import pytest

import simt
import texture_model as model
from conftest import poison
from test_textures import fetch_writer
from simt.ir import types as T
from test_textures import random_texels


# ------------------------------------------------------------------ kernels
@simt.device
def lod1(tex, x, y, z, level):
    return simt.tex1DLod(tex, x, level)


@simt.device
def lod2(tex, x, y, z, level):
    return simt.tex2DLod(tex, x, y, level)


@simt.device
def lod3(tex, x, y, z, level):
    return simt.tex3DLod(tex, x, y, z, level)


LOD = {1: lod1, 2: lod2, 3: lod3}


@simt.device
def grad2(tex, x, y, g, unused):
    return simt.tex2DGrad(tex, x, y, simt.make_float2(g, g * 0.5), (g * 0.25, -g))


@simt.device
def cube(tex, x, y, z, layer):
    return simt.texCubemap(tex, x, y, z)


@simt.device
def cube_layered(tex, x, y, z, layer):
    return simt.texCubemapLayered(tex, x, y, z, layer)


FETCHES = {"lod1": lod1, "lod2": lod2, "lod3": lod3, "grad2": grad2, "cube": cube,
           "cube_layered": cube_layered}


@functools.lru_cache(maxsize=None)
def writer(name, channels):
    return fetch_writer(FETCHES[name], channels)


def _launch(name, channels, tex, args, result_dtype):
    n = len(args[0])
    out = poison((n, channels), result_dtype)
    writer(name, channels)[(n + 127) // 128, 128](tex, *args, out)
    return out


def _result_dtype(dtype, read_mode):
    return np.float32 if read_mode == "normalized_float" or np.dtype(dtype).kind == "f" \
        else dtype


def _normalized_coords(rng, n, ndim):
    coords = []
    for _ in range(ndim):
        c = rng.uniform(-0.2, 1.2, n)
        c[: n // 3] = np.round(c[: n // 3] * 1024) / 1024
        coords.append(c.astype(np.float32))
    return coords


# ------------------------------------------------------------------ mipmaps
def mip(shape, dtype="float32", levels=None, filter="linear", mipmap_filter="linear",
        address="clamp", read_mode="element", channels=1, bias=0.0, low=0.0, high=None):
    return dict(shape=shape, dtype=dtype, levels=levels, filter=filter,
                mipmap_filter=mipmap_filter, address=address, read_mode=read_mode,
                channels=channels, bias=bias, low=low, high=high)


MIP_SPECS = {
    "1d-f32-linear-linear": mip((37,)),
    "2d-f32-linear-linear": mip((24, 33)),
    "2d-f32-point-point": mip((24, 33), filter="point", mipmap_filter="point"),
    "2d-f32-linear-point-wrap": mip((16, 16), mipmap_filter="point", address="wrap"),
    "2d-f32-linear-linear-bias-clamps": mip((24, 33), bias=0.75, low=0.5, high=2.25),
    "2d-u8x4-normfloat-linear-linear": mip((20, 18), "uint8", read_mode="normalized_float",
                                           channels=4),
    "2d-i16-point-point-element": mip((12, 14), "int16", filter="point",
                                      mipmap_filter="point"),
    "2d-f16x2-linear-linear-border": mip((10, 12), "float16", channels=2, address="border"),
    "3d-f32-linear-linear": mip((6, 9, 8), levels=3),
}


def _levels_host(rng, s):
    m = simt.MipmappedArray(s["shape"], s["dtype"], s["levels"] or
                            int(max(s["shape"])).bit_length(), channels=s["channels"])
    hosts = []
    for l in range(m.levels):
        level = m.level(l)
        host = random_texels(rng, level.host_shape, s["dtype"])
        level.copy_from(host)
        hosts.append(host if s["channels"] > 1 else host[..., None])
    return m, hosts


def check_mipmap(name, rng, grad=False):
    s = MIP_SPECS[name]
    m, hosts = _levels_host(rng, s)
    tex = simt.Texture(m, filter=s["filter"], address=s["address"], normalized_coords=True,
                       read_mode=s["read_mode"], mipmap_filter=s["mipmap_filter"],
                       mipmap_level_bias=s["bias"], min_mipmap_level_clamp=s["low"],
                       max_mipmap_level_clamp=s["high"])
    ndim, n = len(s["shape"]), 900
    coords = _normalized_coords(rng, n, ndim)
    padded = (coords + [np.zeros(n, np.float32)] * 3)[:3]
    modes = (s["address"],) * ndim
    high = m.levels - 1 if s["high"] is None else s["high"]
    if grad:
        g = np.exp2(rng.uniform(-7, 1, n)).astype(np.float32) * \
            rng.choice([-1, 1], n).astype(np.float32)
        got = _launch("grad2", s["channels"], tex, padded[:2] + [g, g], np.float32)
        dx = [g, (g * np.float32(0.5)).astype(np.float32)]
        dy = [(g * np.float32(0.25)).astype(np.float32), -g]
        lod = model.gradient_lod(dx, dy, s["shape"][-1], s["shape"][-2])
    else:
        lod = rng.uniform(-1.5, m.levels + 0.5, n).astype(np.float32)
        lod[: n // 4] = np.round(lod[: n // 4] * 256) / 256 + np.float32(1 / 1024)
        got = _launch(f"lod{ndim}", s["channels"], tex, padded + [lod],
                      _result_dtype(s["dtype"], s["read_mode"]))
    want = model.sample_mipmap(hosts, ndim, s["filter"], s["mipmap_filter"], modes,
                               s["read_mode"], coords, lod, s["bias"], s["low"], high)
    return got, want


# Measured on the H200 (2026-12-02, bench/results/texture-levels-h200-2026-12-02.txt): the
# level of detail from gradients and the blend of two linearly filtered levels differ from
# the model (and so from the CPU device) on random data; point filtering between levels,
# the level choice and blend weight of the lod sweeps, cubemaps and layered/cubemap
# surfaces are equal. Until the rule is fitted these are expected failures on a GPU,
# strict: one that starts to pass fails, so the marker goes when the fit lands.
GPU_NOT_YET_EQUAL = ("the H200 differs from the model here (docs/textures.md: mipmaps on "
                     "the CPU device)")


def _known_gpu_difference(request, device, linear_levels=False, grad=False):
    if device.kind == "cuda" and (linear_levels or grad):
        request.applymarker(pytest.mark.xfail(strict=True, reason=GPU_NOT_YET_EQUAL))


@pytest.mark.parametrize("name", sorted(MIP_SPECS))
def test_mipmap_lod_matches_model(request, device, rng, name):
    _known_gpu_difference(request, device, linear_levels=name.endswith(
        ("linear-linear", "linear-linear-bias-clamps", "linear-linear-border")))
    got, want = check_mipmap(name, rng)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["2d-f32-linear-linear", "2d-f32-point-point",
                                  "2d-u8x4-normfloat-linear-linear"])
def test_grad_matches_model(request, device, rng, name):
    _known_gpu_difference(request, device, grad=True)
    got, want = check_mipmap(name, rng, grad=True)
    np.testing.assert_array_equal(got, want)


def check_lod_sweep(mipmap_filter, grad, rng=None):
    """Levels of constant value l (level l) read at every lod step of 1/1024 (or gradients
    of every 1/64 step of log2): the result is the level, or level plus blend weight,
    the GPU picks, so a difference shows the rule directly."""
    m = simt.MipmappedArray((16, 16), np.float32, 5)
    hosts = []
    for l in range(5):
        level = m.level(l)
        hosts.append(np.full(level.host_shape + (1,), float(l), np.float32))
        level.copy_from(hosts[-1][..., 0])
    tex = simt.Texture(m, filter="linear", normalized_coords=True, mipmap_filter=mipmap_filter)
    x = np.full(6 * 1024, 0.375, np.float32)
    if grad:
        g = np.exp2(np.arange(-6 * 64, 2 * 64) / 64.0 - 4).astype(np.float32)
        x = x[:len(g)]
        got = _launch("grad2", 1, tex, [x, x, g, g], np.float32)
        lod = model.gradient_lod([g, (g * np.float32(0.5)).astype(np.float32)],
                                 [(g * np.float32(0.25)).astype(np.float32), -g], 16, 16)
    else:
        lod = (np.arange(len(x)) / 1024.0 - 0.5).astype(np.float32)
        got = _launch("lod2", 1, tex, [x, x, x, lod], np.float32)
    want = model.sample_mipmap(hosts, 2, "linear", mipmap_filter, ("clamp", "clamp"),
                               "element", [x, x], lod)
    return got, want


@pytest.mark.parametrize("mipmap_filter", ["point", "linear"])
@pytest.mark.parametrize("grad", [False, True], ids=["lod", "grad"])
def test_lod_sweep_matches_model(request, device, mipmap_filter, grad):
    _known_gpu_difference(request, device, grad=grad)
    got, want = check_lod_sweep(mipmap_filter, grad)
    np.testing.assert_array_equal(got, want)


def test_mipmapped_array_levels(device, rng):
    m = simt.MipmappedArray((13, 40), np.float32, 6, channels=2)
    assert [m.level(l).shape for l in range(6)] == [(13, 40), (6, 20), (3, 10), (1, 5),
                                                   (1, 2), (1, 1)]
    hosts = [random_texels(rng, m.level(l).host_shape, np.float32) for l in range(6)]
    for l, h in enumerate(hosts):
        m.level(l).copy_from(h)
    for l, h in enumerate(hosts):
        np.testing.assert_array_equal(m.level(l).copy_to_host(), h)


def test_lod_on_a_plain_array_reads_it(device, rng):
    """tex2DLod on a texture over a CudaArray (one level) is tex2D whatever the level."""
    host = random_texels(rng, (9, 11), np.float32)
    array = simt.CudaArray((9, 11), np.float32)
    array.copy_from(host)
    tex = simt.Texture(array, filter="linear", normalized_coords=True)
    x, y = _normalized_coords(rng, 300, 2)
    lod = rng.uniform(-2, 5, 300).astype(np.float32)
    got = _launch("lod2", 1, tex, [x, y, x, lod], np.float32)
    want = model.sample(host[..., None], 2, False, "linear", ("clamp", "clamp"), True,
                        "element", [x, y])
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------ cubemaps
CUBE_SPECS = {
    "cube-f32-linear": dict(w=8, dtype="float32", filter="linear", layers=0, channels=1,
                            read_mode="element"),
    "cube-u8x4-point-normfloat": dict(w=5, dtype="uint8", filter="point", layers=0, channels=4,
                                      read_mode="normalized_float"),
    "cube-i32-point": dict(w=6, dtype="int32", filter="point", layers=0, channels=1,
                           read_mode="element"),
    "cubelayered-f32x2-linear": dict(w=7, dtype="float32", filter="linear", layers=3,
                                     channels=2, read_mode="element"),
}


def _directions(rng, n):
    d = rng.standard_normal((3, n)).astype(np.float32)
    d[:, :6] = np.array([[1, -1, 0, 0, 0, 0], [0, 0, 1, -1, 0, 0], [0, 0, 0, 0, 1, -1]],
                        np.float32) * 2.5                  # the six face centres
    return list(d)


def check_cube(name, rng):
    s = CUBE_SPECS[name]
    shape = ((s["layers"],) if s["layers"] else ()) + (6, s["w"], s["w"])
    host = random_texels(rng, shape + ((s["channels"],) if s["channels"] > 1 else ()),
                         s["dtype"])
    array = simt.CudaArray(shape, s["dtype"], channels=s["channels"],
                           layered=bool(s["layers"]), cubemap=True)
    array.copy_from(host)
    tex = simt.Texture(array, filter=s["filter"], read_mode=s["read_mode"])
    n = 800
    x, y, z = _directions(rng, n)
    layer = rng.integers(-1, max(s["layers"], 1) + 1, n).astype(np.int32)
    kind = "cube_layered" if s["layers"] else "cube"
    got = _launch(kind, s["channels"], tex, [x, y, z, layer],
                  _result_dtype(s["dtype"], s["read_mode"]))
    texels = host if s["channels"] > 1 else host[..., None]
    want = model.sample_cube(texels, bool(s["layers"]), s["filter"], ("clamp", "clamp"),
                             s["read_mode"], x, y, z, layer)
    return got, want


@pytest.mark.parametrize("name", sorted(CUBE_SPECS))
def test_cubemap_matches_model(device, rng, name):
    got, want = check_cube(name, rng)
    np.testing.assert_array_equal(got, want)


def test_cube_face_selection():
    """The guide's table 2: the face of the major axis, and (s/m + 1)/2, (t/m + 1)/2."""
    face, u, v = model.cube_coords(np.float32([2, -2, 0.5, 0.5, 0.25, 0.5]),
                                   np.float32([0.5, 0.5, 2, -2, 0.5, 0.25]),
                                   np.float32([1, 1, 1, 1, 2, -2]))
    np.testing.assert_array_equal(face, [0, 1, 2, 3, 4, 5])
    np.testing.assert_array_equal(u, np.float32([0.25, 0.75, 0.625, 0.625, 0.5625, 0.375]))
    np.testing.assert_array_equal(v, np.float32([0.375, 0.375, 0.75, 0.25, 0.375, 0.4375]))


# ------------------------------------------------------------------ surfaces
@simt.kernel
def layered_surface(src, dst, layers):
    x, y = simt.grid(2)
    for l in range(layers):
        v = simt.surf2DLayeredread(src, x * 4, y, l)
        simt.surf2DLayeredwrite(v * 3 + l, dst, x * 4, y, layers - 1 - l)


@simt.kernel
def cube_surface(src, dst, out):
    x, y = simt.grid(2)
    for f in range(6):
        v = simt.surfCubemapread(src, x * 2, y, f)
        simt.surfCubemapwrite(v, dst, x * 2, y, 5 - f)
    out[y, x] = simt.surfCubemapread(src, (x - 1) * 2, y, 2, boundary="zero")


@simt.kernel
def cube_layered_surface(src, dst):
    x, y = simt.grid(2)
    for lf in range(12):
        v = simt.surfCubemapLayeredread(src, x * 8, y, lf)
        simt.surfCubemapLayeredwrite((v[1], v[0]), dst, x * 8, y, 11 - lf)


def test_layered_and_cubemap_surfaces(device, rng):
    host = random_texels(rng, (3, 5, 6), np.float32)
    a = simt.CudaArray((3, 5, 6), np.float32, layered=True, surface=True)
    b = simt.CudaArray((3, 5, 6), np.float32, layered=True, surface=True)
    a.copy_from(host)
    b.copy_from(np.zeros_like(host))
    layered_surface[(1, 1), (6, 5)](simt.Surface(a), simt.Surface(b), 3)
    want = (host * np.float32(3) + np.arange(3, dtype=np.float32)[:, None, None])[::-1]
    np.testing.assert_array_equal(b.copy_to_host(), want)

    faces = random_texels(rng, (6, 4, 4), np.int16)
    c = simt.CudaArray((6, 4, 4), np.int16, cubemap=True, surface=True)
    d = simt.CudaArray((6, 4, 4), np.int16, cubemap=True, surface=True)
    c.copy_from(faces)
    d.copy_from(np.zeros_like(faces))
    out = poison((4, 4), np.int16)
    cube_surface[(1, 1), (4, 4)](simt.Surface(c), simt.Surface(d), out)
    np.testing.assert_array_equal(d.copy_to_host(), faces[::-1])
    shifted = np.zeros((4, 4), np.int16)                 # x - 1 = -1 reads 0
    shifted[:, 1:] = faces[2][:, :3]
    np.testing.assert_array_equal(out, shifted)

    cubes = random_texels(rng, (2, 6, 3, 3, 2), np.int32)
    e = simt.CudaArray((2, 6, 3, 3), np.int32, channels=2, layered=True, cubemap=True,
                       surface=True)
    f = simt.CudaArray((2, 6, 3, 3), np.int32, channels=2, layered=True, cubemap=True,
                       surface=True)
    e.copy_from(cubes)
    f.copy_from(np.zeros_like(cubes))
    cube_layered_surface[(1, 1), (3, 3)](simt.Surface(e), simt.Surface(f))
    want = cubes.reshape(12, 3, 3, 2)[::-1, :, :, ::-1].reshape(cubes.shape)
    np.testing.assert_array_equal(f.copy_to_host(), want)


@simt.kernel
def layered_surface_trap(surf):
    simt.surf2DLayeredwrite(1.0, surf, 0, 0, 3)


def test_layered_surface_trap_on_cpu():
    with simt.use_device("cpu"):
        array = simt.CudaArray((3, 2, 2), np.float32, layered=True, surface=True)
        layered_surface_trap[1, 1](simt.Surface(array))
        with pytest.raises(simt.IllegalAddressError, match="outside dimension 2"):
            simt.synchronize()


# ------------------------------------------------------------------ errors
def test_errors():
    with simt.use_device("cpu"):
        m = simt.MipmappedArray((8, 8), np.float32, 4)
        with pytest.raises(ValueError, match="normalized_coords=True"):
            simt.Texture(m)
        with pytest.raises(ValueError, match="1 to 4 levels"):
            simt.MipmappedArray((8, 8), np.float32, 5)
        with pytest.raises(ValueError, match="MipmappedArray"):
            simt.Texture(simt.CudaArray((4, 4), np.float32), mipmap_filter="linear")
        with pytest.raises(ValueError, match="normalized_float"):
            simt.Texture(simt.MipmappedArray(8, np.uint8, 2), normalized_coords=True,
                         mipmap_filter="linear")
        with pytest.raises(ValueError, match=r"\(6, w, w\)"):
            simt.CudaArray((5, 4, 4), np.float32, cubemap=True)
        with pytest.raises(simt.NotSupportedError, match="1D layered surfaces"):
            simt.Surface(simt.CudaArray((2, 4), np.float32, layered=True, surface=True))
        tex = simt.Texture(simt.CudaArray((6, 4, 4), np.float32, cubemap=True))
        zeros = np.zeros(1, np.float32)
        with pytest.raises(simt.CompileError, match="simt.tex2DLod reads a 2D texture"):
            _launch("lod2", 1, tex, [zeros] * 4, np.float32)
        with pytest.raises(simt.CompileError, match="texCubemapLayered reads a layered cubemap"):
            _launch("cube_layered", 1, tex, [zeros] * 3 + [zeros.astype(np.int32)],
                    np.float32)


def test_on_sim(rng):
    """The sim device runs mipmapped and cubemap fetches and layered and cubemap surfaces
    as the model computes them (without --device, which would turn a NotSupportedError
    into a skip)."""
    with simt.use_device("sim"):
        for name in sorted(CUBE_SPECS):
            got, want = check_cube(name, rng)
            np.testing.assert_array_equal(got, want, err_msg=name)
        for name in sorted(MIP_SPECS):
            got, want = check_mipmap(name, rng)
            np.testing.assert_array_equal(got, want, err_msg=name)
        for mipmap_filter in ("point", "linear"):
            got, want = check_mipmap(f"2d-f32-{mipmap_filter}-{mipmap_filter}", rng, grad=True)
            np.testing.assert_array_equal(got, want, err_msg=mipmap_filter)
            for grad in (False, True):
                got, want = check_lod_sweep(mipmap_filter, grad)
                np.testing.assert_array_equal(got, want, err_msg=f"sweep {mipmap_filter}")
        test_layered_and_cubemap_surfaces(None, rng)


# ------------------------------------------------------------------ the GPU
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptx_assembles(tmp_path):
    """tex.level, tex.grad, tex.cube, tex.acube and a2d suld/sust are valid sm_90 PTX."""
    with simt.use_device("cpu"):
        m = simt.MipmappedArray((8, 8), np.float32, 3)
        mip_tex = simt.Texture(m, filter="linear", normalized_coords=True,
                               mipmap_filter="linear")
        m3 = simt.Texture(simt.MipmappedArray((4, 4, 4), np.uint8, 2), normalized_coords=True,
                          read_mode="normalized_float")
        m1 = simt.Texture(simt.MipmappedArray(8, np.int32, 2), normalized_coords=True)
        cube_tex = simt.Texture(simt.CudaArray((6, 4, 4), np.float32, cubemap=True))
        acube_tex = simt.Texture(simt.CudaArray((2, 6, 4, 4), np.int16, layered=True,
                                                cubemap=True))
        f = np.zeros(4, np.float32)
        i = np.zeros(4, np.int32)
        cases = [(writer("lod2", 1), (mip_tex, f, f, f, f, np.zeros((4, 1), np.float32))),
                 (writer("grad2", 1), (mip_tex, f, f, f, f, np.zeros((4, 1), np.float32))),
                 (writer("lod3", 1), (m3, f, f, f, f, np.zeros((4, 1), np.float32))),
                 (writer("lod1", 1), (m1, f, f, f, f, np.zeros((4, 1), np.int32))),
                 (writer("cube", 1), (cube_tex, f, f, f, i, np.zeros((4, 1), np.float32))),
                 (writer("cube_layered", 1), (acube_tex, f, f, f, i,
                                              np.zeros((4, 1), np.int16))),
                 (cube_layered_surface, tuple(simt.Surface(simt.CudaArray(
                     (2, 6, 3, 3), np.int32, channels=2, layered=True, cubemap=True,
                     surface=True)) for _ in range(2))),
                 (layered_surface, tuple(simt.Surface(simt.CudaArray(
                     (3, 5, 6), np.float32, layered=True, surface=True)) for _ in range(2))
                  + (3,))]
        for k, (kernel, args) in enumerate(cases):
            ptx = str(kernel.inspect_ptx(tuple(T.typeof(a) for a in args)))
            path = tmp_path / f"k{k}.ptx"
            path.write_text(ptx)
            done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o",
                                   str(tmp_path / "k.o")], capture_output=True, text=True)
            assert done.returncode == 0, done.stderr + ptx


def _gpus():
    return [d for d in simt.devices() if d.kind == "cuda"]


@pytest.mark.skipif(not _gpus(), reason="needs a GPU: compares the CPU device with it")
def test_cpu_matches_gpu_bit_for_bit():
    """The same random mipmapped and cubemap textures, levels of detail, gradients and
    directions on the CPU device and on the GPU give identical bits (SIMT_TEXTURE_DUMP=path
    saves both, and the model's, for fitting)."""
    gpu = _gpus()[0].name
    failures, dump = [], {}
    checks = [(f"lod:{n}", functools.partial(check_mipmap, n)) for n in sorted(MIP_SPECS)]
    checks += [(f"grad:{n}", functools.partial(check_mipmap, n, grad=True))
               for n in ("2d-f32-linear-linear", "2d-f32-point-point")]
    checks += [(f"cube:{n}", functools.partial(check_cube, n)) for n in sorted(CUBE_SPECS)]
    checks += [(f"sweep:{f}:{'grad' if g else 'lod'}", functools.partial(check_lod_sweep, f, g))
               for f in ("point", "linear") for g in (False, True)]
    for label, check in checks:
        results = {}
        for dev in ("cpu", gpu):
            with simt.use_device(dev):
                results[dev] = check(np.random.default_rng(zlib.crc32(label.encode())))
        cpu, want = results["cpu"]
        got, _ = results[gpu]
        dump[label + ":cpu"], dump[label + ":gpu"], dump[label + ":model"] = cpu, got, want
        if not np.array_equal(cpu.view(np.uint8), got.view(np.uint8)):
            failures.append(f"{label}: {np.sum(np.any(cpu != got, axis=1))} of {len(cpu)} "
                            "fetches differ between cpu and gpu")
    if os.environ.get("SIMT_TEXTURE_DUMP"):
        np.savez(os.environ["SIMT_TEXTURE_DUMP"], **dump)
    known = [f for f in failures if f.startswith("grad:") or ":grad:" in f.split(" ")[0]
             or (f.startswith("lod:") and "linear-linear" in f.split(":")[1])]
    assert not [f for f in failures if f not in known], "\n".join(failures)
    assert known, "the known GPU differences are gone: remove GPU_NOT_YET_EQUAL's markers"
