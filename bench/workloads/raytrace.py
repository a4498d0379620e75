"""Ray tracing spheres held in constant memory (CUDA by Example ch. 6): each
pixel casts one ray along z through 20 spheres and shades the nearest hit."""
import math

import numpy as np

import simt
from simt import blockDim, blockIdx, threadIdx
from .base import Case

NSPHERES = 20
INF = 2e10


def spheres(dim, seed=7):
    """Rows of (r, g, b, radius, x, y, z), float32, scattered over the image as the book's."""
    rng = np.random.default_rng(seed)
    s = np.empty((NSPHERES, 7), np.float32)
    s[:, 0:3] = rng.random((NSPHERES, 3))
    s[:, 3] = rng.random(NSPHERES) * dim / 10 + dim / 50
    s[:, 4:7] = rng.random((NSPHERES, 3)) * dim - dim / 2
    return s


SPHERES = simt.Constant(spheres(8192))


@simt.kernel
def raytrace(img):
    x = blockIdx.x * blockDim.x + threadIdx.x
    y = blockIdx.y * blockDim.y + threadIdx.y
    dim = np.int32(img.shape[0])
    if x < dim and y < dim:
        ox = np.float32(x - dim // 2)
        oy = np.float32(y - dim // 2)
        r = np.float32(0)
        g = np.float32(0)
        b = np.float32(0)
        maxz = np.float32(-INF)
        for i in range(NSPHERES):
            dx = ox - SPHERES[i, 4]
            dy = oy - SPHERES[i, 5]
            rad = SPHERES[i, 3]
            if dx * dx + dy * dy < rad * rad:
                dz = math.sqrt(rad * rad - dx * dx - dy * dy)
                t = dz + SPHERES[i, 6]
                if t > maxz:
                    scale = dz / rad
                    r = SPHERES[i, 0] * scale
                    g = SPHERES[i, 1] * scale
                    b = SPHERES[i, 2] * scale
                    maxz = t
        img[y, x, 0] = np.int32(r * np.float32(255))
        img[y, x, 1] = np.int32(g * np.float32(255))
        img[y, x, 2] = np.int32(b * np.float32(255))
        img[y, x, 3] = 255


def make(size, rng):
    n = size["n"]
    SPHERES.copy_from(spheres(n))
    return {"img": np.empty((n, n, 4), np.uint8), "spheres": spheres(n)}


def launch(d, size):
    n = size["n"]
    raytrace[((n + 15) // 16, (n + 15) // 16), (16, 16)](d["img"])


def reference(h, size):
    n = size["n"]
    s = spheres(n).astype(np.float32)
    y, x = np.mgrid[0:n:max(1, n // 256), 0:n]
    ox = (x - n // 2).astype(np.float32)
    oy = (y - n // 2).astype(np.float32)
    rgb = np.zeros(ox.shape + (3,), np.float32)
    maxz = np.full(ox.shape, -INF, np.float32)
    for row in s:
        dx, dy = ox - row[4], oy - row[5]
        hit = dx * dx + dy * dy < row[3] * row[3]
        dz = np.sqrt(np.where(hit, row[3] * row[3] - dx * dx - dy * dy, 0)).astype(np.float32)
        t = dz + row[6]
        near = hit & (t > maxz)
        rgb[near] = row[None, 0:3] * (dz[near] / row[3])[:, None]
        maxz[near] = t[near]
    out = np.empty(ox.shape + (4,), np.uint8)
    out[..., :3] = (rgb * 255).astype(np.int32)
    out[..., 3] = 255
    return {"img": out}


def check(got, expected):
    n = got["img"].shape[0]
    sample = got["img"][::max(1, n // 256)].astype(np.int32)
    return np.mean(np.abs(sample - expected["img"]) > 1) <= 2e-3


CASES = [Case(
    name="raytrace", workload="raytrace", sizes={"gpu": {"n": 8192}, "cpu": {"n": 2048}},
    make=make, outputs=["img"], launch=launch, reference=reference, check=check,
    arrays=["img", "spheres"], ints=["n"], work=lambda s: (4 * s["n"] ** 2, 0),
    kernels=[(raytrace, "void(uint8[:, :, ::1])")], numba=False,
    note="the spheres reach the C twins as an array argument; the CUDA twin copies them to "
         "__constant__ memory before timing")]
