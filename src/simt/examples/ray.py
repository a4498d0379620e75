"""CUDA by Example, chapter 6: a ray tracer of random spheres, with the spheres in
global memory (6.2.2) and in constant memory (6.2.3), timed with events (6.3.1).

The book's Sphere struct (r, b, g, radius, x, y, z and a hit() method) is a row of a
float32 table here, read through the column names below, and ``hit`` is a device
function returning (t, n) where the book returns t and writes n through a pointer.

Bugs of the printed listings fixed here: the hit loop never set ``maxz = t``, so the
last sphere hit, not the nearest, coloured a pixel; and the untimed global-memory
listing read a host pointer in the kernel (the spheres are passed as an argument here,
as the timed listing does).
"""
import math

import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from ._common import Example
from .book import CPUBitmap, EventTimer

DIM = 1024
SPHERES = 20
INF = np.float32(2e10)
R, G, B, RADIUS, X, Y, Z = range(7)      # the columns of a sphere

s = simt.Constant(np.zeros((SPHERES, 7), np.float32))     # __constant__ Sphere s[SPHERES]


def random_spheres(seed=0):
    """The book's scene: rnd(x) = x * rand() / RAND_MAX."""
    rng = np.random.default_rng(seed)

    def rnd(x):
        return np.float32(x) * rng.random(SPHERES, dtype=np.float32)
    spheres = np.empty((SPHERES, 7), np.float32)
    spheres[:, R], spheres[:, G], spheres[:, B] = rnd(1.0), rnd(1.0), rnd(1.0)
    spheres[:, X] = rnd(1000.0) - np.float32(500)
    spheres[:, Y] = rnd(1000.0) - np.float32(500)
    spheres[:, Z] = rnd(1000.0) - np.float32(500)
    spheres[:, RADIUS] = rnd(100.0) + np.float32(20)
    return spheres


@simt.device
def hit(sphere, i, ox, oy):
    """Sphere::hit: (depth of the hit or -INF, shading factor n)."""
    dx = ox - sphere[i, X]
    dy = oy - sphere[i, Y]
    radius = sphere[i, RADIUS]
    if dx * dx + dy * dy < radius * radius:
        dz = math.sqrt(radius * radius - dx * dx - dy * dy)
        return dz + sphere[i, Z], dz / math.sqrt(radius * radius)
    return -INF, np.float32(0)


@simt.device
def trace(spheres, ptr, dim):
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    ox = np.float32(x - dim // 2)
    oy = np.float32(y - dim // 2)
    r, g, b = np.float32(0), np.float32(0), np.float32(0)
    maxz = -INF
    for i in range(SPHERES):
        t, n = hit(spheres, i, ox, oy)
        if t > maxz:
            fscale = n
            r = spheres[i, R] * fscale
            g = spheres[i, G] * fscale
            b = spheres[i, B] * fscale
            maxz = t            # missing in the book: without it the last sphere hit wins
    ptr[offset * 4 + 0] = np.int32(r * 255)
    ptr[offset * 4 + 1] = np.int32(g * 255)
    ptr[offset * 4 + 2] = np.int32(b * 255)
    ptr[offset * 4 + 3] = 255


@simt.kernel
def kernel_global(spheres, ptr):
    """6.2.2: the spheres in global memory, passed as an argument."""
    trace(spheres, ptr, blockDim.x * gridDim.x)


@simt.kernel
def kernel_const(ptr):
    """6.2.3: the spheres in constant memory, the module-level symbol ``s``."""
    trace(s, ptr, blockDim.x * gridDim.x)


def render(use_const, dim=DIM, seed=0):
    """Allocate, build the scene, trace and copy back, as the book's main() does;
    returns the CPUBitmap."""
    bitmap = CPUBitmap(dim, dim)
    dev_bitmap = simt.device_array(bitmap.image_size(), np.uint8)
    temp_s = random_spheres(seed)
    grids, threads = (dim // 16, dim // 16), (16, 16)
    if use_const:
        s.copy_from(temp_s)                               # cudaMemcpyToSymbol
        kernel_const[grids, threads](dev_bitmap)
    else:
        dev_s = simt.to_device(temp_s)                    # cudaMalloc + cudaMemcpy
        kernel_global[grids, threads](dev_s, dev_bitmap)
    dev_bitmap.copy_to_host(bitmap.get_ptr())
    return bitmap


def reference(dim, seed=0):
    """The traced image in NumPy, nearest hit first."""
    spheres = random_spheres(seed)
    y, x = np.mgrid[0:dim, 0:dim]
    ox = (x - dim // 2).astype(np.float32)
    oy = (y - dim // 2).astype(np.float32)
    colour = np.zeros((dim, dim, 3), np.float32)
    maxz = np.full((dim, dim), -INF, np.float32)
    for sphere in spheres:
        dx, dy, radius = ox - sphere[X], oy - sphere[Y], sphere[RADIUS]
        inside = dx * dx + dy * dy < radius * radius
        dz = np.sqrt(np.where(inside, radius * radius - dx * dx - dy * dy, np.float32(0)))
        t = np.where(inside, dz + sphere[Z], -INF)
        n = dz / np.sqrt(radius * radius)
        nearer = t > maxz
        colour[nearer] = sphere[[R, G, B]] * n[nearer, None]
        maxz[nearer] = t[nearer]
    image = np.empty((dim, dim, 4), np.uint8)
    image[..., :3] = (colour * np.float32(255)).astype(np.int32)
    image[..., 3] = 255
    return image


def timed(use_const, out_dir=None, dim=DIM, name=None, digits=1):
    """The book's timed main(): one render timed with events, its time printed with
    ``digits`` decimals (the book's one, or more for a bench), the image written as PNG."""
    name = name or ("ray_const.png" if use_const else "ray_noconst.png")
    render(use_const, dim=min(dim, 64))       # compile outside the timing, as nvcc does
    timer = EventTimer()
    bitmap = render(use_const, dim)
    print(f"Time to generate:  {timer.elapsed_ms():3.{digits}f} ms")
    bitmap.display_and_exit(out_dir, name)
    return bitmap.image()


def ray_noconst(device=None, out_dir=None, dim=DIM):
    return timed(False, out_dir, dim)


def ray_const(device=None, out_dir=None, dim=DIM):
    return timed(True, out_dir, dim)


EXAMPLES = [
    Example("ray_noconst", "6.2.2", "ray tracing 20 spheres from global memory, timed (6.2.2, "
            "6.3.1)", ray_noconst),
    Example("ray_const", "6.2.3", "ray tracing 20 spheres from constant memory, timed (6.2.3, "
            "6.3.1)", ray_const),
]
