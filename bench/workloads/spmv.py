"""CSR sparse matrix times vector, float32, one thread per row (the scalar
kernel), on a random matrix with 8 to 24 nonzeros per row."""
import numpy as np

import simt
from simt import blockDim, blockIdx, threadIdx
from .base import Case


@simt.kernel
def spmv(rowptr, cols, vals, x, y):
    row = blockIdx.x * blockDim.x + threadIdx.x
    if row < y.shape[0]:
        acc = np.float32(0)
        for k in range(rowptr[row], rowptr[row + 1]):
            acc += vals[k] * x[cols[k]]
        y[row] = acc


def make(size, rng):
    n = size["n"]
    lengths = rng.integers(8, 25, n)
    rowptr = np.zeros(n + 1, np.int32)
    np.cumsum(lengths, out=rowptr[1:])
    nnz = int(rowptr[-1])
    return {"rowptr": rowptr, "cols": rng.integers(0, n, nnz, dtype=np.int32),
            "vals": rng.random(nnz, dtype=np.float32), "x": rng.random(n, dtype=np.float32),
            "y": np.empty(n, np.float32), "nnz": nnz}


def launch(d, size):
    n = size["n"]
    spmv[(n + 255) // 256, 256](d["rowptr"], d["cols"], d["vals"], d["x"], d["y"])


def reference(h, size):
    prod = h["vals"].astype(np.float64) * h["x"][h["cols"]]
    return {"y": np.add.reduceat(prod, h["rowptr"][:-1])}


def work(size):
    nnz = 16 * size["n"]
    return 8 * nnz + 12 * size["n"], 2 * nnz


def cupy_spmv(c, s):
    c["y"][...] = c["csr"] @ c["x"]


CASES = [Case(
    name="spmv", workload="spmv", sizes={"gpu": {"n": 1 << 23}, "cpu": {"n": 1 << 21}},
    make=make, outputs=["y"], launch=launch, reference=reference,
    arrays=["rowptr", "cols", "vals", "x", "y"], ints=["n"], work=work,
    kernels=[(spmv, "void(int32[::1], int32[::1], float32[::1], float32[::1], float32[::1])")],
    cupy=cupy_spmv, note="bytes: values, column indices, row pointers, y, and x gathered once "
                         "per nonzero counted as cached (16 nonzeros per row on average)")]
