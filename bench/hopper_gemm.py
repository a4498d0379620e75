"""A Hopper GEMM written in simt (TMA, wgmma, mbarrier transaction counts), checked and
timed on the GPU against cuBLAS (torch.matmul) and the CUDA C twin (bench/cuda/hopper_gemm.cu)
in one run.

C[M, N] (float16) = A[M, K] (float16, row-major) . B, B given as Bt[N, K] row-major (K-major,
the layout wgmma reads untransposed), float32 accumulation: the CUDA C twin's problem.

The kernel: a block of two consumer warpgroups (256 threads) computes a 128 x 256 tile of C;
each warpgroup owns 64 rows and a 64 x 256 wgmma accumulator. A STAGES-deep ring of
128-byte-swizzled A (128 x 64) and Bt (256 x 64) tiles in shared memory is filled by TMA,
issued by thread 0: each stage has a "full" barrier (thread 0's arrive_expect_tx, completed
by the TMA's bytes) and an "empty" barrier (one arrival per warp once the wgmmas reading the
stage have retired) that thread 0 waits on before refilling the stage. The barriers are
compile-time objects, so the K loop is written out STAGES times (stage s is a constant).

    python bench/hopper_gemm.py [--out DIR] [--dtypes float16,bfloat16,float8_e4m3]
                                [--no-twin] [--no-triton]
"""
import argparse
import datetime
import json
import os
import sys

import numpy as np

import simt
from simt import wgmma

BM, BN, BK = 128, 256, 64       # block tile; BK = 64 float16 = one 128-byte swizzle row
STAGES = 4
KSTEP = 16                      # K of one wgmma.m64n256k16
WARPS = 8                       # two consumer warpgroups
STAGE_BYTES = (BM + BN) * BK * 2
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (4096, 16384, 4096)]
BF16_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]
FP8_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]
CHECK_SHAPES = [(256, 512, 256), (384, 768, 1024), (1024, 2048, 512), (2048, 4096, 768)]


@simt.device
def _refill(sa, sb, tma_a, tma_b, full, empty, kb, stage, tm, tn):
    """Thread 0: once the stage's previous use has retired (its empty barrier's phase), load
    k-block kb of A and Bt into it, completing its full barrier by the bytes."""
    uses = kb // STAGES
    if uses > 0:
        empty.wait_parity((uses - 1) & 1)
    full.arrive_expect_tx(STAGE_BYTES)
    simt.tma.load(sa[stage * BM:(stage + 1) * BM], tma_a, (tm * BM, kb * BK), full)
    simt.tma.load(sb[stage * BN:(stage + 1) * BN], tma_b, (tn * BN, kb * BK), full)


@simt.device
def _wait_full(stage, parity, f0, f1, f2, f3):
    if stage == 0:
        f0.wait_parity(parity)
    elif stage == 1:
        f1.wait_parity(parity)
    elif stage == 2:
        f2.wait_parity(parity)
    else:
        f3.wait_parity(parity)


@simt.device
def _release(stage, e0, e1, e2, e3):
    if stage == 0:
        e0.arrive()
    elif stage == 1:
        e1.arrive()
    elif stage == 2:
        e2.arrive()
    else:
        e3.arrive()


@simt.device
def _refill_stage(sa, sb, tma_a, tma_b, kb, stage, tm, tn, f0, f1, f2, f3, e0, e1, e2, e3):
    if stage == 0:
        _refill(sa, sb, tma_a, tma_b, f0, e0, kb, 0, tm, tn)
    elif stage == 1:
        _refill(sa, sb, tma_a, tma_b, f1, e1, kb, 1, tm, tn)
    elif stage == 2:
        _refill(sa, sb, tma_a, tma_b, f2, e2, kb, 2, tm, tn)
    else:
        _refill(sa, sb, tma_a, tma_b, f3, e3, kb, 3, tm, tn)


@simt.kernel
def hgemm(tma_a, tma_b, c, nk):
    sa = simt.shared.array((STAGES * BM, BK), np.float16)
    sb = simt.shared.array((STAGES * BN, BK), np.float16)
    f0 = simt.shared.barrier(1)
    f1 = simt.shared.barrier(1)
    f2 = simt.shared.barrier(1)
    f3 = simt.shared.barrier(1)
    e0 = simt.shared.barrier(WARPS)
    e1 = simt.shared.barrier(WARPS)
    e2 = simt.shared.barrier(WARPS)
    e3 = simt.shared.barrier(WARPS)
    tn, tm = simt.blockIdx.x, simt.blockIdx.y
    wg = simt.threadIdx.x // 128
    acc = wgmma.accumulator(64, BN)
    if simt.threadIdx.x == 0:                  # the first STAGES - 1 k-blocks
        for kb in range(min(nk, STAGES - 1)):
            _refill_stage(sa, sb, tma_a, tma_b, kb, kb, tm, tn, f0, f1, f2, f3, e0, e1, e2, e3)
    simt.syncwarp()
    for k0 in range(0, nk, STAGES):            # nk is a multiple of STAGES
        for s in simt.unroll(range(STAGES)):
            kb = k0 + s
            _wait_full(s, (kb // STAGES) & 1, f0, f1, f2, f3)
            wgmma.fence()
            for kk in simt.unroll(range(BK // KSTEP)):
                wgmma.mma_async(acc, wgmma.descriptor(sa, swizzle="128B", row=s * BM + wg * 64,
                                                      k=kk * KSTEP),
                                wgmma.descriptor(sb, swizzle="128B", row=s * BN, k=kk * KSTEP))
            wgmma.commit_group()
            wgmma.wait_group(1)                # k-block kb - 1's wgmmas have retired
            previous = (s + STAGES - 1) % STAGES
            if kb > 0 and simt.laneid() == 0:  # release kb - 1's stage: one arrival a warp
                _release(previous, e0, e1, e2, e3)
            if simt.threadIdx.x == 0 and kb + STAGES - 1 < nk:
                _refill_stage(sa, sb, tma_a, tma_b, kb + STAGES - 1, previous, tm, tn,
                              f0, f1, f2, f3, e0, e1, e2, e3)
            simt.syncwarp()                    # warp 0 whole again before the next wgmma
    wgmma.wait_group(0)
    n = c.shape[1]
    acc.store(c, (tm * BM + wg * 64) * n + tn * BN, n)


def gemm(a, bt, c):
    """c = a @ bt.T on the current device (simt DeviceArrays or CUDA arrays of float16)."""
    prepare(a, bt, c)()


def prepare(a, bt, c):
    """The launch of c = a @ bt.T with its tensor maps made once (what a timing loop runs)."""
    a, bt, c = (simt.asarray(x) for x in (a, bt, c))
    m, k = a.shape
    n = bt.shape[0]
    if m % BM or n % BN or k % (BK * STAGES):
        raise ValueError(f"hgemm needs M % {BM} == 0, N % {BN} == 0 and K % {BK * STAGES} "
                         f"== 0, got {m} x {n} x {k}")
    tma_a = simt.tensor_map(a, (BM, BK), swizzle="128B")
    tma_b = simt.tensor_map(bt, (BN, BK), swizzle="128B")
    launch = hgemm[(n // BN, m // BM), 2 * 128]
    nk = np.int32(k // BK)
    return lambda: launch(tma_a, tma_b, c, nk)


def _tma_epilogue(ws, time, a, bt, c, flop, t_cublas):
    """The TMA-store epilogue's row (both schedules) beside the direct one's, same arrays."""
    t_coop = time(ws.prepare(a, bt, c, epilogue="tma"))
    t_pp = time(ws.prepare(a, bt, c, schedule="pingpong", epilogue="tma"))
    return {"cooperative_tma_tflops": flop / t_coop / 1e9, "pingpong_tma_tflops": flop / t_pp / 1e9,
            "tma_ms": min(t_coop, t_pp), "tma_over_cublas": t_cublas / min(t_coop, t_pp)}


def main():
    import torch
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--no-twin", action="store_true")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--dtypes", default="float16,bfloat16,float8_e4m3",
                    help="which tables to time (comma-separated)")
    args = ap.parse_args()
    simt.set_device("cuda:0")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import hopper_gemm_ws as ws
    from common import torch_event_ms as _time
    torch.manual_seed(0)
    checks = []
    for m, n, k in CHECK_SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        bt = torch.randn(n, k, device="cuda", dtype=torch.float16)
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        ref = a.float() @ bt.float().t()
        for name, run in (("hgemm", gemm), ("hgemm_ws", ws.gemm),
                          ("hgemm_pingpong", lambda *x: ws.gemm(*x, schedule="pingpong")),
                          ("hgemm_ws tma-epilogue", lambda *x: ws.gemm(*x, epilogue="tma")),
                          ("hgemm_pingpong tma-epilogue",
                           lambda *x: ws.gemm(*x, schedule="pingpong", epilogue="tma"))):
            c.fill_(float("nan"))
            run(a, bt, c)
            torch.cuda.synchronize()
            err = float(((c.float() - ref).norm() / ref.norm()).item())
            ok = bool(torch.isfinite(c).all().item()) and err < 2e-3
            checks.append({"kernel": name, "shape": [m, n, k], "rel_err": err, "ok": ok})
            print(f"check {name} {m}x{n}x{k}: rel err {err:.2e} {'ok' if ok else 'WRONG'}",
                  flush=True)
    twin = None
    if not args.no_twin:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import hopper_gemm_cuda as twin_mod
        so, _ = twin_mod.build("/tmp/hopper_gemm_build")
        twin = twin_mod.load(so)
    tri = None
    if not args.no_triton:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import triton_matmul as tri
    rows = []
    dtypes = args.dtypes.split(",")
    for m, n, k in SHAPES if "float16" in dtypes else ():
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        bt = torch.randn(n, k, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        flop = 2.0 * m * n * k
        t_simple = _time(prepare(a, bt, c))
        t_coop = _time(ws.prepare(a, bt, c))
        t_pp = _time(ws.prepare(a, bt, c, schedule="pingpong"))
        t_simt = min(t_coop, t_pp)
        t_cublas = _time(lambda: torch.matmul(a, bt.t()))
        row = {"shape": [m, n, k], "simt_ms": t_simt, "cublas_ms": t_cublas,
               "cooperative_tflops": flop / t_coop / 1e9, "pingpong_tflops": flop / t_pp / 1e9,
               "simt_tflops": flop / t_simt / 1e9, "cublas_tflops": flop / t_cublas / 1e9,
               "simt_over_cublas": t_cublas / t_simt,
               "simple_ms": t_simple, "simple_tflops": flop / t_simple / 1e9}
        row.update(_tma_epilogue(ws, _time, a, bt, c, flop, t_cublas))
        if twin is not None:
            t_twin = _time(lambda: twin.hg_gemm(0, a.data_ptr(), bt.data_ptr(), c.data_ptr(),
                                                m, n, k, None))
            row.update(twin_ms=t_twin, twin_tflops=flop / t_twin / 1e9,
                       simt_over_twin=t_twin / t_simt)
        if tri is not None:
            t_triton = _time(lambda: tri.matmul(a, bt, c))
            row.update(triton_ms=t_triton, triton_tflops=flop / t_triton / 1e9,
                       simt_over_triton=t_triton / t_simt)
        rows.append(row)
        print(json.dumps(row), flush=True)
    for m, n, k in BF16_SHAPES if "bfloat16" in dtypes else ():     # the same kernel
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        bt = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        ref = a.float() @ bt.float().t()
        errs = []
        for schedule in ("cooperative", "pingpong"):
            c.fill_(float("nan"))
            ws.gemm(a, bt, c, schedule=schedule)
            errs.append(float(((c.float() - ref).norm() / ref.norm()).item()))
        ok = bool(torch.isfinite(c).all().item())
        for schedule in ("cooperative", "pingpong"):
            c.fill_(float("nan"))
            ws.gemm(a, bt, c, schedule=schedule, epilogue="tma")
            ok = ok and bool(torch.isfinite(c).all().item())
            errs.append(float(((c.float() - ref).norm() / ref.norm()).item()))
        err = max(errs)
        flop = 2.0 * m * n * k
        t_coop = _time(ws.prepare(a, bt, c))
        t_pp = _time(ws.prepare(a, bt, c, schedule="pingpong"))
        t_simt = min(t_coop, t_pp)
        t_cublas = _time(lambda: torch.matmul(a, bt.t()))
        row = {"dtype": "bfloat16", "shape": [m, n, k], "rel_err": err,
               "cooperative_tflops": flop / t_coop / 1e9, "pingpong_tflops": flop / t_pp / 1e9,
               "ok": ok and err < 1e-2,
               "simt_ms": t_simt, "cublas_ms": t_cublas, "simt_tflops": flop / t_simt / 1e9,
               "cublas_tflops": flop / t_cublas / 1e9, "simt_over_cublas": t_cublas / t_simt}
        row.update(_tma_epilogue(ws, _time, a, bt, c, flop, t_cublas))
        rows.append(row)
        print(json.dumps(row), flush=True)
    for m, n, k in FP8_SHAPES if "float8_e4m3" in dtypes else ():   # against _scaled_mm
        a8 = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
        bt8 = (torch.randn(n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
        scale_a = torch.tensor(0.5, device="cuda")
        scale_b = torch.tensor(0.25, device="cuda")
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        a_s, bt_s = (simt.asarray(x.view(torch.uint8)).view(simt.float8_e4m3) for x in (a8, bt8))
        ref = torch._scaled_mm(a8, bt8.t(), scale_a=scale_a, scale_b=scale_b,
                               out_dtype=torch.bfloat16)
        runs, errs, ok = [], [], True
        for schedule, epilogue in (("cooperative", "direct"), ("pingpong", "direct"),
                                   ("cooperative", "tma"), ("pingpong", "tma")):
            runs.append(ws.prepare(a_s, bt_s, c, scale=0.125, schedule=schedule,
                                   epilogue=epilogue))
            c.fill_(float("nan"))
            runs[-1]()
            ok = ok and bool(torch.isfinite(c).all().item())
            errs.append(float(((c.float() - ref.float()).norm() / ref.float().norm()).item()))
        err = max(errs)
        flop = 2.0 * m * n * k
        t_coop, t_pp = _time(runs[0]), _time(runs[1])
        t_coop_tma, t_pp_tma = _time(runs[2]), _time(runs[3])
        t_simt = min(t_coop, t_pp)
        t_ref = _time(lambda: torch._scaled_mm(a8, bt8.t(), scale_a=scale_a, scale_b=scale_b,
                                               out_dtype=torch.bfloat16))
        row = {"dtype": "float8_e4m3", "shape": [m, n, k], "rel_err": err,
               "cooperative_tflops": flop / t_coop / 1e9, "pingpong_tflops": flop / t_pp / 1e9,
               "cooperative_tma_tflops": flop / t_coop_tma / 1e9,
               "pingpong_tma_tflops": flop / t_pp_tma / 1e9,
               "tma_over_scaled_mm": t_ref / min(t_coop_tma, t_pp_tma),
               "ok": ok and err < 1e-2,
               "simt_ms": t_simt, "scaled_mm_ms": t_ref, "simt_tflops": flop / t_simt / 1e9,
               "scaled_mm_tflops": flop / t_ref / 1e9, "simt_over_scaled_mm": t_ref / t_simt}
        rows.append(row)
        print(json.dumps(row), flush=True)
    result = {"device": torch.cuda.get_device_name(), "date": str(datetime.date.today()),
              "kernel": f"simt hgemm_ws (persistent, warp-specialised; simt_*: the better of the "
                        f"direct-epilogue schedules; *_tma_*: the TMA-store epilogue) and hgemm "
                        f"(simple_*): {BM}x{BN}x{BK} tiles, {STAGES} stages, TMA + wgmma",
              "checks": checks, "rows": rows}
    with open(os.path.join(args.out, "hopper-gemm-simt.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
