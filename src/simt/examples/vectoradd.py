"""Vector addition (CUDA by Example, chapter 4): c[i] = a[i] + b[i]."""
import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx

NAME = "vectoradd"
SECTION = "5.2.1.2"
DESCRIPTION = "add two vectors, one thread per element (4.2.1)"
N = 33 * 1024


@simt.kernel
def add(a, b, c):
    tid = threadIdx.x + blockIdx.x * blockDim.x
    while tid < c.shape[0]:
        c[tid] = a[tid] + b[tid]
        tid += blockDim.x * gridDim.x


def run(n=N, seed=0):
    """Add two random vectors on the current device; returns (a, b, c)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    d_c = simt.device_array(n, np.float32)
    add[128, 128](simt.to_device(a), simt.to_device(b), d_c)
    return a, b, d_c.copy_to_host()


def main(device=None, out_dir=None):
    a, b, c = run()
    ok = np.array_equal(c, a + b)
    print(f"vectoradd on {simt.get_device().name}: {N} elements, "
          f"{'correct' if ok else 'WRONG'} (first: {a[0]:.4f} + {b[0]:.4f} = {c[0]:.4f})")
    return ok
