"""An attention forward in the FlashAttention-2/3 style, written in simt: O = softmax(Q K^T *
scale) V per (batch, head), online softmax, TMA loads and wgmma, checked and timed on the GPU
against PyTorch's scaled_dot_product_attention (the flash backend) in one run.

The kernel: a block of 384 threads takes 128 query rows of one (batch, head). Warpgroup 0 is
the producer (its thread 0 loads Q once and then K and V blocks of 128 keys by TMA into a
2-stage ring); warpgroups 1 and 2 are the consumers, 64 query rows each. For each key block a
consumer computes S = Q K^T with wgmma (64 x 128, float32 in registers), updates the running
row maximum and sum (the row's 4 threads combine by shuffles), writes P = exp2(S - max) as
16-bit values into its own 128-byte-swizzled shared tile, and adds P V with wgmma, V read
N-major (a row-major keys x head_dim tile: `major="mn"`), after rescaling O. Causal masking
skips the key blocks above the diagonal and masks the diagonal block.

    python bench/attention.py [--out DIR]                     # GPU: check and time
    PYTHONPATH=src python bench/attention.py --check DEVICE   # a small check (e.g. sim)
"""
import argparse
import datetime
import json
import math
import os
import sys

import numpy as np

import simt
from simt import wgmma

BQ, BKV = 128, 128          # query rows a block, keys a step
STAGES = 2
THREADS = 384
CONSUMERS = 256
LOG2E = 1.4426950408889634
NEG_INF = float("-inf")


def make_kernel(head_dim, dtype, causal):
    """The attention kernel for one head dimension (64 or 128), element type (float16 or
    bfloat16) and masking; q, k, v, o are (batch * heads * seq, head_dim) arrays."""
    dh = head_dim // 64                         # 64-column sub-tiles of a row
    ph = BKV // 64                              # 64-column sub-tiles of P's rows
    tile_bytes = BKV * head_dim * 2

    @simt.device
    def load_kv(sk, sv, tma_k, tma_v, kfull, vfull, empty, stage, j, row0):
        """Producer: once the stage's previous use has retired, load key block j."""
        uses = j // STAGES
        if uses > 0:
            empty.wait_parity((uses - 1) & 1)
        kfull.arrive_expect_tx(tile_bytes)
        for h in simt.unroll(range(dh)):
            simt.tma.load(sk[(stage * dh + h) * BKV:(stage * dh + h + 1) * BKV], tma_k,
                          (row0 + j * BKV, h * 64), kfull)
        vfull.arrive_expect_tx(tile_bytes)
        for h in simt.unroll(range(dh)):
            simt.tma.load(sv[(stage * dh + h) * BKV:(stage * dh + h + 1) * BKV], tma_v,
                          (row0 + j * BKV, h * 64), vfull)

    @simt.device
    def row_max(x):
        x = max(x, simt.shfl_xor_sync(0xFFFFFFFF, x, 1))
        return max(x, simt.shfl_xor_sync(0xFFFFFFFF, x, 2))

    @simt.device
    def row_sum(x):
        x += simt.shfl_xor_sync(0xFFFFFFFF, x, 1)
        return x + simt.shfl_xor_sync(0xFFFFFFFF, x, 2)

    @simt.kernel(launch_bounds=(THREADS, 1), fastmath=True)
    def attention(tma_q, tma_k, tma_v, o, seq, scale):
        sq = simt.shared.array((dh * BQ, 64), dtype)
        sk = simt.shared.array((STAGES * dh * BKV, 64), dtype)
        sv = simt.shared.array((STAGES * dh * BKV, 64), dtype)
        sp = simt.shared.array((2 * ph * 64, 64), dtype)
        qbar = simt.shared.barrier(1)
        kf0 = simt.shared.barrier(1)
        kf1 = simt.shared.barrier(1)
        vf0 = simt.shared.barrier(1)
        vf1 = simt.shared.barrier(1)
        e0 = simt.shared.barrier(CONSUMERS)
        e1 = simt.shared.barrier(CONSUMERS)
        blocks_q = seq // BQ
        qblock = blocks_q - 1 - simt.blockIdx.x      # the longest causal rows first
        row0 = simt.blockIdx.y * seq                 # this (batch, head)'s first row
        nkv = (qblock * BQ + BQ) // BKV if causal else seq // BKV
        wg = simt.threadIdx.x // 128
        if wg == 0:
            simt.setmaxnreg(24, "dec")
            if simt.threadIdx.x == 0:
                qbar.arrive_expect_tx(BQ * head_dim * 2)
                for h in simt.unroll(range(dh)):
                    simt.tma.load(sq[h * BQ:(h + 1) * BQ], tma_q, (row0 + qblock * BQ, h * 64),
                                  qbar)
                for j in range(nkv):
                    if j % 2 == 0:
                        load_kv(sk, sv, tma_k, tma_v, kf0, vf0, e0, 0, j, row0)
                    else:
                        load_kv(sk, sv, tma_k, tma_v, kf1, vf1, e1, 1, j, row0)
        else:
            simt.setmaxnreg(240, "inc")
            c = wg - 1
            lane = simt.threadIdx.x % 32
            r0 = 16 * ((simt.threadIdx.x // 32) % 4) + lane // 4     # the thread's rows:
            first_col = 2 * (lane % 4)                               # r0 and r0 + 8
            q_row = qblock * BQ + c * 64 + r0
            scale2 = scale * LOG2E
            acc_s = wgmma.accumulator(64, BKV)
            acc_o = wgmma.accumulator(64, head_dim)
            m0 = NEG_INF
            m1 = NEG_INF
            l0 = 0.0
            l1 = 0.0
            qbar.wait_parity(0)
            for j in range(nkv):
                stage = j % 2
                if stage == 0:
                    kf0.wait_parity((j // 2) & 1)
                else:
                    kf1.wait_parity((j // 2) & 1)
                wgmma.fence()
                for kk in simt.unroll(range(head_dim // 16)):
                    wgmma.mma_async(
                        acc_s,
                        wgmma.descriptor(sq, swizzle="128B", row=(kk // 4) * BQ + c * 64,
                                         k=(kk % 4) * 16),
                        wgmma.descriptor(sk, swizzle="128B", row=(stage * dh + kk // 4) * BKV,
                                         k=(kk % 4) * 16),
                        scale_d=0 if kk == 0 else 1)
                wgmma.commit_group()
                wgmma.wait_group(0)
                # the online softmax: scores in log2 units, the new row maxima
                mask = causal and j == nkv - 1
                mx0 = NEG_INF
                mx1 = NEG_INF
                for i in simt.unroll(range(BKV // 2)):
                    x = acc_s[i] * scale2
                    if mask:
                        col = j * BKV + 8 * (i // 4) + first_col + i % 2
                        if col > q_row + 8 * (i % 4 // 2):
                            x = NEG_INF
                    acc_s[i] = x
                    if i % 4 < 2:
                        mx0 = max(mx0, x)
                    else:
                        mx1 = max(mx1, x)
                new0 = max(m0, row_max(mx0))
                new1 = max(m1, row_max(mx1))
                alpha0 = simt.math.exp2(m0 - new0)
                alpha1 = simt.math.exp2(m1 - new1)
                m0 = new0
                m1 = new1
                l0 *= alpha0
                l1 *= alpha1
                for i in simt.unroll(range(head_dim // 2)):
                    acc_o[i] *= alpha0 if i % 4 < 2 else alpha1
                for i in simt.unroll(range(0, BKV // 2, 2)):   # P, two columns at a time
                    top = i % 4 < 2
                    p_a = simt.math.exp2(acc_s[i] - (new0 if top else new1))
                    p_b = simt.math.exp2(acc_s[i + 1] - (new0 if top else new1))
                    if top:
                        l0 += p_a + p_b
                    else:
                        l1 += p_a + p_b
                    r = r0 + 8 * (i % 4 // 2)
                    col = 8 * (i // 4) + first_col
                    row = (c * ph + col // 64) * 64 + r
                    at = (((col % 64) // 8) ^ (r & 7)) * 8 + col % 8
                    sp[row, at] = p_a
                    sp[row, at + 1] = p_b
                wgmma.fence()                              # P's stores before wgmma reads
                simt.barrier_sync(1 + c, 128)              # the whole warpgroup's P
                if stage == 0:
                    vf0.wait_parity((j // 2) & 1)
                else:
                    vf1.wait_parity((j // 2) & 1)
                for kk in simt.unroll(range(BKV // 16)):
                    wgmma.mma_async(
                        acc_o,
                        wgmma.descriptor(sp, swizzle="128B", row=(c * ph + kk // 4) * 64,
                                         k=(kk % 4) * 16),
                        wgmma.descriptor(sv, swizzle="128B", row=stage * dh * BKV, k=kk * 16,
                                         major="mn", chunk_rows=BKV))
                wgmma.commit_group()
                wgmma.wait_group(0)
                if stage == 0:
                    e0.arrive()
                else:
                    e1.arrive()
            l0 = row_sum(l0)
            l1 = row_sum(l1)
            for i in simt.unroll(range(head_dim // 2)):
                acc_o[i] /= l0 if i % 4 < 2 else l1
            acc_o.store(o, (row0 + qblock * BQ + c * 64) * head_dim, head_dim)
    return attention


_KERNELS = {}


def kernel_for(head_dim, dtype, causal):
    key = (head_dim, np.dtype(dtype), bool(causal))
    if key not in _KERNELS:
        _KERNELS[key] = make_kernel(head_dim, dtype, causal)
    return _KERNELS[key]


def prepare(q, k, v, o, causal=False):
    """The launch of o = attention(q, k, v): 4-d (batch, heads, seq, head_dim) arrays (simt
    or CUDA arrays), float16 or bfloat16, contiguous; tensor maps made once."""
    batch, heads, seq, head_dim = q.shape
    if head_dim not in (64, 128) or seq % BQ:
        raise ValueError(f"attention takes head_dim 64 or 128 and seq a multiple of {BQ}, got "
                         f"{head_dim} and {seq}")
    flat = [simt.asarray(x).reshape(batch * heads * seq, head_dim) for x in (q, k, v, o)]
    maps = [simt.tensor_map(x, (rows, 64), swizzle="128B")
            for x, rows in zip(flat[:3], (BQ, BKV, BKV))]
    kern = kernel_for(head_dim, flat[0].dtype, causal)
    launch = kern[(seq // BQ, batch * heads), THREADS]
    scale = np.float32(1.0 / math.sqrt(head_dim))
    seq32 = np.int32(seq)
    return lambda: launch(*maps, flat[3], seq32, scale)


def reference(q, k, v, causal):
    """NumPy attention in float64 on (batch, heads, seq, d) arrays."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.triu(np.ones(s.shape[-2:], bool), 1), -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def check(device, seq=256, head_dim=64, causal=True, heads=1):
    """A small check against NumPy on ``device`` (the sim device runs it): max abs error."""
    simt.set_device(device)
    rng = np.random.default_rng(1)
    shape = (1, heads, seq, head_dim)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    o = simt.to_device(np.full(shape, np.nan, np.float16))
    prepare(*(simt.to_device(x) for x in (q, k, v)), o, causal)()
    got = o.copy_to_host().astype(np.float64)
    return float(np.abs(got - reference(q, k, v, causal)).max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--check", metavar="DEVICE", help="only a small check on DEVICE")
    args = ap.parse_args()
    if args.check:
        for causal in (False, True):
            print(f"{args.check} causal={causal}: max abs error "
                  f"{check(args.check, causal=causal):.2e}", flush=True)
        return
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import torch_event_ms
    simt.set_device("cuda:0")

    def _time(fn):
        return torch_event_ms(fn, reps=5)
    torch.manual_seed(0)
    rows = []
    batch, heads, seq = 8, 16, 4096
    for dtype in (torch.float16, torch.bfloat16):
        for head_dim in (64, 128):
            for causal in (False, True):
                q, k, v = (torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=dtype)
                           for _ in range(3))
                o = torch.full_like(q, float("nan"))
                run = prepare(q, k, v, o, causal)
                run()
                with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
                    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    t_torch = _time(lambda: F.scaled_dot_product_attention(q, k, v,
                                                                           is_causal=causal))
                err = float((o.float() - ref.float()).abs().max().item())
                t_simt = _time(run)
                flop = 4.0 * batch * heads * seq * seq * head_dim * (0.5 if causal else 1.0)
                row = {"dtype": str(dtype).split(".")[-1], "head_dim": head_dim,
                       "causal": causal, "max_abs_err": err,
                       "ok": bool(torch.isfinite(o).all().item()) and err < 2e-2,
                       "simt_ms": t_simt, "sdpa_ms": t_torch,
                       "simt_tflops": flop / t_simt / 1e9, "sdpa_tflops": flop / t_torch / 1e9,
                       "simt_over_sdpa": t_torch / t_simt}
                rows.append(row)
                print(json.dumps(row), flush=True)
    result = {"device": torch.cuda.get_device_name(), "date": str(datetime.date.today()),
              "problem": f"batch {batch}, heads {heads}, seq {seq}", "rows": rows}
    with open(os.path.join(args.out, "attention-simt.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
