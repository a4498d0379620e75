// Tensor-core GEMM C = A @ B (row-major, M = N = K = 4096): the kernel of bench/wmma_gemm.py,
// line for line, in CUDA C. 128x128 block tiles, BK = 32, eight warps of 64x32 (4 x 2
// accumulators), A and B staged through padded shared memory by element copies.
// Two precisions: half -> float (m16n16k16) and tf32 -> float (m16n16k8).
// Prints {"f16_ms": ..., "tf32_ms": ..., "f16_check": ..., "tf32_check": ...}: median of 20
// event-timed runs; the checks are C[1, 2] against a host dot product.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

#define BM 128
#define BN 128
#define BK 32

template <typename T, typename P, int FK, int PAD>
__global__ void __launch_bounds__(256) wmma_gemm(const T *a, const T *b, float *c, int n) {
    __shared__ __align__(128) T sa[BM * (BK + PAD)];
    __shared__ __align__(128) T sb[BK * (BN + PAD)];
    const int lda = BK + PAD, ldb = BN + PAD;
    wmma::fragment<wmma::matrix_a, 16, 16, FK, P, wmma::row_major> af[4];
    wmma::fragment<wmma::matrix_b, 16, 16, FK, P, wmma::row_major> bf[2];
    wmma::fragment<wmma::accumulator, 16, 16, FK, float> acc[4][2];
    int tid = threadIdx.x, warp = tid / 32;
    int wr = (warp / 4) * 64, wc = (warp % 4) * 32;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);
    for (int k0 = 0; k0 < n; k0 += BK) {
        for (int i = tid; i < BM * BK; i += 256)
            sa[(i / BK) * lda + i % BK] = a[(size_t)(row0 + i / BK) * n + k0 + i % BK];
        for (int i = tid; i < BK * BN; i += 256)
            sb[(i / BN) * ldb + i % BN] = b[(size_t)(k0 + i / BN) * n + col0 + i % BN];
        __syncthreads();
        for (int kk = 0; kk < BK; kk += FK) {
            for (int i = 0; i < 4; i++)
                wmma::load_matrix_sync(af[i], sa + (wr + 16 * i) * lda + kk, lda);
            for (int j = 0; j < 2; j++)
                wmma::load_matrix_sync(bf[j], sb + kk * ldb + wc + 16 * j, ldb);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(c + (size_t)(row0 + wr + 16 * i) * n + col0 + wc + 16 * j,
                                    acc[i][j], n, wmma::mem_row_major);
}

template <typename T, typename P, int FK, int PAD>
static float run(const std::vector<T> &ha, const std::vector<T> &hb, int n, float *check) {
    size_t count = (size_t)n * n;
    T *a, *b; float *c;
    cudaMalloc(&a, count * sizeof(T)); cudaMalloc(&b, count * sizeof(T));
    cudaMalloc(&c, count * 4);
    cudaMemcpy(a, ha.data(), count * sizeof(T), cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb.data(), count * sizeof(T), cudaMemcpyHostToDevice);
    dim3 grid(n / BN, n / BM);
    wmma_gemm<T, P, FK, PAD><<<grid, 256>>>(a, b, c, n);
    cudaEvent_t start, end; cudaEventCreate(&start); cudaEventCreate(&end);
    std::vector<float> times;
    for (int r = 0; r < 20; r++) {
        cudaEventRecord(start);
        wmma_gemm<T, P, FK, PAD><<<grid, 256>>>(a, b, c, n);
        cudaEventRecord(end); cudaEventSynchronize(end);
        float ms; cudaEventElapsedTime(&ms, start, end); times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    cudaMemcpy(check, c + (size_t)1 * n + 2, 4, cudaMemcpyDeviceToHost);
    cudaFree(a); cudaFree(b); cudaFree(c);
    return times[times.size() / 2];
}

int main() {
    const int n = 4096;
    size_t count = (size_t)n * n;
    // the inputs of bench/wmma_gemm.py: small integers over 8, exact in half and tf32
    std::vector<float> fa(count), fb(count);
    for (size_t i = 0; i < count; i++) {
        fa[i] = (float)((int)(i % 17) - 8) / 8.0f;
        fb[i] = (float)((int)(i % 13) - 6) / 8.0f;
    }
    std::vector<half> ha(count), hb(count);
    for (size_t i = 0; i < count; i++) { ha[i] = __float2half(fa[i]); hb[i] = __float2half(fb[i]); }
    double expect = 0;
    for (int k = 0; k < n; k++) expect += (double)fa[(size_t)1 * n + k] * fb[(size_t)k * n + 2];
    float f16_check, tf32_check;
    float f16_ms = run<half, half, 16, 8>(ha, hb, n, &f16_check);
    float tf32_ms = run<float, wmma::precision::tf32, 8, 4>(fa, fb, n, &tf32_check);
    printf("{\"f16_ms\": %.4f, \"tf32_ms\": %.4f, \"f16_check\": %.4f, \"tf32_check\": %.4f, "
           "\"expected\": %.4f, \"err\": \"%s\"}\n", f16_ms, tf32_ms, f16_check, tf32_check,
           expect, cudaGetErrorString(cudaGetLastError()));
    return 0;
}
