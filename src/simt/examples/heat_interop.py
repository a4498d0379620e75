"""CUDA by Example 8.4: chapter 7's heat transfer with 1-D textures, drawn through
graphics interop (GPUAnimBitmap): float_to_color writes the frame straight into the
buffer OpenGL would draw, with no copy through the host.

The book does not reprint the kernels for 8.4 ("not sufficiently different" from 7.3.4):
they are heat.py's 7.3.4 kernels, the host swapping the input and output textures where
the book's file-scope texture references needed a ``dstOut`` flag.
"""
import numpy as np

import simt
from ._common import Example
from .book import EventTimer, GPUAnimBitmap, float_to_color
from .heat import DIM, blend_tex1d, copy_const_tex1d, initial, reference  # noqa: F401

STEPS_PER_FRAME = 90
FRAMES = 10


class DataBlock:
    def __init__(self, dim):
        self.dim = dim
        const, temp = initial(dim)
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
    for _ in range(STEPS_PER_FRAME):
        copy_const_tex1d[blocks, threads](d.dev_in_src, d.tex_const_src)
        blend_tex1d[blocks, threads](d.dev_out_src, d.tex_in, d.dim)
        d.dev_in_src, d.dev_out_src = d.dev_out_src, d.dev_in_src
        d.tex_in, d.tex_out = d.tex_out, d.tex_in
    float_to_color[blocks, threads](output_bitmap, d.dev_in_src)
    d.total_time += timer.elapsed_ms()
    d.frames += 1
    print(f"Average Time per frame:  {d.total_time / d.frames:3.1f} ms")


def anim_exit(d):
    d.tex_in = d.tex_out = d.tex_const_src = None       # cudaUnbindTexture


def _warm_up():
    """Compile the kernels before the timed frames, as nvcc would have."""
    d = DataBlock(16)
    copy_const_tex1d[1, (16, 16)](d.dev_in_src, d.tex_const_src)
    blend_tex1d[1, (16, 16)](d.dev_out_src, d.tex_in, d.dim)
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


EXAMPLES = [
    Example("heat_interop", "8.4", "heat transfer with 1-D textures drawn through graphics "
            "interop, timed; frames to a GIF (8.4)", heat_interop),
]
