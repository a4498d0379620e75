"""What volatile flags, scopes and syncwarp order, in checked mode on the CPU device and
on the sim device (issue 34 item 2): the guide's fence-and-volatile-flag idiom, scoped
atomics and fences, and an acquisition handed to the other lanes of a warp by syncwarp
run clean and give NumPy's result; the same patterns without the synchronisation (or
with too narrow a scope) are reported as races naming both lines."""
import numpy as np
import pytest

import simt
from conftest import poison, marked_line
from simt import blockIdx, threadIdx

SPECS = {"cpu-checked": ("cpu", {"checks": True}), "sim": ("sim", {})}
FILE = __file__.rsplit("/", 1)[-1]
BLOCKS, THREADS = 4, 32


def line(marker):
    return marked_line(__file__, marker)


def device(spec):
    name, options = SPECS[spec]
    return simt.use_device(name, **options)


def run_publish(spec, kernel, value, threads=THREADS):
    """Launch kernel(value, data, flag, out) on BLOCKS blocks; returns out."""
    with device(spec):
        data, flag = simt.to_device(poison(BLOCKS, np.int32)), simt.zeros(BLOCKS, np.int32)
        out = simt.to_device(poison(BLOCKS, np.int32))
        kernel[BLOCKS, threads](value, data, flag, out)
        simt.synchronize()
        return out.copy_to_host()


def expect_race(spec, kernel, value, write, read, threads=THREADS):
    with pytest.raises(simt.RaceConditionError) as info:
        run_publish(spec, kernel, value, threads)
    text = str(info.value)
    assert info.value.line == line(read), text
    assert f"{FILE}:{line(write)}" in text and "block (0, 0, 0)" in text, text
    return info.value


# ---------------------------------------------------------------- volatile flags
# the guide's fence idiom (writeXY/readXY): block 0 writes data[0], fences, sets the flag
# through a volatile store; the other blocks poll the flag through volatile loads, fence,
# then read the data
@simt.kernel
def volatile_flag(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value
        simt.threadfence()
        simt.volatile_store(flag, 0, 1)
    else:
        while simt.volatile_load(flag, 0) == 0:
            pass
        simt.threadfence()
        out[blockIdx.x] = data[0]


@simt.kernel
def volatile_flag_no_writer_fence(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value
        simt.volatile_store(flag, 0, 1)                             # <- unfenced_flag_write
    else:
        while simt.volatile_load(flag, 0) == 0:                     # <- unfenced_flag_read
            pass
        simt.threadfence()
        out[blockIdx.x] = data[0]


@simt.kernel
def volatile_flag_no_reader_fence(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value                                             # <- reader_unfenced_write
        simt.threadfence()
        simt.volatile_store(flag, 0, 1)
    else:
        while simt.volatile_load(flag, 0) == 0:
            pass
        out[blockIdx.x] = data[0]                                   # <- reader_unfenced_read


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_a_volatile_flag_after_a_fence_publishes(spec, rng):
    value = np.int32(rng.integers(1, 1000))
    got = run_publish(spec, volatile_flag, value, threads=1)
    np.testing.assert_array_equal(got[1:], np.full(BLOCKS - 1, value))


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_a_volatile_flag_without_the_writers_fence_is_a_race(spec, rng):
    """The flag's write publishes nothing: its volatile read races with it."""
    error = expect_race(spec, volatile_flag_no_writer_fence, np.int32(rng.integers(1, 1000)),
                        "unfenced_flag_write", "unfenced_flag_read", threads=1)
    assert error.block == (1, 0, 0) and "simt.threadfence() before" in str(error)


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_a_volatile_flag_without_the_readers_fence_is_a_race(spec, rng):
    """The flag was published, but the data read may come before the flag's (the guide's
    readXY fences between them): it races with the data's write."""
    error = expect_race(spec, volatile_flag_no_reader_fence, np.int32(rng.integers(1, 1000)),
                        "reader_unfenced_write", "reader_unfenced_read", threads=1)
    assert error.block == (1, 0, 0)


# ---------------------------------------------------------------- syncwarp
# block 0 publishes data[0] with a release; in each other block lane 0 acquires it, hands
# what it saw to lane 1 by a shuffle (which orders no memory), and lane 1 reads the data
@simt.kernel
def warp_handoff(value, data, flag, out):
    if blockIdx.x == 0:
        if threadIdx.x == 0:
            data[0] = value
            simt.atomic.store(flag, 0, 1, order="release")
    else:
        seen = np.int32(0)
        if threadIdx.x == 0:
            seen = simt.atomic.load(flag, 0, order="acquire")
        seen = simt.shfl_sync(0xFFFFFFFF, seen, 0)
        simt.syncwarp()
        if threadIdx.x == 1 and seen == 1:
            out[blockIdx.x] = data[0]


@simt.kernel
def warp_handoff_no_syncwarp(value, data, flag, out):
    if blockIdx.x == 0:
        if threadIdx.x == 0:
            data[0] = value                                         # <- handoff_write
            simt.atomic.store(flag, 0, 1, order="release")
    else:
        seen = np.int32(0)
        if threadIdx.x == 0:
            seen = simt.atomic.load(flag, 0, order="acquire")
        seen = simt.shfl_sync(0xFFFFFFFF, seen, 0)
        if threadIdx.x == 1 and seen == 1:
            out[blockIdx.x] = data[0]                               # <- handoff_read


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_syncwarp_hands_an_acquisition_to_the_other_lanes(spec, rng):
    value = np.int32(rng.integers(1, 1000))
    got = run_publish(spec, warp_handoff, value)
    np.testing.assert_array_equal(got[1:], np.full(BLOCKS - 1, value))
    error = expect_race(spec, warp_handoff_no_syncwarp, value, "handoff_write", "handoff_read")
    assert error.block == (1, 0, 0) and error.thread == (1, 0, 0)


# ---------------------------------------------------------------- scopes
# across blocks: block 0 publishes data[0] through flag[0], the other blocks read it
@simt.kernel
def publish_system_scope(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value
        simt.atomic.store(flag, 0, 1, order="release", scope="system")
    elif simt.atomic.load(flag, 0, order="acquire", scope="system") == 1:
        out[blockIdx.x] = data[0]


@simt.kernel
def publish_block_scope_release(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value                                             # <- block_release_write
        simt.atomic.store(flag, 0, 1, order="release", scope="block")
    elif simt.atomic.load(flag, 0, order="acquire") == 1:
        out[blockIdx.x] = data[0]                                   # <- block_release_read


@simt.kernel
def publish_block_scope_acquire(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value                                             # <- block_acquire_write
        simt.atomic.exch(flag, 0, 1, order="release")
    elif simt.atomic.add(flag, 0, 0, order="acquire", scope="block") == 1:
        out[blockIdx.x] = data[0]                                   # <- block_acquire_read


@simt.kernel
def publish_block_fence(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value                                             # <- block_fence_write
        simt.threadfence_block()
        simt.atomic.store(flag, 0, 1)
    elif simt.atomic.load(flag, 0) == 1:
        simt.threadfence()
        out[blockIdx.x] = data[0]                                   # <- block_fence_read


@simt.kernel
def publish_reader_block_fence(value, data, flag, out):
    if blockIdx.x == 0:
        data[0] = value                                             # <- reader_fence_write
        simt.threadfence()
        simt.atomic.store(flag, 0, 1)
    elif simt.atomic.load(flag, 0) == 1:
        simt.threadfence_block()
        out[blockIdx.x] = data[0]                                   # <- reader_fence_read


# within each block: thread 0 publishes data[b] to thread 1 (which runs after it here)
@simt.kernel
def publish_in_block_atomics(value, data, flag, out):
    b = blockIdx.x
    if threadIdx.x == 0:
        data[b] = value + b
        simt.atomic.store(flag, b, 1, order="release", scope="block")
    elif threadIdx.x == 1 and simt.atomic.load(flag, b, order="acquire", scope="block") == 1:
        out[b] = data[b]


@simt.kernel
def publish_in_block_fences(value, data, flag, out):
    b = blockIdx.x
    if threadIdx.x == 0:
        data[b] = value + b
        simt.threadfence_block()
        simt.atomic.store(flag, b, 1, scope="block")
    elif threadIdx.x == 1 and simt.atomic.load(flag, b, scope="block") == 1:
        simt.threadfence_block()
        out[b] = data[b]


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_device_and_system_scopes_publish_across_blocks(spec, rng):
    value = np.int32(rng.integers(1, 1000))
    got = run_publish(spec, publish_system_scope, value, threads=1)
    np.testing.assert_array_equal(got[1:], np.full(BLOCKS - 1, value))


@pytest.mark.parametrize("kernel", [publish_in_block_atomics, publish_in_block_fences],
                         ids=lambda k: k.__name__)
@pytest.mark.parametrize("spec", sorted(SPECS))
def test_block_scope_publishes_within_the_block(spec, kernel, rng):
    value = np.int32(rng.integers(1, 1000))
    got = run_publish(spec, kernel, value)
    np.testing.assert_array_equal(got, value + np.arange(BLOCKS, dtype=np.int32))


@pytest.mark.parametrize("case", ["block_release", "block_acquire", "block_fence",
                                  "reader_fence"])
@pytest.mark.parametrize("spec", sorted(SPECS))
def test_block_scope_publishes_nothing_to_other_blocks(spec, case, rng):
    kernel = {"block_release": publish_block_scope_release,
              "block_acquire": publish_block_scope_acquire,
              "block_fence": publish_block_fence,
              "reader_fence": publish_reader_block_fence}[case]
    value = np.int32(rng.integers(1, 1000))
    error = expect_race(spec, kernel, value, f"{case}_write", f"{case}_read", threads=1)
    assert error.block == (1, 0, 0)
