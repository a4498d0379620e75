/* The C+OpenMP twins of bench/workloads/ modules: the same algorithms as the CUDA
 * kernels, written as a C programmer ports them to a CPU: OpenMP threads take
 * blocks, a block's threads are loops, and a barrier splits those loops (MCUDA's
 * fission, by hand). Each twin is
 *   void NAME(void **arrays, const long *ints, const double *reals)
 * Build: gcc -O3 -fopenmp -march=native -shared -fPIC -o workloads.so workloads.c */
#include <math.h>
#include <string.h>

#define TWIN void
#define MIN(a, b) ((a) < (b) ? (a) : (b))

TWIN saxpy(void **A, const long *I, const double *R) {
    const float *x = A[0], *y = A[1]; float *out = A[2];
    int n = (int)I[0]; float a = (float)R[0];
    int blocks = (n + 255) / 256;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < blocks; ++b)
        for (int t = 0; t < 256; ++t) {
            int i = b * 256 + t;
            if (i < n) out[i] = a * x[i] + y[i];
        }
}

/* reduction: per block, each of 256 threads strides through the block's chunk, then a tree */
TWIN reduction_tree(void **A, const long *I, const double *R) {
    const float *x = A[0]; float *partial = A[1];
    int n = (int)I[0], blocks = (int)I[1];
    int chunk = (n + blocks - 1) / blocks;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < blocks; ++b) {
        float cache[256];
        int start = b * chunk, end = MIN(start + chunk, n);
        for (int t = 0; t < 256; ++t) {
            float acc = 0.f;
            for (int i = start + t; i < end; i += 256) acc += x[i];
            cache[t] = acc;
        }
        for (int s = 128; s > 0; s /= 2)
            for (int t = 0; t < s; ++t) cache[t] += cache[t + s];
        partial[b] = cache[0];
    }
}

/* the warp-shuffle variant: shuffle-down trees within each 32-lane warp, then over warps */
static float warp_tree(float *v) {
    for (int o = 16; o > 0; o /= 2)
        for (int l = 0; l < 32 - o; ++l) v[l] += v[l + o];
    return v[0];
}

TWIN reduction_warp(void **A, const long *I, const double *R) {
    const float *x = A[0]; float *partial = A[1];
    int n = (int)I[0], blocks = (int)I[1];
    int chunk = (n + blocks - 1) / blocks;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < blocks; ++b) {
        float acc[256], warps[32] = {0};
        int start = b * chunk, end = MIN(start + chunk, n);
        for (int t = 0; t < 256; ++t) {
            float a = 0.f;
            for (int i = start + t; i < end; i += 256) a += x[i];
            acc[t] = a;
        }
        for (int w = 0; w < 8; ++w) warps[w] = warp_tree(acc + 32 * w);
        partial[b] = warp_tree(warps);
    }
}

TWIN transpose_naive(void **A, const long *I, const double *R) {
    const float *a = A[0]; float *out = A[1]; int n = (int)I[0];
#pragma omp parallel for collapse(2) schedule(static)
    for (int by = 0; by < n / 32; ++by)
        for (int bx = 0; bx < n / 32; ++bx)
            for (int ty = 0; ty < 8; ++ty)
                for (int tx = 0; tx < 32; ++tx) {
                    int x = bx * 32 + tx, y = by * 32 + ty;
                    for (int j = 0; j < 32; j += 8) out[x * n + y + j] = a[(y + j) * n + x];
                }
}

TWIN transpose_tiled(void **A, const long *I, const double *R) {
    const float *a = A[0]; float *out = A[1]; int n = (int)I[0];
#pragma omp parallel for collapse(2) schedule(static)
    for (int by = 0; by < n / 32; ++by)
        for (int bx = 0; bx < n / 32; ++bx) {
            float tile[32][33];
            for (int ty = 0; ty < 8; ++ty)
                for (int tx = 0; tx < 32; ++tx)
                    for (int j = 0; j < 32; j += 8)
                        tile[ty + j][tx] = a[(by * 32 + ty + j) * n + bx * 32 + tx];
            for (int ty = 0; ty < 8; ++ty)
                for (int tx = 0; tx < 32; ++tx)
                    for (int j = 0; j < 32; j += 8)
                        out[(bx * 32 + ty + j) * n + by * 32 + tx] = tile[tx][ty + j];
        }
}

TWIN matmul(void **A_, const long *I, const double *R) {
    const float *A = A_[0], *B = A_[1]; float *C = A_[2]; int n = (int)I[0];
#pragma omp parallel for collapse(2) schedule(static)
    for (int by = 0; by < n / 32; ++by)
        for (int bx = 0; bx < n / 32; ++bx) {
            float sA[32][32], sB[32][32], acc[32][32];
            memset(acc, 0, sizeof acc);
            for (int k0 = 0; k0 < n; k0 += 32) {
                for (int ty = 0; ty < 32; ++ty)
                    for (int tx = 0; tx < 32; ++tx) {
                        sA[ty][tx] = A[(by * 32 + ty) * n + k0 + tx];
                        sB[ty][tx] = B[(k0 + ty) * n + bx * 32 + tx];
                    }
                for (int ty = 0; ty < 32; ++ty)
                    for (int tx = 0; tx < 32; ++tx) {
                        float s = acc[ty][tx];
                        for (int k = 0; k < 32; ++k) s += sA[ty][k] * sB[k][tx];
                        acc[ty][tx] = s;
                    }
            }
            for (int ty = 0; ty < 32; ++ty)
                for (int tx = 0; tx < 32; ++tx) C[(by * 32 + ty) * n + bx * 32 + tx] = acc[ty][tx];
        }
}

TWIN histogram_global(void **A, const long *I, const double *R) {
    const unsigned char *buf = A[0]; int *histo = A[1];
    int n = (int)I[0], blocks = (int)I[1], chunk = (n + blocks - 1) / blocks;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < blocks; ++b) {
        int start = b * chunk, end = MIN(start + chunk, n);
        for (int t = 0; t < 256; ++t)
            for (int i = start + t; i < end; i += 256) {
#pragma omp atomic
                histo[buf[i]] += 1;
            }
    }
}

TWIN histogram_shared(void **A, const long *I, const double *R) {
    const unsigned char *buf = A[0]; int *histo = A[1];
    int n = (int)I[0], blocks = (int)I[1], chunk = (n + blocks - 1) / blocks;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < blocks; ++b) {
        int temp[256];
        memset(temp, 0, sizeof temp);
        int start = b * chunk, end = MIN(start + chunk, n);
        for (int t = 0; t < 256; ++t)                  /* one OS thread runs the block: */
            for (int i = start + t; i < end; i += 256)  /* the shared counts need no atomics */
                temp[buf[i]] += 1;
        for (int t = 0; t < 256; ++t) {
#pragma omp atomic
            histo[t] += temp[t];
        }
    }
}

static void block_scan(int *s) {     /* Hillis-Steele over 1024 slots, as the kernel's barriers */
    int t_[1024];
    for (int off = 1; off < 1024; off *= 2) {
        for (int t = 0; t < 1024; ++t) t_[t] = t >= off ? s[t - off] : 0;
        for (int t = 0; t < 1024; ++t) s[t] += t_[t];
    }
}

TWIN scan(void **A, const long *I, const double *R) {
    const int *x = A[0]; int *y = A[1], *sums = A[2];
    int n = (int)I[0], blocks = n / 1024;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < blocks; ++b) {
        int s[1024];
        memcpy(s, x + (long)b * 1024, sizeof s);
        block_scan(s);
        memcpy(y + (long)b * 1024, s, sizeof s);
        sums[b] = s[1023];
    }
    {
        int s[1024], per = blocks / 1024;
        for (int t = 0; t < 1024; ++t) {
            int run = 0;
            for (int k = 0; k < per; ++k) { run += sums[t * per + k]; sums[t * per + k] = run; }
            s[t] = run;
        }
        block_scan(s);
        for (int t = 1; t < 1024; ++t)
            for (int k = 0; k < per; ++k) sums[t * per + k] += s[t - 1];
    }
#pragma omp parallel for schedule(static)
    for (int b = 1; b < blocks; ++b)
        for (int t = 0; t < 1024; ++t) y[(long)b * 1024 + t] += sums[b - 1];
}

TWIN stencil(void **A, const long *I, const double *R) {
    const float *src = A[0]; float *dst = A[1]; int n = (int)I[0];
#pragma omp parallel for collapse(2) schedule(static)
    for (int by = 0; by < (n + 7) / 8; ++by)
        for (int bx = 0; bx < (n + 31) / 32; ++bx)
            for (int ty = 0; ty < 8; ++ty)
                for (int tx = 0; tx < 32; ++tx) {
                    int x = bx * 32 + tx, y = by * 8 + ty;
                    if (x < n && y < n) {
                        float c = src[y * n + x];
                        if (x > 0 && y > 0 && x < n - 1 && y < n - 1)
                            dst[y * n + x] = c + 0.25f * (src[(y - 1) * n + x] + src[(y + 1) * n + x]
                                                          + src[y * n + x - 1] + src[y * n + x + 1] - 4.f * c);
                        else
                            dst[y * n + x] = c;
                    }
                }
}

TWIN nbody(void **A, const long *I, const double *R) {
    const float *pos = A[0]; float *acc = A[1]; int n = (int)I[0];
#pragma omp parallel for schedule(static)
    for (int b = 0; b < n / 256; ++b) {
        float sh[256][4], ax[256], ay[256], az[256];
        for (int t = 0; t < 256; ++t) ax[t] = ay[t] = az[t] = 0.f;
        for (int tile = 0; tile < n; tile += 256) {
            memcpy(sh, pos + (long)tile * 4, sizeof sh);
            for (int t = 0; t < 256; ++t) {
                int i = b * 256 + t;
                float xi = pos[i * 4], yi = pos[i * 4 + 1], zi = pos[i * 4 + 2];
                float sx = ax[t], sy = ay[t], sz = az[t];
                for (int k = 0; k < 256; ++k) {
                    float dx = sh[k][0] - xi, dy = sh[k][1] - yi, dz = sh[k][2] - zi;
                    float r2 = dx * dx + dy * dy + dz * dz + 0.01f;
                    float inv = 1.f / sqrtf(r2);
                    float s = sh[k][3] * inv * inv * inv;
                    sx += dx * s; sy += dy * s; sz += dz * s;
                }
                ax[t] = sx; ay[t] = sy; az[t] = sz;
            }
        }
        for (int t = 0; t < 256; ++t) {
            int i = b * 256 + t;
            acc[i * 4] = ax[t]; acc[i * 4 + 1] = ay[t]; acc[i * 4 + 2] = az[t]; acc[i * 4 + 3] = 0.f;
        }
    }
}

TWIN spmv(void **A, const long *I, const double *R) {
    const int *rowptr = A[0], *cols = A[1]; const float *vals = A[2], *x = A[3]; float *y = A[4];
    int n = (int)I[0];
#pragma omp parallel for schedule(static)
    for (int row = 0; row < n; ++row) {
        float acc = 0.f;
        for (int k = rowptr[row]; k < rowptr[row + 1]; ++k) acc += vals[k] * x[cols[k]];
        y[row] = acc;
    }
}

static int julia_point(int x, int y, int half) {
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

TWIN julia(void **A, const long *I, const double *R) {
    unsigned char *img = A[0]; int n = (int)I[0];
#pragma omp parallel for schedule(dynamic, 4)
    for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) img[(long)y * n + x] = 255 * julia_point(x, y, n / 2);
}

TWIN raytrace(void **A, const long *I, const double *R) {
    unsigned char *img = A[0]; const float *sp = A[1]; int n = (int)I[0];
#pragma omp parallel for schedule(dynamic, 4)
    for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
            float ox = (float)(x - n / 2), oy = (float)(y - n / 2);
            float r = 0, g = 0, b = 0, maxz = -2e10f;
            for (int i = 0; i < 20; ++i) {
                const float *s = sp + i * 7;
                float dx = ox - s[4], dy = oy - s[5], rad = s[3];
                if (dx * dx + dy * dy < rad * rad) {
                    float dz = sqrtf(rad * rad - dx * dx - dy * dy), t = dz + s[6];
                    if (t > maxz) { float sc = dz / rad; r = s[0] * sc; g = s[1] * sc; b = s[2] * sc; maxz = t; }
                }
            }
            unsigned char *p = img + ((long)y * n + x) * 4;
            p[0] = (int)(r * 255); p[1] = (int)(g * 255); p[2] = (int)(b * 255); p[3] = 255;
        }
}
