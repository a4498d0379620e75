"""Run by .ci/run with the Python of a fresh venv that has only the built wheel (and its
dependencies): simt is imported from that install, not the source tree, and a small kernel
gives NumPy's answer on the CPU device."""
import sys

import numpy as np

import simt

if not simt.__file__.startswith(sys.prefix):
    sys.exit(f"simt was imported from {simt.__file__}, not from the venv {sys.prefix}")


@simt.kernel
def saxpy(a, x, y, out):
    i = simt.blockIdx.x * simt.blockDim.x + simt.threadIdx.x
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


rng = np.random.default_rng(36)
x, y = rng.standard_normal((2, 1000)).astype(np.float32)
out = np.full_like(x, np.nan)
with simt.use_device("cpu"):
    saxpy[(x.size + 127) // 128, 128](np.float32(2.5), x, y, out)
np.testing.assert_allclose(out, np.float32(2.5) * x + y, rtol=1e-5, atol=1e-6)   # fma or not
print(f"simt {simt.__version__} from {simt.__file__}: saxpy on the cpu device matches NumPy")
