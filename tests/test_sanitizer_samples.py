"""NVIDIA's compute-sanitizer samples (github.com/NVIDIA/compute-sanitizer-samples:
Memcheck, Initcheck, Racecheck, Synccheck and the initcheck suppression demo), each bug
written again as a simt kernel, with a fixed twin (issue 34 item 3).

Every bug must be reported by checked mode on the CPU device (``checks=True``, and
``SIMT_CHECKS=1``: the ``cpu-env`` runs) and by the sim device, with the error class
compute-sanitizer's report corresponds to and at the kernel's Python line (the ``# <-``
markers); every fixed twin runs clean there and matches NumPy. docs/finding-bugs.md has
the table. These are planted bugs like those of tests/test_checked.py, which compares its
own with compute-sanitizer in bench/sanitizer/.
"""
import numpy as np
import pytest

import simt
from conftest import poison, random_array, marked_line
from simt import blockDim, blockIdx, threadIdx
from simt.config import config

FILE = __file__.rsplit("/", 1)[-1]


def line(marker):
    return marked_line(__file__, marker)


@pytest.fixture(params=["cpu", "cpu-env", "sim"])
def checked(request, monkeypatch):
    """A device that checks: cpu with checks=True, cpu under SIMT_CHECKS=1 (config.checks,
    which the variable sets), and the sim device (which always checks)."""
    if request.param == "cpu-env":
        monkeypatch.setattr(config, "checks", True)
        with simt.use_device("cpu") as device:
            assert device.options["checks"] is True
            yield device
        return
    options = {"checks": True} if request.param == "cpu" else {}
    with simt.use_device(request.param.split("-")[0], **options) as device:
        yield device


def run(kernel, grid, block, *args):
    kernel[grid, block](*args)
    simt.synchronize()


def reported(cls, markers, kernel, grid, block, *args):
    """Launch; the report must be ``cls``, name the kernel, and give the line of the
    first marker as its own (the others appear in the text: a race's other access)."""
    with pytest.raises(cls) as info:
        run(kernel, grid, block, *args)
    error = info.value
    assert error.kernel == kernel.__name__ and f"kernel '{kernel.__name__}'" in str(error)
    lines = [line(m) for m in markers]
    assert error.line in lines, (error.line, lines, str(error))
    for n in lines:
        assert f"{FILE}:{n}" in str(error)
    return error


def device_copy(host):
    return simt.to_device(host)


# ------------------------------------------------- Memcheck/memcheck_demo.cu
# unaligned_kernel stores an int through a pointer one byte past a global int. simt
# kernels cannot cast pointers: the same store comes from an int32 view made at a byte
# offset on the host, which the launch refuses (a GPU faults at the store).
@simt.kernel
def store_answer(x):
    x[0] = 42


def test_memcheck_unaligned_store(checked):
    raw = simt.zeros(16, np.uint8)
    with pytest.raises(simt.MisalignedAddressError) as info:
        run(store_answer, 1, 1, raw[1:5].view(np.int32))
    text = str(info.value)
    assert "kernel 'store_answer', argument 'x'" in text and "not aligned to 4 bytes" in text
    aligned = raw[4:8].view(np.int32)                 # the fix: an aligned element
    run(store_answer, 1, 1, aligned)
    np.testing.assert_array_equal(raw.copy_to_host()[4:8].view(np.int32), [42])
    np.testing.assert_array_equal(raw.copy_to_host()[:4], 0)


# out_of_bounds_kernel stores through a wild address in a device function.
WILD = 0x87654320 // 4


@simt.device
def poke(a, k):
    a[k] = 42                                                  # <- wild_store


@simt.kernel
def out_of_bounds(a):
    poke(a, WILD)


@simt.device
def poke_checked(a, k):
    if k < a.shape[0]:
        a[k] = 42


@simt.kernel
def in_bounds(a):
    poke_checked(a, WILD)
    poke_checked(a, threadIdx.x)


def test_memcheck_out_of_bounds_in_a_device_function(checked):
    a = device_copy(poison(4, np.int32))
    error = reported(simt.IllegalAddressError, ["wild_store"], out_of_bounds, 1, 1, a)
    assert f"index {WILD} is outside dimension 0 (size 4) of 'a'" in str(error)
    assert "device function 'poke'" in str(error)
    run(in_bounds, 1, 4, a)
    np.testing.assert_array_equal(a.copy_to_host(), [42] * 4)


# ------------------------------------------------- Initcheck/memset_error.cu
# The memset is given NumBlocks * NumThreads bytes where as many ints were meant, so
# three quarters of the vector is never written before the kernel reads it.
@simt.kernel
def vector_add(v):
    tx = threadIdx.x + blockDim.x * blockIdx.x
    v[tx] += tx                                                # <- memset_read


def test_initcheck_memset_of_too_few_bytes(checked):
    v = simt.device_array(64, np.int32)
    simt.memset(v.view(np.uint8)[:64], 0)                     # 64 bytes: 16 ints
    error = reported(simt.UninitializedReadError, ["memset_read"], vector_add, 2, 32, v)
    assert (error.block, error.thread) == ((0, 0, 0), (16, 0, 0))
    assert "v[16]" in str(error)
    fixed = simt.device_array(64, np.int32)
    simt.memset(fixed, 0)                                      # every element
    run(vector_add, 2, 32, fixed)
    np.testing.assert_array_equal(fixed.copy_to_host(), np.arange(64))


# ------------------------------------------- Suppressions/suppressions_initcheck_demo.cu
# The memset covers size * 4 - 1 bytes: the last int has three bytes written, one not.
@simt.kernel
def double(a, b, size):
    tid = threadIdx.x
    if tid < size:
        b[tid] = a[tid] * 2                                    # <- partial_read


def test_initcheck_element_with_one_byte_unwritten(checked, rng):
    size = 123
    a = simt.device_array(size, np.int32)
    simt.memset(a.view(np.uint8)[:size * 4 - 1], 0)
    b = device_copy(poison(size, np.int32))
    error = reported(simt.UninitializedReadError, ["partial_read"], double, 1, size, a, b,
                     size)
    assert error.thread == (size - 1, 0, 0) and f"a[{size - 1}]" in str(error)
    host = random_array(rng, size, np.int32)
    a.copy_from(host)                                          # the fix: every byte
    run(double, 1, size, a, b, size)
    np.testing.assert_array_equal(b.copy_to_host(), host * 2)


# ------------------------------------------------- Racecheck/block_error.cu
@simt.kernel
def block_sum(data, total):
    s = simt.shared.array(128, np.int32)
    tx = threadIdx.x
    s[tx] = data[tx] + tx                                      # <- block_write
    if tx == 0:
        total[0] = 0
        for i in range(128):
            total[0] += s[i]                                   # <- block_read


@simt.kernel
def block_sum_fixed(data, total):
    s = simt.shared.array(128, np.int32)
    tx = threadIdx.x
    s[tx] = data[tx] + tx
    simt.syncthreads()
    if tx == 0:
        total[0] = 0
        for i in range(128):
            total[0] += s[i]


def test_racecheck_block_sum_without_a_barrier(checked, rng):
    data = random_array(rng, 128, np.int32)
    total = device_copy(poison(1, np.int32))
    error = reported(simt.RaceConditionError, ["block_write", "block_read"], block_sum, 1,
                     128, device_copy(data), total)
    assert error.block == (0, 0, 0) and "s[1]" in str(error).replace("'", "")
    run(block_sum_fixed, 1, 128, device_copy(data), total)
    assert total.copy_to_host()[0] == (data + np.arange(128)).sum()


# ------------------------------------------------- Racecheck/warp_error.cu
# Lane 0 of each warp sums its warp's elements with no syncwarp after the other lanes
# wrote them (lanes of a warp are not lockstep since Volta).
@simt.kernel
def warp_sums(data, total):
    first = simt.shared.array(64, np.int32)
    second = simt.shared.array(2, np.int32)
    tx = threadIdx.x
    first[tx] = data[tx] + tx                                  # <- warp_write
    if tx % 32 == 0:
        wx = tx // 32
        second[wx] = 0
        for i in range(32):
            second[wx] += first[wx * 32 + i]                   # <- warp_read
    simt.syncthreads()
    if tx == 0:
        total[0] = 0
        for i in range(2):
            total[0] += second[i]


@simt.kernel
def warp_sums_fixed(data, total):
    first = simt.shared.array(64, np.int32)
    second = simt.shared.array(2, np.int32)
    tx = threadIdx.x
    first[tx] = data[tx] + tx
    simt.syncwarp()
    if tx % 32 == 0:
        wx = tx // 32
        second[wx] = 0
        for i in range(32):
            second[wx] += first[wx * 32 + i]
    simt.syncthreads()
    if tx == 0:
        total[0] = 0
        for i in range(2):
            total[0] += second[i]


def test_racecheck_warp_sum_without_syncwarp(checked, rng):
    data = random_array(rng, 64, np.int32)
    total = device_copy(poison(1, np.int32))
    error = reported(simt.RaceConditionError, ["warp_write", "warp_read"], warp_sums, 1, 64,
                     device_copy(data), total)
    assert "first[1]" in str(error).replace("'", "")
    run(warp_sums_fixed, 1, 64, device_copy(data), total)
    assert total.copy_to_host()[0] == (data + np.arange(64)).sum()


# ------------------------------------------------- Synccheck/divergent_threads.cu
# The barrier is inside the bounds test of a loop: in the last pass threads 48..63 skip it.
THREADS, PASSES = 64, 16
SIZE = THREADS * PASSES - 16


@simt.kernel
def strided_sum(data, total):
    s = simt.shared.array(THREADS, np.int32)
    tx = threadIdx.x
    s[tx] = 0
    simt.syncthreads()
    for b in range(PASSES):
        offset = THREADS * b + tx
        if offset < data.shape[0]:
            s[tx] += data[offset]
            simt.syncthreads()                                 # <- divergent_barrier
    if tx == 0:
        total[0] = 0
        for i in range(THREADS):
            total[0] += s[i]


@simt.kernel
def strided_sum_fixed(data, total):
    s = simt.shared.array(THREADS, np.int32)
    tx = threadIdx.x
    s[tx] = 0
    simt.syncthreads()
    for b in range(PASSES):
        offset = THREADS * b + tx
        if offset < data.shape[0]:
            s[tx] += data[offset]
        simt.syncthreads()
    if tx == 0:
        total[0] = 0
        for i in range(THREADS):
            total[0] += s[i]


def test_synccheck_barrier_some_threads_skip(checked, rng):
    data = random_array(rng, SIZE, np.int32)
    total = device_copy(poison(1, np.int32))
    error = reported(simt.BarrierDivergenceError, ["divergent_barrier"], strided_sum, 1,
                     THREADS, device_copy(data), total)
    assert "thread (48, 0, 0), which has not returned, does not reach it" in str(error)
    run(strided_sum_fixed, 1, THREADS, device_copy(data), total)
    assert total.copy_to_host()[0] == data.sum()


# ------------------------------------------------- Synccheck/illegal_syncwarp.cu
# The mask names lanes 0..15, but lanes 0..16 call syncwarp with it.
@simt.kernel
def half_warp_sum(total):
    s = simt.shared.array(32, np.int32)
    tx = threadIdx.x
    mask = simt.ballot_sync(0xFFFFFFFF, tx < 16)
    if tx <= 16:
        s[tx] = tx
        simt.syncwarp(mask)                                    # <- illegal_syncwarp
        if tx == 0:
            total[0] = 0
            for i in range(16):
                total[0] += s[i]
    simt.syncthreads()


@simt.kernel
def half_warp_sum_fixed(total):
    s = simt.shared.array(32, np.int32)
    tx = threadIdx.x
    mask = simt.ballot_sync(0xFFFFFFFF, tx < 16)
    if tx < 16:
        s[tx] = tx
        simt.syncwarp(mask)
        if tx == 0:
            total[0] = 0
            for i in range(16):
                total[0] += s[i]
    simt.syncthreads()


def test_synccheck_syncwarp_mask_without_the_caller(checked):
    total = device_copy(poison(1, np.int32))
    error = reported(simt.BarrierDivergenceError, ["illegal_syncwarp"], half_warp_sum, 1, 32,
                     total)
    assert error.thread == (16, 0, 0)
    assert "mask 0x0000ffff, which does not name its own lane 16" in str(error)
    run(half_warp_sum_fixed, 1, 32, total)
    assert total.copy_to_host()[0] == sum(range(16))
