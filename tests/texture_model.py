"""A NumPy model of texture fetching (guide appendix H and 3.2.12.1), written apart
from simt's LLVM implementation so that each checks the other.

Coordinates in texel units become fixed point with 8 fractional bits (rounded to
nearest, ties up, for linear filtering); nearest-point sampling takes the texel whose cell
holds the coordinate (floor);
linear filtering subtracts 0.5 and weights the 2, 4 or 8 neighbours by 9-bit weights
(the weighted sum is exact before one rounding to float32); each texel index is
remapped by the address mode; border texels are zero.
"""
import itertools

import numpy as np

NORM = {("u", 1): 255.0, ("i", 1): 127.0, ("u", 2): 65535.0, ("i", 2): 32767.0}


def convert(raw, read_mode):
    """Texels as a fetch returns them (before filtering)."""
    kind, size = raw.dtype.kind, raw.dtype.itemsize
    if read_mode == "normalized_float" and kind in "iu":
        value = raw.astype(np.float32) / np.float32(NORM[(kind, size)])
        return np.maximum(value, np.float32(-1.0)) if kind == "i" else value
    if kind == "f":
        return raw.astype(np.float32)
    return raw


def fixed_point(coord, n, normalized, linear):
    u = coord.astype(np.float32)
    if normalized:
        u = u * np.float32(n)
    if linear:
        u = u - np.float32(0.5)
    scaled = np.clip(u.astype(np.float64) * 256.0, -2.0 ** 50, 2.0 ** 50)
    return np.floor(scaled + 0.5 if linear else scaled).astype(np.int64)


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


def taps(coord, n, normalized, linear):
    q = fixed_point(coord, n, normalized, linear)
    i = q >> 8
    if not linear:
        return [(i, None)]
    frac = q & 255
    return [(i, 256 - frac), (i + 1, frac)]


def sample(texels, ndim, layered, filter, modes, normalized, read_mode, coords, layer=None):
    """tex1D/2D/3D (and layered) of a host array in NumPy order with a trailing channel
    axis; coords are (x, y, z)[:ndim]. Returns (len(x), channels)."""
    values = convert(texels, read_mode)
    spatial = values.shape[int(layered):int(layered) + ndim]
    extents = list(reversed(spatial))           # x, y, z
    linear = filter == "linear"
    per_dim = [taps(c, extents[d], normalized, linear) for d, c in enumerate(coords)]
    if layered:
        layer_index = np.clip(layer.astype(np.int64), 0, values.shape[0] - 1)
    total = None
    for combo in itertools.product(*per_dim):
        index, valid = [], np.ones(len(coords[0]), bool)
        for d, (i, _) in enumerate(combo):
            idx, ok = address(i, extents[d], modes[d])
            index.append(idx)
            valid &= ok
        picked = values[((layer_index,) if layered else ()) + tuple(reversed(index))]
        picked = np.where(valid[:, None], picked, 0)
        if not linear:
            return picked
        weight = np.ones(len(valid), np.int64)
        for _, w in combo:
            weight = weight * w
        term = weight.astype(np.float64)[:, None] * 2.0 ** (-8 * ndim) * picked.astype(np.float64)
        total = term if total is None else total + term
    return total.astype(np.float32)


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
