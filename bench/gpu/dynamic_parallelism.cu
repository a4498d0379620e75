// Dynamic parallelism in CUDA C: the recursive quicksort and the Mariani-Silver Mandelbrot
// of src/simt/examples/dynamic.py, line for line (the same constants, int64 indices as
// Python's ints, double arithmetic), built with nvcc -rdc=true -lcudadevrt and timed as
// bench/dynamic_parallelism.py times simt's: the host launch of the root grid between two
// events, so every child grid is inside (they finish before the root counts as finished);
// median of the runs. Prints one JSON line.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define MAX_DEPTH 16
#define SELECTION_BELOW 32

__device__ void selection_sort(float *data, long long left, long long right) {
    for (long long i = left; i < right + 1; i++) {
        float smallest = data[i];
        long long at = i;
        for (long long j = i + 1; j < right + 1; j++)
            if (data[j] < smallest) { smallest = data[j]; at = j; }
        if (at != i) { data[at] = data[i]; data[i] = smallest; }
    }
}

__global__ void quicksort(float *data, long long left, long long right, long long depth) {
    if (depth >= MAX_DEPTH || right - left <= SELECTION_BELOW) {
        selection_sort(data, left, right);
        return;
    }
    float pivot = data[(left + right) / 2];
    long long lo = left, hi = right;
    while (lo <= hi) {
        float lval = data[lo], rval = data[hi];
        while (lval < pivot) { lo++; lval = data[lo]; }
        while (rval > pivot) { hi--; rval = data[hi]; }
        if (lo <= hi) { data[lo] = rval; data[hi] = lval; lo++; hi--; }
    }
    if (left < hi) quicksort<<<1, 1>>>(data, left, hi, depth + 1);
    if (lo < right) quicksort<<<1, 1>>>(data, lo, right, depth + 1);
}

#define MAX_DWELL 256
#define BX 16
#define BY 16
#define INIT_SUBDIV 4
#define SUBDIV 4
#define MIN_SIZE 16
#define MS_DEPTH 5
#define NEUTRAL (-1)
#define DIFFERENT (-2)

__device__ long long dwell(long long w, long long h, long long x, long long y) {
    double c_re = -1.5 + x * (2.0 / w);
    double c_im = -1.0 + y * (2.0 / h);
    double z_re = c_re, z_im = c_im;
    long long n = 0;
    while (n < MAX_DWELL && z_re * z_re + z_im * z_im < 4.0) {
        double re = z_re * z_re - z_im * z_im + c_re;
        z_im = 2.0 * z_re * z_im + c_im;
        z_re = re;
        n++;
    }
    return n;
}

__device__ long long combine(long long a, long long b) {
    if (a == b || b == NEUTRAL) return a;
    if (a == NEUTRAL) return b;
    return DIFFERENT;
}

__global__ void fill(int *dwells, long long h, long long w, long long x0, long long y0,
                     long long d, int value) {
    long long x = x0 + blockIdx.x * blockDim.x + threadIdx.x;
    long long y = y0 + blockIdx.y * blockDim.y + threadIdx.y;
    if (x < x0 + d && y < y0 + d && y < h && x < w) dwells[y * w + x] = value;
}

__global__ void per_pixel(int *dwells, long long h, long long w, long long x0, long long y0,
                          long long d) {
    long long x = x0 + blockIdx.x * blockDim.x + threadIdx.x;
    long long y = y0 + blockIdx.y * blockDim.y + threadIdx.y;
    if (x < x0 + d && y < y0 + d && y < h && x < w) dwells[y * w + x] = (int)dwell(w, h, x, y);
}

__global__ void square(int *dwells, long long h, long long w, long long x0, long long y0,
                       long long d, long long depth) {
    x0 += blockIdx.x * d;
    y0 += blockIdx.y * d;
    int tid = threadIdx.y * blockDim.x + threadIdx.x;
    int count = blockDim.x * blockDim.y;
    long long common = NEUTRAL;
    for (int side = 0; side < 4; side++)
        for (long long i = tid; i < d; i += count) {
            long long x = side < 2 ? x0 + i : x0 + (d - 1) * (side - 2);
            long long y = side < 2 ? y0 + (d - 1) * side : y0 + i;
            if (x < w && y < h) common = combine(common, dwell(w, h, x, y));
        }
    __shared__ int seen[BX * BY];
    seen[tid] = (int)common;
    __syncthreads();
    for (int step = count / 2; step > 0; step /= 2) {
        if (tid < step) seen[tid] = (int)combine(seen[tid], seen[tid + step]);
        __syncthreads();
    }
    if (tid == 0 && seen[0] != NEUTRAL) {
        dim3 cells((d + BX - 1) / BX, (d + BY - 1) / BY), block(BX, BY);
        if (seen[0] != DIFFERENT)
            fill<<<cells, block>>>(dwells, h, w, x0, y0, d, seen[0]);
        else if (depth + 1 < MS_DEPTH && d / SUBDIV >= MIN_SIZE)
            square<<<dim3(SUBDIV, SUBDIV), block>>>(dwells, h, w, x0, y0, d / SUBDIV, depth + 1);
        else
            per_pixel<<<cells, block>>>(dwells, h, w, x0, y0, d);
    }
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

int main(int argc, char **argv) {
    long long n = argc > 1 ? atoll(argv[1]) : 1 << 16;
    long long size = argc > 2 ? atoll(argv[2]) : 4096;
    int reps = argc > 3 ? atoi(argv[3]) : 7;
    cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, argc > 4 ? atoi(argv[4]) : 2048);
    cudaEvent_t start, stop;
    cudaEventCreate(&start); cudaEventCreate(&stop);

    std::vector<float> values(n);          // the values bench/dynamic_parallelism.py sorts
    for (long long i = 0; i < n; i++)
        values[i] = (float)((double)((i * 2654435761ULL) % 4294967296ULL) / 4294967296.0);
    float *original, *data;
    cudaMalloc(&original, n * 4); cudaMalloc(&data, n * 4);
    cudaMemcpy(original, values.data(), n * 4, cudaMemcpyHostToDevice);
    std::vector<float> sort_ms;
    for (int r = 0; r < reps + 1; r++) {
        cudaMemcpy(data, original, n * 4, cudaMemcpyDeviceToDevice);
        cudaEventRecord(start);
        quicksort<<<1, 1>>>(data, 0, n - 1, 0);
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms; cudaEventElapsedTime(&ms, start, stop);
        if (r) sort_ms.push_back(ms);
    }
    std::vector<float> sorted(n);
    cudaMemcpy(sorted.data(), data, n * 4, cudaMemcpyDeviceToHost);
    std::sort(values.begin(), values.end());
    bool sort_ok = sorted == values;

    int *dwells;
    cudaMalloc(&dwells, size * size * 4);
    std::vector<float> ms_ms;
    long long side = (size + INIT_SUBDIV - 1) / INIT_SUBDIV;
    for (int r = 0; r < reps + 1; r++) {
        cudaEventRecord(start);
        square<<<dim3(INIT_SUBDIV, INIT_SUBDIV), dim3(BX, BY)>>>(dwells, size, size, 0, 0, side, 1);
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms; cudaEventElapsedTime(&ms, start, stop);
        if (r) ms_ms.push_back(ms);
    }
    std::vector<int> host(size * size);
    cudaMemcpy(host.data(), dwells, size * size * 4, cudaMemcpyDeviceToHost);
    long long inside = 0;
    for (int v : host) inside += v >= MAX_DWELL;
    printf("{\"n\": %lld, \"quicksort_ms\": %.4f, \"sorted\": %s, \"size\": %lld, "
           "\"mariani_silver_ms\": %.4f, \"inside\": %lld, \"err\": \"%s\"}\n", n,
           median(sort_ms), sort_ok ? "true" : "false", size, median(ms_ms), inside,
           cudaGetErrorString(cudaGetLastError()));
    return 0;
}
