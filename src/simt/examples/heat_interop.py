"""CUDA by Example 8.4: chapter 7's heat transfer with 1-D textures, drawn through
graphics interop (GPUAnimBitmap): float_to_color writes the frame straight into the
buffer OpenGL would draw, with no copy through the host.

The book does not reprint the kernels for 8.4 ("not sufficiently different" from 7.3.4);
they are written here as 7.3.4 has them. Its file-scope texture references become
texture objects passed as arguments; ``blend_kernel`` keeps the book's ``dst_out`` flag
choosing which texture is the input.
"""
import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from ._common import Example
from .book import EventTimer, GPUAnimBitmap, float_to_color

DIM = 1024
MAX_TEMP = np.float32(1.0)
MIN_TEMP = np.float32(0.0001)
SPEED = np.float32(0.25)
STEPS_PER_FRAME = 90
FRAMES = 10


@simt.kernel
def copy_const_kernel(iptr, tex_const_src):
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    c = tex_const_src.fetch(offset)
    if c != 0:
        iptr[offset] = c


@simt.kernel
def blend_kernel(dst, dst_out, tex_in, tex_out):
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    dim = blockDim.x * gridDim.x
    offset = x + y * dim
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
    if dst_out:
        t = tex_in.fetch(top)
        l = tex_in.fetch(left)          # noqa: E741 - the book's names
        c = tex_in.fetch(offset)
        r = tex_in.fetch(right)
        b = tex_in.fetch(bottom)
    else:
        t = tex_out.fetch(top)
        l = tex_out.fetch(left)         # noqa: E741
        c = tex_out.fetch(offset)
        r = tex_out.fetch(right)
        b = tex_out.fetch(bottom)
    dst[offset] = c + SPEED * (t + b + r + l - 4 * c)


def initial_temperatures(dim):
    """(heaters, starting grid) as the book's main() builds them; the book's coordinates
    are for DIM = 1024 and scale with ``dim``."""
    def at(v):
        return v * dim // 1024
    temp = np.zeros((dim, dim), np.float32)            # temp[y, x] is the book's temp[x + y*DIM]
    temp[at(311):at(601), at(301):at(600)] = MAX_TEMP
    temp[at(100), at(100)] = (MAX_TEMP + MIN_TEMP) / 2
    temp[at(700), at(100)] = MIN_TEMP
    temp[at(300), at(300)] = MIN_TEMP
    temp[at(200), at(700)] = MIN_TEMP
    temp[at(800):at(900), at(400):at(500)] = MIN_TEMP
    const = temp.copy()
    temp[at(800):, :at(200)] = MAX_TEMP
    return const, temp


class DataBlock:
    def __init__(self, dim):
        self.dim = dim
        const, temp = initial_temperatures(dim)
        self.dev_const_src = simt.to_device(const.ravel())
        self.dev_in_src = simt.to_device(temp.ravel())
        self.dev_out_src = simt.device_array(dim * dim, np.float32)
        # cudaBindTexture(NULL, texConstSrc, dev_constSrc, imageSize) and friends
        self.tex_const_src = simt.Texture(self.dev_const_src)
        self.tex_in = simt.Texture(self.dev_in_src)
        self.tex_out = simt.Texture(self.dev_out_src)
        self.total_time = 0.0
        self.frames = 0


def anim_gpu(output_bitmap, d, ticks):
    timer = EventTimer()
    blocks, threads = (d.dim // 16, d.dim // 16), (16, 16)
    dst_out = True
    for _ in range(STEPS_PER_FRAME):
        if dst_out:
            in_, out = d.dev_in_src, d.dev_out_src
        else:
            out, in_ = d.dev_in_src, d.dev_out_src
        copy_const_kernel[blocks, threads](in_, d.tex_const_src)
        blend_kernel[blocks, threads](out, dst_out, d.tex_in, d.tex_out)
        dst_out = not dst_out
    float_to_color[blocks, threads](output_bitmap, d.dev_in_src)
    d.total_time += timer.elapsed_ms()
    d.frames += 1
    print(f"Average Time per frame:  {d.total_time / d.frames:3.1f} ms")


def anim_exit(d):
    d.tex_in = d.tex_out = d.tex_const_src = None       # cudaUnbindTexture


def _warm_up():
    """Compile the kernels before the timed frames, as nvcc would have."""
    d = DataBlock(16)
    copy_const_kernel[1, (16, 16)](d.dev_in_src, d.tex_const_src)
    blend_kernel[1, (16, 16)](d.dev_out_src, True, d.tex_in, d.tex_out)
    float_to_color[1, (16, 16)](simt.device_array(16 * 16 * 4, np.uint8), d.dev_in_src)
    simt.synchronize()


def heat_interop(device=None, out_dir=None, dim=DIM, frames=FRAMES):
    """Returns (final temperatures, last frame's pixels)."""
    _warm_up()
    data = DataBlock(dim)
    bitmap = GPUAnimBitmap(dim, dim, data)
    bitmap.anim_and_exit(anim_gpu, anim_exit, frames=frames, out_dir=out_dir,
                         stem="heat_interop")
    return data.dev_in_src.copy_to_host().reshape(dim, dim), bitmap.last_frame()


def reference(dim, frames):
    """The simulation in NumPy: per step, heaters overwrite, then the 4-neighbour blend
    with clamped edges."""
    const, temp = initial_temperatures(dim)
    heaters = const != 0
    for _ in range(frames * STEPS_PER_FRAME):
        temp[heaters] = const[heaters]
        padded = np.pad(temp, 1, mode="edge")
        neighbours = (padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, 2:]
                      + padded[1:-1, :-2])
        temp = temp + SPEED * (neighbours - np.float32(4) * temp)
    return temp


EXAMPLES = [
    Example("heat_interop", "8.4", "heat transfer with 1-D textures drawn through graphics "
            "interop, timed; frames to a GIF (8.4)", heat_interop),
]
