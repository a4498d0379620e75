"""The GPU boundscheck path: an out-of-bounds index with boundscheck=True raises
IllegalAddressError naming the array, block and thread; the device stays usable."""
import numpy as np

import simt


@simt.kernel(boundscheck=True)
def oob(a):
    i = simt.blockIdx.x * simt.blockDim.x + simt.threadIdx.x
    a[i + 1] = 1.0


simt.set_device("cuda:0")
a = np.zeros(64, np.float32)
try:
    oob[2, 32](a)
    print("NO ERROR RAISED")
except simt.IllegalAddressError as exc:
    print("raised:", exc)
b = np.zeros(65, np.float32)
oob[2, 32](b)
print("usable after the error:", b[1:].sum() == 64)
