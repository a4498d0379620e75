"""Dynamic parallelism (guide appendix D): kernels that launch kernels.

``quicksort``: one thread partitions a range and launches a child grid for each half,
down to a depth limit, below which it sorts by selection (the shape of CUDA's
cdpSimpleQuicksort sample). ``mariani_silver``: the Mandelbrot set by Mariani and
Silver's subdivision: a block computes the dwell on its square's border; a border of
one dwell means the inside has it too and a child grid fills it, otherwise the square
is cut into SUBDIV x SUBDIV squares, each a block of a child grid, down to a size where
every pixel is computed. Both run on the GPU and on the CPU device, which runs each
child grid after its parent's.
"""
import time

import numpy as np

import simt
from simt import blockDim, blockIdx, threadIdx
from ._common import Example, out_path, save_png

NAME = "quicksort"
SECTION = "D"
DESCRIPTION = "sort with a recursive quicksort whose kernels launch kernels (appendix D)"

MAX_DEPTH = 16          # deeper ranges are sorted by selection in one thread
SELECTION_BELOW = 32    # so are ranges this short


@simt.device
def selection_sort(data, left, right):
    for i in range(left, right + 1):
        smallest = data[i]
        at = i
        for j in range(i + 1, right + 1):
            if data[j] < smallest:
                smallest = data[j]
                at = j
        if at != i:
            data[at] = data[i]
            data[i] = smallest


@simt.kernel
def quicksort(data, left, right, depth):
    """Sort data[left:right + 1] (one thread): partition, then a child grid per half."""
    if depth >= MAX_DEPTH or right - left <= SELECTION_BELOW:
        selection_sort(data, left, right)
        return
    pivot = data[(left + right) // 2]
    lo = left
    hi = right
    while lo <= hi:
        lval = data[lo]
        rval = data[hi]
        while lval < pivot:
            lo += 1
            lval = data[lo]
        while rval > pivot:
            hi -= 1
            rval = data[hi]
        if lo <= hi:
            data[lo] = rval
            data[hi] = lval
            lo += 1
            hi -= 1
    if left < hi:
        quicksort[1, 1](data, left, hi, depth + 1)
    if lo < right:
        quicksort[1, 1](data, lo, right, depth + 1)


def sort(values):
    """A sorted copy of the 1-D array ``values``, sorted on the current device."""
    data = simt.to_device(np.ascontiguousarray(values))
    if data.size > 1:
        quicksort[1, 1](data, 0, data.size - 1, 0)
    return data.copy_to_host()


def main(device=None, out_dir=None, n=100_000):
    values = np.random.default_rng(1).random(n).astype(np.float32)
    sort(values[:1000])                              # compile
    started = time.perf_counter()
    result = sort(values)
    elapsed = time.perf_counter() - started
    ok = np.array_equal(result, np.sort(values))
    print(f"quicksort on {simt.get_device().name}: {n} float32 in {elapsed * 1e3:.1f} ms "
          f"with kernels launching kernels; {'sorted' if ok else 'NOT SORTED'}")
    return ok


# ------------------------------------------------------------------ Mariani-Silver
MAX_DWELL = 256
BLOCK = (16, 16)
INIT_SUBDIV = 4         # the host's grid: INIT_SUBDIV x INIT_SUBDIV squares
SUBDIV = 4              # each square that is not uniform: SUBDIV x SUBDIV children
MIN_SIZE = 16           # squares this small are computed pixel by pixel
MS_DEPTH = 5            # and so are squares this deep
NEUTRAL, DIFFERENT = -1, -2
AREA = (-1.5, -1.0, 0.5, 1.0)     # (re min, im min, re max, im max)


@simt.device
def dwell(w, h, x, y):
    """Escape time of pixel (x, y): iterations of z = z * z + c before |z| >= 2."""
    c_re = AREA[0] + x * ((AREA[2] - AREA[0]) / w)
    c_im = AREA[1] + y * ((AREA[3] - AREA[1]) / h)
    z_re = c_re
    z_im = c_im
    n = 0
    while n < MAX_DWELL and z_re * z_re + z_im * z_im < 4.0:
        z_re, z_im = z_re * z_re - z_im * z_im + c_re, 2.0 * z_re * z_im + c_im
        n += 1
    return n


@simt.device
def combine(a, b):
    """The common dwell of two sets of pixels: NEUTRAL for none, DIFFERENT if they differ."""
    if a == b or b == NEUTRAL:
        return a
    if a == NEUTRAL:
        return b
    return DIFFERENT


@simt.kernel
def fill(dwells, x0, y0, d, value):
    x = x0 + blockIdx.x * blockDim.x + threadIdx.x
    y = y0 + blockIdx.y * blockDim.y + threadIdx.y
    if x < x0 + d and y < y0 + d and y < dwells.shape[0] and x < dwells.shape[1]:
        dwells[y, x] = value


@simt.kernel
def per_pixel(dwells, x0, y0, d):
    x = x0 + blockIdx.x * blockDim.x + threadIdx.x
    y = y0 + blockIdx.y * blockDim.y + threadIdx.y
    h, w = dwells.shape
    if x < x0 + d and y < y0 + d and y < h and x < w:
        dwells[y, x] = dwell(w, h, x, y)


@simt.kernel
def square(dwells, x0, y0, d, depth):
    """One block per square of side d: its border's dwell decides how its inside is done."""
    h, w = dwells.shape
    x0 += blockIdx.x * d
    y0 += blockIdx.y * d
    tid = threadIdx.y * blockDim.x + threadIdx.x
    count = blockDim.x * blockDim.y
    common = NEUTRAL
    for side in range(4):
        for i in range(tid, d, count):
            x = x0 + i if side < 2 else x0 + (d - 1) * (side - 2)
            y = y0 + (d - 1) * side if side < 2 else y0 + i
            if x < w and y < h:
                common = combine(common, dwell(w, h, x, y))
    seen = simt.shared.array(BLOCK[0] * BLOCK[1], np.int32)
    seen[tid] = common
    simt.syncthreads()
    step = count // 2
    while step > 0:
        if tid < step:
            seen[tid] = combine(seen[tid], seen[tid + step])
        simt.syncthreads()
        step //= 2
    if tid == 0 and seen[0] != NEUTRAL:
        cells = ((d + BLOCK[0] - 1) // BLOCK[0], (d + BLOCK[1] - 1) // BLOCK[1])
        if seen[0] != DIFFERENT:
            fill[cells, BLOCK](dwells, x0, y0, d, seen[0])
        elif depth + 1 < MS_DEPTH and d // SUBDIV >= MIN_SIZE:
            square[(SUBDIV, SUBDIV), BLOCK](dwells, x0, y0, d // SUBDIV, depth + 1)
        else:
            per_pixel[cells, BLOCK](dwells, x0, y0, d)


def pending_launches(side):
    """The most child grids the subdivision can have queued at once: every square block
    launches at most one, and a whole level can be waiting (2048, the default limit, is
    too few at 1024x1024: 16 + 256 + 4096 squares)."""
    blocks, depth, total = INIT_SUBDIV * INIT_SUBDIV, 1, 0
    while True:
        total += blocks
        if not (depth + 1 < MS_DEPTH and side // SUBDIV >= MIN_SIZE):
            return total
        blocks, side, depth = blocks * SUBDIV * SUBDIV, side // SUBDIV, depth + 1


def mandelbrot(size):
    """The (size, size) int32 dwells, by Mariani-Silver subdivision from the device."""
    dwells = simt.device_array((size, size), np.int32)
    side = -(-size // INIT_SUBDIV)
    needed = pending_launches(side)
    if simt.get_limit("dev_runtime_pending_launch_count") < needed:
        simt.set_limit("dev_runtime_pending_launch_count", needed)
    square[(INIT_SUBDIV, INIT_SUBDIV), BLOCK](dwells, 0, 0, side, 1)
    return dwells.copy_to_host()


def reference(size):
    """Every pixel's dwell in NumPy (no subdivision)."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float64)
    c_re = AREA[0] + x * ((AREA[2] - AREA[0]) / size)
    c_im = AREA[1] + y * ((AREA[3] - AREA[1]) / size)
    z_re, z_im = c_re.copy(), c_im.copy()
    out = np.zeros((size, size), np.int32)
    live = np.ones((size, size), bool)
    for _ in range(MAX_DWELL):
        live &= z_re * z_re + z_im * z_im < 4.0
        out += live
        z_re, z_im = (np.where(live, z_re * z_re - z_im * z_im + c_re, z_re),
                      np.where(live, 2.0 * z_re * z_im + c_im, z_im))
    return out


def picture(dwells):
    """An RGBA image of dwells: the set black, the outside by dwell."""
    t = np.sqrt(dwells / MAX_DWELL)
    rgba = np.empty(dwells.shape + (4,), np.uint8)
    rgba[..., 0] = 255 * t
    rgba[..., 1] = 255 * t ** 2
    rgba[..., 2] = 255 * np.sqrt(t)
    rgba[..., 3] = 255
    rgba[dwells >= MAX_DWELL, :3] = 0
    return rgba


def mariani_silver_main(device=None, out_dir=None, size=1024):
    mandelbrot(64)                                   # compile
    started = time.perf_counter()
    dwells = mandelbrot(size)
    elapsed = time.perf_counter() - started
    path = save_png(out_path(out_dir, "mariani_silver.png"), picture(dwells)[::-1])
    print(f"mariani_silver on {simt.get_device().name}: {size}x{size} in "
          f"{elapsed * 1e3:.1f} ms by subdividing from the device; wrote {path}")
    return path


EXAMPLES = [Example("mariani_silver", "D", "the Mandelbrot set by Mariani-Silver "
                    "subdivision, kernels launching kernels (appendix D)",
                    mariani_silver_main)]
