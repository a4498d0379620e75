"""The warp-specialised, persistent Hopper GEMM: bench/hopper_gemm.py's problem (float16
A[M, K] . Bt[N, K]^T, float32 accumulation, float16 C) with the CUDA C twin's structure
(bench/cuda/hopper_gemm.cu, docs/hopper-gemm-notes.md):

- 384 threads: warpgroup 0 is the producer (setmaxnreg.dec 40; its thread 0 issues every
  TMA load), warpgroups 1 and 2 the consumers (setmaxnreg.inc 232; each owns 64 rows of the
  128 x 256 block tile and a 64 x 256 wgmma accumulator);
- a persistent grid (one block per SM) walking the tiles in grouped order (GROUP_M tile rows
  at a time, as Triton does), so the producer loads the next tile's first stages while the
  consumers store the current tile;
- a STAGES-deep ring of 128-byte-swizzled stages, each with a "full" barrier (the producer's
  arrive_expect_tx, completed by the TMA's bytes) and an "empty" barrier (every consumer
  thread arrives once the wgmmas reading the stage have retired).

The barriers are compile-time objects, so the K loop is written out STAGES times; K is a
multiple of STAGES k-blocks, so every tile starts at stage 0 and a stage's use count runs on
across tiles (its parity is the number of k-blocks this block has done before, over STAGES).

Two epilogues (``epilogue=``, both schedules): 'direct' stores each thread's converted
register pairs to C in global memory (st.global, rows apart), and the warpgroup's next tile
waits for them; 'tma' (CUTLASS's and cuBLAS's) writes the tile into a 128B-swizzled shared
buffer with stmatrix, fences the proxies, meets at the warpgroup's named barrier, and one
thread issues TMA stores of 64 x 64 boxes, which drain while the next tile's main loop runs;
the buffer is written again only once wait_group(read) says the stores have read it. The
cooperative schedule's 4 stages (192 KiB) leave 32 KiB, so each consumer stages its 64 x 256
slab in two halves of 64 x 128 through 16 KiB; ping-pong's (128 KiB) leave room for each
warpgroup's whole 128 x 128 tile (32 KiB each).

    PYTHONPATH=src python bench/hopper_gemm_ws.py [device] [M N K [schedule [epilogue]]]
"""
import os
import sys

import numpy as np

import simt
from simt import wgmma

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper_gemm import (BM, BN, KSTEP, STAGES, _release,  # noqa: E402
                         _wait_full)

THREADS = 384               # one producer warpgroup, two consumer warpgroups
CONSUMERS = 256
GROUP_M = 16                # tile rows walked together (L2 reuse of B)
PRODUCER_REGISTERS, CONSUMER_REGISTERS = 40, 232     # 128 * 40 + 256 * 232 <= 65536
EPILOGUES = ("direct", "tma")
C_BOX = 64                  # a TMA store box: 64 x 64 16-bit elements, 128-byte (swizzled) rows
C_COLUMNS = 128             # columns of a 64-row slab staged in shared memory at once
FIRST_C_BARRIER = 3         # named barriers 3 and 4: consumer warpgroup 1's and 2's epilogue


@simt.device
def tile_of(t, tiles_m, tiles_n):
    """(tile row, tile column) of the t-th tile in grouped order."""
    per_group = GROUP_M * tiles_n
    first = (t // per_group) * GROUP_M
    rows = min(tiles_m - first, GROUP_M)
    return first + (t % per_group) % rows, (t % per_group) // rows


@simt.device
def c_offset(first, column):
    """This lane's offset for simt.stmatrix(sc, offset, frag, n=4) of its warp's 16 x 16 piece
    of a 64-row slab (rows 16 * warp ..., columns column ... column + 15; frag: the
    accumulator's 8 registers of those columns, in order) into the 64 x 64 boxes of sc from
    row ``first``, each laid out as a 128B-swizzled TMA box: the 16-byte chunk c of row r at
    chunk c ^ (r % 8). Lane l gives the address of row l % 16, columns 8 * (l // 16) ...: the
    offset is that address less what stmatrix adds to it. A warp's 8 rows of one matrix land
    in 8 different chunks, so no bank is hit twice."""
    lane = simt.laneid()
    row = 16 * ((simt.threadIdx.x // 32) % 4) + lane % 16
    col = column + 8 * (lane // 16)
    chunk = (col % C_BOX) // 8
    place = (first + (col // C_BOX) * C_BOX + row) * C_BOX + (chunk ^ (row % 8)) * 8
    return place - (lane % 16) * C_BOX - 8 * (lane // 16)


@simt.device
def claim_c(bar):
    """Wait (this warpgroup) until its earlier TMA stores have read its C buffer."""
    if simt.threadIdx.x % 128 == 0:
        simt.tma.wait_group(0, read=True)
    simt.barrier_sync(bar, 128)


@simt.device
def publish_c(tma_c, sc, first, boxes, row, column, bar):
    """Store ``boxes`` 64 x 64 boxes of sc from row ``first`` (C_COLUMNS // 64 a row of
    boxes) to C at (row, column), once every thread of the warpgroup has written its part:
    each fences its shared stores against the async proxy, the warpgroup meets at its named
    barrier, and its first thread issues the stores as one bulk group."""
    simt.fence_proxy_async()
    simt.barrier_sync(bar, 128)
    if simt.threadIdx.x % 128 == 0:
        across = C_COLUMNS // C_BOX
        for b in simt.unroll(range(boxes)):
            at = first + b * C_BOX
            simt.tma.store(tma_c, (row + (b // across) * C_BOX, column + (b % across) * C_BOX),
                           sc[at:at + C_BOX])
        simt.tma.commit_group()


@simt.device
def drain_c():
    """The warpgroup's last TMA stores are complete (before the block exits)."""
    if simt.threadIdx.x % 128 == 0:
        simt.tma.wait_group(0)


def k_block(dtype):
    """(elements of K in one 128-byte swizzled row, K of one wgmma) for an element type."""
    size = np.dtype(dtype).itemsize
    return 128 // size, 32 if size == 1 else KSTEP


def make_producer(dtype, bm, bn):
    """The producer's loop for tiles of bm x bn (thread 0 of warpgroup 0): every tile of
    this block in order, each k-block into the next stage of the ring once its previous
    use has retired (the stage's empty barrier), completing the stage's full barrier by
    the TMA's bytes. Both schedules fill the ring this way."""
    bk, _ = k_block(dtype)
    stage_bytes = (bm + bn) * bk * np.dtype(dtype).itemsize

    @simt.device
    def load_stage(sa, sb, tma_a, tma_b, full, empty, stage, done, kb, tm, tn):
        """k-block kb of tile (tm, tn) into ``stage``; ``done`` k-blocks came before it."""
        uses = done // STAGES
        if uses > 0:
            empty.wait_parity((uses - 1) & 1)
        full.arrive_expect_tx(stage_bytes)
        simt.tma.load(sa[stage * bm:(stage + 1) * bm], tma_a, (tm * bm, kb * bk), full)
        simt.tma.load(sb[stage * bn:(stage + 1) * bn], tma_b, (tn * bn, kb * bk), full)

    @simt.device
    def produce(sa, sb, tma_a, tma_b, f0, f1, f2, f3, e0, e1, e2, e3, tiles_m, tiles_n, nk):
        done = 0
        for t in range(simt.blockIdx.x, tiles_m * tiles_n, simt.gridDim.x):
            tm, tn = tile_of(t, tiles_m, tiles_n)
            for k0 in range(0, nk, STAGES):
                load_stage(sa, sb, tma_a, tma_b, f0, e0, 0, done + k0, k0, tm, tn)
                load_stage(sa, sb, tma_a, tma_b, f1, e1, 1, done + k0 + 1, k0 + 1, tm, tn)
                load_stage(sa, sb, tma_a, tma_b, f2, e2, 2, done + k0 + 2, k0 + 2, tm, tn)
                load_stage(sa, sb, tma_a, tma_b, f3, e3, 3, done + k0 + 3, k0 + 3, tm, tn)
            done += nk
    return produce


def make_kernel(dtype, out=np.float16, epilogue="direct"):
    """The kernel for A and Bt of ``dtype`` (float16 or bfloat16, C the same; or FP8 e4m3 /
    e5m2, C bfloat16 or float16 times a per-tensor scale, as torch._scaled_mm computes), C of
    ``out``, stored by the ``epilogue`` ('direct' or 'tma': the module's doc)."""
    bk, kstep = k_block(dtype)
    scaled = np.dtype(dtype).itemsize == 1
    staged = epilogue == "tma"
    halves = BN // C_COLUMNS
    produce = make_producer(dtype, BM, BN)

    @simt.kernel(launch_bounds=(THREADS, 1))
    def hgemm_ws(tma_a, tma_b, tma_c, c, nk, scale):
        sa = simt.shared.array((STAGES * BM, bk), dtype)
        sb = simt.shared.array((STAGES * BN, bk), dtype)
        # each consumer's 64 x C_COLUMNS (a direct epilogue leaves it unused: LLVM drops it)
        sc = simt.shared.array((2 * 64 * C_COLUMNS // C_BOX if staged else 8, C_BOX), out)
        f0 = simt.shared.barrier(1)
        f1 = simt.shared.barrier(1)
        f2 = simt.shared.barrier(1)
        f3 = simt.shared.barrier(1)
        e0 = simt.shared.barrier(CONSUMERS)
        e1 = simt.shared.barrier(CONSUMERS)
        e2 = simt.shared.barrier(CONSUMERS)
        e3 = simt.shared.barrier(CONSUMERS)
        tiles_m, tiles_n = c.shape[0] // BM, c.shape[1] // BN
        tiles = tiles_m * tiles_n
        wg = simt.threadIdx.x // 128
        done = 0                                  # k-blocks this block did before this tile
        if wg == 0:
            simt.setmaxnreg(PRODUCER_REGISTERS, "dec")
            if simt.threadIdx.x == 0:
                produce(sa, sb, tma_a, tma_b, f0, f1, f2, f3, e0, e1, e2, e3, tiles_m, tiles_n,
                        nk)
        else:
            simt.setmaxnreg(CONSUMER_REGISTERS, "inc")
            rows = wg - 1
            acc = wgmma.accumulator(64, BN)
            n = c.shape[1]
            frag = simt.local.array(8, out)
            own = rows * 64 * C_COLUMNS // C_BOX       # this warpgroup's first row of sc
            for t in range(simt.blockIdx.x, tiles, simt.gridDim.x):
                tm, tn = tile_of(t, tiles_m, tiles_n)
                for k0 in range(0, nk, STAGES):
                    for s in simt.unroll(range(STAGES)):
                        _wait_full(s, ((done + k0 + s) // STAGES) & 1, f0, f1, f2, f3)
                        wgmma.fence()
                        for kk in simt.unroll(range(bk // kstep)):
                            # the tile's first k-block overwrites the accumulator
                            wgmma.mma_async(
                                acc, wgmma.descriptor(sa, swizzle="128B", row=s * BM + rows * 64,
                                                      k=kk * kstep),
                                wgmma.descriptor(sb, swizzle="128B", row=s * BN, k=kk * kstep),
                                scale_d=0 if k0 + s + kk == 0 else 1)
                        wgmma.commit_group()
                        wgmma.wait_group(1)        # the previous k-block's wgmmas have retired:
                        if k0 + s > 0:             # release its stage
                            _release((s + STAGES - 1) % STAGES, e0, e1, e2, e3)
                wgmma.wait_group(0)
                e3.arrive()
                if scaled:
                    for i in simt.unroll(range(BN // 2)):
                        acc[i] *= scale
                if staged:
                    for h in simt.unroll(range(halves)):
                        claim_c(FIRST_C_BARRIER + rows)
                        for q in simt.unroll(range(C_COLUMNS // 16)):
                            for i in simt.unroll(range(8)):
                                frag[i] = acc[h * C_COLUMNS // 2 + 8 * q + i]
                            simt.stmatrix(sc, c_offset(own, 16 * q), frag, n=4)
                        publish_c(tma_c, sc, own, C_COLUMNS // C_BOX, tm * BM + rows * 64,
                                  tn * BN + h * C_COLUMNS, FIRST_C_BARRIER + rows)
                else:
                    acc.store(c, (tm * BM + rows * 64) * n + tn * BN, n)
                done += nk
            if staged:
                drain_c()
    return hgemm_ws


# ------------------------------------------------------------------ ping-pong
PP_BM = PP_BN = 128         # one consumer warpgroup's tile
PP_CONSUMERS = 128          # arrivals on an empty barrier: the warpgroup using the stage


def make_pingpong_kernel(dtype, out=np.float16, epilogue="direct"):
    """The ping-pong schedule (CUTLASS's KernelTmaWarpSpecializedPingpong): each consumer
    warpgroup computes a 128 x 128 tile of its own (two m64n128 accumulators), the block's
    j-th tile going to warpgroup 1 + j % 2. The producer fills the one ring in tile order,
    and the two warpgroups take turns at the tensor cores through two named barriers: one
    warpgroup's main loop runs while the other stores its tile, so the epilogue is hidden.

    The turns also keep the barriers' parities right: a warpgroup waits for a stage's phase
    only once the other has waited for the phase before it (a parity wait cannot tell phase
    u from phase u - 2)."""
    bk, kstep = k_block(dtype)
    scaled = np.dtype(dtype).itemsize == 1
    staged = epilogue == "tma"
    boxes = PP_BM * PP_BN // (C_BOX * C_BOX)      # a warpgroup's tile: 2 x 2 boxes
    produce = make_producer(dtype, PP_BM, PP_BN)

    @simt.kernel(launch_bounds=(THREADS, 1))
    def hgemm_pingpong(tma_a, tma_b, tma_c, c, nk, scale):
        sa = simt.shared.array((STAGES * PP_BM, bk), dtype)
        sb = simt.shared.array((STAGES * PP_BN, bk), dtype)
        # each consumer's whole tile (a direct epilogue leaves it unused: LLVM drops it)
        sc = simt.shared.array((2 * boxes * C_BOX if staged else 8, C_BOX), out)
        f0 = simt.shared.barrier(1)
        f1 = simt.shared.barrier(1)
        f2 = simt.shared.barrier(1)
        f3 = simt.shared.barrier(1)
        e0 = simt.shared.barrier(PP_CONSUMERS)
        e1 = simt.shared.barrier(PP_CONSUMERS)
        e2 = simt.shared.barrier(PP_CONSUMERS)
        e3 = simt.shared.barrier(PP_CONSUMERS)
        tiles_m, tiles_n = c.shape[0] // PP_BM, c.shape[1] // PP_BN
        tiles = tiles_m * tiles_n
        wg = simt.threadIdx.x // 128
        if wg == 0:
            simt.setmaxnreg(PRODUCER_REGISTERS, "dec")
            if simt.threadIdx.x == 0:
                produce(sa, sb, tma_a, tma_b, f0, f1, f2, f3, e0, e1, e2, e3, tiles_m, tiles_n,
                        nk)
        else:
            simt.setmaxnreg(CONSUMER_REGISTERS, "inc")
            top = wgmma.accumulator(64, PP_BN)
            bottom = wgmma.accumulator(64, PP_BN)
            n = c.shape[1]
            frag = simt.local.array(8, out)
            own = (wg - 1) * boxes * C_BOX              # this warpgroup's first row of sc
            bar = FIRST_C_BARRIER + wg - 1
            j = wg - 1                            # the block's j-th tile is this one's
            t = simt.blockIdx.x + j * simt.gridDim.x
            while t < tiles:
                tm, tn = tile_of(t, tiles_m, tiles_n)
                done = j * nk
                if j > 0:                         # the other warpgroup's main loop is over
                    simt.barrier_sync(wg, 2 * PP_CONSUMERS)    # named barrier 1 or 2
                for k0 in range(0, nk, STAGES):
                    for s in simt.unroll(range(STAGES)):
                        _wait_full(s, ((done + k0 + s) // STAGES) & 1, f0, f1, f2, f3)
                        wgmma.fence()
                        for kk in simt.unroll(range(bk // kstep)):
                            first = 0 if k0 + s + kk == 0 else 1
                            b_tile = wgmma.descriptor(sb, swizzle="128B", row=s * PP_BN,
                                                      k=kk * kstep)
                            wgmma.mma_async(
                                top, wgmma.descriptor(sa, swizzle="128B", row=s * PP_BM,
                                                      k=kk * kstep), b_tile, scale_d=first)
                            wgmma.mma_async(
                                bottom, wgmma.descriptor(sa, swizzle="128B",
                                                         row=s * PP_BM + 64, k=kk * kstep),
                                b_tile, scale_d=first)
                        wgmma.commit_group()
                        wgmma.wait_group(1)
                        if k0 + s > 0:
                            _release((s + STAGES - 1) % STAGES, e0, e1, e2, e3)
                wgmma.wait_group(0)
                e3.arrive()
                if t + simt.gridDim.x < tiles:    # the next tile's warpgroup may start
                    simt.barrier_arrive(3 - wg, 2 * PP_CONSUMERS)
                if scaled:
                    for i in simt.unroll(range(PP_BN // 2)):
                        top[i] *= scale
                        bottom[i] *= scale
                if staged:
                    claim_c(bar)
                    for q in simt.unroll(range(PP_BN // 16)):
                        for i in simt.unroll(range(8)):
                            frag[i] = top[8 * q + i]
                        simt.stmatrix(sc, c_offset(own, 16 * q), frag, n=4)
                        for i in simt.unroll(range(8)):
                            frag[i] = bottom[8 * q + i]
                        simt.stmatrix(sc, c_offset(own + boxes // 2 * C_BOX, 16 * q), frag,
                                      n=4)
                    publish_c(tma_c, sc, own, boxes, tm * PP_BM, tn * PP_BN, bar)
                else:
                    top.store(c, (tm * PP_BM) * n + tn * PP_BN, n)
                    bottom.store(c, (tm * PP_BM + 64) * n + tn * PP_BN, n)
                j += 2
                t += 2 * simt.gridDim.x
            if staged:
                drain_c()
    return hgemm_pingpong


KERNELS = {}
SCHEDULES = {"cooperative": (make_kernel, BM, BN), "pingpong": (make_pingpong_kernel, PP_BM,
                                                                  PP_BN)}


def kernel_for(dtype, schedule="cooperative", out=np.float16, epilogue="direct"):
    key = (np.dtype(dtype), schedule, np.dtype(out), epilogue)
    if key not in KERNELS:
        KERNELS[key] = SCHEDULES[schedule][0](key[0], out, epilogue)
    return KERNELS[key]


def prepare(a, bt, c, blocks=None, scale=1.0, schedule="cooperative", epilogue="direct"):
    """The launch of c = a @ bt.T * scale (simt or CUDA arrays: float16, bfloat16, or FP8 with
    a float16/bfloat16 c) with its tensor maps made once; ``blocks``: the persistent grid
    (default: one block per multiprocessor); ``schedule``: 'cooperative' (both consumer
    warpgroups on one 128 x 256 tile) or 'pingpong' (a 128 x 128 tile each, taking turns);
    ``epilogue``: 'direct' (registers to global memory) or 'tma' (through shared memory and
    TMA stores)."""
    a, bt, c = (simt.asarray(x) for x in (a, bt, c))
    m, k = a.shape
    n = bt.shape[0]
    bk, _ = k_block(a.dtype)
    _, bm, bn = SCHEDULES[schedule]
    if epilogue not in EPILOGUES:
        raise ValueError(f"hgemm_ws: epilogue is one of {EPILOGUES}, got {epilogue!r}")
    if m % bm or n % bn or k % (bk * STAGES):
        raise ValueError(f"hgemm_ws ({schedule}) needs M % {bm} == 0, N % {bn} == 0 and K % "
                         f"{bk * STAGES} == 0, got {m} x {n} x {k}")
    if bt.dtype != a.dtype:
        raise ValueError(f"hgemm_ws multiplies arrays of one dtype, got {a.dtype} and "
                         f"{bt.dtype}")
    tma_a = simt.tensor_map(a, (bm, bk), swizzle="128B")
    tma_b = simt.tensor_map(bt, (bn, bk), swizzle="128B")
    tma_c = simt.tensor_map(c, (C_BOX, C_BOX), swizzle="128B")   # the 'tma' epilogue's boxes
    if blocks is None:
        blocks = simt.get_device().properties.multiprocessor_count
    kernel = kernel_for(a.dtype, schedule, c.dtype, epilogue)
    launch = kernel[min(blocks, (m // bm) * (n // bn)), THREADS]
    nk, scale = np.int32(k // bk), np.float32(scale)
    return lambda: launch(tma_a, tma_b, tma_c, c, nk, scale)


def gemm(a, bt, c, blocks=None, scale=1.0, schedule="cooperative", epilogue="direct"):
    """c = a @ bt.T * scale on the current device."""
    prepare(a, bt, c, blocks, scale, schedule, epilogue)()


if __name__ == "__main__":
    simt.set_device(sys.argv[1] if len(sys.argv) > 1 else "sim")
    m, n, k = (int(v) for v in sys.argv[2:5]) if len(sys.argv) > 4 else (256, 512, 512)
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    bt = rng.integers(-3, 4, (n, k)).astype(np.float16)
    c = simt.to_device(np.full((m, n), np.nan, np.float16))
    schedule = sys.argv[5] if len(sys.argv) > 5 else "cooperative"
    epilogue = sys.argv[6] if len(sys.argv) > 6 else "direct"
    gemm(simt.to_device(a), simt.to_device(bt), c, blocks=3, schedule=schedule,
         epilogue=epilogue)
    want = (a.astype(np.float32) @ bt.T.astype(np.float32)).astype(np.float16)
    print("exact:", np.array_equal(c.copy_to_host(), want))
