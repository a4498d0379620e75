"""The Julia set (CUDA by Example ch. 4): 200 iterations of z = z^2 + c per
pixel in float32; here 16x16 threads per block (the book's one-thread blocks
leave 31 of 32 lanes idle on a GPU)."""
import numpy as np

import simt
from simt import blockDim, blockIdx, threadIdx
from .base import Case

SCALE = 1.5
C_RE, C_IM = -0.8, 0.156


@simt.device
def julia_point(x, y, half):
    jx = np.float32(SCALE) * np.float32(half - x) / np.float32(half)
    jy = np.float32(SCALE) * np.float32(half - y) / np.float32(half)
    a_re = jx
    a_im = jy
    for i in range(200):
        a_re, a_im = (a_re * a_re - a_im * a_im + np.float32(C_RE),
                      a_im * a_re + a_re * a_im + np.float32(C_IM))
        if a_re * a_re + a_im * a_im > 1000:
            return 0
    return 1


@simt.kernel
def julia(img):
    x = blockIdx.x * blockDim.x + threadIdx.x
    y = blockIdx.y * blockDim.y + threadIdx.y
    dim = np.int32(img.shape[0])
    if x < dim and y < dim:
        img[y, x] = 255 * julia_point(x, y, dim // 2)


def make(size, rng):
    n = size["n"]
    return {"img": np.empty((n, n), np.uint8)}


def launch(d, size):
    n = size["n"]
    julia[((n + 15) // 16, (n + 15) // 16), (16, 16)](d["img"])


def sample_rows(dim):
    return np.arange(0, dim, max(1, dim // 128))


def reference(h, size):
    """Every (dim // 128)-th row, in NumPy with the book's float32 arithmetic."""
    dim = size["n"]
    half = np.float32(dim // 2)
    y, x = np.meshgrid(sample_rows(dim), np.arange(dim), indexing="ij")
    re = np.float32(SCALE) * (half - x).astype(np.float32) / half
    im = np.float32(SCALE) * (half - y).astype(np.float32) / half
    inside = np.ones(x.shape, bool)
    for _ in range(200):
        r, i = re[inside], im[inside]
        r, i = (r * r - i * i + np.float32(C_RE), i * r + r * i + np.float32(C_IM))
        re[inside], im[inside] = r, i
        inside[inside] = ~(r * r + i * i > 1000)
    return {"img": inside.astype(np.uint8) * 255}


def check(got, expected):
    rows = got["img"][sample_rows(got["img"].shape[0])]
    return np.mean(rows != expected["img"]) <= 2e-3


CASES = [Case(
    name="julia", workload="julia", sizes={"gpu": {"n": 8192}, "cpu": {"n": 1024}},
    make=make, outputs=["img"], launch=launch, reference=reference, check=check,
    arrays=["img"], ints=["n"], work=lambda s: (s["n"] ** 2, 0),
    kernels=[(julia, "void(uint8[:, ::1])")],
    note="FLOPs depend on the escape iteration of each pixel: reported as time only")]
