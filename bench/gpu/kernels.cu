// The CUDA C twins of bench/gpu/bench.py's simt kernels, timed with CUDA events.
// Build: nvcc -O3 -arch=sm_90 -o bench_cu kernels.cu ; prints one JSON line.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define TILE 32

__global__ void saxpy(float a, const float *x, const float *y, float *out, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}

__global__ void matmul(const float *A, const float *B, float *C, int n) {
    __shared__ float sA[TILE][TILE], sB[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        sA[ty][tx] = A[(long)row * n + k0 + tx];
        sB[ty][tx] = B[(long)(k0 + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += sA[ty][k] * sB[k][tx];
        __syncthreads();
    }
    C[(long)row * n + col] = acc;
}

// Median over reps of (time of `batch` back-to-back launches between two events) / batch:
// the GPU stays busy, so the host's launch cost is not counted as kernel time.
template <class F> float kernel_ms(F launch, int reps, int batch = 10) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    launch(); cudaDeviceSynchronize();
    std::vector<float> times;
    for (int r = 0; r < reps; ++r) {
        cudaEventRecord(a);
        for (int k = 0; k < batch; ++k) launch();
        cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); times.push_back(ms / batch);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

__global__ void fill_random(float *p, long n, unsigned seed) {   // values in [0, 1)
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 16; h *= 0x45d9f3bu; h ^= h >> 16;
        p[i] = (h & 0xffffff) / 16777216.0f;
    }
}

int main() {
    long n = 1L << 26; int m = 4096;
    float *x, *y, *o, *A, *B, *C;
    cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4); cudaMalloc(&o, n * 4);
    cudaMalloc(&A, (long)m * m * 4); cudaMalloc(&B, (long)m * m * 4); cudaMalloc(&C, (long)m * m * 4);
    long mm = (long)m * m;
    fill_random<<<(n + 255) / 256, 256>>>(x, n, 1); fill_random<<<(n + 255) / 256, 256>>>(y, n, 2);
    fill_random<<<(mm + 255) / 256, 256>>>(A, mm, 3); fill_random<<<(mm + 255) / 256, 256>>>(B, mm, 4);
    float s = kernel_ms([&] { saxpy<<<(n + 255) / 256, 256>>>(2.f, x, y, o, n); }, 20);
    float g = kernel_ms([&] { matmul<<<dim3(m / TILE, m / TILE), dim3(TILE, TILE)>>>(A, B, C, m); }, 5);
    printf("{\"saxpy_ms\": %.4f, \"matmul_ms\": %.4f, \"err\": \"%s\"}\n", s, g,
           cudaGetErrorString(cudaGetLastError()));
    return 0;
}
