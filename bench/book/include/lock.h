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
#ifdef SIMT_ORDERED_LOCK
    /* bench/run_book.py's second build: the lock ordered as simt's examples order it (an
     * acquiring CAS, a releasing exchange), so that the critical section reads what the
     * last holder wrote; the book's relaxed atomics order nothing */
    __device__ void lock(void) {
        int old;
        do {
            asm volatile("atom.acquire.gpu.cas.b32 %0, [%1], 0, 1;" : "=r"(old) : "l"(mutex)
                         : "memory");
        } while (old != 0);
    }
    __device__ void unlock(void) {
        int old;
        asm volatile("atom.release.gpu.exch.b32 %0, [%1], 0;" : "=r"(old) : "l"(mutex)
                     : "memory");
    }
#else
    __device__ void lock(void) { while (atomicCAS(mutex, 0, 1) != 0); }
    __device__ void unlock(void) { atomicExch(mutex, 0); }
#endif
};
#endif
