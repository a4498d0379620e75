/* CUDA by Example's lock.h (A.1.1) with its erratum corrected: unlock() stores 0 (the book
 * prints atomicExch(mutex, 1), which never releases the lock). Found before the book's own
 * copy because bench/book/cbe/ holds the programs but not lock.h. */
#ifndef SIMT_BENCH_LOCK_H
#define SIMT_BENCH_LOCK_H
struct Lock {
    int *mutex;
    Lock(void) {
        HANDLE_ERROR(cudaMalloc((void **)&mutex, sizeof(int)));
        HANDLE_ERROR(cudaMemset(mutex, 0, sizeof(int)));
    }
    ~Lock(void) { cudaFree(mutex); }
    __device__ void lock(void) { while (atomicCAS(mutex, 0, 1) != 0); }
    __device__ void unlock(void) { atomicExch(mutex, 0); }
};
#endif
