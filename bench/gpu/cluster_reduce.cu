// Sum of 2^26 float32, block-only (one atomicAdd per block) against clusters of 4 (the
// cluster's partial sums gathered through distributed shared memory, one atomicAdd per
// cluster): the kernels of bench/cluster_reduce.py, line for line, timed as it times them
// (a ~100 us spin kernel before each run, so host launch latency is not counted; median
// of 20 event-timed runs). Prints {"blocks_only_ms": ..., "clustered_ms": ..., sums}.
#include <cooperative_groups.h>
#include <cstdio>
#include <vector>
#include <algorithm>
namespace cg = cooperative_groups;
#define THREADS 256
#define CLUSTER 4

__device__ void block_sum(const float *a, int n, float *part) {
    __shared__ float buf[THREADS];
    int t = threadIdx.x;
    int stride = gridDim.x * THREADS;
    float acc = 0.0f;
    for (int i = blockIdx.x * THREADS + t; i < n; i += stride) acc += a[i];
    buf[t] = acc;
    for (int s = THREADS / 2; s > 0; s /= 2) {
        __syncthreads();
        if (t < s) buf[t] += buf[t + s];
    }
    if (t == 0) part[0] = buf[0];
}

__global__ void blocks_only(const float *a, int n, float *out) {
    __shared__ float part[1];
    block_sum(a, n, part);
    if (threadIdx.x == 0) atomicAdd(out, part[0]);
}

__global__ void clustered(const float *a, int n, float *out) {
    __shared__ float part[1];
    cg::cluster_group cluster = cg::this_cluster();
    block_sum(a, n, part);
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x == 0) {
        float total = 0.0f;
        for (unsigned r = 0; r < cluster.num_blocks(); r++) total += cluster.map_shared_rank(part, r)[0];
        atomicAdd(out, total);
    }
    cluster.sync();
}

__global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) __nanosleep(32);
}

static void launch(bool with_clusters, const float *a, int n, float *out, int blocks) {
    if (!with_clusters) { blocks_only<<<blocks, THREADS>>>(a, n, out); return; }
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks); config.blockDim = dim3(THREADS);
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = CLUSTER; attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.attrs = attribute; config.numAttrs = 1;
    cudaLaunchKernelEx(&config, clustered, a, n, out);
}

static float time_it(bool with_clusters, const float *a, int n, float *out, int blocks, float *sum) {
    cudaMemset(out, 0, 4);
    launch(with_clusters, a, n, out, blocks);
    cudaMemcpy(sum, out, 4, cudaMemcpyDeviceToHost);
    const int reps = 20;
    std::vector<cudaEvent_t> start(reps), stop(reps);
    for (int r = 0; r < reps; r++) {
        cudaEventCreate(&start[r]); cudaEventCreate(&stop[r]);
        spin<<<1, 1>>>(200000);
        cudaEventRecord(start[r]);
        launch(with_clusters, a, n, out, blocks);
        cudaEventRecord(stop[r]);
    }
    cudaDeviceSynchronize();
    std::vector<float> times(reps);
    for (int r = 0; r < reps; r++) cudaEventElapsedTime(&times[r], start[r], stop[r]);
    std::sort(times.begin(), times.end());
    return times[reps / 2];
}

int main() {
    const int n = 1 << 26, blocks = 1024;
    std::vector<float> host(n);
    for (int i = 0; i < n; i++) host[i] = (float)(i % 7 - 3);
    float *a, *out;
    cudaMalloc(&a, (size_t)n * 4); cudaMalloc(&out, 4);
    cudaMemcpy(a, host.data(), (size_t)n * 4, cudaMemcpyHostToDevice);
    float blocks_sum, clustered_sum;
    float blocks_ms = time_it(false, a, n, out, blocks, &blocks_sum);
    float clustered_ms = time_it(true, a, n, out, blocks, &clustered_sum);
    printf("{\"blocks_only_ms\": %.5f, \"clustered_ms\": %.5f, \"blocks_only_sum\": %.1f, "
           "\"clustered_sum\": %.1f, \"err\": \"%s\"}\n", blocks_ms, clustered_ms, blocks_sum,
           clustered_sum, cudaGetErrorString(cudaGetLastError()));
    return 0;
}
