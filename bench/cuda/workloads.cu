// The CUDA C twins of bench/workloads/*.py: the same algorithms, written as a CUDA C
// programmer would (int indices, const __restrict__ only where simt knows the same).
#include "harness.h"

// ---------------------------------------------------------------- saxpy
__global__ void saxpy_k(float a, const float *x, const float *y, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
TWIN saxpy(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0]; float a = (float)R[0];
    return RUN([&] { saxpy_k<<<(n + 255) / 256, 256>>>(a, (float *)A[0], (float *)A[1], (float *)A[2], n); });
}

// ---------------------------------------------------------------- reduction
#define RT 256
__global__ void reduce_tree_k(const float *x, float *partial, int n) {
    __shared__ float cache[RT];
    int tid = threadIdx.x;
    int chunk = (n + gridDim.x - 1) / gridDim.x;
    int start = blockIdx.x * chunk, end = min(start + chunk, n);
    float acc = 0.f;
    for (int i = start + tid; i < end; i += RT) acc += x[i];
    cache[tid] = acc;
    __syncthreads();
    for (int s = RT / 2; s > 0; s /= 2) {
        if (tid < s) cache[tid] += cache[tid + s];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = cache[0];
}
TWIN reduction_tree(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0], blocks = (int)I[1];
    return RUN([&] { reduce_tree_k<<<blocks, RT>>>((float *)A[0], (float *)A[1], n); });
}
__global__ void reduce_warp_k(const float *x, float *partial, int n) {
    __shared__ float warps[RT / 32];
    int tid = threadIdx.x;
    int chunk = (n + gridDim.x - 1) / gridDim.x;
    int start = blockIdx.x * chunk, end = min(start + chunk, n);
    float acc = 0.f;
    for (int i = start + tid; i < end; i += RT) acc += x[i];
    for (int o = 16; o > 0; o /= 2) acc += __shfl_down_sync(0xffffffff, acc, o);
    if (tid % 32 == 0) warps[tid / 32] = acc;
    __syncthreads();
    if (tid < 32) {
        acc = tid < RT / 32 ? warps[tid] : 0.f;
        for (int o = 16; o > 0; o /= 2) acc += __shfl_down_sync(0xffffffff, acc, o);
        if (tid == 0) partial[blockIdx.x] = acc;
    }
}
TWIN reduction_warp(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0], blocks = (int)I[1];
    return RUN([&] { reduce_warp_k<<<blocks, RT>>>((float *)A[0], (float *)A[1], n); });
}

// ---------------------------------------------------------------- transpose
#define TT 32
#define TR 8
__global__ void transpose_naive_k(const float *a, float *out, int n) {
    int x = blockIdx.x * TT + threadIdx.x, y = blockIdx.y * TT + threadIdx.y;
    for (int j = 0; j < TT; j += TR) out[x * n + y + j] = a[(y + j) * n + x];
}
__global__ void transpose_tiled_k(const float *a, float *out, int n) {
    __shared__ float tile[TT][TT + 1];
    int x = blockIdx.x * TT + threadIdx.x, y = blockIdx.y * TT + threadIdx.y;
    for (int j = 0; j < TT; j += TR) tile[threadIdx.y + j][threadIdx.x] = a[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TT + threadIdx.x; y = blockIdx.x * TT + threadIdx.y;
    for (int j = 0; j < TT; j += TR) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
TWIN transpose_naive(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0];
    return RUN([&] { transpose_naive_k<<<dim3(n / TT, n / TT), dim3(TT, TR)>>>((float *)A[0], (float *)A[1], n); });
}
TWIN transpose_tiled(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0];
    return RUN([&] { transpose_tiled_k<<<dim3(n / TT, n / TT), dim3(TT, TR)>>>((float *)A[0], (float *)A[1], n); });
}

// ---------------------------------------------------------------- matmul
__global__ void matmul_k(const float *A, const float *B, float *C, int n) {
    __shared__ float sA[TT][TT], sB[TT][TT];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TT + ty, col = blockIdx.x * TT + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < n; k0 += TT) {
        sA[ty][tx] = A[row * n + k0 + tx];
        sB[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TT; ++k) acc += sA[ty][k] * sB[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
TWIN matmul(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0];
    return RUN([&] { matmul_k<<<dim3(n / TT, n / TT), dim3(TT, TT)>>>((float *)A[0], (float *)A[1], (float *)A[2], n); });
}

// ---------------------------------------------------------------- histogram
__global__ void histo_global_k(const unsigned char *buf, int *histo, int n) {
    int chunk = (n + gridDim.x - 1) / gridDim.x;
    int start = blockIdx.x * chunk, end = min(start + chunk, n);
    for (int i = start + threadIdx.x; i < end; i += 256) atomicAdd(&histo[buf[i]], 1);
}
__global__ void histo_shared_k(const unsigned char *buf, int *histo, int n) {
    __shared__ int temp[256];
    temp[threadIdx.x] = 0;
    __syncthreads();
    int chunk = (n + gridDim.x - 1) / gridDim.x;
    int start = blockIdx.x * chunk, end = min(start + chunk, n);
    for (int i = start + threadIdx.x; i < end; i += 256) atomicAdd(&temp[buf[i]], 1);
    __syncthreads();
    atomicAdd(&histo[threadIdx.x], temp[threadIdx.x]);
}
TWIN histogram_global(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0], blocks = (int)I[1];
    return RUN([&] { histo_global_k<<<blocks, 256>>>((unsigned char *)A[0], (int *)A[1], n); });
}
TWIN histogram_shared(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0], blocks = (int)I[1];
    return RUN([&] { histo_shared_k<<<blocks, 256>>>((unsigned char *)A[0], (int *)A[1], n); });
}

// ---------------------------------------------------------------- scan
#define SB 1024
__global__ void scan_blocks_k(const int *x, int *y, int *sums) {
    __shared__ int s[SB];
    int tid = threadIdx.x, i = blockIdx.x * SB + tid;
    s[tid] = x[i];
    __syncthreads();
    for (int off = 1; off < SB; off *= 2) {
        int t = 0;
        if (tid >= off) t = s[tid - off];
        __syncthreads();
        s[tid] += t;
        __syncthreads();
    }
    y[i] = s[tid];
    if (tid == SB - 1) sums[blockIdx.x] = s[tid];
}
__global__ void scan_sums_k(int *sums, int nsums) {
    __shared__ int s[SB];
    int tid = threadIdx.x, per = nsums / SB, base = tid * per, run = 0;
    for (int k = 0; k < per; ++k) { run += sums[base + k]; sums[base + k] = run; }
    s[tid] = run;
    __syncthreads();
    for (int off = 1; off < SB; off *= 2) {
        int t = 0;
        if (tid >= off) t = s[tid - off];
        __syncthreads();
        s[tid] += t;
        __syncthreads();
    }
    if (tid > 0) { int before = s[tid - 1]; for (int k = 0; k < per; ++k) sums[base + k] += before; }
}
__global__ void add_offsets_k(int *y, const int *sums) {
    if (blockIdx.x > 0) y[blockIdx.x * blockDim.x + threadIdx.x] += sums[blockIdx.x - 1];
}
TWIN scan(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0], blocks = n / SB;
    int *x = (int *)A[0], *y = (int *)A[1], *sums = (int *)A[2];
    return RUN([&] {
        scan_blocks_k<<<blocks, SB>>>(x, y, sums);
        scan_sums_k<<<1, SB>>>(sums, blocks);
        add_offsets_k<<<blocks, SB>>>(y, sums);
    });
}

// ---------------------------------------------------------------- stencil
__global__ void heat_k(const float *src, float *dst, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < n && y < n) {
        float c = src[y * n + x];
        if (x > 0 && y > 0 && x < n - 1 && y < n - 1)
            dst[y * n + x] = c + 0.25f * (src[(y - 1) * n + x] + src[(y + 1) * n + x] +
                                          src[y * n + x - 1] + src[y * n + x + 1] - 4.f * c);
        else
            dst[y * n + x] = c;
    }
}
TWIN stencil(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0];
    return RUN([&] { heat_k<<<dim3((n + 31) / 32, (n + 7) / 8), dim3(32, 8)>>>((float *)A[0], (float *)A[1], n); });
}

// ---------------------------------------------------------------- nbody
#define NT 256
__global__ void nbody_k(const float *pos, float *acc, int n) {
    __shared__ float sh[NT][4];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float xi = pos[i * 4], yi = pos[i * 4 + 1], zi = pos[i * 4 + 2];
    float ax = 0.f, ay = 0.f, az = 0.f;
    for (int t = 0; t < n; t += NT) {
        int j = t + threadIdx.x;
        sh[threadIdx.x][0] = pos[j * 4]; sh[threadIdx.x][1] = pos[j * 4 + 1];
        sh[threadIdx.x][2] = pos[j * 4 + 2]; sh[threadIdx.x][3] = pos[j * 4 + 3];
        __syncthreads();
        for (int k = 0; k < NT; ++k) {
            float dx = sh[k][0] - xi, dy = sh[k][1] - yi, dz = sh[k][2] - zi;
            float r2 = dx * dx + dy * dy + dz * dz + 0.01f;
            float inv = rsqrtf(r2);
            float s = sh[k][3] * inv * inv * inv;
            ax += dx * s; ay += dy * s; az += dz * s;
        }
        __syncthreads();
    }
    acc[i * 4] = ax; acc[i * 4 + 1] = ay; acc[i * 4 + 2] = az; acc[i * 4 + 3] = 0.f;
}
TWIN nbody(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0];
    return RUN([&] { nbody_k<<<n / NT, NT>>>((float *)A[0], (float *)A[1], n); });
}

// ---------------------------------------------------------------- spmv
__global__ void spmv_k(const int *rowptr, const int *cols, const float *vals, const float *x,
                       float *y, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n) {
        float acc = 0.f;
        for (int k = rowptr[row]; k < rowptr[row + 1]; ++k) acc += vals[k] * x[cols[k]];
        y[row] = acc;
    }
}
TWIN spmv(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0];
    return RUN([&] { spmv_k<<<(n + 255) / 256, 256>>>((int *)A[0], (int *)A[1], (float *)A[2], (float *)A[3], (float *)A[4], n); });
}

// ---------------------------------------------------------------- julia
__device__ int julia_point(int x, int y, int half) {
    float jx = 1.5f * (float)(half - x) / (float)half;
    float jy = 1.5f * (float)(half - y) / (float)half;
    float re = jx, im = jy;
    for (int i = 0; i < 200; ++i) {
        float r = re * re - im * im - 0.8f, m = im * re + re * im + 0.156f;
        re = r; im = m;
        if (re * re + im * im > 1000) return 0;
    }
    return 1;
}
__global__ void julia_k(unsigned char *img, int dim) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < dim && y < dim) img[y * dim + x] = 255 * julia_point(x, y, dim / 2);
}
TWIN julia(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0];
    return RUN([&] { julia_k<<<dim3((n + 15) / 16, (n + 15) / 16), dim3(16, 16)>>>((unsigned char *)A[0], n); });
}

// ---------------------------------------------------------------- raytrace
#define NS 20
__constant__ float spheres[NS * 7];
__global__ void raytrace_k(unsigned char *img, int dim) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < dim && y < dim) {
        float ox = (float)(x - dim / 2), oy = (float)(y - dim / 2);
        float r = 0, g = 0, b = 0, maxz = -2e10f;
        for (int i = 0; i < NS; ++i) {
            const float *s = &spheres[i * 7];
            float dx = ox - s[4], dy = oy - s[5], rad = s[3];
            if (dx * dx + dy * dy < rad * rad) {
                float dz = sqrtf(rad * rad - dx * dx - dy * dy), t = dz + s[6];
                if (t > maxz) { float sc = dz / rad; r = s[0] * sc; g = s[1] * sc; b = s[2] * sc; maxz = t; }
            }
        }
        unsigned char *p = img + ((long)y * dim + x) * 4;
        p[0] = (int)(r * 255); p[1] = (int)(g * 255); p[2] = (int)(b * 255); p[3] = 255;
    }
}
TWIN raytrace(void **A, const long *I, const double *R, int reps, float *ms) {
    int n = (int)I[0];
    cudaMemcpyToSymbol(spheres, A[1], sizeof(float) * NS * 7, 0, cudaMemcpyDeviceToDevice);
    return RUN([&] { raytrace_k<<<dim3((n + 15) / 16, (n + 15) / 16), dim3(16, 16)>>>((unsigned char *)A[0], n); });
}

// ---------------------------------------------------------------- ceiling
// Device-to-device copy of `bytes`: the bandwidth ceiling (bytes read + written).
TWIN copy_ceiling(void **A, const long *I, const double *R, int reps, float *ms) {
    size_t bytes = (size_t)I[0];
    return RUN([&] { cudaMemcpyAsync(A[1], A[0], bytes, cudaMemcpyDeviceToDevice); });
}
