"""Heat transfer (CUDA by Example, chapter 7): a 1024x1024 plate with fixed heaters and
coolers; each frame runs 90 steps of "copy the constant cells, blend each cell with its
four neighbours", then colours the temperatures. Three versions, as in the book: plain
global memory (7.3.3), 1D textures read with tex1Dfetch (7.3.4) and 2D textures read
with tex2D over pitched memory (7.3.5), where clamp addressing handles the edges.
"""

import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from ._common import Example, out_path, save_png
from .book import float_to_color

DIM = 1024
MAX_TEMP = np.float32(1.0)
MIN_TEMP = np.float32(0.0001)
SPEED = np.float32(0.25)
STEPS = 90                       # blend steps per frame, as in the book


# ------------------------------------------------------------------ global memory (7.3.3)
@simt.kernel
def copy_const_kernel(iptr, cptr):
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    if cptr[offset] != 0:
        iptr[offset] = cptr[offset]


@simt.kernel
def blend_kernel(out_src, in_src, dim):
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    left = offset - 1
    right = offset + 1
    if x == 0:
        left += 1
    if x == dim - 1:
        right -= 1
    top = offset - dim
    bottom = offset + dim
    if y == 0:
        top += dim
    if y == dim - 1:
        bottom -= dim
    out_src[offset] = in_src[offset] + SPEED * (in_src[top] + in_src[bottom] + in_src[left]
                                                + in_src[right] - in_src[offset] * 4)


# ------------------------------------------------------------------ 1D textures (7.3.4)
@simt.kernel
def copy_const_tex1d(iptr, tex_const):
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    c = tex_const.fetch(offset)
    if c != 0:
        iptr[offset] = c


@simt.kernel
def blend_tex1d(dst, tex_in, dim):
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    left = offset - 1
    right = offset + 1
    if x == 0:
        left += 1
    if x == dim - 1:
        right -= 1
    top = offset - dim
    bottom = offset + dim
    if y == 0:
        top += dim
    if y == dim - 1:
        bottom -= dim
    t = tex_in.fetch(top)
    l = tex_in.fetch(left)
    c = tex_in.fetch(offset)
    r = tex_in.fetch(right)
    b = tex_in.fetch(bottom)
    dst[offset] = c + SPEED * (t + b + r + l - 4 * c)


# ------------------------------------------------------------------ 2D textures (7.3.5)
@simt.kernel
def copy_const_tex2d(iptr, tex_const):
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    c = simt.tex2D(tex_const, x, y)
    if c != 0:
        iptr[offset] = c


@simt.kernel
def blend_tex2d(dst, tex_in):
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    t = simt.tex2D(tex_in, x, y - 1)
    l = simt.tex2D(tex_in, x - 1, y)
    c = simt.tex2D(tex_in, x, y)
    r = simt.tex2D(tex_in, x + 1, y)
    b = simt.tex2D(tex_in, x, y + 1)
    dst[offset] = c + SPEED * (t + b + r + l - 4 * c)


# ------------------------------------------------------------------ host side
def initial(dim=DIM):
    """(constant heaters/coolers, starting temperatures) as the book sets them up (scaled to dim)."""
    s = dim / 1024
    y, x = np.mgrid[0:dim, 0:dim]
    const = np.where((x > 300 * s) & (x < 600 * s) & (y > 310 * s) & (y < 601 * s),
                     MAX_TEMP, np.float32(0)).astype(np.float32)
    const[int(100 * s), int(100 * s)] = (MAX_TEMP + MIN_TEMP) / 2
    for py, px in ((700, 100), (300, 300), (200, 700)):
        const[int(py * s), int(px * s)] = MIN_TEMP
    const[int(800 * s):int(900 * s), int(400 * s):int(500 * s)] = MIN_TEMP
    start = const.copy()
    start[int(800 * s):, :int(200 * s)] = MAX_TEMP
    return const, start


class Simulation:
    """The book's DataBlock: device buffers (and textures over them) for one version."""

    def __init__(self, version, dim=DIM):
        self.version, self.dim = version, dim
        const, start = initial(dim)
        self.const = simt.to_device(const.ravel())
        self.inp = simt.to_device(start.ravel())
        self.out = simt.device_array(dim * dim, np.float32)
        if version != "global":
            # tex1Dfetch reads the flat buffers; tex2D reads them as pitched (dim, dim) views
            shape = (dim * dim,) if version == "tex1d" else (dim, dim)
            self.tex_const, self.tex_in, self.tex_out = (simt.Texture(a.reshape(shape)) for a in
                                                         (self.const, self.inp, self.out))
        self.bitmap = simt.device_array(dim * dim * 4, np.uint8)
        # the book's CPUAnimBitmap: host pixels kept from frame to frame. A new array per
        # frame would pay its pages' first-touch faults inside the timed copy
        self.pixels = np.empty((dim, dim, 4), np.uint8)

    def frame(self, steps=STEPS):
        """One animation frame: ``steps`` blend steps, then the colour bitmap. Each step
        launches two kernels, so the loop is written as a hot loop in Python is: the
        launch configurations made once (``kernel[blocks, threads]`` before the loop) and
        no work per step but the launches and the swap."""
        blocks, threads = (self.dim // 16, self.dim // 16), (16, 16)
        src, dst, dim = self.inp, self.out, self.dim
        if self.version == "global":
            copy, blend, const = (copy_const_kernel[blocks, threads],
                                  blend_kernel[blocks, threads], self.const)
            for _ in range(steps):
                copy(src, const)
                blend(dst, src, dim)
                src, dst = dst, src
        else:
            tex_in, tex_out, tex_const = self.tex_in, self.tex_out, self.tex_const
            if self.version == "tex1d":
                copy_1d, blend_1d = copy_const_tex1d[blocks, threads], blend_tex1d[blocks, threads]
                for _ in range(steps):
                    copy_1d(src, tex_const)
                    blend_1d(dst, tex_in, dim)
                    src, dst, tex_in, tex_out = dst, src, tex_out, tex_in
            else:
                copy_2d, blend_2d = copy_const_tex2d[blocks, threads], blend_tex2d[blocks, threads]
                for _ in range(steps):
                    copy_2d(src, tex_const)
                    blend_2d(dst, tex_in)
                    src, dst, tex_in, tex_out = dst, src, tex_out, tex_in
            self.tex_in, self.tex_out = tex_in, tex_out
        self.inp, self.out = src, dst
        float_to_color[blocks, threads](self.bitmap, self.inp)
        self.bitmap.copy_to_host(self.pixels.reshape(-1))
        return self.pixels

    def temperatures(self):
        return self.inp.copy_to_host().reshape(self.dim, self.dim)


def reference(dim, frames, steps=STEPS):
    """The same simulation in NumPy (edges repeat their cells, as the book's index fixups do)."""
    const, temp = initial(dim)
    for _ in range(frames * steps):
        temp = np.where(const != 0, const, temp)
        padded = np.pad(temp, 1, mode="edge")
        t, b = padded[:-2, 1:-1], padded[2:, 1:-1]
        l, r = padded[1:-1, :-2], padded[1:-1, 2:]
        temp = (temp + SPEED * (t + b + r + l - temp * 4)).astype(np.float32)
    return temp


def run(version, frames=3, out_dir=None, dim=DIM, digits=1):
    """The book's animation, headless: ``frames`` timed frames, each printing the running
    average as the book does (``digits`` decimals: the book's one, or more for a bench),
    then the last frame as a PNG."""
    sim = Simulation(version, dim)
    image = sim.frame(steps=1)          # compiles the kernels, which the book's C did not time
    start, stop = simt.Event(), simt.Event()
    total = 0.0
    for count in range(1, frames + 1):
        start.record()                  # timed by events around each frame, as the book does
        image = sim.frame()
        stop.record()
        stop.synchronize()
        total += start.elapsed_time(stop)
        print(f"Average Time per frame:  {total / count:3.{digits}f} ms")
    path = save_png(out_path(out_dir, f"heat_{version}.png"), image[::-1])
    print(f"heat ({version}) on {simt.get_device().name}: {frames} frames of {STEPS} steps on "
          f"{dim}x{dim}; wrote {path}")
    return path


NAME = "heat"
SECTION = "7.3.3"
DESCRIPTION = "heat transfer on a 1024x1024 plate, global memory, timed (7.3)"


def main(device=None, out_dir=None):
    return run("global", out_dir=out_dir)


EXAMPLES = [
    Example("heat_tex1d", "7.3.4", "heat transfer read through 1D textures (tex1Dfetch), "
            "timed (7.3.4)", lambda device=None, out_dir=None: run("tex1d", out_dir=out_dir)),
    Example("heat_tex2d", "7.3.5", "heat transfer read through 2D textures over pitched "
            "memory, timed (7.3.5)", lambda device=None, out_dir=None: run("tex2d", out_dir=out_dir)),
]
