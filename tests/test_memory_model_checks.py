"""What volatile flags, scopes and syncwarp order, in checked mode on the CPU device and
on the sim device (issue 34 item 2): the guide's fence-and-volatile-flag idiom, scoped
atomics and fences, and an acquisition handed to the other lanes of a warp by syncwarp
run clean and give NumPy's result; the same patterns without the synchronisation (or
with too narrow a scope) are reported as races naming both lines."""
import numpy as np
import pytest

import simt
from conftest import poison
from simt import blockIdx, threadIdx

SPECS = {"cpu-checked": ("cpu", {"checks": True}), "sim": ("sim", {})}
FILE = __file__.rsplit("/", 1)[-1]
SOURCE = open(__file__).read().splitlines()
BLOCKS, THREADS = 4, 32


def line(marker):
    hits = [n for n, text in enumerate(SOURCE, 1) if text.rstrip().endswith(f"# <- {marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def device(spec):
    name, options = SPECS[spec]
    return simt.use_device(name, **options)


def run_publish(spec, kernel, value, threads=THREADS):
    """Launch kernel(value, data, flag, out) on BLOCKS blocks: out's blocks 1.. as read."""
    with device(spec):
        data, flag = simt.to_device(poison(1, np.int32)), simt.zeros(1, np.int32)
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
