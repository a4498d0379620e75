"""CUDA arrays, textures and surfaces: results against the NumPy model of appendix H
(texture_model.py), bit for bit, and the CPU device against a GPU when one is present."""
import functools
import os
import zlib

import numpy as np
import pytest

import simt
import texture_model as model
from conftest import poison


# ------------------------------------------------------------------ kernels
@simt.device
def fetch1(tex, x, y, z, layer):
    return simt.tex1D(tex, x)


@simt.device
def fetch2(tex, x, y, z, layer):
    return simt.tex2D(tex, x, y)


@simt.device
def fetch3(tex, x, y, z, layer):
    return simt.tex3D(tex, x, y, z)


@simt.device
def fetch1l(tex, x, y, z, layer):
    return simt.tex1DLayered(tex, x, layer)


@simt.device
def fetch2l(tex, x, y, z, layer):
    return simt.tex2DLayered(tex, x, y, layer)


FETCH = {(1, False): fetch1, (2, False): fetch2, (3, False): fetch3, (1, True): fetch1l,
         (2, True): fetch2l}


@functools.lru_cache(maxsize=None)
def sampler(ndim, layered, channels):
    """A kernel writing out[i, :] = the fetch at (x[i], y[i], z[i], layer[i])."""
    return fetch_writer(FETCH[(ndim, layered)], channels)


def fetch_writer(fetch, channels):
    """A kernel writing out[i, :] = fetch(tex, x[i], y[i], z[i], layer[i]) for
    ``channels`` channels (test_texture_levels.py uses it too)."""
    if channels == 1:
        @simt.kernel
        def run(tex, x, y, z, layer, out):
            i = simt.grid(1)
            if i < x.shape[0]:
                out[i, 0] = fetch(tex, x[i], y[i], z[i], layer[i])
    elif channels == 2:
        @simt.kernel
        def run(tex, x, y, z, layer, out):
            i = simt.grid(1)
            if i < x.shape[0]:
                v = fetch(tex, x[i], y[i], z[i], layer[i])
                out[i, 0] = v[0]
                out[i, 1] = v[1]
    else:
        @simt.kernel
        def run(tex, x, y, z, layer, out):
            i = simt.grid(1)
            if i < x.shape[0]:
                v = fetch(tex, x[i], y[i], z[i], layer[i])
                out[i, 0] = v[0]
                out[i, 1] = v[1]
                out[i, 2] = v[2]
                out[i, 3] = v[3]
    return run


@simt.kernel
def gather_kernel(tex, x, y, out):
    i = simt.grid(1)
    if i < x.shape[0]:
        v = simt.tex2Dgather(tex, x[i], y[i], 1)
        out[i, 0] = v[0]
        out[i, 1] = v[1]
        out[i, 2] = v[2]
        out[i, 3] = v[3]


@simt.kernel
def fetch_kernel(tex, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = tex.fetch(i - 3)


# ------------------------------------------------------------------ helpers
def random_texels(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def random_coords(rng, extents, normalized, n=700):
    """Coordinates across and beyond the texture, half of them near the 1/256 steps."""
    coords = []
    for size in extents:
        c = rng.integers(-3, size + 3, size=n) + rng.random(n)
        c[: n // 2] = np.round(c[: n // 2] * 512) / 512
        coords.append((c / size if normalized else c).astype(np.float32))
    return coords


def run_sampler(spec, host, coords, layer):
    ndim, layered, channels = spec["ndim"], spec["layered"], spec["channels"]
    array = simt.CudaArray(spec["shape"], spec["dtype"], channels=channels, layered=layered)
    array.copy_from(host)
    tex = simt.Texture(array, filter=spec["filter"], address=spec["address"],
                       normalized_coords=spec["normalized"], read_mode=spec["read_mode"])
    n = len(coords[0])
    x, y, z = (list(coords) + [np.zeros(n, np.float32)] * 3)[:3]
    result_dtype = np.float32 if spec["read_mode"] == "normalized_float" or \
        np.dtype(spec["dtype"]).kind == "f" else spec["dtype"]
    out = poison((n, channels), result_dtype)
    sampler(ndim, layered, channels)[(n + 127) // 128, 128](tex, x, y, z, layer, out)
    return out


def expected(spec, host, coords, layer):
    texels = host if spec["channels"] > 1 else host[..., None]
    address = (spec["address"],) * spec["ndim"]
    return model.sample(texels, spec["ndim"], spec["layered"], spec["filter"], address,
                        spec["normalized"], spec["read_mode"], coords, layer)


def spec(shape, dtype="float32", filter="point", address="clamp", normalized=False,
         read_mode="element", channels=1, layered=False):
    ndim = len(shape) - layered
    return dict(shape=shape, dtype=dtype, filter=filter, address=address, normalized=normalized,
                read_mode=read_mode, channels=channels, layered=layered, ndim=ndim)


SPECS = {
    "1d-f32-linear-clamp": spec((37,), filter="linear"),
    "1d-u8x4-normfloat-point-border": spec((19,), "uint8", address="border",
                                           read_mode="normalized_float", channels=4),
    "2d-f32-linear-clamp": spec((13, 17), filter="linear"),
    "2d-f32-point-clamp": spec((13, 17)),
    "2d-f32-linear-border": spec((13, 17), filter="linear", address="border"),
    "2d-f32-linear-wrap-normalized": spec((13, 17), filter="linear", address="wrap", normalized=True),
    "2d-f32-point-mirror-normalized": spec((13, 17), address="mirror", normalized=True),
    "2d-f32-linear-mirror-normalized": spec((8, 9), filter="linear", address="mirror",
                                            normalized=True),
    "2d-u8-linear-normfloat": spec((13, 17), "uint8", filter="linear",
                                   read_mode="normalized_float"),
    "2d-i8x2-linear-normfloat": spec((6, 5), "int8", filter="linear", read_mode="normalized_float",
                                     channels=2),
    "2d-u16-point-normfloat-wrap": spec((6, 7), "uint16", address="wrap", normalized=True,
                                        read_mode="normalized_float"),
    "2d-i16-point-element": spec((6, 7), "int16"),
    "2d-u32x4-point-element-border": spec((5, 6), "uint32", address="border", channels=4),
    "2d-i32x2-point-element": spec((5, 6), "int32", channels=2),
    "2d-f16-linear-clamp": spec((9, 10), "float16", filter="linear"),
    "3d-f32-linear-clamp": spec((5, 6, 7), filter="linear"),
    "3d-f32-point-border": spec((5, 6, 7), address="border"),
    "1d-layered-f32-linear": spec((3, 11), filter="linear", layered=True),
    "2d-layered-f16x2-linear": spec((3, 5, 6), "float16", filter="linear", layered=True,
                                    channels=2),
}


def check_spec(name, rng):
    s = SPECS[name]
    host = random_texels(rng, s["shape"] + ((s["channels"],) if s["channels"] > 1 else ()),
                         s["dtype"])
    spatial = s["shape"][1:] if s["layered"] else s["shape"]
    coords = random_coords(rng, list(reversed(spatial)), s["normalized"])
    layer = rng.integers(-1, s["shape"][0] + 1, size=len(coords[0])).astype(np.int32)
    return run_sampler(s, host, coords, layer), expected(s, host, coords, layer)


# ------------------------------------------------------------------ tests
# The model reproduces every fetch recorded on an H200 bit for bit (docs/textures.md).
@pytest.mark.parametrize("name", sorted(SPECS))
def test_fetch_matches_appendix_h(device, rng, name):
    got, want = check_spec(name, rng)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape,channels,layered", [((40,), 1, False), ((6, 7), 2, False),
                                                    ((3, 4, 5), 4, False), ((3, 9), 1, True),
                                                    ((2, 3, 4), 2, True)])
def test_cuda_array_copies(device, rng, shape, channels, layered):
    for dtype in (np.uint8, np.int16, np.float32):
        host = random_texels(rng, shape + ((channels,) if channels > 1 else ()), dtype)
        array = simt.CudaArray(shape, dtype, channels=channels, layered=layered)
        array.copy_from(host)
        np.testing.assert_array_equal(array.copy_to_host(), host)
        array.copy_from(simt.to_device(host[::-1].copy()))
        np.testing.assert_array_equal(array.copy_to_host(), host[::-1])


def test_fetch_from_linear_memory(device, rng):
    host = random_texels(rng, 50, np.int16)
    out = poison(56, np.int16)
    fetch_kernel[1, 64](simt.Texture(simt.to_device(host)), out)
    np.testing.assert_array_equal(out, np.concatenate([[0] * 3, host, [0] * 3]))
    host8 = random_texels(rng, 50, np.uint8)
    out = poison(56, np.float32)
    fetch_kernel[1, 64](simt.Texture(simt.to_device(host8), read_mode="normalized_float"), out)
    want = np.concatenate([[0] * 3, model.convert(host8, "normalized_float"), [0] * 3])
    np.testing.assert_array_equal(out, want.astype(np.float32))


def test_pitched_2d_texture(device, rng):
    host = random_texels(rng, (9, 16), np.float32)            # 64-byte rows
    tex = simt.Texture(simt.to_device(host), filter="linear", address="border")
    coords = random_coords(rng, (16, 9), False)
    n = len(coords[0])
    out = poison((n, 1), np.float32)
    zeros = np.zeros(n, np.float32)
    sampler(2, False, 1)[(n + 127) // 128, 128](tex, coords[0], coords[1], zeros,
                                                 zeros.astype(np.int32), out)
    want = model.sample(host[..., None], 2, False, "linear", ("border", "border"), False,
                        "element", coords)
    np.testing.assert_array_equal(out, want)


def test_gather(device, rng):
    host = random_texels(rng, (7, 9, 2), np.float32)
    array = simt.CudaArray((7, 9), np.float32, channels=2)
    array.copy_from(host)
    x, y = random_coords(rng, (9, 7), False)
    out = poison((len(x), 4), np.float32)
    gather_kernel[(len(x) + 127) // 128, 128](simt.Texture(array, address="border"), x, y, out)
    np.testing.assert_array_equal(out, model.gather(host, ("border", "border"), False,
                                                    "element", x, y, 1))


@simt.kernel
def surface_copy2d(src, dst, out_w, out_h):
    x, y = simt.grid(2)
    if x < out_w and y < out_h:
        v = simt.surf2Dread(src, x * 8, y, boundary="zero")
        simt.surf2Dwrite((v[1], v[0]), dst, x * 8, y, boundary="zero")


@simt.kernel
def surface_clamp(src, out):
    x = simt.grid(1)
    if x < out.shape[0]:
        out[x] = simt.surf1Dread(src, (x - 2) * 2, boundary="clamp")


@simt.kernel
def surface_3d(src, dst):
    x, y = simt.grid(2)
    for z in range(3):
        simt.surf3Dwrite(simt.surf3Dread(src, x * 4, y, z) * 2, dst, x * 4, y, z)


def test_surfaces(device, rng):
    host = random_texels(rng, (5, 6, 2), np.int32)
    src = simt.CudaArray((5, 6), np.int32, channels=2, surface=True)
    dst = simt.CudaArray((5, 6), np.int32, channels=2, surface=True)
    src.copy_from(host)
    dst.copy_from(np.zeros_like(host))
    surface_copy2d[(1, 1), (8, 8)](simt.Surface(src), simt.Surface(dst), 8, 8)
    np.testing.assert_array_equal(dst.copy_to_host(), host[..., ::-1])
    line = simt.CudaArray(10, np.int16, surface=True)
    values = random_texels(rng, 10, np.int16)
    line.copy_from(values)
    out = poison(15, np.int16)
    surface_clamp[1, 15](simt.Surface(line), out)
    np.testing.assert_array_equal(out, values[np.clip(np.arange(15) - 2, 0, 9)])
    cube = random_texels(rng, (3, 4, 5), np.float32)
    a = simt.CudaArray((3, 4, 5), np.float32, surface=True)
    b = simt.CudaArray((3, 4, 5), np.float32, surface=True)
    a.copy_from(cube)
    surface_3d[(1, 1), (5, 4)](simt.Surface(a), simt.Surface(b))
    np.testing.assert_array_equal(b.copy_to_host(), cube * 2)


def test_surface_trap_on_cpu(rng):
    array = simt.CudaArray((3, 4), np.int32, channels=2, surface=True, device="cpu")
    with simt.use_device("cpu"):
        surface_copy_trap[(1, 1), (8, 8)](simt.Surface(array))
        with pytest.raises(simt.IllegalAddressError, match="outside dimension 0"):
            simt.synchronize()


@simt.kernel
def surface_copy_trap(surf):
    x, y = simt.grid(2)
    v = simt.surf2Dread(surf, x * 8, y)
    simt.surf2Dwrite(v, surf, x * 8, y)


def test_sim_runs_fetches_and_surfaces(rng):
    """The sim device runs the fetches and surface accesses above, bit for bit as the model
    (--device sim would turn a NotSupportedError into a skip; here it fails)."""
    with simt.use_device("sim"):
        for name in sorted(SPECS):
            got, want = check_spec(name, rng)
            np.testing.assert_array_equal(got, want, err_msg=name)
        test_fetch_from_linear_memory(None, rng)
        test_pitched_2d_texture(None, rng)
        test_gather(None, rng)
        test_surfaces(None, rng)


def _sim_configs():
    modes = ("clamp", "border", "wrap", "mirror")
    for k, dtype in enumerate(("float32", "float16", "uint8", "int8", "int16", "uint16")):
        for f, filt in enumerate(("point", "linear")):
            address = modes[(k + 2 * f) % 4]
            yield 1 + (k + f) % 3, filt, address, address in ("wrap", "mirror") or k % 2, dtype


def test_sim_matches_cpu_at_the_edges(rng):
    """The sim device and the cpu device give the same bits on texels of inf, NaN and
    subnormals and on coordinates of NaN, inf and far outside the texture."""
    for ndim, filt, address, normalized, dtype in _sim_configs():
        read_mode = "normalized_float" if dtype[0] in "ui" else "element"
        shape = (5, 6, 7)[:ndim]
        s = spec(shape, dtype, filter=filt, address=address, normalized=normalized,
                 read_mode=read_mode)
        host = random_texels(rng, shape, dtype)
        if dtype.startswith("float"):
            host.reshape(-1)[:4] = [np.inf, -np.inf, np.nan, 1e-40 if dtype == "float32" else 1e-6]
        coords = random_coords(rng, list(reversed(shape)), normalized, n=200)
        for c in coords:
            c[:6] = [np.nan, np.inf, -np.inf, 3e9, -3e9, 1e-30]
        got = {}
        for dev in ("cpu", "sim"):
            with simt.use_device(dev):
                got[dev] = run_sampler(s, host, coords, np.zeros(200, np.int32))
        assert got["sim"].tobytes() == got["cpu"].tobytes(), (ndim, filt, address, dtype)


def test_surface_trap_on_sim():
    """An out-of-range surface access with boundary='trap' is the sim's IllegalAddressError
    at the user's line, naming the surface and the dimension, as on the cpu device."""
    array = simt.CudaArray((3, 4), np.int32, channels=2, surface=True, device="sim")
    array.copy_from(np.arange(24, dtype=np.int32).reshape(3, 4, 2))
    line = surface_copy_trap.pyfunc.__code__.co_firstlineno + 3
    with simt.use_device("sim"):
        surface_copy_trap[(1, 1), (8, 8)](simt.Surface(array))
        with pytest.raises(simt.IllegalAddressError,
                           match=rf"index 32 is outside dimension 0 \(size 32\) of 'surf'"
                                 rf"(.|\n)*test_textures.py:{line}"):
            simt.synchronize()


@simt.kernel
def surface_shift(surf, sync):
    x = simt.threadIdx.x
    v = simt.surf1Dread(surf, ((x + 1) % 8) * 4)
    if sync:
        simt.syncthreads()
    simt.surf1Dwrite(v + 1, surf, x * 4)


def test_surface_race_on_sim(rng):
    """Surface accesses are race-checked on the sim device as global memory is: thread 0
    reads texel 1 that thread 1 writes, with no barrier between them."""
    values = random_texels(rng, 8, np.int32) // 2
    with simt.use_device("sim"):
        array = simt.CudaArray(8, np.int32, surface=True)
        array.copy_from(values)
        surface_shift[1, 8](simt.Surface(array), True)
        np.testing.assert_array_equal(array.copy_to_host(), np.roll(values, -1) + 1)
        line = surface_shift.pyfunc.__code__.co_firstlineno
        surface_shift[1, 8](simt.Surface(array), False)
        with pytest.raises(simt.RaceConditionError,
                           match=rf"read and write of surf\[0, 0, 0, 1, 0\](.|\n)*"
                                 rf"read: .* thread \(0, 0, 0\) at .*test_textures.py:{line + 3}"
                                 rf"(.|\n)*write: .* thread \(1, 0, 0\) at .*:{line + 6}"):
            simt.synchronize()


def test_texture_argument_errors():
    with simt.use_device("cpu"):
        array = simt.CudaArray((4, 5), np.uint8)
        with pytest.raises(ValueError, match="normalized_float"):
            simt.Texture(array, filter="linear")
        with pytest.raises(ValueError, match="normalized_coords=True"):
            simt.Texture(array, address="wrap")
        with pytest.raises(ValueError, match="32 bytes"):
            simt.Texture(simt.to_device(np.zeros((4, 5), np.float32)))
        with pytest.raises(ValueError, match="surface=True"):
            simt.Surface(array)
        with pytest.raises(TypeError, match="float64"):
            simt.CudaArray(4, np.float64)
        tex = simt.Texture(array)
        with pytest.raises(simt.CompileError, match="simt.tex1D reads a 1D texture"):
            sampler(1, False, 1)[1, 1](tex, *([np.zeros(1, np.float32)] * 3),
                                       np.zeros(1, np.int32), np.zeros((1, 1), np.uint8))


# ------------------------------------------------------------------ CPU against GPU
RESULTS = os.path.join(os.path.dirname(__file__), "..", "bench", "results")
PROBE = os.path.join(RESULTS, "texture-probe-h200-2026-11-21.npz")
SNORM_PROBE = os.path.join(RESULTS, "texture-snorm-probe-h200-2026-11-21.npz")


def _probe_configs():
    from gpu_texture_probe import CONFIGS, SNORM_CONFIGS
    return [pytest.param(PROBE, c, id=c[0]) for c in CONFIGS if not c[-1]] + \
        [pytest.param(SNORM_PROBE, c, id=c[0]) for c in SNORM_CONFIGS]   # gather: test_gather


@pytest.mark.parametrize("path,config", _probe_configs())
def test_cpu_matches_recorded_h200(path, config):
    """The CPU device reproduces fetches recorded on an H200 independently of simt
    (tests/gpu_texture_probe.py: CuPy texture objects and CUDA C), bit for bit."""
    if not os.path.exists(path):
        pytest.skip(f"needs the recorded H200 probe {os.path.basename(path)}")
    name, dtype, shape, filt, address, normalized, read, _ = config
    probe = np.load(path)
    n = 2000
    texels, out = probe[name + ":texels"], probe[name + ":out"][:n]
    coords = [probe[name + ":" + c][:n] for c in "xyz"][:len(shape)]
    s = spec(shape, dtype, filter=filt, address=address, normalized=normalized,
             read_mode="normalized_float" if read == "normalized" else "element")
    with simt.use_device("cpu"):
        got = run_sampler(s, texels, coords, np.zeros(n, np.int32))[:, 0]
    differ = got.view(np.uint32) != out.view(np.uint32)
    assert not differ.any(), f"{differ.sum()} of {n} fetches differ from the H200"


def _recorded_k(probe, label):
    """(texels, weights, K) of a --snorm probe's pairs or quads: texels and weights as
    {corner: array} over the recorded (block, a[, b]) grid, K the recorded results."""
    import gpu_texture_probe as g
    if label.endswith("pairs"):
        values = probe[label + ":pairs"]
        a = np.arange(257)[None, :]
        raw = {(0,): values[:, :1], (1,): values[:, 1:]}
        w = {(0,): 256 - a, (1,): a}
    else:
        values = probe[label + ":quads"]
        a, b = np.arange(257)[None, :, None], np.arange(257)[None, None, :]
        w = g.weights_2d(a, b)
        raw = {(i, j): values[:, j, i][:, None, None] for i, j in w}
    ref = g.reference_k(values.dtype, [(w[c], raw[c]) for c in w])
    return values, raw, w, ref + probe[label + ":dK"]


SNORM_LABELS = ["i8_pairs", "i16_pairs", "u8_pairs", "i8_quads", "i16_quads", "u8_quads"]


@pytest.mark.skipif(not os.path.exists(SNORM_PROBE), reason="needs the recorded H200 probe")
def test_model_matches_recorded_snorm_arithmetic():
    """The model's integer filter against every fetch of the controlled probe: every weight
    on every pair of int8 values (16.8 million fetches), int16 pairs, 2x2 blocks in 2D."""
    probe = np.load(SNORM_PROBE)
    for label in SNORM_LABELS:
        values, raw, w, k = _recorded_k(probe, label)
        kind, size = values.dtype.kind, values.dtype.itemsize
        got = model._filter_normalized(raw, list(w), w, kind, size)
        want = k.astype(np.float32) / np.float32(32767.0 if kind == "i" else 65535.0)
        differ = np.broadcast_to(got, want.shape) != want
        assert not differ.any(), f"{label}: {differ.sum()} of {differ.size} differ"


@pytest.mark.skipif(not os.path.exists(SNORM_PROBE), reason="needs the recorded H200 probe")
@pytest.mark.parametrize("label", SNORM_LABELS)
def test_cpu_matches_recorded_snorm_arithmetic(label):
    """The CPU device against a sample of the controlled probe (all weights on the pairs or
    blocks of edge values, random weights elsewhere), laid out as the probe lays them out."""
    probe = np.load(SNORM_PROBE)
    values, _, _, k = _recorded_k(probe, label)
    rng = np.random.default_rng(zlib.crc32(label.encode()))
    info = np.iinfo(values.dtype)
    edges = [info.min, info.min + 1, -1, 0, 1, info.max // 2 + 1, info.max]
    flat = values.reshape(len(values), -1)
    is_edge = np.isin(flat, edges).all(axis=1)
    if label.endswith("pairs"):
        picked = np.concatenate([np.nonzero(is_edge)[0][:64],
                                 rng.choice(len(values), 192, replace=False)])
        texels = values[picked].reshape(-1)
        j, a = np.divmod(np.arange(len(picked) * 257), 257)
        x = (2 * j + 0.5 + a / 256).astype(np.float32)
        coords, want = [x], k[picked].reshape(-1)
        s = spec(texels.shape, texels.dtype.name, filter="linear", read_mode="normalized_float")
    else:
        m, bw = len(values), 8
        texels = np.zeros((2 * ((m + bw - 1) // bw), 2 * bw), values.dtype)
        for q in range(m):
            texels[2 * (q // bw):2 * (q // bw) + 2, 2 * (q % bw):2 * (q % bw) + 2] = values[q]
        edge = np.nonzero(is_edge)[0][:2]
        grid_a, grid_b = np.meshgrid(np.arange(257), np.arange(0, 257, 16), indexing="ij")
        q = np.concatenate([np.repeat(edge, grid_a.size), rng.integers(0, m, 8192)])
        a = np.concatenate([np.tile(grid_a.ravel(), len(edge)), rng.integers(0, 257, 8192)])
        b = np.concatenate([np.tile(grid_b.ravel(), len(edge)), rng.integers(0, 257, 8192)])
        coords = [(2 * (q % bw) + 0.5 + a / 256).astype(np.float32),
                  (2 * (q // bw) + 0.5 + b / 256).astype(np.float32)]
        want = k[q, a, b]
        s = spec(texels.shape, texels.dtype.name, filter="linear", read_mode="normalized_float")
    with simt.use_device("cpu"):
        got = run_sampler(s, texels, coords, np.zeros(len(want), np.int32))[:, 0]
    scale = np.float32(32767.0 if values.dtype.kind == "i" else 65535.0)
    differ = got != want.astype(np.float32) / scale
    assert not differ.any(), f"{label}: {differ.sum()} of {len(want)} fetches differ"
GPU_SPECS = sorted(SPECS)


def _gpus():
    return [d for d in simt.devices() if d.kind == "cuda"]


@pytest.mark.skipif(not _gpus(), reason="needs a GPU: compares the CPU device with it")
def test_cpu_matches_gpu_bit_for_bit():
    """The same random textures and coordinates on the CPU device and on the GPU give
    identical bits, and both equal the NumPy model of appendix H."""
    gpu = _gpus()[0].name
    failures, dump = [], {}
    for name in GPU_SPECS:
        results = {}
        for dev in ("cpu", gpu):
            with simt.use_device(dev):
                results[dev] = check_spec(name, np.random.default_rng(zlib.crc32(name.encode())))
        cpu, want = results["cpu"]
        got, _ = results[gpu]
        dump[name + ":cpu"], dump[name + ":gpu"], dump[name + ":model"] = cpu, got, want
        if not np.array_equal(cpu.view(np.uint8), got.view(np.uint8)):
            failures.append(f"{name}: {np.sum(np.any(cpu != got, axis=1))} of {len(cpu)} "
                            "fetches differ between cpu and gpu")
        if not np.array_equal(got, want):
            failures.append(f"{name}: the GPU differs from the model")
    if os.environ.get("SIMT_TEXTURE_DUMP"):
        np.savez(os.environ["SIMT_TEXTURE_DUMP"], **dump)
    assert not failures, "\n".join(failures)
