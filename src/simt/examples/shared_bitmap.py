"""CUDA by Example 5.3.2: a bitmap computed through shared memory, with and without
the __syncthreads() between the writes and the transposed reads."""
import math

import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from ._common import Example
from .book import CPUBitmap

DIM = 1024
PI = np.float32(3.1415926535897932)
PERIOD = np.float32(128.0)


@simt.device
def blob(x, y):
    return (255 * (math.sin(np.float32(x) * np.float32(2.0) * PI / PERIOD) + np.float32(1.0))
            * (math.sin(np.float32(y) * np.float32(2.0) * PI / PERIOD) + np.float32(1.0))
            / np.float32(4.0))


@simt.kernel
def kernel(ptr):
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    shared = simt.shared.array((16, 16), np.float32)
    shared[threadIdx.x, threadIdx.y] = blob(x, y)
    simt.syncthreads()
    ptr[offset * 4 + 0] = 0
    ptr[offset * 4 + 1] = shared[15 - threadIdx.x, 15 - threadIdx.y]
    ptr[offset * 4 + 2] = 0
    ptr[offset * 4 + 3] = 255


@simt.kernel
def kernel_nosync(ptr):
    """The book's first attempt: a thread may read its neighbour's cell before it is
    written (Fig. 5.5). The CPU device in checked mode reports the race."""
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    shared = simt.shared.array((16, 16), np.float32)
    shared[threadIdx.x, threadIdx.y] = blob(x, y)
    ptr[offset * 4 + 0] = 0
    ptr[offset * 4 + 1] = shared[15 - threadIdx.x, 15 - threadIdx.y]
    ptr[offset * 4 + 2] = 0
    ptr[offset * 4 + 3] = 255


def render(which=kernel, dim=DIM):
    bitmap = CPUBitmap(dim, dim)
    dev_bitmap = simt.device_array(bitmap.image_size(), np.uint8)
    which[(dim // 16, dim // 16), (16, 16)](dev_bitmap)
    dev_bitmap.copy_to_host(bitmap.get_ptr())
    return bitmap


def reference(dim):
    """The synchronized image in NumPy: each 16x16 tile mirrored in both axes."""
    idx = np.arange(dim)
    mirrored = (idx // 16) * 16 + 15 - idx % 16
    y, x = np.meshgrid(mirrored, mirrored, indexing="ij")
    two = np.float32(2.0)
    sx = np.sin(x.astype(np.float32) * two * PI / PERIOD)
    sy = np.sin(y.astype(np.float32) * two * PI / PERIOD)
    green = (np.float32(255) * (sx + np.float32(1)) * (sy + np.float32(1)) / np.float32(4))
    image = np.zeros((dim, dim, 4), np.uint8)
    image[..., 1] = green.astype(np.uint8)
    image[..., 3] = 255
    return image


def shared_bitmap(device=None, out_dir=None, dim=DIM):
    bitmap = render(kernel, dim)
    bitmap.display_and_exit(out_dir, "shared_bitmap.png")
    return bitmap.image()


def shared_bitmap_nosync(device=None, out_dir=None, dim=DIM):
    bitmap = render(kernel_nosync, dim)
    bitmap.display_and_exit(out_dir, "shared_bitmap_nosync.png")
    print("this kernel races (no __syncthreads): the picture shows it as a mottled pattern; "
          "run it with SIMT_CHECKS=1 on the cpu device and simt names the racing threads "
          "and lines")
    return bitmap.image()


EXAMPLES = [
    Example("shared_bitmap", "5.3.2.1", "shared-memory bitmap with __syncthreads (5.3.2)",
            shared_bitmap),
    Example("shared_bitmap_nosync", "5.3.2", "the same without __syncthreads: a race, a "
            "corrupted image (5.3.2)", shared_bitmap_nosync),
]
