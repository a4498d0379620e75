"""The Julia set (CUDA by Example, chapter 4): one block per pixel, written as a PNG."""
import time

import numpy as np

import simt
from simt import blockIdx, gridDim
from ._common import out_path, save_png

NAME = "julia"
SECTION = "4.2.2.1"
DESCRIPTION = "render the Julia set to a PNG, one block per pixel (4.2.2)"
DIM = 1000
SCALE = 1.5
C_RE, C_IM = -0.8, 0.156


@simt.device
def julia(x, y):
    jx = np.float32(SCALE) * np.float32(DIM // 2 - x) / np.float32(DIM // 2)
    jy = np.float32(SCALE) * np.float32(DIM // 2 - y) / np.float32(DIM // 2)
    a_re, a_im = jx, jy
    for i in range(200):
        a_re, a_im = (a_re * a_re - a_im * a_im + np.float32(C_RE),
                      a_im * a_re + a_re * a_im + np.float32(C_IM))
        if a_re * a_re + a_im * a_im > 1000:
            return 0
    return 1


@simt.kernel
def kernel(ptr):
    x = blockIdx.x
    y = blockIdx.y
    offset = x + y * gridDim.x
    value = julia(x, y)
    ptr[offset * 4 + 0] = 255 * value
    ptr[offset * 4 + 1] = 0
    ptr[offset * 4 + 2] = 0
    ptr[offset * 4 + 3] = 255


def render(dim=DIM):
    """The image as an (dim, dim, 4) uint8 array."""
    bitmap = simt.device_array(dim * dim * 4, np.uint8)
    kernel[(dim, dim), 1](bitmap)
    return bitmap.copy_to_host().reshape(dim, dim, 4)


def reference(dim=DIM):
    """The same computation in NumPy (float32, the book's arithmetic)."""
    half = np.float32(dim // 2)
    y, x = np.mgrid[0:dim, 0:dim]
    re = np.float32(SCALE) * (half - x).astype(np.float32) / half
    im = np.float32(SCALE) * (half - y).astype(np.float32) / half
    inside = np.ones((dim, dim), bool)
    for _ in range(200):
        r, i = re[inside], im[inside]
        r, i = (r * r - i * i + np.float32(C_RE), i * r + r * i + np.float32(C_IM))
        re[inside], im[inside] = r, i
        inside[inside] = ~(r * r + i * i > 1000)
    return inside


def main(device=None, out_dir=None):
    started = time.perf_counter()
    image = render()
    elapsed = time.perf_counter() - started
    path = save_png(out_path(out_dir, "julia.png"), image[::-1])
    print(f"julia on {simt.get_device().name}: {DIM}x{DIM} in {elapsed * 1e3:.0f} ms "
          f"(compile included), {int((image[..., 0] > 0).sum())} points in the set; wrote {path}")
    return path


def julia_cpu(device=None, out_dir=None, dim=DIM):
    """4.2.2's CPU version: the same arithmetic on the host. The book loops over pixels
    in C; a Python loop over a million pixels would take minutes, so NumPy iterates every
    pixel at once (``reference``)."""
    from .book import CPUBitmap
    bitmap = CPUBitmap(dim, dim)
    image = bitmap.image()
    image[..., 0] = 255 * reference(dim)
    image[..., 3] = 255
    bitmap.display_and_exit(out_dir, "julia_cpu.png")
    return image


from ._common import Example  # noqa: E402  (kept beside the list it serves)

EXAMPLES = [Example("julia_cpu", "4.2.2", "the Julia set computed on the host (4.2.2)", julia_cpu)]
