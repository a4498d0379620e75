"""One step of the 2D 5-point heat equation (CUDA by Example ch. 7, without
textures): interior cells move toward their neighbours, edge cells keep their
value. 32x8 threads per block, one cell per thread."""
import numpy as np

import simt
from simt import blockDim, blockIdx, threadIdx
from .base import Case

SPEED = 0.25


@simt.kernel
def heat(src, dst):
    x = blockIdx.x * blockDim.x + threadIdx.x
    y = blockIdx.y * blockDim.y + threadIdx.y
    h = np.int32(src.shape[0])
    w = np.int32(src.shape[1])
    if x < w and y < h:
        c = src[y, x]
        if x > 0 and y > 0 and x < w - 1 and y < h - 1:
            dst[y, x] = c + np.float32(SPEED) * (src[y - 1, x] + src[y + 1, x] + src[y, x - 1]
                                                  + src[y, x + 1] - np.float32(4) * c)
        else:
            dst[y, x] = c


def make(size, rng):
    n = size["n"]
    return {"src": rng.random((n, n), dtype=np.float32), "dst": np.empty((n, n), np.float32)}


def launch(d, size):
    n = size["n"]
    heat[((n + 31) // 32, (n + 7) // 8), (32, 8)](d["src"], d["dst"])


def reference(h, size):
    s = h["src"]
    out = s.copy()
    c = s[1:-1, 1:-1]
    out[1:-1, 1:-1] = c + np.float32(SPEED) * (s[:-2, 1:-1] + s[2:, 1:-1] + s[1:-1, :-2]
                                               + s[1:-1, 2:] - np.float32(4) * c)
    return {"dst": out}


def cupy_step(c, s):
    src, dst = c["src"], c["dst"]
    m = src[1:-1, 1:-1]
    dst[1:-1, 1:-1] = m + np.float32(SPEED) * (src[:-2, 1:-1] + src[2:, 1:-1] + src[1:-1, :-2]
                                               + src[1:-1, 2:] - np.float32(4) * m)


CASES = [Case(
    name="stencil", workload="stencil", sizes={"gpu": {"n": 8192}, "cpu": {"n": 4096}},
    make=make, outputs=["dst"], launch=launch, reference=reference,
    arrays=["src", "dst"], ints=["n"], work=lambda s: (8 * s["n"] ** 2, 7 * s["n"] ** 2),
    kernels=[(heat, "void(float32[:, ::1], float32[:, ::1])")], cupy=cupy_step,
    note="CuPy's version is array slicing (several kernels and temporaries) and skips the edges")]
