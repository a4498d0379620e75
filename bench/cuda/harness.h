// Timing for the CUDA C twins of bench/workloads/: every twin is
//   extern "C" int NAME(void **arrays, const long *ints, const double *reals, int reps, float *ms)
// over device memory that the Python runner allocated (simt's arrays: one primary context),
// and writes the kernel time of each of `reps` runs to ms[]. Before each timed run a spin
// kernel holds the GPU for about 100 us, so the start event and the launch are queued
// before the GPU reaches them and host launch latency is not counted (the simt side does
// the same). Build: nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC.
#pragma once
#include <cuda_runtime.h>
#include <vector>

__global__ void bench_spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}

#define SPIN_CYCLES 200000LL
#define TWIN extern "C" int

template <class F> int timed(F launch, int reps, float *ms) {
    launch();                                   // warm-up (and module load)
    if (cudaDeviceSynchronize() != cudaSuccess) return (int)cudaGetLastError();
    std::vector<cudaEvent_t> start(reps), stop(reps);
    for (int r = 0; r < reps; ++r) { cudaEventCreate(&start[r]); cudaEventCreate(&stop[r]); }
    for (int r = 0; r < reps; ++r) {
        bench_spin<<<1, 1>>>(SPIN_CYCLES);
        cudaEventRecord(start[r]);
        launch();
        cudaEventRecord(stop[r]);
    }
    cudaDeviceSynchronize();
    for (int r = 0; r < reps; ++r) {
        cudaEventElapsedTime(&ms[r], start[r], stop[r]);
        cudaEventDestroy(start[r]); cudaEventDestroy(stop[r]);
    }
    return (int)cudaGetLastError();
}

// One untimed run, for the output check.
template <class F> int once(F launch) {
    launch();
    cudaDeviceSynchronize();
    return (int)cudaGetLastError();
}

#define RUN(...) (reps > 0 ? timed(__VA_ARGS__, reps, ms) : once(__VA_ARGS__))
