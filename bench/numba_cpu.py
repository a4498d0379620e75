"""numba's CPU versions of the bench/workloads/ computations: ``@njit(parallel=True)`` with
``prange`` over rows or elements, the loops a numba user writes (no blocks, threads or
shared memory), float32 throughout as the kernels'. bench/run_cpu_baselines.py times them.

``twin(case_name)`` gives ``run(h, size)`` that computes the case's outputs into the host
arrays of ``h`` (the names and arguments of bench/workloads/), or None where there is none.
Importing this module needs numba (and numba the NumPy it supports)."""
import math

import numpy as np
from numba import njit, prange

F0 = np.float32(0)
QUARTER = np.float32(0.25)
FOUR = np.float32(4)
EPS2 = np.float32(0.01)
ONE = np.float32(1)


@njit(parallel=True)
def saxpy(a, x, y, out):
    for i in prange(x.shape[0]):
        out[i] = a * x[i] + y[i]


@njit(parallel=True, fastmath=True)
def total(x):
    """fastmath lets LLVM vectorize the sum (several partial sums): without it each
    thread adds 8 million float32 one after another and the total is off by 1e-3."""
    s = F0
    for i in prange(x.shape[0]):
        s += x[i]
    return s


def sum_into(x, partial):
    """The reduction cases' partial sums: the total in slot 0, zeros after it."""
    partial[:] = 0
    partial[0] = total(x)


@njit(parallel=True)
def transpose_rows(a, out):
    n = a.shape[0]
    for i in prange(n):
        for j in range(n):
            out[i, j] = a[j, i]


@njit(parallel=True)
def transpose_blocked(a, out):
    n = a.shape[0]
    tiles = (n + 31) // 32
    for t in prange(tiles * tiles):
        ib = (t // tiles) * 32
        jb = (t % tiles) * 32
        for i in range(ib, min(ib + 32, n)):
            for j in range(jb, min(jb + 32, n)):
                out[i, j] = a[j, i]


@njit(parallel=True)
def matmul(A, B, C):
    n = A.shape[0]
    for i in prange(n):
        for j in range(n):
            C[i, j] = F0
        for k in range(n):
            aik = A[i, k]
            for j in range(n):
                C[i, j] += aik * B[k, j]


@njit(parallel=True)
def histogram(buf, histo):
    """A private histogram per chunk (numba's prange reduces scalars, not arrays)."""
    n = buf.shape[0]
    parts = 64
    private = np.zeros((parts, 256), np.int32)
    for p in prange(parts):
        lo = n * p // parts
        hi = n * (p + 1) // parts
        for i in range(lo, hi):
            private[p, buf[i]] += 1
    for p in range(parts):
        for b in range(256):
            histo[b] += private[p, b]


@njit(parallel=True)
def scan(x, y):
    """Each chunk's total, the totals scanned, then each chunk scanned from its offset."""
    n = x.shape[0]
    parts = 64
    offsets = np.zeros(parts + 1, np.int32)
    for p in prange(parts):
        s = np.int32(0)
        for i in range(n * p // parts, n * (p + 1) // parts):
            s += x[i]
        offsets[p + 1] = s
    for p in range(parts):
        offsets[p + 1] += offsets[p]
    for p in prange(parts):
        run = offsets[p]
        for i in range(n * p // parts, n * (p + 1) // parts):
            run += x[i]
            y[i] = run


@njit(parallel=True)
def stencil(src, dst):
    n = src.shape[0]
    for y in prange(n):
        if y == 0 or y == n - 1:
            for x in range(n):
                dst[y, x] = src[y, x]
        else:
            dst[y, 0] = src[y, 0]
            for x in range(1, n - 1):
                c = src[y, x]
                dst[y, x] = c + QUARTER * (src[y - 1, x] + src[y + 1, x] + src[y, x - 1]
                                           + src[y, x + 1] - FOUR * c)
            dst[y, n - 1] = src[y, n - 1]


@njit(parallel=True, fastmath=False)
def nbody(pos, acc):
    n = pos.shape[0]
    for i in prange(n):
        xi = pos[i, 0]
        yi = pos[i, 1]
        zi = pos[i, 2]
        ax = F0
        ay = F0
        az = F0
        for j in range(n):
            dx = pos[j, 0] - xi
            dy = pos[j, 1] - yi
            dz = pos[j, 2] - zi
            r2 = dx * dx + dy * dy + dz * dz + EPS2
            inv = ONE / math.sqrt(r2)
            s = pos[j, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az
        acc[i, 3] = F0


@njit(parallel=True)
def spmv(rowptr, cols, vals, x, y):
    for row in prange(y.shape[0]):
        s = F0
        for k in range(rowptr[row], rowptr[row + 1]):
            s += vals[k] * x[cols[k]]
        y[row] = s


@njit
def julia_point(x, y, half):
    re = np.float32(1.5) * np.float32(half - x) / np.float32(half)
    im = np.float32(1.5) * np.float32(half - y) / np.float32(half)
    for _ in range(200):
        re, im = (re * re - im * im + np.float32(-0.8), im * re + re * im + np.float32(0.156))
        if re * re + im * im > 1000:
            return 0
    return 1


@njit(parallel=True)
def julia(img):
    n = img.shape[0]
    for y in prange(n):
        for x in range(n):
            img[y, x] = 255 * julia_point(x, y, n // 2)


@njit(parallel=True)
def raytrace(img, spheres):
    n = img.shape[0]
    for y in prange(n):
        for x in range(n):
            ox = np.float32(x - n // 2)
            oy = np.float32(y - n // 2)
            r = F0
            g = F0
            b = F0
            maxz = np.float32(-2e10)
            for i in range(spheres.shape[0]):
                dx = ox - spheres[i, 4]
                dy = oy - spheres[i, 5]
                rad = spheres[i, 3]
                if dx * dx + dy * dy < rad * rad:
                    dz = math.sqrt(rad * rad - dx * dx - dy * dy)
                    t = dz + spheres[i, 6]
                    if t > maxz:
                        sc = dz / rad
                        r = spheres[i, 0] * sc
                        g = spheres[i, 1] * sc
                        b = spheres[i, 2] * sc
                        maxz = t
            img[y, x, 0] = np.int32(r * np.float32(255))
            img[y, x, 1] = np.int32(g * np.float32(255))
            img[y, x, 2] = np.int32(b * np.float32(255))
            img[y, x, 3] = 255


TWINS = {
    "saxpy": lambda h, s: saxpy(h["a"], h["x"], h["y"], h["out"]),
    "reduction_tree": lambda h, s: sum_into(h["x"], h["partial"]),
    "reduction_warp": lambda h, s: sum_into(h["x"], h["partial"]),
    "transpose_naive": lambda h, s: transpose_rows(h["a"], h["out"]),
    "transpose_tiled": lambda h, s: transpose_blocked(h["a"], h["out"]),
    "matmul": lambda h, s: matmul(h["A"], h["B"], h["C"]),
    "histogram_global": lambda h, s: histogram(h["buf"], h["histo"]),
    "histogram_shared": lambda h, s: histogram(h["buf"], h["histo"]),
    "scan": lambda h, s: scan(h["x"], h["y"]),
    "stencil": lambda h, s: stencil(h["src"], h["dst"]),
    "nbody": lambda h, s: nbody(h["pos"], h["acc"]),
    "spmv": lambda h, s: spmv(h["rowptr"], h["cols"], h["vals"], h["x"], h["y"]),
    "julia": lambda h, s: julia(h["img"]),
    "raytrace": lambda h, s: raytrace(h["img"], h["spheres"]),
}


def twin(name):
    return TWINS.get(name)
