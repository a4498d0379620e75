"""Device-side simt.memcpy and simt.memset (issue 35 item 8): on device arrays, heap
arrays (simt.malloc), shared memory, against NumPy on every device; bad calls as
CompileErrors naming the line; an n past the end as an IllegalAddressError; the PTX
through ptxas where it is installed."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from conftest import poison, random_array


@simt.kernel
def copy_rows(dst, src, counts, width):
    """Row r of dst gets the first counts[r] elements of row r of src, the rest -7."""
    r = simt.grid(1)
    if r < counts.size:
        simt.memset(dst[r], -7, width)
        simt.memcpy(dst[r], src[r], counts[r])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.float64])
def test_memcpy_memset_device_arrays(device, rng, dtype):
    rows, width = 37, 29
    src = random_array(rng, (rows, width), dtype)
    counts = rng.integers(0, width + 1, rows).astype(np.int32)
    out = simt.to_device(poison((rows, width), dtype))
    copy_rows[2, 32](out, simt.to_device(src), simt.to_device(counts), width)
    want = np.full((rows, width), -7).astype(dtype)
    for r, c in enumerate(counts):
        want[r, :c] = src[r, :c]
    np.testing.assert_array_equal(out.copy_to_host(), want)


@simt.kernel
def through_heap(src, out, n):
    """Each thread copies its slice of src into a malloc'd array, doubles it there and
    copies it out; a memset array of its own index comes after it in out."""
    i = simt.grid(1)
    p = simt.malloc(2 * n, np.float64)
    simt.memcpy(p, src[i * n:(i + 1) * n], n)
    simt.memset(p[n:], i, n)
    for j in range(n):
        p[j] *= 2.0
    simt.memcpy(out[2 * i * n:2 * (i + 1) * n], p, 2 * n)
    simt.free(p)


def test_heap_arrays(device, rng):
    threads, n = 40, 9
    src = random_array(rng, threads * n, np.float64)
    out = poison(2 * threads * n, np.float64)
    through_heap[2, 20](src, out, n)
    want = np.concatenate([np.concatenate([2 * src[i * n:(i + 1) * n], np.full(n, i)])
                           for i in range(threads)])
    np.testing.assert_array_equal(out, want)


@simt.kernel
def via_shared(src, out):
    """Thread 0 of each block stages its block's slice in shared memory with memcpy."""
    tile = simt.shared.array(64, np.int32)
    base = simt.blockIdx.x * 64
    if simt.threadIdx.x == 0:
        simt.memset(tile, 0, 64)
        simt.memcpy(tile, src[base:base + 64], 48)
    simt.syncthreads()
    out[base + simt.threadIdx.x] = tile[simt.threadIdx.x] + 1


def test_shared_memory(device, rng):
    src = random_array(rng, 3 * 64, np.int32)
    out = poison(3 * 64, np.int32)
    via_shared[3, 64](src, out)
    want = src.reshape(3, 64).copy()
    want[:, 48:] = 0
    np.testing.assert_array_equal(out, (want + 1).ravel())


@simt.kernel
def overrun(dst, src, n):
    if simt.grid(1) == 0:
        simt.memcpy(dst, src, n)


def test_count_past_the_end(device):
    if device.kind == "cuda":
        pytest.skip("GPUs do not check indices (as CUDA)")
    dst, src = simt.to_device(np.zeros(8, np.int32)), simt.to_device(np.ones(16, np.int32))
    with pytest.raises(simt.IllegalAddressError, match="overrun"):
        overrun[1, 1](dst, src, 12)
        simt.synchronize()


def test_errors_name_the_line():
    @simt.kernel
    def mixed(a, b):
        simt.memcpy(a, b, 4)

    with pytest.raises(simt.CompileError, match="one type.*float32.*int32") as info:
        mixed[1, 1](simt.to_device(np.zeros(4, np.float32)),
                    simt.to_device(np.zeros(4, np.int32)))
    assert "test_devmem.py" in str(info.value)

    @simt.kernel
    def two_d(a):
        simt.memset(a, 0, 4)

    with pytest.raises(simt.CompileError, match="1-d array, got a 2-d array"):
        two_d[1, 1](simt.to_device(np.zeros((2, 2), np.float32)))

    @simt.kernel
    def float_count(a):
        simt.memset(a, 0, 2.5)

    with pytest.raises(simt.CompileError, match="count n of simt.memset must be an integer"):
        float_count[1, 1](simt.to_device(np.zeros(4, np.float32)))


def test_host_memset_still_works(device):
    d = simt.to_device(np.zeros(10, np.int32))
    simt.memset(d, 5)
    np.testing.assert_array_equal(d.copy_to_host(), np.full(10, 5, np.int32))


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_ptx_assembles(tmp_path):
    ptx = through_heap.inspect_ptx("void(float64[::1], float64[::1], int32)", arch="sm_90")
    path = tmp_path / "devmem.ptx"
    path.write_text(ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "o.cubin")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
