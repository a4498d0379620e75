"""CUDA by Example, chapter 8: graphics interoperability. A kernel writes pixels into a
buffer that OpenGL draws without a copy through the host (8.2); heat_interop.py has
8.4 and ripple.py 8.3.2. Here there is no window: the buffer is a device
array and its frames go to files; book.GPUAnimBitmap's docstring and
docs/cuda-by-example.md show the OpenGL path for a machine with a display.
"""
import math

import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from ._common import Example, save_png, out_path

DIM = 512


@simt.kernel
def kernel(ptr):
    """8.2: the "NVIDIA green" pattern, one uchar4 pixel per thread (ptr[offset, 0..3])."""
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    dim = blockDim.x * gridDim.x
    fx = np.float32(x) / np.float32(dim) - np.float32(0.5)
    fy = np.float32(y) / np.float32(dim) - np.float32(0.5)
    green = np.uint8(np.float32(128) + np.float32(127)
                     * math.sin(abs(fx * np.float32(100)) - abs(fy * np.float32(100))))
    ptr[offset, 0] = 0
    ptr[offset, 1] = green
    ptr[offset, 2] = 0
    ptr[offset, 3] = 255


def render(dim=DIM):
    """Map the buffer (here: allocate it), run the kernel, unmap (here: copy it out)."""
    dev_ptr = simt.device_array((dim * dim, 4), np.uint8)   # cudaGraphicsResourceGetMappedPointer
    grids, threads = (dim // 16, dim // 16), (16, 16)
    kernel[grids, threads](dev_ptr)
    return dev_ptr.copy_to_host().reshape(dim, dim, 4)


def reference(dim):
    y, x = np.mgrid[0:dim, 0:dim]
    fx = x.astype(np.float32) / np.float32(dim) - np.float32(0.5)
    fy = y.astype(np.float32) / np.float32(dim) - np.float32(0.5)
    hundred = np.float32(100)
    green = (np.float32(128) + np.float32(127)
             * np.sin(np.abs(fx * hundred) - np.abs(fy * hundred))).astype(np.uint8)
    image = np.zeros((dim, dim, 4), np.uint8)
    image[..., 1], image[..., 3] = green, 255
    return image


def basic_interop(device=None, out_dir=None, dim=DIM):
    image = render(dim)
    path = save_png(out_path(out_dir, "basic_interop.png"), image[::-1])
    print(f"wrote {path}")
    return image


EXAMPLES = [
    Example("basic_interop", "8.2", "a kernel draws into an OpenGL buffer; here a PNG (8.2)",
            basic_interop),
]
