"""All-pairs n-body accelerations in float32 (GPU Gems 3, ch. 31): each block
stages a tile of bodies in shared memory, each thread adds their pull on its
body. Bodies are (x, y, z, mass) rows; 20 FLOPs per interaction."""
import numpy as np

import simt
from simt import blockDim, blockIdx, threadIdx
from .base import Case

TILE = 256
EPS2 = 0.01


@simt.kernel
def nbody(pos, acc):
    sh = simt.shared.array((TILE, 4), np.float32)
    i = blockIdx.x * blockDim.x + threadIdx.x
    xi = pos[i, 0]
    yi = pos[i, 1]
    zi = pos[i, 2]
    ax = np.float32(0)
    ay = np.float32(0)
    az = np.float32(0)
    for t in range(0, pos.shape[0], TILE):
        j = t + threadIdx.x
        sh[threadIdx.x, 0] = pos[j, 0]
        sh[threadIdx.x, 1] = pos[j, 1]
        sh[threadIdx.x, 2] = pos[j, 2]
        sh[threadIdx.x, 3] = pos[j, 3]
        simt.syncthreads()
        for k in range(TILE):
            dx = sh[k, 0] - xi
            dy = sh[k, 1] - yi
            dz = sh[k, 2] - zi
            r2 = dx * dx + dy * dy + dz * dz + np.float32(EPS2)
            inv = simt.math.rsqrt(r2)
            s = sh[k, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        simt.syncthreads()
    acc[i, 0] = ax
    acc[i, 1] = ay
    acc[i, 2] = az
    acc[i, 3] = np.float32(0)


def make(size, rng):
    n = size["n"]
    pos = rng.random((n, 4), dtype=np.float32)
    pos[:, 3] = rng.random(n, dtype=np.float32) / n
    return {"pos": pos, "acc": np.empty((n, 4), np.float32)}


def launch(d, size):
    nbody[size["n"] // TILE, TILE](d["pos"], d["acc"])


def reference(h, size):
    p = h["pos"].astype(np.float64)
    rows = slice(0, 128)               # a sample of bodies: the full O(n^2) is too slow here
    d = p[None, :, :3] - p[rows, None, :3]
    r2 = (d * d).sum(-1) + EPS2
    s = p[None, :, 3] / r2 ** 1.5
    return {"acc": (d * s[..., None]).sum(1)}


def check(got, expected):
    return np.allclose(got["acc"][:128, :3], expected["acc"], rtol=2e-3, atol=1e-4)


CASES = [Case(
    name="nbody", workload="nbody", sizes={"gpu": {"n": 1 << 17}, "cpu": {"n": 1 << 13}},
    make=make, outputs=["acc"], launch=launch, reference=reference, check=check,
    arrays=["pos", "acc"], ints=["n"], work=lambda s: (32 * s["n"], 20 * s["n"] ** 2),
    kernels=[(nbody, "void(float32[:, ::1], float32[:, ::1])")])]
