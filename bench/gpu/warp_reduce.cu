// Warp-shuffle sum of 2^28 float32: the algorithm of bench/warp.py's simt kernel, in CUDA C.
// Grid-stride accumulation, __shfl_down_sync within each warp, warp sums through shared
// memory, one atomicAdd per block. Prints {"warp_reduce_ms": ..., "sum": ...} (median of
// 20 event-timed batches of 10 launches, as bench/warp.py times simt).
#include <cstdio>
#include <vector>
#include <algorithm>

__global__ void warp_reduce(const float *a, int n, float *out) {
    __shared__ float warp_sums[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    float acc = 0.0f;
    for (; i < n; i += stride) acc += a[i];
    for (int offset = 16; offset > 0; offset /= 2)
        acc += __shfl_down_sync(0xFFFFFFFF, acc, offset);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < (blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset /= 2)
            acc += __shfl_down_sync(0xFFFFFFFF, acc, offset);
        if (lane == 0) atomicAdd(out, acc);
    }
}

int main() {
    const int n = 1 << 28, blocks = 2048, threads = 256, batch = 10, reps = 20;
    std::vector<float> h(n);
    for (int i = 0; i < n; i++) h[i] = (float)((i % 7) - 3);
    float *a, *out;
    cudaMalloc(&a, (size_t)n * 4); cudaMalloc(&out, 4);
    cudaMemcpy(a, h.data(), (size_t)n * 4, cudaMemcpyHostToDevice);
    cudaMemset(out, 0, 4);
    warp_reduce<<<blocks, threads>>>(a, n, out);
    float sum; cudaMemcpy(&sum, out, 4, cudaMemcpyDeviceToHost);
    cudaEvent_t start, end; cudaEventCreate(&start); cudaEventCreate(&end);
    std::vector<float> times;
    for (int r = 0; r < reps; r++) {
        cudaEventRecord(start);
        for (int b = 0; b < batch; b++) warp_reduce<<<blocks, threads>>>(a, n, out);
        cudaEventRecord(end); cudaEventSynchronize(end);
        float ms; cudaEventElapsedTime(&ms, start, end); times.push_back(ms / batch);
    }
    std::sort(times.begin(), times.end());
    printf("{\"warp_reduce_ms\": %.4f, \"sum\": %.1f, \"err\": \"%s\"}\n", times[reps / 2], sum,
           cudaGetErrorString(cudaGetLastError()));
    return 0;
}
