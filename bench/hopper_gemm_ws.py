"""The warp-specialised variant of bench/hopper_gemm.py's kernel (a producer warpgroup whose
thread 0 issues the TMA loads, two consumer warpgroups), as the CUDA C twin is built.

Status (2026-12-02): on the sim device it is exact and finishes (python
bench/hopper_gemm_ws.py sim 512: a 128 x 256 x 512 product), so its barrier protocol has no
deadlock; on the H200 its first launch did not finish within the run's limit, and the
session had no device time left to find out why. Not used by the benchmark until that is
understood. Every consumer thread arrives on the empty barriers here (count 256): with one
arrival per warp, as the CUDA C twin does, the sim device reports the other lanes' wgmma
reads as racing with the producer's next load into the stage.

    PYTHONPATH=src python bench/hopper_gemm_ws.py [device] [K]
"""
import os
import sys
import time

import numpy as np

import simt
from simt import wgmma

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper_gemm import (BK, BM, BN, KSTEP, STAGES, _refill_stage, _release,  # noqa: E402
                         _wait_full)

THREADS = 384
CONSUMERS = 256


@simt.kernel(launch_bounds=(THREADS, 1))
def hgemm_ws(tma_a, tma_b, c, nk):
    sa = simt.shared.array((STAGES * BM, BK), np.float16)
    sb = simt.shared.array((STAGES * BN, BK), np.float16)
    f0 = simt.shared.barrier(1)
    f1 = simt.shared.barrier(1)
    f2 = simt.shared.barrier(1)
    f3 = simt.shared.barrier(1)
    e0 = simt.shared.barrier(CONSUMERS)
    e1 = simt.shared.barrier(CONSUMERS)
    e2 = simt.shared.barrier(CONSUMERS)
    e3 = simt.shared.barrier(CONSUMERS)
    tn, tm = simt.blockIdx.x, simt.blockIdx.y
    wg = simt.threadIdx.x // 128
    acc = wgmma.accumulator(64, BN)
    if wg == 0:
        if simt.threadIdx.x == 0:
            for kb in range(nk):
                _refill_stage(sa, sb, tma_a, tma_b, kb, kb % STAGES, tm, tn,
                              f0, f1, f2, f3, e0, e1, e2, e3)
    else:
        rows = wg - 1
        for k0 in range(0, nk, STAGES):
            for s in simt.unroll(range(STAGES)):
                kb = k0 + s
                _wait_full(s, (kb // STAGES) & 1, f0, f1, f2, f3)
                wgmma.fence()
                for kk in simt.unroll(range(BK // KSTEP)):
                    wgmma.mma_async(acc, wgmma.descriptor(sa, swizzle="128B",
                                                          row=s * BM + rows * 64, k=kk * KSTEP),
                                    wgmma.descriptor(sb, swizzle="128B", row=s * BN,
                                                     k=kk * KSTEP))
                wgmma.commit_group()
                wgmma.wait_group(1)
                if kb > 0:
                    _release((s + STAGES - 1) % STAGES, e0, e1, e2, e3)
        wgmma.wait_group(0)
        n = c.shape[1]
        acc.store(c, (tm * BM + rows * 64) * n + tn * BN, n)


if __name__ == "__main__":
    simt.set_device(sys.argv[1] if len(sys.argv) > 1 else "sim")
    rng = np.random.default_rng(0)
    m, n, k = 128, 256, int(sys.argv[2]) if len(sys.argv) > 2 else 256
    a = rng.integers(-3, 4, (m, k)).astype(np.float16); bt = rng.integers(-3, 4, (n, k)).astype(np.float16)
    A, B = simt.to_device(a), simt.to_device(bt)
    c = simt.to_device(np.full((m, n), np.nan, np.float16))
    t = time.time()
    tma_a = simt.tensor_map(A, (BM, BK), swizzle="128B")
    tma_b = simt.tensor_map(B, (BN, BK), swizzle="128B")
    try:
        hgemm_ws[(n // BN, m // BM), THREADS](tma_a, tma_b, c, np.int32(k // BK))
        out = c.copy_to_host()
        print("exact:", np.array_equal(out, (a.astype(np.float32) @ bt.T.astype(np.float32)).astype(np.float16)), time.time() - t)
    except Exception as e:
        print(type(e).__name__, str(e)[:1500])
