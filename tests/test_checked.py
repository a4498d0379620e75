"""Checked mode on the CPU device (docs/finding-bugs.md): one planted bug per kernel,
each next to its fixed twin, which must run clean, and traps a naive checker would flag.

Every report is checked for its class, the kernel, both threads and both lines. Lines
are found by the ``# <-`` markers in this file's kernels.
"""
import numpy as np
import pytest

import simt
from conftest import poison, random_array, marked_line
from simt import blockDim, blockIdx, threadIdx
from simt.config import config
from simt.ir import types as T

FILE = __file__.rsplit("/", 1)[-1]


def line(marker):
    return marked_line(__file__, marker)


@pytest.fixture
def checked():
    with simt.use_device("cpu", checks=True) as device:
        yield device


def run(kernel, grid, block, *args, shared=0):
    kernel[grid, block, shared](*args)
    simt.synchronize()


def reported(cls, kernel, grid, block, *args, shared=0):
    with pytest.raises(cls) as info:
        run(kernel, grid, block, *args, shared=shared)
    error = info.value
    assert f"kernel '{kernel.__name__}'" in str(error).splitlines()[0]
    assert error.kernel == kernel.__name__
    return error


def assert_threads(error, first, second, first_line, second_line=None):
    """``first``/``second``: (block, thread) tuples; lines: markers."""
    text = str(error)
    assert (error.block, error.thread) == first
    assert f"block {first[0]} thread {first[1]}" in text
    assert f"{FILE}:{line(first_line)}" in text and error.line == line(first_line)
    if second is not None:
        assert (error.other.block, error.other.thread) == second
        assert f"block {second[0]} thread {second[1]}" in text
    if second_line is not None:
        assert error.other.line == line(second_line)
        assert f"{FILE}:{line(second_line)}" in text


def ones(n, dtype=np.float32):
    return simt.to_device(np.arange(1, n + 1, dtype=dtype))


B0 = (0, 0, 0)


def t(x):
    return (x, 0, 0)


# ---------------------------------------------------------------- memcheck
@simt.kernel
def oob_global(a, out):
    i = threadIdx.x
    out[i] = a[i + 1]                                          # <- oob_global


@simt.kernel
def oob_shared(out):
    s = simt.shared.array(32, np.float32)
    i = threadIdx.x
    s[i + 1] = 1.0                                             # <- oob_shared
    out[i] = 0.0


@simt.kernel
def oob_dynamic(out):
    s = simt.shared.dynamic(np.float32)
    i = threadIdx.x
    s[i] = 1.0                                                 # <- oob_dynamic
    out[i] = 0.0


@simt.kernel
def oob_local_negative(out):
    tmp = simt.local.array(4, np.int32)
    i = threadIdx.x
    tmp[i - 1] = 1                                             # <- oob_local
    out[i] = 0.0


@simt.kernel
def oob_2d(m, out):
    r = threadIdx.x
    out[r] = m[r, m.shape[1]]                                  # <- oob_2d


TABLE = np.arange(8, dtype=np.float32)


@simt.kernel
def oob_const(out):
    table = simt.const.array_like(TABLE)
    i = threadIdx.x
    out[i] = table[i]                                          # <- oob_const


@pytest.mark.parametrize("case", ["global", "shared", "dynamic", "local", "2d", "const"])
def test_out_of_bounds_in_every_space(checked, case):
    out = simt.zeros(32, np.float32)
    kernel, args, kwargs, marker, (dim, index, extent) = {
        "global": (oob_global, (ones(32), out), {}, "oob_global", (0, 32, 32)),
        "shared": (oob_shared, (out,), {}, "oob_shared", (0, 32, 32)),
        "dynamic": (oob_dynamic, (out,), {"shared": 31 * 4}, "oob_dynamic", (0, 31, 31)),
        "local": (oob_local_negative, (out,), {}, "oob_local", (0, -1, 4)),
        "2d": (oob_2d, (simt.to_device(np.ones((32, 5), np.float32)), out), {}, "oob_2d",
               (1, 5, 5)),
        "const": (oob_const, (out,), {}, "oob_const", (0, 8, 8)),
    }[case]
    error = reported(simt.IllegalAddressError, kernel, 1, 32, *args, **kwargs)
    assert error.line == line(marker) and f"{FILE}:{line(marker)}" in str(error)
    assert f"index {index} is outside dimension {dim} (size {extent})" in str(error)


# ---------------------------------------------------------------- racecheck
@simt.kernel
def race_shared(out):
    s = simt.shared.array(64, np.float32)
    i = threadIdx.x
    s[i] = i                                                   # <- race_shared_write
    out[i] = s[(i + 1) % 64]                                   # <- race_shared_read


@simt.kernel
def fixed_shared(out):
    s = simt.shared.array(64, np.float32)
    i = threadIdx.x
    s[i] = i
    simt.syncthreads()
    out[i] = s[(i + 1) % 64]


def test_shared_race_and_its_barrier(checked):
    out = simt.device_array(64, np.float32)
    error = reported(simt.RaceConditionError, race_shared, 1, 64, out)
    # thread 1 writes s[1] after thread 0 read it (thread 0 ran first)
    assert_threads(error, (B0, t(1)), (B0, t(0)), "race_shared_write", "race_shared_read")
    assert error.array == "s" and error.index == (1,)
    assert "writes 's[1]'" in str(error) and "read it" in str(error)
    run(fixed_shared, 1, 64, out)
    np.testing.assert_array_equal(out.copy_to_host(), (np.arange(64) + 1) % 64)


@simt.kernel
def race_global_in_block(out):
    out[0] = threadIdx.x                                       # <- race_global_block


@simt.kernel
def fixed_global_in_block(out):
    if threadIdx.x == 0:
        out[0] = threadIdx.x


def test_global_race_within_a_block(checked):
    out = simt.zeros(1, np.float32)
    error = reported(simt.RaceConditionError, race_global_in_block, 1, 8, out)
    assert_threads(error, (B0, t(1)), (B0, t(0)), "race_global_block", "race_global_block")
    assert "wrote it" in str(error)
    run(fixed_global_in_block, 1, 8, out)


@simt.kernel
def race_across_blocks(data):
    i = blockIdx.x
    data[i] = data[i] + data[(i + 1) % 4]                      # <- race_blocks


@simt.kernel
def fixed_across_blocks(data, out):
    i = blockIdx.x
    out[i] = data[i] + data[(i + 1) % 4]


def test_global_race_across_blocks(checked):
    """compute-sanitizer's racecheck looks at shared memory only; checked mode also
    reports blocks of one launch that touch one element of global memory."""
    data = ones(4)
    error = reported(simt.RaceConditionError, race_across_blocks, 4, 1, data)
    # block 1 writes data[1], which block 0 read
    assert_threads(error, ((1, 0, 0), t(0)), (B0, t(0)), "race_blocks", "race_blocks")
    assert "different blocks" in str(error)
    out = simt.device_array(4, np.float32)
    run(fixed_across_blocks, 4, 1, ones(4), out)
    np.testing.assert_array_equal(out.copy_to_host(), [3, 5, 7, 5])


@simt.kernel
def race_in_warp(out):
    s = simt.shared.array(64, np.int32)
    i = threadIdx.x
    s[i] = i
    s[i + 32] = 1
    simt.syncthreads()
    offset = 16
    while offset > 0:
        if i < offset:
            s[i] += s[i + offset]                              # <- race_warp
        offset //= 2
    if i == 0:
        out[0] = s[0]


@simt.kernel
def fixed_in_warp(out):
    s = simt.shared.array(64, np.int32)
    i = threadIdx.x
    s[i] = i
    s[i + 32] = 1
    simt.syncthreads()
    offset = 16
    while offset > 0:
        if i < offset:
            s[i] += s[i + offset]
        simt.syncwarp()
        offset //= 2
    if i == 0:
        out[0] = s[0]


def test_race_between_lanes_of_one_warp_and_syncwarp(checked):
    """Warp-synchronous code needs syncwarp since Volta: lanes are not lockstep."""
    out = simt.zeros(1, np.int32)
    error = reported(simt.RaceConditionError, race_in_warp, 1, 32, out)
    # a thread runs its whole loop before the next on the CPU: thread 1 writes s[1],
    # which thread 0 read at offset 1
    assert_threads(error, (B0, t(1)), (B0, t(0)), "race_warp", "race_warp")
    assert error.index == (1,)
    run(fixed_in_warp, 1, 32, out)
    assert out.copy_to_host()[0] == sum(range(32))


# ---------------------------------------------------------------- synccheck
@simt.kernel
def diverge_if(out):
    i = threadIdx.x
    if i < 16:                                                 # <- diverge_if_branch
        simt.syncthreads()                                     # <- diverge_if
    out[i] = 1.0


@simt.kernel
def diverge_break(out):
    i = threadIdx.x
    for k in range(4):                                         # <- diverge_break_loop
        if i == k:
            break
        simt.syncthreads()                                     # <- diverge_break
    out[i] = 1.0


@simt.device
def step(s, i):
    if i >= 16:
        return
    simt.syncthreads()                                         # <- diverge_return


@simt.kernel
def diverge_return(out):
    s = simt.shared.array(32, np.float32)
    i = threadIdx.x
    step(s, i)
    out[i] = 1.0


@simt.kernel
def fixed_barrier(out):
    i = threadIdx.x
    for k in range(4):
        simt.syncthreads()
    out[i] = 1.0


@pytest.mark.parametrize("kernel, marker, missing", [
    (diverge_if, "diverge_if", 16), (diverge_break, "diverge_break", 0),
    (diverge_return, "diverge_return", 16)], ids=["if", "break", "return-then-continue"])
def test_barrier_divergence(checked, kernel, marker, missing):
    out = simt.zeros(32, np.float32)
    error = reported(simt.BarrierDivergenceError, kernel, 1, 32, out)
    assert (error.other.block, error.other.thread) == (B0, t(missing))
    assert f"block (0, 0, 0) thread ({missing}, 0, 0), which has not returned" in str(error)
    assert error.line == line(marker) and f"{FILE}:{line(marker)}" in str(error)
    assert error.other.line is not None and f"{FILE}:{error.other.line}" in str(error)
    if kernel is diverge_if:
        assert error.other.line == line("diverge_if_branch")
    if kernel is diverge_break:
        assert error.other.line == line("diverge_break_loop")
    run(fixed_barrier, 1, 32, out)


@simt.kernel
def bad_mask(out):
    i = threadIdx.x
    v = 0
    if i < 16:
        v = simt.shfl_sync(0xFFFFFFFF, i, 0)                   # <- bad_mask
    out[i] = v


@simt.kernel
def good_mask(out):
    i = threadIdx.x
    v = 0
    if i < 16:
        v = simt.shfl_sync(0x0000FFFF, i + 1, 0)
    out[i] = v


@simt.kernel
def syncwarp_exited(out):
    i = threadIdx.x
    if i == 31:
        return
    out[i] = 1
    simt.syncwarp()             # the mask names lane 31, which returned: excused
    out[i] = simt.shfl_sync(0xFFFFFFFF, i, 30)


def test_warp_masks_name_the_lanes_that_take_part(checked):
    out = simt.zeros(32, np.int32)
    error = reported(simt.BarrierDivergenceError, bad_mask, 1, 32, out)
    assert_threads(error, (B0, t(0)), (B0, t(16)), "bad_mask")
    assert "does not take part" in str(error)
    run(good_mask, 1, 32, out)
    np.testing.assert_array_equal(out.copy_to_host(), [1] * 16 + [0] * 16)
    run(syncwarp_exited, 1, 32, out)
    np.testing.assert_array_equal(out.copy_to_host(), [30] * 31 + [0])


@simt.kernel
def grid_sync_plain(out):
    simt.cg.this_grid().sync()                                 # <- grid_sync
    out[threadIdx.x] = 1


def test_grid_sync_outside_a_cooperative_launch(checked):
    out = simt.zeros(4, np.int32)
    error = reported(simt.LaunchError, grid_sync_plain, 2, 4, out)
    assert "cooperative" in str(error) and error.line == line("grid_sync")
    with pytest.raises(simt.NotSupportedError, match="cooperative"):
        grid_sync_plain.launch_cooperative(2, 4, (out,))


# ---------------------------------------------------------------- initcheck
@simt.kernel
def uninit_shared(out):
    s = simt.shared.array(32, np.float32)
    i = threadIdx.x
    if i > 0:
        s[i] = 1.0
    simt.syncthreads()
    out[i] = s[i]                                              # <- uninit_shared


@simt.kernel
def copy(src, out):
    i = threadIdx.x
    out[i] = src[i]                                            # <- uninit_global


def test_uninitialized_reads(checked):
    out = simt.device_array(32, np.float32)
    error = reported(simt.UninitializedReadError, uninit_shared, 1, 32, out)
    assert_threads(error, (B0, t(0)), None, "uninit_shared")
    assert error.array == "s" and error.index == (0,) and "which nothing wrote" in str(error)
    for source in (simt.device_array(32, np.float32), simt.empty(32, np.float32)):
        error = reported(simt.UninitializedReadError, copy, 1, 32, source, out)
        assert_threads(error, (B0, t(0)), None, "uninit_global")
        assert "'src[0]'" in str(error)
    # written by the host, by a kernel, or allocated zeroed: clean
    written = simt.device_array(32, np.float32)
    written.copy_from(np.arange(32, dtype=np.float32))
    for source in (simt.zeros(32, np.float32), ones(32), written):
        run(copy, 1, 32, source, out)
    run(copy, 1, 32, ones(32), written)
    run(copy, 1, 32, written, out)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(1, 33))
    # copying unwritten memory back to the host is not a report
    simt.device_array(8, np.float32).copy_to_host()


@simt.kernel
def read_before_neighbour_writes(out):
    s = simt.shared.array(32, np.float32)
    i = threadIdx.x
    s[i] = 1.0                                                 # <- early_write
    out[i] = s[31 - i]                                         # <- early_read


def test_a_read_before_another_thread_writes_is_a_race(checked):
    """Thread 15 runs before thread 16 on the CPU, so it reads s[16] before thread 16
    writes it: a race on a GPU, reported as one (not as an uninitialized read)."""
    out = simt.device_array(32, np.float32)
    error = reported(simt.RaceConditionError, read_before_neighbour_writes, 1, 32, out)
    assert_threads(error, (B0, t(16)), (B0, t(15)), "early_write", "early_read")


# ---------------------------------------------------------------- traps: all clean
@simt.kernel
def traps(data, hist, out, n):
    s = simt.shared.array(64, np.int32)
    counts = simt.shared.array(4, np.int32)
    i = threadIdx.x
    g = i + blockIdx.x * blockDim.x
    if i < 4:
        counts[i] = 0
    if i < 32:                                   # disjoint halves, each its own
        s[i] = data[g]
    else:
        s[i] = 2 * data[g]
    simt.syncthreads()                           # written before, read after
    simt.atomic.add(counts, s[i] % 4, 1)         # atomics on shared and global
    simt.atomic.add(hist, s[i] % 4, 1)
    stride = 32
    while stride > 0:                            # a tree with a barrier per step
        if i < stride:
            s[i] += s[i + stride]
        simt.syncthreads()
        stride //= 2
    total = s[0]                                 # every thread reads one element
    if i >= n:                                   # threads that leave before a barrier
        return
    simt.syncthreads()
    data[g] = data[g] + 1                        # each thread its own element, again
    out[g] = total + counts[i % 4] - counts[i % 4]


@simt.kernel
def warp_sync_reduce(data, out):
    i = threadIdx.x
    v = data[i]
    offset = 16
    while offset > 0:
        v += simt.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if i % 32 == 0:
        simt.atomic.add(out, 0, v)


def test_traps_a_naive_checker_would_flag(checked, rng):
    host = rng.integers(0, 100, 128).astype(np.int32)
    data, hist = simt.to_device(host), simt.zeros(4, np.int32)
    out = simt.zeros(128, np.int32)
    run(traps, 2, 64, data, hist, out, 48)
    doubled = np.concatenate([host[:32], 2 * host[32:64], host[64:96], 2 * host[96:]])
    np.testing.assert_array_equal(hist.copy_to_host(), np.bincount(doubled % 4, minlength=4))
    expected = np.zeros(128, np.int32)
    expected[:48], expected[64:112] = doubled[:64].sum(), doubled[64:].sum()
    np.testing.assert_array_equal(out.copy_to_host(), expected)
    host[:48] += 1
    host[64:112] += 1
    np.testing.assert_array_equal(data.copy_to_host(), host)
    total = simt.zeros(1, np.int32)
    run(warp_sync_reduce, 1, 64, simt.to_device(host[:64]), total)
    assert total.copy_to_host()[0] == host[:64].sum()


@simt.kernel
def locked_sum(mutex, total, data, slots):
    if threadIdx.x == 0:                         # a lock orders the blocks' updates
        while simt.atomic.cas(mutex, 0, 0, 1) != 0:
            pass
        total[0] += data[blockIdx.x]
        simt.threadfence()
        simt.atomic.exch(mutex, 0, 0)
    old = slots[0]                               # a plain first guess, then compare-and-swap
    while True:
        seen = simt.atomic.cas(slots, 0, old, old + 1)
        if seen == old:
            break
        old = seen


@simt.kernel
def publish(data, flag, out):
    if blockIdx.x == 0:                          # release / acquire through a flag
        data[0] = 42
        simt.atomic.store(flag, 0, 1, order="release")
    else:
        while simt.atomic.load(flag, 0, order="acquire") == 0:
            pass
        out[0] = data[0]


@simt.kernel
def init_races_atomics(counts):
    if threadIdx.x == 0:
        counts[0] = 0                                          # <- init_write
    simt.atomic.add(counts, 0, 1)                              # <- init_atomic


def test_atomics_order_a_lock_and_a_plain_write_races_with_them(checked):
    mutex, total, slots = simt.zeros(1, np.int32), simt.zeros(1, np.float32), simt.zeros(1, np.int32)
    run(locked_sum, 4, 8, mutex, total, ones(4), slots)
    assert total.copy_to_host()[0] == 10 and slots.copy_to_host()[0] == 32
    out = simt.zeros(1, np.int32)
    run(publish, 2, 1, simt.device_array(1, np.int32), simt.device_array(1, np.int32), out)
    assert out.copy_to_host()[0] == 42
    error = reported(simt.RaceConditionError, init_races_atomics, 1, 8, simt.zeros(1, np.int32))
    assert_threads(error, (B0, t(1)), (B0, t(0)), "init_atomic", "init_write")
    assert "atomically accesses" in str(error)


# ---------------------------------------------------------------- the mode itself
def test_the_device_stays_usable_after_a_report(checked):
    out = simt.zeros(64, np.float32)
    with pytest.raises(simt.RaceConditionError):
        run(race_shared, 1, 64, out)
    run(fixed_shared, 1, 64, out)
    with pytest.raises(simt.RaceConditionError):
        run(race_shared, 1, 64, out)


def test_simt_checks_selects_checked_mode(monkeypatch):
    monkeypatch.setattr(config, "checks", True)
    with simt.use_device("cpu") as device:
        assert device.options["checks"] is True
        with pytest.raises(simt.RaceConditionError):
            run(race_global_in_block, 1, 8, simt.zeros(1, np.float32))
    with simt.use_device("cpu", checks=False) as device:
        assert device.options["checks"] is False


def test_checks_off_generate_no_checker_code(monkeypatch):
    monkeypatch.setattr(config, "checks", False)          # also under SIMT_CHECKS=1
    sig = "void(float32[::1])"
    with simt.use_device("cpu"):
        plain = fixed_shared.llvm_ir(sig)
    with simt.use_device("cpu", checks=True):
        checked = fixed_shared.llvm_ir(sig)
    assert "simt.chk" not in plain and "simt.chk" in checked


COUNTER = simt.Global(1, np.int32)


@simt.kernel
def bump_global():
    COUNTER[0] += 1                                            # <- global_symbol


def test_module_level_global_arrays_are_checked(checked):
    with pytest.raises(simt.RaceConditionError) as info:
        run(bump_global, 1, 4)
    assert_threads(info.value, (B0, t(1)), (B0, t(0)), "global_symbol", "global_symbol")


def test_checked_mode_is_a_kernel_option_too():
    """A kernel may ask for it too, on every device; a GPU compile holds its GPU checks
    (PTX made without a GPU: tests/test_gpu_checked.py)."""
    k = simt.kernel(checks=True)(fixed_shared.pyfunc)
    assert k.options_for("cpu").checks and k.options_for("cuda").checks
    assert "simt_check_state" in k.ptx("void(float32[::1])")
    with pytest.raises(TypeError, match="checks is True or False"):
        simt.kernel(checks="yes")(fixed_shared.pyfunc)


@simt.kernel
def tile_barriers(out):
    tile = simt.cg.tiled_partition(simt.cg.this_thread_block(), 64)
    i = threadIdx.x
    if i < 64:                                   # the whole first tile: fine
        tile.sync()
    if i % 64 < 32:                              # half of each tile
        tile.sync()                                            # <- tile_diverge
    out[i] = 1


def test_tile_barriers_check_their_own_tile(checked):
    out = simt.zeros(128, np.int32)
    error = reported(simt.BarrierDivergenceError, tile_barriers, 1, 128, out)
    assert_threads(error, (B0, t(0)), (B0, t(32)), "tile_diverge")


@simt.kernel
def double_all(a):
    i = simt.grid(1)
    if i < a.size:
        a[i] = 2 * a[i]


@pytest.mark.parametrize("spec", ["cpu-checked", "sim"])
def test_use_after_free_is_reported(spec, rng):
    """A device array freed with DeviceArray.free and then launched: checked mode and the
    sim device name the argument; the fixed twin (launch, then free) runs clean."""
    options = {"checks": True} if spec == "cpu-checked" else {}
    with simt.use_device(spec.split("-")[0], **options):
        host = random_array(rng, 64, np.float32)
        d = simt.to_device(host)
        double_all[2, 32](d)                          # the twin: used, then freed
        np.testing.assert_array_equal(d.copy_to_host(), 2 * host)
        d.free()
        with pytest.raises(simt.IllegalAddressError, match="argument 'a'.*freed"):
            double_all[2, 32](d)
        view = simt.to_device(host)
        part = view[:32]
        view.free()
        with pytest.raises(simt.IllegalAddressError, match="use after free"):
            double_all[1, 32](part)                   # a view of freed memory too


@simt.kernel
def shift_left(x, y):
    i = threadIdx.x
    y[i] = x[(i + 1) % 8]                                      # <- shift_left


@simt.kernel
def shift_left_view(x, y):
    v = x[1:]
    i = threadIdx.x
    y[i] = v[i % 7]


def test_read_only_parameters_skip_the_checker_only_when_nothing_can_write_them(checked):
    """A parameter the kernel only reads needs no checker call when its memory is fully
    written and shared with no other argument; aliased or unwritten, it is checked."""
    sig = "void(float32[::1], float32[::1])"
    assert shift_left.compile(sig).binary.read_only == (0,)
    assert shift_left_view.compile(sig).binary.read_only == ()     # a view: not proven
    x = simt.to_device(np.arange(1, 9, dtype=np.float32))
    y = simt.device_array(8, np.float32)
    run(shift_left, 1, 8, x, y)
    np.testing.assert_array_equal(y.copy_to_host(), np.roll(np.arange(1, 9), -1))
    error = reported(simt.RaceConditionError, shift_left, 1, 8, x, x)   # y is x
    assert_threads(error, (B0, t(1)), (B0, t(0)), "shift_left", "shift_left")
    error = reported(simt.UninitializedReadError, shift_left, 1, 8,
                     simt.device_array(8, np.float32), y)
    assert_threads(error, (B0, t(0)), None, "shift_left")


PAIR = np.dtype([("x", "<f4"), ("v", "<f4", (2,))])
LEAD = np.dtype([("v", "<f4", (2,)), ("x", "<f4")])


@simt.kernel
def shift_field(a, out):
    i = threadIdx.x
    out[i] = a[(i + 1) % 8].x
    a[i].x = out[i] * 2


@simt.kernel
def shift_item(a, out):
    i = threadIdx.x
    out[i] = a[(i + 1) % 8]["x"]
    a[i]["x"] = out[i] * 2


@simt.kernel
def shift_component(a, out):
    i = threadIdx.x
    out[i] = a[(i + 1) % 8].x
    a[i].x = out[i] * 2


@simt.kernel
def shift_record(a, out):
    i = threadIdx.x
    r = a[(i + 1) % 8]                                         # <- shift_record_read
    out[i] = r.x
    a[i].v[0] = out[i] * 2                                     # <- shift_record


@pytest.mark.parametrize("kernel,dtype", [(shift_field, PAIR), (shift_item, PAIR),
                                          (shift_component, "float4"), (shift_record, LEAD)])
def test_a_parameter_whose_element_fields_are_written_is_not_read_only(checked, rng, kernel,
                                                                       dtype):
    """``a[i].x = v``, ``a[i]['x'] = v``, a vector's ``a[i].x = v`` and ``a[i].v[k] = v``
    write ``a``: it is no read-only parameter (whose reads skip the checker), and the writes
    come back. With ``a[i].v[0]``, checked like any element, a thread's read of the
    element racing with its neighbour's write is reported (it was not)."""
    if dtype == "float4":
        host = simt.float4.view(random_array(rng, (8, 4), np.float32))
    else:
        host = np.zeros(8, dtype)
        host["x"] = random_array(rng, 8, np.float32)
        host["v"] = random_array(rng, (8, 2), np.float32)
    a, out = simt.to_device(host), simt.to_device(poison(8, np.float32))
    assert kernel.compile([T.typeof(a), T.typeof(out)]).binary.read_only == ()
    if kernel is shift_record:
        error = reported(simt.RaceConditionError, kernel, 1, 8, a, out)
        assert_threads(error, (B0, t(1)), (B0, t(0)), "shift_record", "shift_record_read")
    a = simt.to_device(host)
    run(kernel, 1, 1, a, out)                  # one thread: no race; its write comes back
    got, want = a.copy_to_host(), host.copy()
    if kernel is shift_record:
        want["v"][0, 0] = 2 * host["x"][1]
    else:
        want["x"][0] = 2 * host["x"][1]
    assert got.tobytes() == want.tobytes()
    assert out.copy_to_host()[0] == host["x"][1]


@simt.kernel
def syncwarp_in_both_arms(data, out):
    i = threadIdx.x
    if i % 2 == 0:
        simt.syncwarp()
        out[i] = data[(i + 1) % 32] * 2
    else:
        simt.syncwarp()
        out[i] = data[(i + 1) % 32] + 1


@simt.kernel
def syncwarp_in_one_arm(data, out):
    i = threadIdx.x
    if i % 2 == 0:
        simt.syncwarp()                                        # <- syncwarp_one_arm
        out[i] = data[i] * 2
    else:
        out[i] = data[i] + 1
    simt.syncthreads()


@pytest.mark.parametrize("spec", ["cpu-checked", "sim"])
def test_syncwarp_in_both_arms_of_an_if_is_not_divergence(spec, rng):
    """Volta and later let the lanes of a warp meet at different syncwarp calls with the
    same mask; a lane that goes where no syncwarp is stays a divergence."""
    options = {"checks": True} if spec == "cpu-checked" else {}
    with simt.use_device(spec.split("-")[0], **options):
        host = random_array(rng, 32, np.float32)
        data, out = simt.to_device(host), simt.to_device(poison(32, np.float32))
        run(syncwarp_in_both_arms, 1, 32, data, out)
        shifted = np.roll(host, -1)
        expected = np.where(np.arange(32) % 2 == 0, shifted * 2, shifted + 1)
        np.testing.assert_allclose(out.copy_to_host(), expected.astype(np.float32), rtol=1e-6)
        error = reported(simt.BarrierDivergenceError, syncwarp_in_one_arm, 1, 32, data, out)
        assert error.line == line("syncwarp_one_arm") and error.thread == t(0)
        assert "thread (1, 0, 0)" in str(error)


@simt.kernel
def sum_components(v, out):
    i = simt.grid(1)
    if i < out.size:
        p = v[i]  # <- vector read
        out[i] = p.x + p.y + p.z + p.w


def test_misaligned_vector_arrays_are_reported(checked, rng):
    """A float4 array whose data is not on 16 bytes: every element access is a misaligned
    vector access on a GPU; the first one is reported at its line, naming the thread,
    the element, the address and the alignment (issue 34 item 4: it was refused at the
    launch, naming only the argument). The twin, a float4 view of aligned data, runs
    clean."""
    host = random_array(rng, 36, np.float32)
    out = simt.to_device(poison(8, np.float32))
    run(sum_components, 1, 8, simt.float4.view(simt.to_device(host[:32].reshape(8, 4))), out)
    np.testing.assert_allclose(out.copy_to_host(), host[:32].reshape(8, 4).sum(1), rtol=1e-6)
    shifted = simt.to_device(host)[1:33].reshape(8, 4).retyped((8,), simt.float4.dtype, (16,))
    error = reported(simt.MisalignedAddressError, sum_components, 1, 8, shifted, out)
    assert_threads(error, ((0, 0, 0), (0, 0, 0)), None, "vector read")
    assert error.array == "v" and error.index == (0,)
    assert f"reads 'v[0]' at {FILE}:{line('vector read')}, a 16-byte vector at " \
        f"{shifted.ptr:#x}, which is not aligned to 16 bytes" in str(error)
    strided = simt.to_device(np.zeros((8, 5), np.float32))[:, :4].retyped(
        (8,), simt.float4.dtype, (20,))
    with pytest.raises(simt.MisalignedAddressError, match=r"strides \(20,\) are not aligned"):
        run(sum_components, 1, 8, strided, out)      # no element address can be made


@simt.kernel
def local_unwritten(data, out):
    i = threadIdx.x
    a = simt.local.array(4, np.float32)
    if i == 0:
        for k in range(4):
            a[k] = data[k]
    out[i] = a[0] + a[3]                                       # <- local_unwritten


@simt.kernel
def local_written(data, out):
    i = threadIdx.x
    a = simt.local.array(4, np.float32)
    for k in range(4):
        a[k] = data[k] * i
    out[i] = a[0] + a[3]


@simt.kernel
def local_unwritten_barrier(data, out):
    i = threadIdx.x
    a = simt.local.array((2, 2), np.float32)
    a[0, 0] = data[i]
    simt.syncthreads()
    out[i] = a[0, 0] + a[1, i % 2]                             # <- local_unwritten_barrier


@simt.kernel
def local_written_barrier(data, out):
    i = threadIdx.x
    a = simt.local.array((2, 2), np.float32)
    a[0, 0] = data[i]
    a[1, i % 2] = 2 * data[i]
    simt.syncthreads()
    out[i] = a[0, 0] + a[1, i % 2]


@pytest.mark.parametrize("spec", ["cpu-checked", "sim"])
def test_uninitialized_local_arrays(spec, rng):
    """A local array starts undefined in each thread: thread 1 reading what only thread
    0 wrote into its own array is an uninitialized read (the CPU device reuses one
    thread's stack for the next, so without the check it would see thread 0's values)."""
    options = {"checks": True} if spec == "cpu-checked" else {}
    with simt.use_device(spec.split("-")[0], **options):
        host = random_array(rng, 4, np.float32)
        data, out = simt.to_device(host), simt.to_device(poison(4, np.float32))
        for bad, marker in ((local_unwritten, "local_unwritten"),
                            (local_unwritten_barrier, "local_unwritten_barrier")):
            with pytest.raises(simt.UninitializedReadError) as info:
                run(bad, 1, 4, data, out)
            assert info.value.line == line(marker)
            assert "a[" in str(info.value)
        run(local_written, 1, 4, data, out)
        np.testing.assert_allclose(out.copy_to_host(), (host[0] + host[3]) * np.arange(4),
                                   rtol=1e-6)
        run(local_written_barrier, 1, 4, data, out)
        np.testing.assert_allclose(out.copy_to_host(), 3 * host, rtol=1e-6)


@simt.kernel
def heap_use_after_free(data, out):
    i = threadIdx.x
    p = simt.malloc(4, np.float32)
    for k in range(4):
        p[k] = data[k] * i
    total = p[0] + p[3]
    simt.free(p)
    out[i] = total + p[1]                                      # <- heap_read_freed


@simt.kernel
def heap_write_after_free(data, out):
    i = threadIdx.x
    p = simt.malloc(4, np.float32)
    p[0] = data[0]
    out[i] = p[0]
    simt.free(p)
    p[0] = 0.0                                                 # <- heap_write_freed


@simt.kernel
def heap_freed_last(data, out):
    i = threadIdx.x
    p = simt.malloc(4, np.float32)
    for k in range(4):
        p[k] = data[k] * i
    out[i] = p[0] + p[3]
    simt.free(p)


def test_heap_use_after_free(checked, rng):
    """simt.malloc memory read or written after simt.free is an IllegalAddressError at
    the line; freed after its last use (the twin), it runs clean, and a later malloc of
    the same block starts fresh (the sim device has no device heap)."""
    host = random_array(rng, 4, np.float32)
    data, out = simt.to_device(host), simt.to_device(poison(4, np.float32))
    run(heap_freed_last, 1, 4, data, out)
    np.testing.assert_allclose(out.copy_to_host(), (host[0] + host[3]) * np.arange(4), rtol=1e-6)
    for kernel, marker, verb in ((heap_use_after_free, "heap_read_freed", "reads"),
                                 (heap_write_after_free, "heap_write_freed", "writes")):
        error = reported(simt.IllegalAddressError, kernel, 1, 4, data, out)
        assert error.line == line(marker) and error.thread == t(0)
        assert f"{verb} 'p[" in str(error) and "simt.free released" in str(error)
    run(heap_freed_last, 1, 4, data, out)


def test_syncwarp_in_both_arms_gives_the_same_result_on_every_device(device, rng):
    """Fidelity: the kernel checked mode and sim pass gives their result on the device
    under test (a GPU with --device cuda:0)."""
    host = random_array(rng, 32, np.float32)
    data, out = simt.to_device(host), simt.to_device(poison(32, np.float32))
    syncwarp_in_both_arms[1, 32](data, out)
    shifted = np.roll(host, -1)
    expected = np.where(np.arange(32) % 2 == 0, shifted * 2, shifted + 1).astype(np.float32)
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-6)
