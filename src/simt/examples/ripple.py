"""CUDA by Example 5.2.2 (ripple with 2-D blocks of threads, CPUAnimBitmap) and
8.3.2 (the same ripple drawn through graphics interop, GPUAnimBitmap)."""
import math
from typing import Any

import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from ._common import Example
from .book import CPUAnimBitmap, GPUAnimBitmap

DIM = 1024
FRAMES = 30          # the book animates until the window closes


@simt.device
def ripple_grey(x, y, ticks, dim):
    fx = np.float32(x - dim // 2)
    fy = np.float32(y - dim // 2)
    d = math.sqrt(fx * fx + fy * fy)
    return np.uint8(np.float32(128.0) + np.float32(127.0)
                    * math.cos(d / np.float32(10.0) - np.float32(ticks) / np.float32(7.0))
                    / (d / np.float32(10.0) + np.float32(1.0)))


@simt.kernel
def kernel(ptr, ticks):
    """5.2.2: one thread per pixel; the frame lands in a device bitmap, copied to the host."""
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    grey = ripple_grey(x, y, ticks, blockDim.x * gridDim.x)
    ptr[offset * 4 + 0] = grey
    ptr[offset * 4 + 1] = grey
    ptr[offset * 4 + 2] = grey
    ptr[offset * 4 + 3] = 255


@simt.kernel
def kernel_uchar4(ptr, ticks):
    """8.3.2: writes uchar4 pixels (ptr[offset].x ... .w), here ptr[offset, 0] ... [offset, 3],
    straight into the buffer OpenGL draws."""
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    grey = ripple_grey(x, y, ticks, blockDim.x * gridDim.x)
    ptr[offset, 0] = grey
    ptr[offset, 1] = grey
    ptr[offset, 2] = grey
    ptr[offset, 3] = 255


class DataBlock:
    def __init__(self, dim):
        self.dim = dim
        self.dev_bitmap: Any = None       # set by ripple(), as the book fills its C struct
        self.bitmap: Any = None


def generate_frame(d, ticks):
    blocks, threads = (d.dim // 16, d.dim // 16), (16, 16)
    kernel[blocks, threads](d.dev_bitmap, np.int32(ticks))
    d.dev_bitmap.copy_to_host(d.bitmap.get_ptr())


def cleanup(d):
    d.dev_bitmap = None                               # cudaFree


def ripple(device=None, out_dir=None, dim=DIM, frames=FRAMES):
    """5.2.2; returns the last frame as a (dim, dim, 4) array."""
    data = DataBlock(dim)
    bitmap = CPUAnimBitmap(dim, dim, data)
    data.bitmap = bitmap
    data.dev_bitmap = simt.device_array(bitmap.image_size(), np.uint8)
    bitmap.anim_and_exit(generate_frame, cleanup, frames=frames, out_dir=out_dir, stem="ripple")
    return bitmap.image().copy()


def generate_frame_interop(pixels, data, ticks):
    blocks, threads = (data.dim // 16, data.dim // 16), (16, 16)
    kernel_uchar4[blocks, threads](pixels.reshape(-1, 4), np.int32(ticks))


def ripple_interop(device=None, out_dir=None, dim=DIM, frames=FRAMES):
    """8.3.2; returns the last frame as a (dim, dim, 4) array."""
    bitmap = GPUAnimBitmap(dim, dim, DataBlock(dim))
    bitmap.anim_and_exit(generate_frame_interop, None, frames=frames, out_dir=out_dir,
                         stem="ripple_interop")
    return bitmap.last_frame()


def reference(dim, ticks):
    """The ripple in NumPy (float32, as the kernel computes it)."""
    y, x = np.mgrid[0:dim, 0:dim]
    fx = (x - dim // 2).astype(np.float32)
    fy = (y - dim // 2).astype(np.float32)
    d = np.sqrt(fx * fx + fy * fy)
    ten, seven = np.float32(10), np.float32(7)
    grey = (np.float32(128) + np.float32(127) * np.cos(d / ten - np.float32(ticks) / seven)
            / (d / ten + np.float32(1))).astype(np.uint8)
    alpha = np.full_like(grey, 255)
    return np.stack([grey, grey, grey, alpha], axis=-1)


EXAMPLES = [
    Example("ripple", "5.2.2", "animated ripple, 2-D blocks of 16x16 threads; frames to a GIF "
            "(5.2.2)", ripple),
    Example("ripple_interop", "8.3.2", "the ripple drawn through graphics interop "
            "(GPUAnimBitmap; frames to a GIF) (8.3.2)", ripple_interop),
]
