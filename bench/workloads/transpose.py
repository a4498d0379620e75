"""Matrix transpose of float32 (NVIDIA's classic): 32x8 threads move a 32x32
tile, naive (strided writes) and through a padded shared tile (both coalesced)."""
import numpy as np

import simt
from simt import blockIdx, threadIdx
from .base import Case

TILE = 32
ROWS = 8


@simt.kernel
def transpose_naive(a, out):
    x = blockIdx.x * TILE + threadIdx.x
    y = blockIdx.y * TILE + threadIdx.y
    for j in range(0, TILE, ROWS):
        out[x, y + j] = a[y + j, x]


@simt.kernel
def transpose_tiled(a, out):
    tile = simt.shared.array((TILE, TILE + 1), np.float32)
    x = blockIdx.x * TILE + threadIdx.x
    y = blockIdx.y * TILE + threadIdx.y
    for j in range(0, TILE, ROWS):
        tile[threadIdx.y + j, threadIdx.x] = a[y + j, x]
    simt.syncthreads()
    x = blockIdx.y * TILE + threadIdx.x
    y = blockIdx.x * TILE + threadIdx.y
    for j in range(0, TILE, ROWS):
        out[y + j, x] = tile[threadIdx.x, threadIdx.y + j]


def make(size, rng):
    n = size["n"]
    return {"a": rng.random((n, n), dtype=np.float32), "out": np.empty((n, n), np.float32)}


def case(name, kernel):
    def launch(d, size):
        n = size["n"]
        globals()[kernel.__name__][(n // TILE, n // TILE), (TILE, ROWS)](d["a"], d["out"])

    return Case(
        name=name, workload="transpose", sizes={"gpu": {"n": 8192}, "cpu": {"n": 4096}},
        make=make, outputs=["out"], launch=launch,
        reference=lambda h, s: {"out": np.ascontiguousarray(h["a"].T)},
        arrays=["a", "out"], ints=["n"], work=lambda s: (8 * s["n"] ** 2, 0),
        kernels=[(kernel, "void(float32[:, ::1], float32[:, ::1])")],
        cupy=lambda c, s: c["out"].__setitem__(Ellipsis, c["a"].T))


CASES = [case("transpose_naive", transpose_naive), case("transpose_tiled", transpose_tiled)]
