"""A lane that calls a warp function (``*_sync``, ``syncwarp``) with a mask that leaves
out its own lane: undefined in CUDA, reported at the line naming block and thread by
checked mode on the CPU device and by the sim device, as compute-sanitizer's synccheck
does (issue 34 item 2). The fixed twins, with masks that name the caller, run clean and
match a NumPy reference."""
import numpy as np
import pytest

import simt
from conftest import poison, random_array, marked_line
from simt import threadIdx

SPECS = {"cpu-checked": ("cpu", {"checks": True}), "sim": ("sim", {})}
FILE = __file__.rsplit("/", 1)[-1]
HALF = 0x0000FFFF


def line(marker):
    return marked_line(__file__, marker)


@simt.kernel
def shfl_half_mask(a, out):
    i = threadIdx.x
    out[i] = simt.shfl_sync(0x0000FFFF, a[i], 0)               # <- shfl
    # fixed: simt.shfl_sync(0xFFFFFFFF, ...) or a mask of each half


@simt.kernel
def syncwarp_other_half(a, out):
    i = threadIdx.x
    out[i] = a[i]
    simt.syncwarp(0xFFFF0000)                                  # <- syncwarp


@simt.kernel
def ballot_neighbour_only(a, out):
    i = threadIdx.x
    lane = i % 32
    out[i] = simt.ballot_sync(1 << ((lane + 1) % 32), a[i] > 0)   # <- ballot


@simt.kernel
def reduce_in_upper_half(a, out):
    i = threadIdx.x
    if i >= 8:
        out[i] = simt.reduce_add_sync(0xFFFF0000, a[i])            # <- reduce
    else:
        out[i] = 0


@simt.kernel
def shfl_per_half(a, out):
    i = threadIdx.x
    mask = 0x0000FFFF if i % 32 < 16 else 0xFFFF0000
    out[i] = simt.shfl_sync(mask, a[i], 0, 16)


@simt.kernel
def syncwarp_activemask(a, out):
    i = threadIdx.x
    out[i] = a[i]
    simt.syncwarp(simt.activemask())


@simt.kernel
def reduce_upper_fixed(a, out):
    i = threadIdx.x
    if i >= 8:
        out[i] = simt.reduce_add_sync(0xFFFFFF00, a[i])
    else:
        out[i] = 0


# kernel, the lane the CPU device reports (threads in order), the lanes left out
BUGS = {"shfl": (shfl_half_mask, 16, range(16, 32)),
        "syncwarp": (syncwarp_other_half, 0, range(0, 16)),
        "ballot": (ballot_neighbour_only, 0, range(32)),
        "reduce": (reduce_in_upper_half, 8, range(8, 16))}


@pytest.mark.parametrize("case", sorted(BUGS))
@pytest.mark.parametrize("spec", sorted(SPECS))
def test_a_mask_without_the_callers_own_lane_is_reported(spec, case, rng):
    kernel, first, left_out = BUGS[case]
    name, options = SPECS[spec]
    with simt.use_device(name, **options):
        a = simt.to_device(random_array(rng, 32, np.int32))
        out = simt.to_device(poison(32, np.int32))
        with pytest.raises(simt.BarrierDivergenceError) as info:
            kernel[1, 32](a, out)
            simt.synchronize()
    error = info.value
    text = str(error)
    lane = error.thread[0]
    assert error.kernel == kernel.__name__ and error.block == (0, 0, 0)
    assert error.line == line(case) and f"{FILE}:{line(case)}" in text
    assert f"block (0, 0, 0) thread ({lane}, 0, 0)" in text
    assert f"does not name its own lane {lane}" in text
    assert not error.mask >> lane & 1
    if spec == "cpu-checked":        # threads run in order on the CPU device
        assert lane == first
    assert lane in left_out


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_masks_that_name_the_caller_run_clean(spec, rng):
    name, options = SPECS[spec]
    host = random_array(rng, 32, np.int32)
    with simt.use_device(name, **options):
        a = simt.to_device(host)
        out = simt.to_device(poison(32, np.int32))
        shfl_per_half[1, 32](a, out)
        np.testing.assert_array_equal(out.copy_to_host(), np.repeat(host[[0, 16]], 16))
        syncwarp_activemask[1, 32](a, out)
        np.testing.assert_array_equal(out.copy_to_host(), host)
        reduce_upper_fixed[1, 32](a, out)
        expected = np.where(np.arange(32) >= 8, host[8:].sum(dtype=np.int64), 0)
        np.testing.assert_array_equal(out.copy_to_host(), expected.astype(np.int32))
