"""Where the book's GPU hash table (appendix A.2.4) spends its kernel time: simt's kernel
against the book's, kernel only (events around the launch), 26M random keys into 1024
buckets, <<<60, 256>>>, median of 3 launches each, in one run:

- simt: locks packed (4 bytes apart) or spread (128 / 512 bytes apart, as the book's Lock
  structs get: each mutex is its own cudaMalloc); the lock's ordering (acquire CAS and
  release exchange, or relaxed as the book's); the kernel's loop made with or without a
  jump table (``brx.idx``, which LLVM makes of the unrolled ``if tid % 32 == i``).
- CUDA C: the book's kernel as printed (each Lock's mutex its own cudaMalloc), with the
  mutexes packed into one array, and with simt's orderings in inline PTX (acquiring CAS
  and releasing exchange; or relaxed CAS spin, one acquiring load, releasing store).

    PYTHONPATH=src python3 bench/gpu/hashtable_probe.py [out.json]
"""
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from simt.backends.cuda import compile as cuda_compile

ELEMENTS = 100 * 1024 * 1024 // 4
BUCKETS = 1024
RUNS = 3


def make_kernel(order):
    """``order``: 'relaxed' (the book's lock), 'acqrel' (an acquiring CAS in the spin
    loop, a releasing exchange) or 'split' (relaxed CAS spin, then one acquiring load of
    the lock; a releasing store)."""
    acquire, release = ("acquire", "release") if order == "acqrel" else ("relaxed", "relaxed")
    split = order == "split"

    @simt.device
    def lock(mutex, i):
        while simt.atomic.cas(mutex, i, 0, 1, order=acquire) != 0:
            pass
        if split:
            simt.atomic.load(mutex, i, order="acquire")

    @simt.device
    def unlock(mutex, i):
        if split:
            simt.atomic.store(mutex, i, 0, order="release")
        else:
            simt.atomic.exch(mutex, i, 0, order=release)

    def add_to_table(keys, values, entries, pool_key, pool_value, pool_next, mutex):
        tid = threadIdx.x + blockIdx.x * blockDim.x
        stride = blockDim.x * gridDim.x
        while tid < keys.shape[0]:
            key = keys[tid]
            hash_value = key % np.uint32(entries.shape[0])
            for i in range(32):
                if tid % 32 == i:
                    pool_key[tid] = key
                    pool_value[tid] = values[tid]
                    lock(mutex, hash_value)
                    pool_next[tid] = entries[hash_value]
                    entries[hash_value] = tid
                    unlock(mutex, hash_value)
            tid += stride
    return simt.kernel(add_to_table, cache=False)


ENTRY = np.dtype([("key", "<u4"), ("value", "<u8"), ("next", "<i4")], align=True)   # 24 B


def make_variant(name):
    """The relaxed kernel changed one way: 'aos' (the pool as an array of Entry records,
    as the book's), 'ttas' (spin reading the lock before each CAS), 'i32' (tid int32),
    'rolled' (the loop over the 32 lanes not unrolled, as nvcc leaves it; the others
    are unrolled 4 times, as LLVM does by itself)."""
    ttas, i32 = name == "ttas", name == "i32"
    factor = 1 if name == "rolled" else 4

    @simt.device
    def lock(mutex, i):
        if ttas:
            while True:
                if simt.atomic.load(mutex, i) == 0:
                    if simt.atomic.cas(mutex, i, 0, 1) == 0:
                        break
        else:
            while simt.atomic.cas(mutex, i, 0, 1) != 0:
                pass

    @simt.device
    def unlock(mutex, i):
        simt.atomic.exch(mutex, i, 0)

    def soa(keys, values, entries, pool_key, pool_value, pool_next, mutex):
        tid = threadIdx.x + blockIdx.x * blockDim.x
        stride = blockDim.x * gridDim.x
        if i32:
            tid = np.int32(tid)
            stride = np.int32(stride)
        n = np.int32(keys.shape[0])
        while tid < n:
            key = keys[tid]
            hash_value = key % np.uint32(entries.shape[0])
            for i in simt.unroll(range(32), factor):
                if tid % 32 == i:
                    pool_key[tid] = key
                    pool_value[tid] = values[tid]
                    lock(mutex, hash_value)
                    pool_next[tid] = entries[hash_value]
                    entries[hash_value] = tid
                    unlock(mutex, hash_value)
            tid += stride

    def aos(keys, values, entries, pool, mutex):
        tid = threadIdx.x + blockIdx.x * blockDim.x
        stride = blockDim.x * gridDim.x
        while tid < keys.shape[0]:
            key = keys[tid]
            hash_value = key % np.uint32(entries.shape[0])
            for i in range(32):
                if tid % 32 == i:
                    pool[tid].key = key
                    pool[tid].value = values[tid]
                    lock(mutex, hash_value)
                    pool[tid].next = entries[hash_value]
                    entries[hash_value] = tid
                    unlock(mutex, hash_value)
            tid += stride
    return simt.kernel(aos if name == "aos" else soa, cache=False)


def time_aos(kernel, keys, values):
    entries = simt.device_array(BUCKETS, np.int32)
    pool = simt.device_array(ELEMENTS, ENTRY)
    mutex = simt.zeros(BUCKETS, np.int32)
    times = []
    for _ in range(RUNS + 1):
        entries[:] = -1
        start, stop = simt.Event(), simt.Event()
        start.record()
        kernel[60, 256](keys, values, entries, pool, mutex)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    assert (entries.copy_to_host() >= 0).all()
    return statistics.median(times[1:])


def time_simt(kernel, spacing, keys, values):
    entries = simt.device_array(BUCKETS, np.int32)
    pool_key = simt.device_array(ELEMENTS, np.uint32)
    pool_value = simt.device_array(ELEMENTS, np.uint64)
    pool_next = simt.device_array(ELEMENTS, np.int32)
    locks = simt.zeros(BUCKETS * spacing, np.int32)
    mutex = locks[::spacing]
    times = []
    for _ in range(RUNS + 1):
        entries[:] = -1
        start, stop = simt.Event(), simt.Event()
        start.record()
        kernel[60, 256](keys, values, entries, pool_key, pool_value, pool_next, mutex)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    heads = entries.copy_to_host()
    assert (heads >= 0).all() and locks.copy_to_host().sum() == 0
    return statistics.median(times[1:])


C_SOURCE = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
#define ELEMENTS (100*1024*1024/4)
struct Entry { unsigned int key; void *value; Entry *next; };
struct Table { size_t count; Entry **entries; Entry *pool; };
struct Lock { int *mutex;
#ifdef ORDERED
  __device__ void lock() { int old; do { asm volatile("atom.acquire.gpu.cas.b32 %0, [%1], 0, 1;"
      : "=r"(old) : "l"(mutex) : "memory"); } while (old != 0); }
  __device__ void unlock() { int old; asm volatile("atom.release.gpu.exch.b32 %0, [%1], 0;"
      : "=r"(old) : "l"(mutex) : "memory"); }
#elif defined(SPLIT)
  __device__ void lock() { while (atomicCAS(mutex, 0, 1) != 0); int v; asm volatile(
      "ld.acquire.gpu.b32 %0, [%1];" : "=r"(v) : "l"(mutex) : "memory"); }
  __device__ void unlock() { asm volatile("st.release.gpu.b32 [%0], 0;" : : "l"(mutex)
      : "memory"); }
#else
  __device__ void lock() { while (atomicCAS(mutex, 0, 1) != 0); }
  __device__ void unlock() { atomicExch(mutex, 0); }
#endif
};
__device__ __host__ size_t hash(unsigned int value, size_t count) { return value % count; }
__global__ void add_to_table(unsigned int *keys, void **values, Table table, Lock *lock) {
  int tid = threadIdx.x + blockIdx.x * blockDim.x;
  int stride = blockDim.x * gridDim.x;
  while (tid < ELEMENTS) {
    unsigned int key = keys[tid];
    size_t hashValue = hash(key, table.count);
    for (int i = 0; i < 32; i++) {
      if ((tid % 32) == i) {
        Entry *location = &(table.pool[tid]);
        location->key = key;
        location->value = values[tid];
        lock[hashValue].lock();
        location->next = table.entries[hashValue];
        table.entries[hashValue] = location;
        lock[hashValue].unlock();
      }
    }
    tid += stride;
  }
}
// simt's shape: the mutexes one int array, CAS on mutex + hash (no Lock struct pointer
// loaded in the spin loop, global rather than generic atomics)
__global__ void add_flat(unsigned int *keys, void **values, Table table, int *mutex) {
  int tid = threadIdx.x + blockIdx.x * blockDim.x;
  int stride = blockDim.x * gridDim.x;
  while (tid < ELEMENTS) {
    unsigned int key = keys[tid];
    size_t hashValue = hash(key, table.count);
    for (int i = 0; i < 32; i++) {
      if ((tid % 32) == i) {
        Entry *location = &(table.pool[tid]);
        location->key = key;
        location->value = values[tid];
        while (atomicCAS(mutex + hashValue, 0, 1) != 0);
        location->next = table.entries[hashValue];
        table.entries[hashValue] = location;
        atomicExch(mutex + hashValue, 0);
      }
    }
    tid += stride;
  }
}
int main(int argc, char **argv) {
  int packed = argc > 1, flat = argc > 2;
  unsigned int *h = (unsigned int*)malloc(ELEMENTS * 4);
  srand(1); for (int i = 0; i < ELEMENTS; i++) h[i] = rand();
  unsigned int *keys; void **values; Table t; t.count = 1024;
  cudaMalloc(&keys, ELEMENTS * 4); cudaMalloc(&values, ELEMENTS * sizeof(void*));
  cudaMemcpy(keys, h, ELEMENTS * 4, cudaMemcpyHostToDevice);
  cudaMalloc(&t.entries, 1024 * sizeof(Entry*)); cudaMalloc(&t.pool, ELEMENTS * sizeof(Entry));
  std::vector<Lock> locks(1024); int *all; cudaMalloc(&all, 1024 * 4); cudaMemset(all, 0, 4096);
  for (int i = 0; i < 1024; i++) {
    if (packed) locks[i].mutex = all + i;
    else { cudaMalloc(&locks[i].mutex, 4); cudaMemset(locks[i].mutex, 0, 4); }
  }
  Lock *dlock; cudaMalloc(&dlock, 1024 * sizeof(Lock));
  cudaMemcpy(dlock, locks.data(), 1024 * sizeof(Lock), cudaMemcpyHostToDevice);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int r = 0; r < 4; r++) {
    cudaMemset(t.entries, 0, 1024 * sizeof(Entry*));
    cudaEventRecord(a);
    if (flat) add_flat<<<60, 256>>>(keys, values, t, all);
    else add_to_table<<<60, 256>>>(keys, values, t, dlock);
    cudaEventRecord(b);
    cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b);
    if (r) printf("%f\n", ms);
  }
  if (cudaGetLastError() != cudaSuccess) return 1;
  if (!packed) printf("gap %ld\n", (long)((char*)locks[1].mutex - (char*)locks[0].mutex));
  return 0;
}
"""


def time_c(folder):
    src = os.path.join(folder, "ht.cu")
    exe = os.path.join(folder, "ht")
    with open(src, "w") as f:
        f.write(C_SOURCE)
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-o", exe, src], check=True)
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-DORDERED", "-o", exe + "o", src], check=True)
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-DSPLIT", "-o", exe + "s", src], check=True)
    out = {}
    for label, argv in (("C, book's locks (own cudaMalloc each)", [exe]),
                        ("C, locks packed 4 bytes apart", [exe, "packed"]),
                        ("C, simt's shape: one int array of locks, CAS on mutex + hash",
                         [exe, "packed", "flat"]),
                        ("C, book's locks, acquiring CAS and releasing exchange", [exe + "o"]),
                        ("C, book's locks, relaxed CAS spin, one acquiring load, releasing "
                         "store", [exe + "s"])):
        lines = subprocess.run(argv, check=True, capture_output=True, text=True).stdout.split()
        gap = [lines[i + 1] for i, w in enumerate(lines) if w == "gap"]
        nums = [float(w) for w in lines if w.replace(".", "").isdigit() and "." in w]
        out[label + (f" [gap {gap[0]} B]" if gap else "")] = statistics.median(nums)
    return out


def main():
    rng = np.random.default_rng(1)
    keys = simt.to_device(rng.integers(0, 2**32, ELEMENTS, dtype=np.uint32))
    values = simt.device_array(ELEMENTS, np.uint64)
    rows = {}
    real = cuda_compile.no_jump_tables
    for tables in (False,):
        cuda_compile.no_jump_tables = (lambda module: None) if tables else real
        for order in ("acqrel", "split", "relaxed"):
            kernel = make_kernel(order)
            for spacing in (1,):
                label = (f"simt, locks {4 * spacing} B apart, {order}, "
                         f"{'jump table' if tables else 'branches'}")
                rows[label] = time_simt(kernel, spacing, keys, values)
                print(f"{label}: {rows[label]:.1f} ms", flush=True)
    cuda_compile.no_jump_tables = real
    for name in os.environ.get("VARIANTS", "rolled i32 aos ttas").split():
        kernel = make_variant(name)
        label = f"simt, relaxed, variant {name}"
        rows[label] = time_aos(kernel, keys, values) if name == "aos" else \
            time_simt(kernel, 1, keys, values)
        print(f"{label}: {rows[label]:.1f} ms", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        for label, ms in time_c(folder).items():
            rows[label] = ms
            print(f"{label}: {ms:.1f} ms", flush=True)
    result = {"device": simt.get_device().name, "date": str(datetime.date.today()),
              "kernel_ms": rows}
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
