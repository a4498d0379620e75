// Hopper (sm_90a) f16 GEMM reference in plain CUDA C + inline PTX: no CUTLASS, no CuTe.
//
//   C[M,N] (f16, row-major) = A[M,K] (f16, row-major) . B[K,N]   with f32 accumulation,
//   where B is passed TRANSPOSED, as Bt[N,K] row-major (= B column-major, "K-major"), the
//   layout wgmma reads without a transpose (the same convention as Triton/CUTLASS "TN").
//
// Design (docs/hopper-gemm-notes.md is the spec that explains every instruction):
//   * block = 3 warpgroups (384 threads): warpgroup 0 is the producer (setmaxnreg.dec 40,
//     one thread issues TMA), warpgroups 1 and 2 are consumers (setmaxnreg.inc 232), each
//     owning 64 rows of the 128 x BN block tile and issuing wgmma.m64nBNk16.
//   * TMA (cp.async.bulk.tensor.2d) with 128-byte swizzle moves 128x64 A and BNx64 Bt boxes
//     into a STAGES-deep ring in shared memory; each stage has a "full" mbarrier (producer
//     arrive.expect_tx, completed by the TMA's transaction bytes) and an "empty" mbarrier
//     (one arrive per consumer warp once its wgmmas reading that stage have retired).
//   * persistent grid (one block per SM), tiles visited in GROUP_M-row groups for L2 reuse;
//     the producer runs ahead into the next tile while consumers store the previous one.
//   * epilogue: accumulators converted to f16 and stored straight from registers.
//   * variants with CLUSTER = 2 (two CTAs share the Bt tile through TMA multicast) are correct
//     but measured 40% slower (2026-12-02): the remote arrive's .release.cluster compiles to
//     MEMBAR.ALL.GPU + ERRBAR + CGAERRBAR before every arrive (see the notes); variant 0 is the
//     reference.
// Requirements: M % 128 == 0, N % BN == 0, K % 64 == 0, 16-byte aligned rows.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC
#include <cuda.h>            // CUtensorMap and its enums (types only; the driver entry point is
#include <cuda_runtime.h>    // fetched at run time through cudaGetDriverEntryPointByVersion)
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdio.h>

// ------------------------------------------------------------------ PTX wrappers
__device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}" :: "r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    asm volatile(
        "{\n"
        ".reg .pred P1;\n"
        "LAB_WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
        "@P1 bra DONE;\n"
        "bra LAB_WAIT;\n"
        "DONE:\n"
        "}\n" :: "r"(bar), "r"(parity) : "memory");
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *map, int c0, int c1, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
// Same, but the box is written to the same shared-memory offset in every CTA of the cluster
// named in cta_mask, and each destination CTA's mbarrier at offset `bar` gets the complete_tx.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap *map, int c0, int c1,
                                                      uint32_t bar, uint16_t cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;"
        :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(cta_mask)
        : "memory");
}
// Arrive on the mbarrier at shared offset `bar` of CTA `rank` of this cluster.
// NOTE: .release.cluster makes ptxas emit MEMBAR.ALL.CTA; MEMBAR.ALL.GPU; ERRBAR; CGAERRBAR
// before the SYNCS.ARRIVE (seen in the SASS): the likely cause of the cluster variants'
// slowness. CUTLASS's ClusterBarrier::arrive(cta_id) uses the plain
// "mbarrier.arrive.shared::cluster.b64 _, [remAddr32];" (default .release.cta); untested here.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
    asm volatile(
        "{\n.reg .b32 ra;\n"
        "mapa.shared::cluster.u32 ra, %0, %1;\n"
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}"
        :: "r"(bar), "r"(rank) : "memory");
}
__device__ __forceinline__ uint32_t cluster_ctarank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_sync() {   // all threads of all CTAs of the cluster
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}
__device__ __forceinline__ void prefetch_tmap(const CUtensorMap *map) {
    asm volatile("prefetch.tensormap [%0];" :: "l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
template <int R> __device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(R));
}
template <int R> __device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(R));
}
__device__ __forceinline__ void wgmma_fence()  { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}
// Keeps the compiler from moving reads/writes of an accumulator register across a
// wgmma fence/wait (the asm "modifies" it there).
template <int R> __device__ __forceinline__ void fence_operands(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}

// wgmma shared-memory matrix descriptor, K-major operand written by TMA with 128B swizzle:
//   bits  0-13  start address >> 4 (shared-window byte address)
//   bits 16-29  leading-dimension byte offset >> 4: unused for swizzled K-major, set to 1
//   bits 32-45  stride-dimension byte offset >> 4: 1024 B = 8 rows x 128 B (next 8-row core group)
//   bits 49-51  base offset: 0 (every tile is 1024-byte aligned)
//   bits 62-63  swizzle: 1 = 128B
__device__ __forceinline__ uint64_t make_desc(uint32_t saddr) {
    return (uint64_t)((saddr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

// D(64x256, f32) += A(64x16, f16, smem desc) * B(16x256, f16, smem desc); both K-major.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t da, uint64_t db) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 0;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(1));
}

// D(64x128, f32) += A(64x16, f16, smem desc) * B(16x128, f16, smem desc); both K-major.
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t da, uint64_t db) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 0;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(1));
}


template <int BN> struct Wgmma;
template <> struct Wgmma<256> {
    static __device__ __forceinline__ void mma(float (&d)[128], uint64_t a, uint64_t b) { wgmma_m64n256k16(d, a, b); }
};
template <> struct Wgmma<128> {
    static __device__ __forceinline__ void mma(float (&d)[64], uint64_t a, uint64_t b) { wgmma_m64n128k16(d, a, b); }
};

constexpr int BM = 128, BK = 64;     // BK = 64 f16 = 128 bytes = one 128B-swizzle row
constexpr int NUM_THREADS = 384;     // producer warpgroup + 2 consumer warpgroups
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;   // 128*40 + 256*232 = 64512 <= 65536

template <int BN, int STAGES>
struct Smem {
    static constexpr int A_BYTES = BM * BK * 2;
    static constexpr int B_BYTES = BN * BK * 2;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int BAR_OFFSET = STAGES * STAGE_BYTES;
    static constexpr int TOTAL = BAR_OFFSET + 2 * STAGES * 8 + 1024;   // + alignment slack
};

__device__ __forceinline__ void tile_coords(int tile, int num_m, int num_n, int group_m, int &tm, int &tn) {
    int per_group = group_m * num_n;
    int g = tile / per_group;
    int first_m = g * group_m;
    int gm = min(num_m - first_m, group_m);
    int r = tile - g * per_group;
    tm = first_m + r % gm;
    tn = r / gm;
}

// CLUSTER = 1: plain. CLUSTER = 2: a cluster of 2 CTAs takes the two 128-row tiles (2p, tn),
// (2p+1, tn) that share the Bt tile; each CTA loads its own A box and one half (BN/2 rows) of
// the Bt box, multicast into both CTAs; a stage is refilled only when the consumers of both
// CTAs have released it (empty barrier counts 2 x 8 warps, arrivals through mapa).
template <int CLUSTER> __device__ __forceinline__ void release(uint32_t empty) {
    if (CLUSTER == 1) {
        mbar_arrive(empty);
    } else {
#pragma unroll
        for (int r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(empty, r);
    }
}

template <int BN, int STAGES, int GROUP_M, int WAIT_DEPTH, int CLUSTER>
__global__ void __launch_bounds__(NUM_THREADS, 1)
hgemm_ws(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
         __half *__restrict__ C, int M, int N, int K) {
    using S = Smem<BN, STAGES>;
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;   // 128B swizzle wants 1024-B alignment
    const uint32_t full_bar = base + S::BAR_OFFSET;
    const uint32_t empty_bar = full_bar + STAGES * 8;
    const int wg = threadIdx.x / 128;
    // tiles are counted in units of CLUSTER x 1 tiles ("super tiles"); CTA rank r takes row r
    const int num_m = M / BM / CLUSTER, num_n = N / BN, num_tiles = num_m * num_n, nk = K / BK;
    const int rank = CLUSTER > 1 ? (int)cluster_ctarank() : 0;
    const int first_tile = blockIdx.x / CLUSTER, tile_step = gridDim.x / CLUSTER;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_bar + 8 * s, 1);                  // producer's arrive.expect_tx (+ TMA bytes)
            mbar_init(empty_bar + 8 * s, CLUSTER * 2 * 4);   // one arrive per consumer warp of the cluster
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    if (CLUSTER > 1) cluster_sync(); else __syncthreads();

    if (wg == 0) {
        // ---------------- producer warpgroup
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            prefetch_tmap(&tmA);
            prefetch_tmap(&tmB);
            int s = 0;
            uint32_t phase = 0;
            for (int tile = first_tile; tile < num_tiles; tile += tile_step) {
                int tm, tn;
                tile_coords(tile, num_m, num_n, GROUP_M, tm, tn);
                tm = tm * CLUSTER + rank;
                for (int kb = 0; kb < nk; ++kb) {
                    mbar_wait(empty_bar + 8 * s, phase ^ 1);   // first lap passes at once
                    const uint32_t fb = full_bar + 8 * s;
                    mbar_expect_tx(fb, S::STAGE_BYTES);
                    const uint32_t sa = base + s * S::STAGE_BYTES;
                    tma_load_2d(sa, &tmA, kb * BK, tm * BM, fb);
                    if (CLUSTER == 1) {
                        tma_load_2d(sa + S::A_BYTES, &tmB, kb * BK, tn * BN, fb);
                    } else {   // my half of the Bt box, into every CTA of the cluster
                        tma_load_2d_multicast(sa + S::A_BYTES + rank * (S::B_BYTES / CLUSTER), &tmB, kb * BK,
                                              tn * BN + rank * (BN / CLUSTER), fb, (uint16_t)((1 << CLUSTER) - 1));
                    }
                    if (++s == STAGES) { s = 0; phase ^= 1; }
                }
            }
        }
    } else {
        // ---------------- consumer warpgroups
        setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1;                   // which 64-row half of the block tile
        const int t = threadIdx.x % 128;
        const int warp = t / 32, lane = t % 32;
        float d[BN / 2];
        int s = 0;
        uint32_t phase = 0;
        for (int tile = first_tile; tile < num_tiles; tile += tile_step) {
            int tm, tn;
            tile_coords(tile, num_m, num_n, GROUP_M, tm, tn);
            tm = tm * CLUSTER + rank;
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
            int prev = -1;
            for (int kb = 0; kb < nk; ++kb) {
                mbar_wait(full_bar + 8 * s, phase);
                const uint32_t sa = base + s * S::STAGE_BYTES + c * (64 * BK * 2);
                const uint32_t sb = base + s * S::STAGE_BYTES + S::A_BYTES;
                const uint64_t da = make_desc(sa), db = make_desc(sb);
                fence_operands(d);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk)     // +32 bytes along K per k16 step
                    Wgmma<BN>::mma(d, da + 2 * kk, db + 2 * kk);
                wgmma_commit();
                fence_operands(d);
                if (WAIT_DEPTH == 1) {
                    wgmma_wait<1>();                     // the previous stage's group has retired
                    fence_operands(d);
                    if (prev >= 0 && lane == 0) release<CLUSTER>(empty_bar + 8 * prev);
                    prev = s;
                } else {
                    wgmma_wait<0>();
                    fence_operands(d);
                    if (lane == 0) release<CLUSTER>(empty_bar + 8 * s);
                }
                if (++s == STAGES) { s = 0; phase ^= 1; }
            }
            if (WAIT_DEPTH == 1) {
                wgmma_wait<0>();
                fence_operands(d);
                if (prev >= 0 && lane == 0) release<CLUSTER>(empty_bar + 8 * prev);
            }
            // epilogue: fragment (row, col) of the 64xBN accumulator, per n8 chunk j:
            //   d[4j+0], d[4j+1] -> row warp*16 + lane/4,     cols 8j + 2*(lane%4) + {0,1}
            //   d[4j+2], d[4j+3] -> row warp*16 + lane/4 + 8, same cols
            const int row = tm * BM + c * 64 + warp * 16 + lane / 4;
            const int col = tn * BN + 2 * (lane % 4);
            __half *c0 = C + (size_t)row * N + col;
            __half *c1 = c0 + (size_t)8 * N;
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                *reinterpret_cast<__half2 *>(c0 + 8 * j) = __floats2half2_rn(d[4 * j + 0], d[4 * j + 1]);
                *reinterpret_cast<__half2 *>(c1 + 8 * j) = __floats2half2_rn(d[4 * j + 2], d[4 * j + 3]);
            }
        }
    }
    if (CLUSTER > 1) {   // the peer's consumers still arrive on our empty barriers: stay until all are done
        __syncwarp();
        cluster_sync();
    }
}

// ------------------------------------------------------------------ host side
typedef CUresult (*EncodeTiledFn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                  const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static EncodeTiledFn get_encode() {
    static EncodeTiledFn fn = nullptr;
    if (!fn) {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) !=
                cudaSuccess || q != cudaDriverEntryPointSuccess)
            return nullptr;
        fn = (EncodeTiledFn)p;
    }
    return fn;
}

// 2-D row-major f16 tensor [rows, cols] (cols contiguous); box = box_rows x 64 cols, 128B swizzle.
static int make_map(CUtensorMap *map, const void *ptr, int rows, int cols, int box_rows) {
    EncodeTiledFn enc = get_encode();
    if (!enc) return -1;
    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    cuuint64_t strides[1] = {(cuuint64_t)cols * 2};           // bytes, for dim 1
    cuuint32_t box[2] = {(cuuint32_t)BK, (cuuint32_t)box_rows};
    cuuint32_t estr[2] = {1, 1};
    CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void *>(ptr), dims, strides, box, estr,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? 0 : -(int)r - 100;
}

struct Variant {
    const char *name;
    int bn, stages, cluster;
    const void *fn;
    int smem;
};

#define VARIANT(BN_, ST_, G_, W_, CL_)                                                                     \
    Variant { "bn" #BN_ "_s" #ST_ "_g" #G_ "_w" #W_ "_c" #CL_, BN_, ST_, CL_,                              \
              (const void *)hgemm_ws<BN_, ST_, G_, W_, CL_>, Smem<BN_, ST_>::TOTAL }

// GROUP_M counts super tiles (CLUSTER tile rows each).
static Variant VARIANTS[] = {
    VARIANT(256, 4, 16, 1, 1),   // 0: the default
    VARIANT(256, 4, 8, 1, 1),
    VARIANT(256, 4, 16, 0, 1),
    VARIANT(128, 6, 16, 1, 1),
    VARIANT(256, 4, 8, 1, 2),    // 4: cluster of 2 along M, Bt multicast
    VARIANT(256, 4, 4, 1, 2),
};
static const int NUM_VARIANTS = sizeof(VARIANTS) / sizeof(VARIANTS[0]);

static int max_ctas[16] = {};   // persistent grid per variant: co-resident CTAs (clusters x cluster size)

extern "C" int hg_num_variants() { return NUM_VARIANTS; }
extern "C" const char *hg_variant_name(int v) { return (v >= 0 && v < NUM_VARIANTS) ? VARIANTS[v].name : ""; }

// C[M,N] = A[M,K] . Bt[N,K]^T ; all f16 device pointers, row-major. Returns 0 or an error code.
extern "C" int hg_gemm(int v, const void *A, const void *Bt, void *C, int M, int N, int K, void *stream) {
    if (v < 0 || v >= NUM_VARIANTS) return -1;
    Variant &var = VARIANTS[v];
    if (M % (BM * var.cluster) || N % var.bn || K % BK) return -2;
    static struct { const void *a, *b; int m, n, k, bn; CUtensorMap ma, mb; } cache = {};
    if (cache.a != A || cache.b != Bt || cache.m != M || cache.n != N || cache.k != K || cache.bn != var.bn / var.cluster) {
        int r;
        if ((r = make_map(&cache.ma, A, M, K, BM))) return r;
        if ((r = make_map(&cache.mb, Bt, N, K, var.bn / var.cluster))) return r;
        cache.a = A; cache.b = Bt; cache.m = M; cache.n = N; cache.k = K; cache.bn = var.bn / var.cluster;
    }
    static int sms = 0;
    if (!sms) {
        int dev;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    }
    static bool attr_set[16] = {};
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = var.cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.blockDim = dim3(NUM_THREADS);
    cfg.dynamicSmemBytes = var.smem;
    cfg.stream = (cudaStream_t)stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (!attr_set[v]) {
        cudaError_t e = cudaFuncSetAttribute(var.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, var.smem);
        if (e != cudaSuccess) return 1000 + (int)e;
        max_ctas[v] = sms;
        if (var.cluster > 1) {
            int nclusters = 0;
            cfg.gridDim = dim3(sms / var.cluster * var.cluster);
            e = cudaOccupancyMaxActiveClusters(&nclusters, var.fn, &cfg);
            if (e != cudaSuccess || nclusters <= 0) return 3000 + (int)e;
            max_ctas[v] = nclusters * var.cluster < sms ? nclusters * var.cluster : sms / var.cluster * var.cluster;
        }
        attr_set[v] = true;
    }
    int tiles = (M / BM) * (N / var.bn);   // a multiple of var.cluster
    cfg.gridDim = dim3(tiles < max_ctas[v] ? tiles : max_ctas[v]);
    void *args[] = {(void *)&cache.ma, (void *)&cache.mb, &C, &M, &N, &K};
    cudaError_t e = cudaLaunchKernelExC(&cfg, var.fn, args);
    return e == cudaSuccess ? 0 : 2000 + (int)e;
}

// The persistent grid's size (co-resident CTAs) the variant launches with, after one hg_gemm call.
extern "C" int hg_max_ctas(int v) { return (v >= 0 && v < NUM_VARIANTS) ? max_ctas[v] : 0; }
