"""32x32 tiled matrix multiply in float32 through shared memory (guide 3.2.4)."""
import numpy as np

import simt
from simt import blockIdx, threadIdx
from .base import Case

TILE = 32


@simt.kernel
def matmul(A, B, C):
    sA = simt.shared.array((TILE, TILE), np.float32)
    sB = simt.shared.array((TILE, TILE), np.float32)
    tx = threadIdx.x
    ty = threadIdx.y
    row = blockIdx.y * TILE + ty
    col = blockIdx.x * TILE + tx
    acc = np.float32(0)
    for k0 in range(0, A.shape[1], TILE):
        sA[ty, tx] = A[row, k0 + tx]
        sB[ty, tx] = B[k0 + ty, col]
        simt.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        simt.syncthreads()
    C[row, col] = acc


def make(size, rng):
    n = size["n"]
    return {"A": rng.random((n, n), dtype=np.float32), "B": rng.random((n, n), dtype=np.float32),
            "C": np.empty((n, n), np.float32)}


def launch(d, size):
    n = size["n"]
    matmul[(n // TILE, n // TILE), (TILE, TILE)](d["A"], d["B"], d["C"])


def reference(h, size):
    """The first 256 rows (all of them on small sizes), in float64."""
    return {"C": h["A"][:256].astype(np.float64) @ h["B"].astype(np.float64)}


def check(got, expected):
    return np.allclose(got["C"][:256], expected["C"], rtol=1e-3, atol=1e-3)


CASES = [Case(
    name="matmul", workload="matmul", sizes={"gpu": {"n": 4096}, "cpu": {"n": 512}},
    make=make, outputs=["C"], launch=launch, reference=reference, check=check,
    arrays=["A", "B", "C"], ints=["n"], work=lambda s: (12 * s["n"] ** 2, 2 * s["n"] ** 3),
    kernels=[(matmul, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])")],
    note="CuPy's matmul is cuBLAS, a different algorithm: listed, not compared")]
