/* Idiomatic C+OpenMP versions of the bench/workloads/ computations: the loops a C
 * programmer writes for a CPU, with no trace of CUDA's blocks, threads or shared memory
 * (workloads.c beside this file copies that structure instead). `#pragma omp parallel for`
 * over rows or elements, `simd` where the inner loop is a plain vector loop, OpenMP's
 * reductions where the result is a sum. One function per computation, called like the
 * twins:  void NAME(void **arrays, const long *ints, const double *reals)  with the
 * arguments of the case it stands for (bench/run_cpu_baselines.py maps case names to these).
 * spmv, julia and raytrace have none here: their twins in workloads.c are already row loops.
 * Build: gcc -O3 -fopenmp -march=native -shared -fPIC -o idiomatic.so idiomatic.c */
#include <math.h>
#include <omp.h>

#define BASE void
#define MIN(a, b) ((a) < (b) ? (a) : (b))

BASE saxpy(void **A, const long *I, const double *R) {
    const float *x = A[0], *y = A[1]; float *out = A[2];
    long n = I[0]; float a = (float)R[0];
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; ++i) out[i] = a * x[i] + y[i];
}

/* the sum of x; the reduction cases' output is per-block partial sums, so the total goes
 * to partial[0] and the other slots are zero (the check adds them up) */
BASE sum(void **A, const long *I, const double *R) {
    const float *x = A[0]; float *partial = A[1];
    long n = I[0], blocks = I[1];
    float s = 0.f;
#pragma omp parallel for simd reduction(+:s) schedule(static)
    for (long i = 0; i < n; ++i) s += x[i];
    partial[0] = s;
    for (long b = 1; b < blocks; ++b) partial[b] = 0.f;
}

/* out = a^T, written row by row (each thread a run of rows of out, reads strided) */
BASE transpose_rows(void **A, const long *I, const double *R) {
    const float *a = A[0]; float *out = A[1]; long n = I[0];
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) out[i * n + j] = a[j * n + i];
}

/* out = a^T in 32x32 tiles (loop blocking, no copy) */
BASE transpose_blocked(void **A, const long *I, const double *R) {
    const float *a = A[0]; float *out = A[1]; long n = I[0];
    enum { T = 32 };
#pragma omp parallel for collapse(2) schedule(static)
    for (long ib = 0; ib < n; ib += T)
        for (long jb = 0; jb < n; jb += T)
            for (long i = ib; i < MIN(ib + T, n); ++i)
                for (long j = jb; j < MIN(jb + T, n); ++j) out[i * n + j] = a[j * n + i];
}

/* C = A B, i-k-j order: the inner loop runs along rows of B and C */
BASE matmul(void **A_, const long *I, const double *R) {
    const float *A = A_[0], *B = A_[1]; float *C = A_[2]; long n = I[0];
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) {
        float *c = C + i * n;
        for (long j = 0; j < n; ++j) c[j] = 0.f;
        for (long k = 0; k < n; ++k) {
            float aik = A[i * n + k];
            const float *b = B + k * n;
#pragma omp simd
            for (long j = 0; j < n; ++j) c[j] += aik * b[j];
        }
    }
}

/* 256-bin byte histogram: OpenMP's array reduction (a private histogram per thread) */
BASE histogram(void **A, const long *I, const double *R) {
    const unsigned char *buf = A[0]; int *histo = A[1]; long n = I[0];
#pragma omp parallel for reduction(+:histo[:256]) schedule(static)
    for (long i = 0; i < n; ++i) histo[buf[i]] += 1;
}

/* inclusive prefix sum: each thread sums its contiguous part, one thread scans the
 * parts' totals, then each thread scans its part from its offset */
BASE scan(void **A, const long *I, const double *R) {
    const int *x = A[0]; int *y = A[1]; long n = I[0];
    int part[omp_get_max_threads() + 1];
#pragma omp parallel
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        long lo = n * t / T, hi = n * (t + 1) / T;
        int s = 0;
#pragma omp simd reduction(+:s)
        for (long i = lo; i < hi; ++i) s += x[i];
        part[t + 1] = s;
#pragma omp barrier
#pragma omp single
        {
            part[0] = 0;
            for (int k = 1; k <= T; ++k) part[k] += part[k - 1];
        }
        int run = part[t];
        for (long i = lo; i < hi; ++i) { run += x[i]; y[i] = run; }
    }
}

/* one step of the 5-point heat equation; edge cells keep their value */
BASE stencil(void **A, const long *I, const double *R) {
    const float *src = A[0]; float *dst = A[1]; long n = I[0];
#pragma omp parallel for schedule(static)
    for (long y = 0; y < n; ++y) {
        const float *s = src + y * n; float *d = dst + y * n;
        if (y == 0 || y == n - 1) {
            for (long x = 0; x < n; ++x) d[x] = s[x];
            continue;
        }
        d[0] = s[0];
#pragma omp simd
        for (long x = 1; x < n - 1; ++x)
            d[x] = s[x] + 0.25f * (s[x - n] + s[x + n] + s[x - 1] + s[x + 1] - 4.f * s[x]);
        d[n - 1] = s[n - 1];
    }
}

/* all-pairs accelerations of (x, y, z, mass) rows. no-math-errno: sqrtf may set errno,
 * and gcc does not vectorize a loop that can call it (here r2 >= 0.01: it never does) */
__attribute__((optimize("no-math-errno")))
BASE nbody(void **A, const long *I, const double *R) {
    const float *pos = A[0]; float *acc = A[1]; long n = I[0];
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) {
        float xi = pos[4 * i], yi = pos[4 * i + 1], zi = pos[4 * i + 2];
        float ax = 0.f, ay = 0.f, az = 0.f;
#pragma omp simd reduction(+:ax, ay, az)
        for (long j = 0; j < n; ++j) {
            float dx = pos[4 * j] - xi, dy = pos[4 * j + 1] - yi, dz = pos[4 * j + 2] - zi;
            float r2 = dx * dx + dy * dy + dz * dz + 0.01f;
            float inv = 1.f / sqrtf(r2);
            float s = pos[4 * j + 3] * inv * inv * inv;
            ax += dx * s; ay += dy * s; az += dz * s;
        }
        acc[4 * i] = ax; acc[4 * i + 1] = ay; acc[4 * i + 2] = az; acc[4 * i + 3] = 0.f;
    }
}
