"""CUDA by Example, chapter 10: page-locked memory (10.2) and streams: one stream
(10.4), two streams issued depth-first (10.5) and breadth-first (10.7)."""
import mmap

import numpy as np

import simt
from simt import blockDim, blockIdx, threadIdx
from ._common import Example
from .book import EventTimer

SIZE = 10 * 1024 * 1024            # ints per copy in 10.2
N = 1024 * 1024                    # ints per chunk in 10.4-10.7
FULL_DATA_SIZE = N * 20


# -- 10.2: cudaMalloc'd pageable host memory against cudaHostAlloc -------------------------


def _copy_test(host, size, up, copies=100):
    dev_a = simt.device_array(size, np.int32)
    timer = EventTimer()
    for _ in range(copies):
        if up:
            dev_a.copy_from(host)
        else:
            dev_a.copy_to_host(host)
    return timer.elapsed_ms()


def malloc_array(count, dtype=np.int32):
    """``malloc(count * sizeof(int))`` as the book's C gets it: glibc maps a block this
    large anonymously, and its unwritten pages read the kernel's 4 KB zero page.
    (``np.empty`` asks for transparent huge pages, whose unwritten pages read the 2 MB
    huge zero page: copying from one measured 1.5x the book's time on the H200 machine,
    the copy itself unchanged; bench/NOTES.md.)"""
    private = getattr(mmap, "MAP_PRIVATE", None)    # a shared mapping's pages are real pages
    if private is None:
        return np.empty(count, dtype)
    return np.frombuffer(mmap.mmap(-1, count * np.dtype(dtype).itemsize, flags=private), dtype)


def cuda_malloc_test(size, up, copies=100):
    return _copy_test(malloc_array(size), size, up, copies)       # malloc


def cuda_host_alloc_test(size, up, copies=100):
    return _copy_test(simt.pinned_array(size, np.int32), size, up, copies)   # cudaHostAlloc


def copy_timed(device=None, out_dir=None, size=SIZE, copies=100):
    mb = copies * size * 4 / 1024 / 1024
    rates = {}
    for label, test in (("cudaMalloc", cuda_malloc_test), ("cudaHostAlloc", cuda_host_alloc_test)):
        for up in (True, False):
            elapsed = test(size, up, copies)
            rates[label, up] = mb / (elapsed / 1000)
            print(f"Time using {label}:  {elapsed:3.1f} ms")
            direction = "up:  " if up else "down: "
            print(f"\tMB/s during copy {direction}{rates[label, up]:3.1f}")
    return rates


# -- 10.4 - 10.7: streams ----------------------------------------------------------------------


@simt.kernel
def kernel(a, b, c):
    idx = threadIdx.x + blockIdx.x * blockDim.x
    if idx < N:
        idx1 = (idx + 1) % 256
        idx2 = (idx + 2) % 256
        as_ = np.float32(a[idx] + a[idx1] + a[idx2]) / np.float32(3.0)
        bs = np.float32(b[idx] + b[idx1] + b[idx2]) / np.float32(3.0)
        c[idx] = (as_ + bs) / np.float32(2)


def reference(host_a, host_b, n=N):
    """The kernel in NumPy, chunk by chunk (the neighbours wrap within 256 of a chunk's start)."""
    a = host_a.reshape(-1, n)
    b = host_b.reshape(-1, n)
    idx = np.arange(n)
    idx1, idx2 = (idx + 1) % 256, (idx + 2) % 256
    as_ = (a[:, idx] + a[:, idx1] + a[:, idx2]).astype(np.float32) / np.float32(3)
    bs = (b[:, idx] + b[:, idx1] + b[:, idx2]).astype(np.float32) / np.float32(3)
    return ((as_ + bs) / np.float32(2)).astype(np.int32).ravel()


def _check_overlap():
    if simt.get_device().properties.async_engine_count == 0:
        print("Device will not handle overlaps, so no speed up from streams "
              "(running anyway: the results are the same)")


def _pinned_inputs(full, seed=0):
    """The book's cudaHostAlloc'd buffers, a and b filled with rand()."""
    rng = np.random.default_rng(seed)
    host_a = simt.pinned_array(full, np.int32)
    host_b = simt.pinned_array(full, np.int32)
    host_c = simt.pinned_array(full, np.int32)
    host_a[:] = rng.integers(0, 2**31 - 1, full, dtype=np.int32)
    host_b[:] = rng.integers(0, 2**31 - 1, full, dtype=np.int32)
    return host_a, host_b, host_c


def _warm_up():
    """Compile the kernel before the timing starts, as nvcc would have."""
    d = simt.zeros(N, np.int32)
    kernel[N // 256, 256](d, d, simt.zeros(N, np.int32))    # c apart: it races with a and b
    simt.synchronize()


def single_stream(full=FULL_DATA_SIZE):
    """10.4: every chunk's copies and kernel queued in one stream; returns (ms, a, b, c)."""
    _check_overlap()
    _warm_up()
    timer = EventTimer()        # the book starts its timer here: streams, allocations and
    stream = simt.Stream()      # the rand() filling are in the timed region
    host_a, host_b, host_c = _pinned_inputs(full)
    dev_a, dev_b, dev_c = (simt.device_array(N, np.int32) for _ in range(3))
    for i in range(0, full, N):
        dev_a.copy_from(host_a[i:i + N], stream=stream)          # cudaMemcpyAsync
        dev_b.copy_from(host_b[i:i + N], stream=stream)
        kernel[N // 256, 256, 0, stream](dev_a, dev_b, dev_c)
        dev_c.copy_to_host(host_c[i:i + N], stream=stream)
    stream.synchronize()
    return timer.elapsed_ms(), host_a, host_b, host_c


def double_stream(full=FULL_DATA_SIZE, breadth_first=False):
    """10.5 (depth-first: stream 0's chunk, then stream 1's) or 10.7 (breadth-first:
    a0 a1 b0 b1 kernel0 kernel1 c0 c1, so neither copy queue blocks the other stream)."""
    _check_overlap()
    _warm_up()
    timer = EventTimer()        # where the book starts it, as in single_stream
    streams = (simt.Stream(), simt.Stream())
    host_a, host_b, host_c = _pinned_inputs(full)
    devs = [[simt.device_array(N, np.int32) for _ in range(3)] for _ in streams]
    for i in range(0, full, 2 * N):
        parts = [(streams[k], devs[k], slice(i + k * N, i + (k + 1) * N)) for k in (0, 1)]
        if breadth_first:
            for stream, (dev_a, _, _), chunk in parts:
                dev_a.copy_from(host_a[chunk], stream=stream)
            for stream, (_, dev_b, _), chunk in parts:
                dev_b.copy_from(host_b[chunk], stream=stream)
            for stream, (dev_a, dev_b, dev_c), _ in parts:
                kernel[N // 256, 256, 0, stream](dev_a, dev_b, dev_c)
            for stream, (_, _, dev_c), chunk in parts:
                dev_c.copy_to_host(host_c[chunk], stream=stream)
        else:
            for stream, (dev_a, dev_b, dev_c), chunk in parts:
                dev_a.copy_from(host_a[chunk], stream=stream)
                dev_b.copy_from(host_b[chunk], stream=stream)
                kernel[N // 256, 256, 0, stream](dev_a, dev_b, dev_c)
                dev_c.copy_to_host(host_c[chunk], stream=stream)
    for stream in streams:
        stream.synchronize()
    return timer.elapsed_ms(), host_a, host_b, host_c


def basic_single_stream(device=None, out_dir=None, full=FULL_DATA_SIZE):
    elapsed, *arrays = single_stream(full)
    print(f"Time taken:  {elapsed:3.1f} ms")
    return arrays


def basic_double_stream(device=None, out_dir=None, full=FULL_DATA_SIZE):
    elapsed, *arrays = double_stream(full, breadth_first=False)
    print(f"Time taken:  {elapsed:3.1f} ms")
    return arrays


def basic_double_stream_correct(device=None, out_dir=None, full=FULL_DATA_SIZE):
    elapsed, *arrays = double_stream(full, breadth_first=True)
    print(f"Time taken:  {elapsed:3.1f} ms")
    return arrays


EXAMPLES = [
    Example("copy_timed", "10.2", "cudaMemcpy bandwidth, pageable against page-locked host "
            "memory (10.2)", copy_timed),
    Example("basic_single_stream", "10.4", "chunks of copy/kernel/copy in one stream, timed "
            "(10.4)", basic_single_stream),
    Example("basic_double_stream", "10.5", "two streams issued depth-first, timed (10.5)",
            basic_double_stream),
    Example("basic_double_stream_correct", "10.7", "two streams issued breadth-first, timed "
            "(10.7)", basic_double_stream_correct),
]
