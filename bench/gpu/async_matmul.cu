// Tiled float32 matmul, n = 4096, 16x16 tiles: plain (loads into shared, syncthreads) and
// double-buffered with cuda::pipeline (the next tiles' cp.async copies in flight while this
// tile is multiplied): the kernels of bench/async_copy.py, line for line.
// Prints {"plain_ms": ..., "pipelined_ms": ..., "check": ...}: median of 20 event-timed runs.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda/pipeline>

#define TILE 16

__global__ void plain(const float *a, const float *b, float *c, int n) {
    __shared__ float sa[TILE * TILE], sb[TILE * TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int s = 0; s < n / TILE; s++) {
        sa[ty * TILE + tx] = a[(size_t)row * n + s * TILE + tx];
        sb[ty * TILE + tx] = b[(size_t)(s * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += sa[ty * TILE + k] * sb[k * TILE + tx];
        __syncthreads();
    }
    c[(size_t)row * n + col] = acc;
}

// Checked: simt's rule for the 16-byte copy, both addresses' alignment checked at run time
// and a plain copy when either is not 16-byte aligned (docs/async-copies.md), timed as
// `pipelined_checked` to tell how much of simt's gap to `pipelined` that rule explains
// (bench/NOTES.md).
template <bool Checked>
__global__ void pipelined_t(const float *a, const float *b, float *c, int n) {
    __shared__ __align__(16) float sa[2 * TILE * TILE];
    __shared__ __align__(16) float sb[2 * TILE * TILE];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    int steps = n / TILE;
    float acc = 0.0f;
    for (int s = 0; s < steps + 1; s++) {
        if (s < steps) {
            int stage = (s % 2) * TILE * TILE;
            pipe.producer_acquire();
            if (tx < 4) {
                float *dst = sa + stage + ty * TILE + 4 * tx;
                const float *src = a + (size_t)row * n + s * TILE + 4 * tx;
                if (!Checked || (((size_t)dst | (size_t)src) & 15) == 0)
                    cuda::memcpy_async(dst, src, cuda::aligned_size_t<16>(16), pipe);
                else
                    for (int i = 0; i < 4; i++) dst[i] = src[i];
            }
            cuda::memcpy_async(sb + stage + ty * TILE + tx, b + (size_t)(s * TILE + ty) * n + col,
                               cuda::aligned_size_t<4>(4), pipe);
            pipe.producer_commit();
        }
        if (s > 0) {
            pipe.consumer_wait();
            __syncthreads();
            int stage = ((s - 1) % 2) * TILE * TILE;
            for (int k = 0; k < TILE; k++) acc += sa[stage + ty * TILE + k] * sb[stage + k * TILE + tx];
            pipe.consumer_release();
            __syncthreads();
        }
    }
    c[(size_t)row * n + col] = acc;
}

static const auto pipelined = pipelined_t<false>;
static const auto pipelined_checked = pipelined_t<true>;

template <typename K>
static float time_it(K kernel, const float *a, const float *b, float *c, int n) {
    dim3 grid(n / TILE, n / TILE), block(TILE, TILE);
    kernel<<<grid, block>>>(a, b, c, n);
    cudaEvent_t start, end; cudaEventCreate(&start); cudaEventCreate(&end);
    std::vector<float> times;
    for (int r = 0; r < 20; r++) {
        cudaEventRecord(start);
        kernel<<<grid, block>>>(a, b, c, n);
        cudaEventRecord(end); cudaEventSynchronize(end);
        float ms; cudaEventElapsedTime(&ms, start, end); times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

int main() {
    const int n = 4096;
    size_t count = (size_t)n * n;
    std::vector<float> ha(count), hb(count);
    for (size_t i = 0; i < count; i++) {
        ha[i] = (float)((int)(i % 17) - 8) / 8.0f;
        hb[i] = (float)((int)(i % 13) - 6) / 8.0f;
    }
    float *a, *b, *c;
    cudaMalloc(&a, count * 4); cudaMalloc(&b, count * 4); cudaMalloc(&c, count * 4);
    cudaMemcpy(a, ha.data(), count * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb.data(), count * 4, cudaMemcpyHostToDevice);
    float plain_ms = time_it(plain, a, b, c, n);
    float pipelined_ms = time_it(pipelined, a, b, c, n);
    float check; cudaMemcpy(&check, c + (size_t)1 * n + 2, 4, cudaMemcpyDeviceToHost);
    float pipelined_checked_ms = time_it(pipelined_checked, a, b, c, n);
    float check2; cudaMemcpy(&check2, c + (size_t)1 * n + 2, 4, cudaMemcpyDeviceToHost);
    printf("{\"plain_ms\": %.4f, \"pipelined_ms\": %.4f, \"pipelined_checked_ms\": %.4f, "
           "\"check\": %.4f, \"check_checked\": %.4f, \"err\": \"%s\"}\n",
           plain_ms, pipelined_ms, pipelined_checked_ms, check, check2,
           cudaGetErrorString(cudaGetLastError()));
    return 0;
}
