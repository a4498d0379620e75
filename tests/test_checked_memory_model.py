"""What atomics and fences order, in checked mode on the CPU device and on the sim device
(issue 34 item 2): the guide's __threadfence "last block" sum (B.5) and data published
through acquire/release atomics run clean and give NumPy's result; the same patterns
without the fence, or with relaxed order, are reported as races at both lines."""
import numpy as np
import pytest

import simt
from conftest import poison, random_array, marked_line
from simt import blockDim, blockIdx, gridDim, threadIdx

SPECS = {"cpu-checked": ("cpu", {"checks": True}), "sim": ("sim", {})}
FILE = __file__.rsplit("/", 1)[-1]
BLOCKS, THREADS = 4, 32


def line(marker):
    return marked_line(__file__, marker)


def device(spec):
    name, options = SPECS[spec]
    return simt.use_device(name, **options)


# ---------------------------------------------------------------- the guide's B.5 sum
@simt.device
def partial_sum(array, partial):
    """calculatePartialSum: the block's elements summed in shared memory."""
    t = threadIdx.x
    partial[t] = array[blockIdx.x * blockDim.x + t]
    simt.syncthreads()
    step = blockDim.x // 2
    while step > 0:
        if t < step:
            partial[t] += partial[t + step]
        simt.syncthreads()
        step //= 2
    return partial[0]


@simt.kernel
def guide_sum(array, result, count):
    partial = simt.shared.array(THREADS, np.float32)
    is_last = simt.shared.array(1, np.int32)
    total = partial_sum(array, partial)
    if threadIdx.x == 0:
        simt.volatile_store(result, blockIdx.x, total)              # <- b5_write
        simt.threadfence()
        value = simt.atomic.inc(count, 0, gridDim.x)
        is_last[0] = value == gridDim.x - 1
    simt.syncthreads()
    if is_last[0]:
        mine = np.float32(0)
        for b in range(gridDim.x):
            mine += simt.volatile_load(result, b)
        simt.syncthreads()
        if threadIdx.x == 0:
            result[0] = mine
            count[0] = 0


@simt.kernel
def guide_sum_no_fence(array, result, count):
    partial = simt.shared.array(THREADS, np.float32)
    is_last = simt.shared.array(1, np.int32)
    total = partial_sum(array, partial)
    if threadIdx.x == 0:
        simt.volatile_store(result, blockIdx.x, total)              # <- b5_unfenced_write
        value = simt.atomic.inc(count, 0, gridDim.x)
        is_last[0] = value == gridDim.x - 1
    simt.syncthreads()
    if is_last[0]:
        mine = np.float32(0)
        for b in range(gridDim.x):
            mine += simt.volatile_load(result, b)                   # <- b5_unfenced_read
        simt.syncthreads()
        if threadIdx.x == 0:
            result[0] = mine
            count[0] = 0


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_the_guides_threadfence_sum_is_clean_and_without_the_fence_a_race(spec, rng):
    host = random_array(rng, BLOCKS * THREADS, np.float32)
    with device(spec):
        array = simt.to_device(host)
        result, count = simt.to_device(poison(BLOCKS, np.float32)), simt.zeros(1, np.uint32)
        guide_sum[BLOCKS, THREADS](array, result, count)
        simt.synchronize()
        got = result.copy_to_host()
        np.testing.assert_allclose(got[0], host.sum(dtype=np.float64), rtol=1e-5)
        np.testing.assert_allclose(got[1:], host.reshape(BLOCKS, THREADS).sum(axis=1)[1:],
                                   rtol=1e-5)
        assert count.copy_to_host()[0] == 0
        with pytest.raises(simt.RaceConditionError) as info:
            guide_sum_no_fence[BLOCKS, THREADS](array, result, count)
            simt.synchronize()
    text = str(info.value)
    assert f"{FILE}:{line('b5_unfenced_write')}" in text
    assert f"{FILE}:{line('b5_unfenced_read')}" in text
    assert info.value.block == (BLOCKS - 1, 0, 0) and "block (0, 0, 0)" in text


# ---------------------------------------------------------------- a flag and its data
# block 0 publishes data[0] through flag[0]; the other blocks read it if the flag is up
# (blocks run in order on both devices here: they all see it)
@simt.kernel
def publish_release_acquire(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value
        simt.atomic.store(flag, 0, 1, order="release")
    elif simt.atomic.load(flag, 0, order="acquire") == 1:
        out[blockIdx.x] = data[0]


@simt.kernel
def publish_fence_relaxed(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value
        simt.threadfence()
        simt.atomic.store(flag, 0, 1)
    elif simt.atomic.load(flag, 0) == 1:
        simt.threadfence()
        out[blockIdx.x] = data[0]


@simt.kernel
def publish_relaxed_store(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value                                             # <- relaxed_store_write
        simt.atomic.store(flag, 0, 1, order="relaxed")
    elif simt.atomic.load(flag, 0, order="acquire") == 1:
        out[blockIdx.x] = data[0]                                   # <- relaxed_store_read


@simt.kernel
def publish_relaxed_load(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value                                             # <- relaxed_load_write
        simt.atomic.store(flag, 0, 1, order="release")
    elif simt.atomic.load(flag, 0) == 1:
        out[blockIdx.x] = data[0]                                   # <- relaxed_load_read


@simt.kernel
def locked_total(mutex, total, data):
    """examples/lock.py's lock: an acquiring compare-and-swap, a releasing exchange."""
    if threadIdx.x == 0:
        while simt.atomic.cas(mutex, 0, 0, 1, order="acquire") != 0:
            pass
        total[0] += data[blockIdx.x]
        simt.atomic.exch(mutex, 0, 0, order="release")


@simt.kernel
def locked_total_relaxed(mutex, total, data):
    if threadIdx.x == 0:
        while simt.atomic.cas(mutex, 0, 0, 1) != 0:
            pass
        total[0] += data[blockIdx.x]                                # <- relaxed_lock
        simt.atomic.exch(mutex, 0, 0)


@pytest.mark.parametrize("kernel", [publish_release_acquire, publish_fence_relaxed],
                         ids=lambda k: k.__name__)
@pytest.mark.parametrize("spec", sorted(SPECS))
def test_published_data_is_clean(spec, kernel, rng):
    value = np.int32(rng.integers(1, 1000))
    with device(spec):
        data, flag = simt.to_device(poison(1, np.int32)), simt.zeros(1, np.int32)
        out = simt.to_device(poison(BLOCKS, np.int32))
        kernel[BLOCKS, 1](value, data, flag, out)
        got = out.copy_to_host()
    np.testing.assert_array_equal(got[1:], np.full(BLOCKS - 1, value))


@pytest.mark.parametrize("case", ["relaxed_store", "relaxed_load"])
@pytest.mark.parametrize("spec", sorted(SPECS))
def test_relaxed_publishing_is_a_race(spec, case, rng):
    kernel = {"relaxed_store": publish_relaxed_store,
              "relaxed_load": publish_relaxed_load}[case]
    with device(spec):
        data, flag = simt.to_device(poison(1, np.int32)), simt.zeros(1, np.int32)
        out = simt.to_device(poison(BLOCKS, np.int32))
        with pytest.raises(simt.RaceConditionError) as info:
            kernel[BLOCKS, 1](np.int32(rng.integers(1, 1000)), data, flag, out)
            simt.synchronize()
    text = str(info.value)
    assert info.value.block == (1, 0, 0) and info.value.line == line(f"{case}_read")
    assert f"{FILE}:{line(f'{case}_write')}" in text and "block (0, 0, 0)" in text


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_a_lock_orders_its_critical_sections_only_with_acquire_and_release(spec, rng):
    host = random_array(rng, BLOCKS, np.float32)
    with device(spec):
        data, mutex = simt.to_device(host), simt.zeros(1, np.int32)
        total = simt.zeros(1, np.float32)
        locked_total[BLOCKS, THREADS](mutex, total, data)
        np.testing.assert_allclose(total.copy_to_host()[0], host.sum(), rtol=1e-5)
        with pytest.raises(simt.RaceConditionError) as info:
            locked_total_relaxed[BLOCKS, THREADS](mutex, total, data)
            simt.synchronize()
    assert info.value.line == line("relaxed_lock") and info.value.block == (1, 0, 0)
