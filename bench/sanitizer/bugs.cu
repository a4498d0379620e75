// The planted bugs of tests/test_checked.py (and bench/sanitizer/twins.py) in CUDA C, for
// compute-sanitizer (issue 13 item 5). One binary; `bugs CASE` runs one case's kernel
// once and exits 0 (what a bug does is for the tools to find). `bugs --list` prints them.
// Build: nvcc -O2 -lineinfo -arch=native -o bugs bugs.cu   (run.py does it)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void oob_global(const float *a, float *out) {
    int i = threadIdx.x;
    out[i] = a[i + 1];                       // a has 32 elements: thread 31 reads a[32]
}

__global__ void oob_shared(float *out) {
    __shared__ float s[32];
    int i = threadIdx.x;
    s[i + 1] = 1.0f;                         // thread 31 writes s[32]
    out[i] = 0.0f;
}

__global__ void oob_local(float *out, int k) {
    int tmp[4];
    int i = threadIdx.x;
    for (int j = 0; j < 4; j++) tmp[j] = j;
    tmp[i - k] = 1;                          // thread 0 writes tmp[-1] (k = 1)
    out[i] = tmp[i % 4];
}

__global__ void race_shared(float *out) {
    __shared__ float s[64];
    int i = threadIdx.x;
    s[i] = i;
    out[i] = s[(i + 1) % 64];                // no __syncthreads() between
}

__global__ void race_global_block(float *out) {
    out[0] = threadIdx.x;                    // every thread of the block writes out[0]
}

__global__ void race_across_blocks(float *data) {
    int i = blockIdx.x;
    data[i] = data[i] + data[(i + 1) % 4];   // block i + 1 writes what block i reads
}

__global__ void race_in_warp(int *out) {
    __shared__ int s[64];
    int i = threadIdx.x;
    s[i] = i;
    s[i + 32] = 1;
    __syncthreads();
    for (int offset = 16; offset > 0; offset /= 2) {
        if (i < offset) s[i] += s[i + offset];   // no __syncwarp()
    }
    if (i == 0) out[0] = s[0];
}

__global__ void init_races_atomics(int *out) {
    __shared__ int counts[1];
    if (threadIdx.x == 0) counts[0] = 0;     // no __syncthreads() before the atomics
    atomicAdd(&counts[0], 1);
    __syncthreads();
    if (threadIdx.x == 0) out[0] = counts[0];
}

__global__ void diverge_if(float *out) {
    int i = threadIdx.x;
    if (i < 16) __syncthreads();             // threads 16..31 skip it and go on
    out[i] = 1.0f;
}

__global__ void diverge_break(float *out) {
    int i = threadIdx.x;
    for (int k = 0; k < 4; k++) {
        if (i == k) break;
        __syncthreads();
    }
    out[i] = 1.0f;
}

__device__ void step(int i) {
    if (i >= 16) return;                     // returns from the function, not the kernel
    __syncthreads();
}

__global__ void diverge_return(float *out) {
    int i = threadIdx.x;
    step(i);
    out[i] = 1.0f;
}

__global__ void bad_mask(int *out) {
    int i = threadIdx.x;
    int v = 0;
    if (i < 16) v = __shfl_sync(0xFFFFFFFFu, i, 0);   // lanes 16..31 do not take part
    out[i] = v;
}

__global__ void uninit_shared(float *out) {
    __shared__ float s[32];
    int i = threadIdx.x;
    if (i > 0) s[i] = 1.0f;                  // s[0] is never written
    __syncthreads();
    out[i] = s[i];
}

__global__ void uninit_global(const float *src, float *out) {
    int i = threadIdx.x;
    out[i] = src[i];                         // src: cudaMalloc'd, never written
}

// The traps of tests/test_checked.py: correct code a naive checker would flag.
__global__ void traps(int *data, int *hist, int *out, int n) {
    __shared__ int s[64];
    __shared__ int counts[4];
    int i = threadIdx.x;
    int g = i + blockIdx.x * blockDim.x;
    if (i < 4) counts[i] = 0;
    if (i < 32) s[i] = data[g]; else s[i] = 2 * data[g];
    __syncthreads();
    atomicAdd(&counts[s[i] % 4], 1);
    atomicAdd(&hist[s[i] % 4], 1);
    for (int stride = 32; stride > 0; stride /= 2) {
        if (i < stride) s[i] += s[i + stride];
        __syncthreads();
    }
    int total = s[0];
    if (i >= n) return;
    __syncthreads();
    data[g] = data[g] + 1;
    out[g] = total + counts[i % 4] - counts[i % 4];
}

static void *dev(size_t bytes, bool zero) {
    void *p;
    cudaMalloc(&p, bytes);
    if (zero) cudaMemset(p, 0, bytes);
    return p;
}

int main(int argc, char **argv) {
    const char *names[] = {"oob_global", "oob_shared", "oob_local", "race_shared",
                           "race_global_block", "race_across_blocks", "race_in_warp",
                           "init_races_atomics", "diverge_if", "diverge_break",
                           "diverge_return", "bad_mask", "uninit_shared", "uninit_global",
                           "traps"};
    if (argc < 2) { fprintf(stderr, "usage: bugs CASE | --list\n"); return 2; }
    if (!strcmp(argv[1], "--list")) {
        for (const char *n : names) printf("%s\n", n);
        return 0;
    }
    const char *c = argv[1];
    float *f = (float *)dev(64 * sizeof(float), true);
    float *g = (float *)dev(64 * sizeof(float), true);
    int *k = (int *)dev(128 * sizeof(int), true);
    int *h = (int *)dev(4 * sizeof(int), true);
    int *o = (int *)dev(128 * sizeof(int), true);
    if (!strcmp(c, "oob_global")) {
        float *a = (float *)dev(32 * sizeof(float), true);
        oob_global<<<1, 32>>>(a, f);
    } else if (!strcmp(c, "oob_shared")) oob_shared<<<1, 32>>>(f);
    else if (!strcmp(c, "oob_local")) oob_local<<<1, 32>>>(f, 1);
    else if (!strcmp(c, "race_shared")) race_shared<<<1, 64>>>(f);
    else if (!strcmp(c, "race_global_block")) race_global_block<<<1, 8>>>(f);
    else if (!strcmp(c, "race_across_blocks")) race_across_blocks<<<4, 1>>>(f);
    else if (!strcmp(c, "race_in_warp")) race_in_warp<<<1, 32>>>(k);
    else if (!strcmp(c, "init_races_atomics")) init_races_atomics<<<1, 8>>>(k);
    else if (!strcmp(c, "diverge_if")) diverge_if<<<1, 32>>>(f);
    else if (!strcmp(c, "diverge_break")) diverge_break<<<1, 32>>>(f);
    else if (!strcmp(c, "diverge_return")) diverge_return<<<1, 32>>>(f);
    else if (!strcmp(c, "bad_mask")) bad_mask<<<1, 32>>>(k);
    else if (!strcmp(c, "uninit_shared")) uninit_shared<<<1, 32>>>(f);
    else if (!strcmp(c, "uninit_global")) {
        float *src = (float *)dev(32 * sizeof(float), false);
        uninit_global<<<1, 32>>>(src, f);
    } else if (!strcmp(c, "traps")) {
        int host[128];
        for (int j = 0; j < 128; j++) host[j] = (j * 37) % 100;
        cudaMemcpy(k, host, sizeof host, cudaMemcpyHostToDevice);
        traps<<<2, 64>>>(k, h, o, 48);
    } else { fprintf(stderr, "unknown case %s\n", c); return 2; }
    cudaError_t err = cudaDeviceSynchronize();
    printf("%s: %s\n", c, cudaGetErrorString(err));
    (void)g;
    return 0;
}
