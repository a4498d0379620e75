"""Texture fetches and surface accesses on the sim device, one thread's at a time, in
Python: the H200's arithmetic (docs/textures.md) as backends/cpu/textures.py emits it in
LLVM IR and tests/texture_model.py states it in NumPy. Coordinates become fixed point with
8 fractional bits (normalized ones first with 21, floor), linear filtering weighs the taps
by integers out of 256 rounded as the GPU rounds them, float texels are aligned to the
largest exponent of their z slice and truncated 4 bits below their precision, and 8/16-bit
integers read as normalized floats are filtered as 16-bit fixed point.

A texture or surface argument reaches generated code as a ``SimTexture``: its texels,
indexed (layers, z, y, x, channels), and its type (ir/types.py ``Texture``/``Surface``).
A texture's texels are a NumPy array; a surface's are a checked sim array over the same
memory (launch.py), so surface accesses are race-checked as global memory is.
lower/textures.py writes the calls; device.py binds this module as ``_k_tx``.
"""
import ctypes
import math

import numpy as np

from ..hosttexels import HostArray
from .values import f32

FRACTION_BITS = 8                      # appendix H: 8 fractional bits of coordinates and weights
COORD_BITS = 21                        # fractional bits of a normalized coordinate (H200)
GUARD_BITS = 4                         # bits kept below a float texel's precision when filtered
_NORM_SCALE = {("u", 1): 255.0, ("i", 1): 127.0, ("u", 2): 65535.0, ("i", 2): 32767.0}


class SimTexture:
    """A texture or surface as kernels on the sim device see it: ``texels`` of shape
    (layers, depth, height, width, channels) (a NumPy array, or for a surface a checked
    memory.SimArray) and ``extent`` (width, height, depth, layers)."""

    def __init__(self, t, texels):
        self.t = t
        self.texels = texels
        layers, depth, height, width, _ = texels.shape
        self.extent = (width, height, depth, layers)
        self.float_texels = t.dtype.kind == "f"
        self.normalized = t.read_mode == "normalized_float" if hasattr(t, "read_mode") else False

    def __repr__(self):
        return f"<sim {self.t}>"


class SimMipmap:
    """A texture over a MipmappedArray: a SimTexture per level, the level bias and clamps."""

    def __init__(self, t, levels, bias, low, high):
        self.t, self.levels, self.bias, self.low, self.high = t, levels, bias, low, high
        self.extent = levels[0].extent


class Levels:
    """A MipmappedArray's storage on the sim device: each level's texels in a host buffer
    (runtime/textures.py asks ``level(l, array)`` for level l's)."""

    def __init__(self, backend, mipmap):
        self.backend, self.levels = backend, [None] * mipmap.levels

    def level(self, index, array):
        self.levels[index] = HostArray(self.backend, array)
        return self.levels[index]


def kernel_object(t, value):
    """The SimTexture (SimMipmap) of a simt.Texture argument ``value`` of type ``t``."""
    if t.source == "mipmap":
        mipmap = value.source
        levels = [SimTexture(t, _array_texels(mipmap.level(l))) for l in range(mipmap.levels)]
        return SimMipmap(t, levels, *(f32(v) for v in value.mipmap_levels))
    return SimTexture(t, texels(t, value))


def _array_texels(array):
    impl = array._impl                          # backends/hosttexels.HostArray
    host = impl.host
    lead = impl.lead
    spatial = host.shape[lead:lead + impl.ndim]
    shape = (int(np.prod(host.shape[:lead], dtype=np.int64)),) + \
        (1,) * (3 - impl.ndim) + tuple(spatial) + (array.channels,)
    return host.reshape(shape)


def texels(t, value):
    """The texels of a simt.Texture or simt.Surface as a NumPy array (layers, depth, height,
    width, channels) over their memory."""
    source = value.source
    kind = getattr(t, "source", "array")
    if kind == "array":
        return _array_texels(source)
    # linear or pitched 2D device memory: a view of the allocation, read when fetched
    shape = (1, 1) + ((1,) if kind == "linear" else ()) + tuple(source.shape) + (1,)
    strides = (0, 0) + ((0,) if kind == "linear" else ()) + tuple(source.strides) + \
        (source.itemsize,)
    nbytes = sum((n - 1) * s for n, s in zip(source.shape, source.strides)) + source.itemsize
    buffer = (ctypes.c_char * nbytes).from_address(source.ptr)
    return np.ndarray(shape, source.dtype, buffer=buffer, strides=strides)


# ------------------------------------------------------------------ texels
def _channels(tex, index, valid):
    """The converted channels at index (x, y, z, layer); zeros where not valid."""
    if not valid:
        return [0.0 if tex.float_texels or tex.normalized else 0] * tex.t.channels
    x, y, z, layer = index
    return [_convert(tex, v) for v in tex.texels[layer, z, y, x].tolist()]


def _raw(tex, index, valid):
    if not valid:
        return [0] * tex.t.channels
    x, y, z, layer = index
    return tex.texels[layer, z, y, x].tolist()


def _convert(tex, raw):
    dtype = tex.t.dtype
    if tex.normalized and dtype.kind in "iu":
        value = f32(raw / _NORM_SCALE[(dtype.kind, dtype.itemsize)])
        return max(value, -1.0) if dtype.kind == "i" else value
    return float(raw) if dtype.kind == "f" else raw


def _result(values):
    return values[0] if len(values) == 1 else tuple(values)


# ------------------------------------------------------------------ addressing
def _address(mode, i, n):
    """(index in [0, n), valid) of texel index i under an address mode."""
    if mode == "border":
        return (i, True) if 0 <= i < n else (0, False)
    if mode == "wrap":
        return i % n, True
    if mode == "mirror":
        r = i % (2 * n)
        return (r if r < n else 2 * n - 1 - r), True
    return min(max(i, 0), n - 1), True


def _fixed_point(tex, x, n, linear, mode):
    """The coordinate in texel units as fixed point with 8 fractional bits; NaN reads as
    the lowest coordinate, as LLVM's maxnum makes it on the cpu device."""
    if tex.t.normalized_coords:
        limit = float(1024 << COORD_BITS)
        scaled = x * float(1 << COORD_BITS)
        scaled = -limit if scaled != scaled else min(max(scaled, -limit), limit)
        u = (math.floor(scaled) * n) << FRACTION_BITS
        if linear:
            u -= 255 << (COORD_BITS - 1)                # - 0.5 + 1/512: ties up
        q = u >> COORD_BITS
    else:
        scaled = x * float(1 << FRACTION_BITS)
        scaled = -2.0 ** 50 if scaled != scaled else min(max(scaled, -2.0 ** 50), 2.0 ** 50)
        q = math.floor(scaled - 127.5 if linear else scaled)
    if linear and mode == "clamp":
        q = min(max(q, 0), (n - 1) << FRACTION_BITS)
    return q


def _taps(tex, x, n, linear, mode):
    q = _fixed_point(tex, x, n, linear, mode)
    i = q >> FRACTION_BITS
    if not linear:
        return [(i, None)]
    frac = q & 255
    return [(i, 256 - frac), (i + 1, frac)]


def _hu(v):
    return (v + 128) >> 8


def _weights(fracs):
    """{corner: weight out of 256}: the H200's rounding (texture_model.weights)."""
    if len(fracs) == 1:
        return {(0,): 256 - fracs[0], (1,): fracs[0]}
    a, b = fracs[0], fracs[1]
    shares = [(256, ())] if len(fracs) == 2 else [(256 - fracs[2], (0,)), (fracs[2], (1,))]
    out = {}
    for p, k in shares:
        x1 = _hu(p * a)
        x0 = p - x1
        w00, w11 = _hu(x0 * (256 - b)), _hu(x1 * b)
        out[(0, 0) + k], out[(0, 1) + k] = w00, x0 - w00
        out[(1, 0) + k], out[(1, 1) + k] = x1 - w11, w11
    return out


def _layer(tex, layer):
    """The layer as an unsigned number clamped to the last layer (-1 is the last)."""
    return min(layer & 0xFFFFFFFF, tex.extent[3] - 1)


# ------------------------------------------------------------------ fetches
def sample(tex, coords, layer=None):
    """tex1D/2D/3D and the layered forms: nearest-point or linear filtering."""
    t = tex.t
    linear = t.filter == "linear"
    extent = tex.extent
    per_dim = [_taps(tex, x, extent[d], linear, t.address[d]) for d, x in enumerate(coords)]
    layer_index = 0 if layer is None else _layer(tex, layer)
    raw = linear and t.dtype.kind in "iu"
    picked = {}
    for corner in _corners(len(coords), 2 if linear else 1):
        index, valid = [0, 0, 0, layer_index], True
        for d, tap in enumerate(corner):
            index[d], ok = _address(t.address[d], per_dim[d][tap][0], extent[d])
            valid = valid and ok
        picked[corner] = _raw(tex, index, valid) if raw else _channels(tex, index, valid)
    if not linear:
        return _result(picked[(0,) * len(coords)])
    w = _weights([per_dim[d][1][1] for d in range(len(coords))])
    filt = _filter_normalized if raw else _filter_float
    return _result([filt(t, {c: (w[c], picked[c][ch]) for c in picked})
                    for ch in range(t.channels)])


def _corners(ndim, taps):
    if ndim == 0:
        return [()]
    return [c + (k,) for c in _corners(ndim - 1, taps) for k in range(taps)]


def _trunc(v):
    return float(math.trunc(v)) if math.isfinite(v) else v


def _exponent_field(v):
    """The float32 exponent field of v (a float32 value), 1 for subnormals."""
    if not math.isfinite(v):
        return 255
    return max(math.frexp(v)[1] + 126, 1)


def _filter_float(t, terms):
    """The H200's linear filter of float texels (cpu/textures.py _filter_float)."""
    bits = 11 if t.dtype.itemsize == 2 else 24
    slices = {}
    for corner, term in terms.items():
        slices.setdefault(corner[2:], []).append(term)
    total = 0.0
    for members in slices.values():               # each slice's sum is exact
        top = max((_exponent_field(v) if w != 0 and v != 0 else 0) for w, v in members)
        shift = top - 126 - bits - GUARD_BITS
        step, inverse = math.ldexp(1.0, shift), math.ldexp(1.0, -shift)
        total += sum(w * (_trunc(v * inverse) * step) for w, v in members)
    total *= 2.0 ** -FRACTION_BITS
    return f32(_round_away(total, bits, -24 if bits == 11 else -149))


def _round_away(v, bits, min_exp):
    """v rounded to ``bits`` significant bits, ties away from zero, on a grid no finer than
    2^min_exp (the target format's subnormals)."""
    if v == 0 or not math.isfinite(v):
        return v
    e = max(math.frexp(v)[1], min_exp + bits)
    step = math.ldexp(1.0, e - bits)
    return math.copysign(math.trunc(abs(v) / step + 0.5) * step, v)


def _filter_normalized(t, terms):
    """8/16-bit normalized integers: a 16-bit fixed-point filter (cpu/textures.py)."""
    kind, size = t.dtype.kind, t.dtype.itemsize
    total = 0
    for w, v in terms.values():
        total += w * (v * 257 if kind == "u" and size == 1 else v)
    if kind == "i" and size == 1:
        total = 256 * total + 32 * (total >> 4) + (total >> 7)
    k = _hu(total)
    if kind == "u":
        return f32(k / 65535.0)
    return f32(max(k, -32767) / 32767.0)


# face: (axis of m, sign of the axis, (axis, sign) of s, (axis, sign) of t): cpu/texcube.py
CUBE_FACES = ((0, 1, (2, -1), (1, -1)), (0, -1, (2, 1), (1, -1)),
              (1, 1, (0, 1), (2, 1)), (1, -1, (0, 1), (2, -1)),
              (2, 1, (0, 1), (1, -1)), (2, -1, (0, -1), (1, -1)))


def _divide(a, b):
    """a / b as IEEE arithmetic gives it (Python raises for b == 0)."""
    if b != 0:
        return a / b
    if a != a or a == 0:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def cube(tex, xyz, layer=None):
    """texCubemap and texCubemapLayered: the face of the coordinate of largest magnitude m
    (ties: x, then y, then z), read as a layer at the float32 coordinates ((s/m + 1) / 2,
    (t/m + 1) / 2) (guide 3.2.12.1.5, table 2; cpu/texcube.py)."""
    mag = [abs(c) for c in xyz]
    axis = 0 if mag[0] >= mag[1] and mag[0] >= mag[2] else (1 if mag[1] >= mag[2] else 2)
    face = 2 * axis + (xyz[axis] < 0.0)
    ax, sign, (sa, ss), (ta, ts) = CUBE_FACES[face]
    m = xyz[ax] if sign > 0 else -xyz[ax]
    s = xyz[sa] if ss > 0 else -xyz[sa]
    t = xyz[ta] if ts > 0 else -xyz[ta]
    u = f32(f32(f32(_divide(s, m)) + 1.0) * 0.5)
    v = f32(f32(f32(_divide(t, m)) + 1.0) * 0.5)
    if layer is not None:                       # unsigned: -1 is the last cubemap
        face += 6 * min(layer & 0xFFFFFFFF, tex.extent[3] // 6 - 1)
    return sample(tex, (u, v), face)


# ------------------------------------------------------------------ mipmaps (cpu/texmip.py)
LEVEL_FRACTION_BITS = 8


def _maxnum(a, b):
    return b if a != a else (a if b != b else max(a, b))


def _minnum(a, b):
    return b if a != a else (a if b != b else min(a, b))


def lod(tex, coords, level):
    """tex1DLod/2DLod/3DLod: a mipmapped texture at level of detail ``level`` (lod + bias,
    clamped to the clamps and the levels; 'point' reads level floor(lod + 1/2), 'linear'
    blends levels l and l + 1 by the lod's 8-bit fraction); level 0 of a plain array."""
    if not isinstance(tex, SimMipmap):
        return sample(tex, coords)
    last = len(tex.levels) - 1
    level = _minnum(_maxnum(f32(level + tex.bias), tex.low), tex.high)
    level = _minnum(_maxnum(level, 0.0), float(last))
    if tex.t.mipmap_filter == "point":
        return sample(tex.levels[math.floor(level + 0.5)], coords)
    q = math.floor(level * float(1 << LEVEL_FRACTION_BITS))
    first, frac = q >> LEVEL_FRACTION_BITS, q & ((1 << LEVEL_FRACTION_BITS) - 1)
    second = first + 1 if first < last else last
    low, high = sample(tex.levels[first], coords), sample(tex.levels[second], coords)
    w_low, w_high = float((1 << LEVEL_FRACTION_BITS) - frac), float(frac)
    scale = 2.0 ** -LEVEL_FRACTION_BITS
    if not isinstance(low, tuple):
        return f32((w_low * low + w_high * high) * scale)
    return tuple(f32((w_low * a + w_high * b) * scale) for a, b in zip(low, high))


def grad(tex, coords, dx, dy):
    """tex2DGrad: the level of detail 0.5 log2(max(|dx * (w, h)|^2, |dy * (w, h)|^2)) in
    texels of level 0, in double, as float32."""
    width, height = tex.extent[0], tex.extent[1]

    def length2(g):
        a, b = g[0] * width, g[1] * height
        return a * a + b * b

    rho2 = _maxnum(length2(dx), length2(dy))
    log2 = math.log2(rho2) if rho2 > 0 and rho2 != math.inf else \
        (-math.inf if rho2 == 0 else (rho2 if rho2 == math.inf else math.nan))
    return lod(tex, coords, f32(log2 * 0.5))


def fetch(tex, i):
    """tex1Dfetch: the texel at integer index i, zero outside [0, n)."""
    return _result(_channels(tex, [i, 0, 0, 0], 0 <= i < tex.extent[0]))


def gather(tex, x, y, comp):
    """tex2Dgather: channel ``comp`` of the four bilinear texels, in CUDA's order."""
    t = tex.t
    (i0, _), (i1, _) = _taps(tex, x, tex.extent[0], True, None)
    (j0, _), (j1, _) = _taps(tex, y, tex.extent[1], True, None)
    out = []
    for i, j in ((i0, j1), (i1, j1), (i1, j0), (i0, j0)):
        xi, xok = _address(t.address[0], i, tex.extent[0])
        yi, yok = _address(t.address[1], j, tex.extent[1])
        out.append(_channels(tex, [xi, yi, 0, 0], xok and yok)[comp])
    return tuple(out)


# ------------------------------------------------------------------ surfaces
def _surface_index(launch, site, surf, mode, coords):
    """(x, y, z, layer) of a surface access, or None where boundary='zero' leaves it out;
    an out-of-range coordinate with boundary='trap' is an IllegalAddressError at the
    user's line, as on the cpu device (x is a byte offset)."""
    t = surf.t
    texel_bytes = t.dtype.itemsize * t.channels
    width, height, depth, layers = surf.extent
    layered = t.layered or t.cubemap                # the layer (or face) follows x, y
    extents = [width * texel_bytes, height, depth][:t.ndim] + ([layers] if layered else [])
    index = []
    for d, (c, n) in enumerate(zip(coords, extents)):
        if not 0 <= c < n:
            if mode == "trap":
                launch.out_of_bounds(site, c, d, n, _Label(launch, site))
            if mode == "zero":
                return None
            c = min(max(c, 0), n - 1)
        index.append(c // texel_bytes if d == 0 else c)
    layer = index.pop() if layered else 0
    index += [0] * (3 - t.ndim)
    return index + [layer]


class _Label:
    def __init__(self, launch, site):
        self.label = launch.sites[site].label or "surface"


def surf_read(launch, site, surf, mode, coords):
    index = _surface_index(launch, site, surf, mode, coords)
    if index is None:
        return _result([0.0 if surf.float_texels else 0] * surf.t.channels)
    x, y, z, layer = index
    ld = surf.texels.ld
    return _result([ld(site, layer, z, y, x, c) for c in range(surf.t.channels)])


def surf_write(launch, site, surf, mode, coords, values):
    index = _surface_index(launch, site, surf, mode, coords)
    if index is not None:
        x, y, z, layer = index
        st = surf.texels.st
        for c, v in enumerate(values):
            st(site, v, layer, z, y, x, c)
