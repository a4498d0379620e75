"""saxpy: out = a*x + y, one thread per element, int32 index math as CUDA C's."""
import numpy as np

import simt
from simt import blockDim, blockIdx, threadIdx
from .base import Case


@simt.kernel
def saxpy(a, x, y, out):
    i = blockIdx.x * blockDim.x + threadIdx.x
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


def make(size, rng):
    n = size["n"]
    return {"x": rng.random(n, dtype=np.float32), "y": rng.random(n, dtype=np.float32),
            "out": np.empty(n, np.float32), "a": np.float32(2.5)}


def launch(d, size):
    n = size["n"]
    saxpy[(n + 255) // 256, 256](d["a"], d["x"], d["y"], d["out"])


CASES = [Case(
    name="saxpy", workload="saxpy", sizes={"gpu": {"n": 1 << 26}, "cpu": {"n": 1 << 24}},
    make=make, outputs=["out"], launch=launch,
    reference=lambda h, s: {"out": h["a"] * h["x"] + h["y"]},
    arrays=["x", "y", "out"], ints=["n"], reals=["a"],
    work=lambda s: (12 * s["n"], 2 * s["n"]),
    kernels=[(saxpy, "void(float32, float32[::1], float32[::1], float32[::1])")],
    cupy=lambda c, s: c["cp"].multiply(c["a"], c["x"], out=c["out"]).__iadd__(c["y"]))]
