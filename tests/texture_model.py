"""A NumPy model of texture fetching (guide appendix H and 3.2.12.1) as an NVIDIA H200
computes it, written apart from simt's LLVM implementation so that each checks the other.
The rules were fitted to fetches recorded on an H200 (docs/textures.md; 20 configurations,
tests/gpu_texture_probe.py, including every weight on every pair of int8 values) and
reproduce them bit for bit.

Coordinates. A normalized coordinate becomes fixed point with 21 fractional bits (floor)
and is multiplied by the extent exactly; an unnormalized one is used as given. Linear
filtering subtracts 0.5 and rounds to 8 fractional bits (nearest, ties up); nearest-point
sampling takes floor. With the clamp address mode, linear filtering clamps the fixed-point
coordinate to [0, n - 1] (visible in 3D through the weight rounding); tex2Dgather does not.

Weights (units of 1/256): 1D (256 - a, a). 2D and each z slice of 3D: the slice's share P
(256, or 256 - c and c) is split by x, x1 = hu(P a), x0 = P - x1, then by y with the
"diagonal" child rounded: w00 = hu(x0 (256 - b)), w01 = x0 - w00, w11 = hu(x1 b),
w10 = x1 - w11, where hu(v) = floor(v / 256 + 1/2).

Sums. Float texels of each slice are aligned to the largest exponent among its taps of
non-zero weight and truncated toward zero to 4 bits below their own precision (28 bits for
float32, 15 for float16); the weighted sum is exact and rounded once, to nearest with ties
away from zero, to float32 (float16 precision for float16 texels). 8/16-bit unsigned
normalized texels are filtered as 16-bit integers (v * 257 or v), rounded half up to a 16-bit
result K, returned as K / 65535. Signed: the weighted sum S of the raw texels (-128 and -32768
included, weights out of 256); int16: K = hu(S); int8: K = hu(256 S + 32 floor(S / 16) +
floor(S / 128)), i.e. S times 33025/32768 ~ 32767/32512 with the two small partial products
truncated; K is clamped at -32767 and the result is K / 32767.
"""
import itertools

import numpy as np

NORM = {("u", 1): 255.0, ("i", 1): 127.0, ("u", 2): 65535.0, ("i", 2): 32767.0}
COORD_BITS = 21          # fractional bits of a normalized coordinate
GUARD_BITS = 4           # bits kept below a float texel's precision when aligned


def convert(raw, read_mode):
    """Texels as a fetch returns them (before filtering)."""
    kind, size = raw.dtype.kind, raw.dtype.itemsize
    if read_mode == "normalized_float" and kind in "iu":
        value = raw.astype(np.float32) / np.float32(NORM[(kind, size)])
        return np.maximum(value, np.float32(-1.0)) if kind == "i" else value
    if kind == "f":
        return raw.astype(np.float32)
    return raw


def fixed_point(coord, n, normalized, linear, address="border"):
    """The coordinate in texel units as fixed point with 8 fractional bits (int64)."""
    if normalized:
        x = np.floor(np.clip(coord.astype(np.float64), -1024.0, 1024.0) * 2.0 ** COORD_BITS)
        u = x.astype(np.int64) * n                     # units of 2^-21 texels, exact
        if linear:
            q = (u * 256 - (255 << (COORD_BITS - 1))) >> COORD_BITS
        else:
            q = (u * 256) >> COORD_BITS
    else:
        scaled = np.clip(coord.astype(np.float64) * 256.0, -2.0 ** 50, 2.0 ** 50)
        q = np.floor(scaled - 127.5 if linear else scaled).astype(np.int64)
    if linear and address == "clamp":
        q = np.clip(q, 0, (n - 1) * 256)
    return q


def address(i, n, mode):
    """(index in [0, n), valid mask) of texel indices i."""
    if mode == "border":
        valid = (i >= 0) & (i < n)
        return np.where(valid, i, 0), valid
    if mode == "wrap":
        return np.mod(i, n), np.ones(i.shape, bool)
    if mode == "mirror":
        r = np.mod(i, 2 * n)
        return np.where(r < n, r, 2 * n - 1 - r), np.ones(i.shape, bool)
    return np.clip(i, 0, n - 1), np.ones(i.shape, bool)


def taps(coord, n, normalized, linear, mode="border"):
    q = fixed_point(coord, n, normalized, linear, mode)
    i = q >> 8
    if not linear:
        return [(i, None)]
    frac = q & 255
    return [(i, 256 - frac), (i + 1, frac)]


def _hu(v):
    return (v + 128) >> 8


def weights(fracs):
    """{(i, j, k) corner: weight out of 256} for the fractions (a[, b[, c]])."""
    if len(fracs) == 1:
        a, = fracs
        return {(0,): 256 - a, (1,): a}
    a, b = fracs[:2]
    shares = [(256,)] if len(fracs) == 2 else [(256 - fracs[2], 0), (fracs[2], 1)]
    out = {}
    for share in shares:
        p, k = share[0], share[1:]
        x1 = _hu(p * a)
        x0 = p - x1
        w00, w11 = _hu(x0 * (256 - b)), _hu(x1 * b)
        for corner, w in (((0, 0), w00), ((0, 1), x0 - w00), ((1, 0), x1 - w11), ((1, 1), w11)):
            out[corner + k] = w
    return out


def _exponent(v):
    """frexp exponent of |v| (v = m 2^e, 1/2 <= |m| < 1); very small for 0."""
    return np.where(v != 0, np.frexp(v)[1], -100000)


def _round_away(v, bits, min_exp):
    """v (float64) rounded to `bits` significant bits, ties away from zero, on a grid no
    finer than 2^min_exp (subnormals of the target format)."""
    e = np.maximum(_exponent(v), min_exp + bits)
    step = np.ldexp(1.0, e - bits)
    return np.where(v == 0, 0.0, np.trunc(np.abs(v) / step + 0.5) * step * np.sign(v))


def _filter_float(values, corners, w, kind_bits):
    """Weighted sum of float texels as the H200 forms it (see the module docstring)."""
    slices = sorted({c[2:] for c in corners})
    total = 0.0
    for s in slices:
        members = [c for c in corners if c[2:] == s]
        # subnormal float32 texels count as exponent -125, as their exponent field does
        e = np.max([np.where(w[c] != 0, np.maximum(_exponent(values[c]), -125), -1000)
                    for c in members], axis=0)
        step = np.ldexp(1.0, e - kind_bits - GUARD_BITS)
        with np.errstate(all="ignore"):
            part = sum(np.where(w[c] != 0, w[c] * (np.trunc(values[c] / step) * step), 0.0)
                       for c in members)
        total = total + part
    total = total / 256.0
    if kind_bits == 11:
        return _round_away(total, 11, -24).astype(np.float32)
    return _round_away(total, 24, -149).astype(np.float32)


def _filter_normalized(raw, corners, w, kind, size):
    """8/16-bit normalized integers: a 16-bit fixed-point filter, K / 65535 (unsigned) or
    K / 32767 (signed)."""
    if kind == "u":
        v16 = {c: raw[c].astype(np.int64) * (257 if size == 1 else 1) for c in corners}
        k = _hu(sum(w[c] * v16[c] for c in corners))
        return k.astype(np.float32) / np.float32(65535.0)
    s = sum(w[c] * raw[c].astype(np.int64) for c in corners)
    if size == 1:                                      # s * 258.0078 in units of 1/256
        s = 256 * s + 32 * (s >> 4) + (s >> 7)
    k = np.maximum(_hu(s), -32767)
    return k.astype(np.float32) / np.float32(32767.0)


def sample(texels, ndim, layered, filter, modes, normalized, read_mode, coords, layer=None):
    """tex1D/2D/3D (and layered) of a host array in NumPy order with a trailing channel
    axis; coords are (x, y, z)[:ndim]. Returns (len(x), channels)."""
    values = convert(texels, read_mode)
    spatial = values.shape[int(layered):int(layered) + ndim]
    extents = list(reversed(spatial))           # x, y, z
    linear = filter == "linear"
    per_dim = [taps(c, extents[d], normalized, linear, modes[d]) for d, c in enumerate(coords)]
    if layered:                                 # the layer is unsigned: -1 is the last one
        layer_index = np.minimum(layer.astype(np.int64) & 0xFFFFFFFF, values.shape[0] - 1)
    picked_raw, picked, corners = {}, {}, []
    for corner in itertools.product(range(len(per_dim[0])), repeat=ndim):
        index, valid = [], np.ones(len(coords[0]), bool)
        for d, t in enumerate(corner):
            idx, ok = address(per_dim[d][t][0], extents[d], modes[d])
            index.append(idx)
            valid &= ok
        where = ((layer_index,) if layered else ()) + tuple(reversed(index))
        picked[corner] = np.where(valid[:, None], values[where], 0)
        picked_raw[corner] = np.where(valid[:, None], texels[where], 0)
        corners.append(corner)
    if not linear:
        return picked[corners[0]]
    w = weights([per_dim[d][1][1] for d in range(ndim)])
    w = {c: w[c][:, None] for c in corners}
    kind, size = texels.dtype.kind, texels.dtype.itemsize
    if kind in "iu":
        return _filter_normalized(picked_raw, corners, w, kind, size)
    bits = 11 if size == 2 else 24
    values64 = {c: picked[c].astype(np.float64) for c in corners}
    return _filter_float(values64, corners, w, bits)


def gather(texels, modes, normalized, read_mode, x, y, comp):
    """tex2Dgather: (N, 4) in CUDA's order T[i, j+1], T[i+1, j+1], T[i+1, j], T[i, j]."""
    values = convert(texels, read_mode)[..., comp]
    h, w = values.shape
    (i0, _), (i1, _) = taps(x, w, normalized, True)
    (j0, _), (j1, _) = taps(y, h, normalized, True)
    out = []
    for i, j in ((i0, j1), (i1, j1), (i1, j0), (i0, j0)):
        xi, xok = address(i, w, modes[0])
        yi, yok = address(j, h, modes[1])
        out.append(np.where(xok & yok, values[yi, xi], 0))
    return np.stack(out, axis=1)


# ------------------------------------------------------------------ cubemaps and mipmaps
# The guide's rules (3.2.12.1.5, table 2; cudaTextureDesc's mipmap fields) with choices it
# leaves open made as backends/cpu/texcube.py and texmip.py make them (docs/textures.md):
# major-axis ties go x, then y, then z; the face coordinates are float32 (s/m + 1) / 2;
# point mipmap filtering reads level floor(lod + 1/2); linear splits the clamped lod into
# a level and an 8-bit fraction f (floor) and blends the two levels' results (256 - f, f)
# / 256, rounded once to float32.

# face: (axis of m, sign, (axis, sign) of s, (axis, sign) of t)
CUBE_FACES = ((0, 1, (2, -1), (1, -1)), (0, -1, (2, 1), (1, -1)),
              (1, 1, (0, 1), (2, 1)), (1, -1, (0, 1), (2, -1)),
              (2, 1, (0, 1), (1, -1)), (2, -1, (0, -1), (1, -1)))


def cube_coords(x, y, z):
    """(face, u, v) of directions (x, y, z): float32 arrays in, u and v float32."""
    xyz = [np.asarray(c, np.float32) for c in (x, y, z)]
    mag = [np.abs(c) for c in xyz]
    axis = np.where((mag[0] >= mag[1]) & (mag[0] >= mag[2]), 0, np.where(mag[1] >= mag[2], 1, 2))
    negative = np.choose(axis, [c < 0 for c in xyz])
    face = 2 * axis + negative
    m, s, t = (np.zeros_like(xyz[0]) for _ in range(3))
    for f, (ax, sign, (sa, ss), (ta, ts)) in enumerate(CUBE_FACES):
        here = face == f
        m = np.where(here, sign * xyz[ax], m)
        s = np.where(here, ss * xyz[sa], s)
        t = np.where(here, ts * xyz[ta], t)
    one, half = np.float32(1.0), np.float32(0.5)
    with np.errstate(all="ignore"):
        u = ((s / m) + one) * half
        v = ((t / m) + one) * half
    return face, u.astype(np.float32), v.astype(np.float32)


def sample_cube(texels, layered, filter, modes, read_mode, x, y, z, layer=None):
    """texCubemap / texCubemapLayered of texels (6, w, w, C) or (layers, 6, w, w, C)."""
    face, u, v = cube_coords(x, y, z)
    w = texels.shape[-2]
    faces = texels.reshape((-1, w, w, texels.shape[-1]))
    index = face.astype(np.int64)
    if layered:
        cubes = faces.shape[0] // 6
        index = index + 6 * np.minimum(layer.astype(np.int64) & 0xFFFFFFFF, cubes - 1)
    return sample(faces, 2, True, filter, modes, True, read_mode, [u, v], index)


def mipmap_lod(lod, bias, low, high, levels):
    """The level of detail a mipmapped fetch uses (float32): lod + bias, clamped."""
    lod = np.asarray(lod, np.float32) + np.float32(bias)
    lod = np.fmin(np.fmax(lod, np.float32(low)), np.float32(high))
    return np.fmin(np.fmax(lod, np.float32(0.0)), np.float32(levels - 1)).astype(np.float32)


def gradient_lod(dx, dy, width, height):
    """tex2DGrad's level of detail: log2 of the longer gradient in texels of level 0."""
    def length2(g):
        a, b = g[0].astype(np.float64) * width, g[1].astype(np.float64) * height
        return a * a + b * b
    with np.errstate(divide="ignore"):
        return (0.5 * np.log2(np.fmax(length2(dx), length2(dy)))).astype(np.float32)


def sample_mipmap(levels, ndim, filter, mipmap_filter, modes, read_mode, coords, lod,
                  bias=0.0, low=0.0, high=None):
    """tex1DLod/2DLod/3DLod of a mipmapped texture: ``levels`` the host arrays of the
    levels (trailing channel axis), normalized coordinates."""
    n = len(levels)
    high = n - 1 if high is None else high
    lod = mipmap_lod(lod, bias, low, high, n).astype(np.float64)
    per_level = [sample(t, ndim, False, filter, modes, True, read_mode, coords) for t in levels]
    stacked = np.stack(per_level)                           # (levels, N, C)
    points = np.arange(len(lod))
    if mipmap_filter == "point":
        return stacked[np.floor(lod + 0.5).astype(np.int64), points]
    q = np.floor(lod * 256.0).astype(np.int64)
    first, frac = q >> 8, q & 255
    second = np.minimum(first + 1, n - 1)
    v0 = stacked[first, points].astype(np.float64)
    v1 = stacked[second, points].astype(np.float64)
    total = (256 - frac)[:, None] * v0 + frac[:, None] * v1
    return (total * 2.0 ** -8).astype(np.float32)
