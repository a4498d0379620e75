"""Checked mode on GPUs (``checks=True`` on ``cuda:N``, backends/cuda/checked.py).

Without a GPU: the option exists, the PTX of a checked kernel holds the checks (the
shadows, ``barrier.sync``, the fault codes), and a kernel compiled without checks runs no
code of checked.py. With ``--device cuda:0``: the planted bugs of test_checked.py are
reported as the CPU device reports them, and clean kernels run clean, with NumPy's results.

    python -m pytest -q -p no:cacheprovider tests/test_gpu_checked.py --device cuda:0
"""
import re
import shutil
import subprocess

import numpy as np
import pytest

import simt
import test_checked as planted
from conftest import poison, random_array
from simt import blockIdx, threadIdx
from simt.runtime.devices import Device

F32 = "void(float32[::1])"


def ptx(kernel, sig):
    """The PTX of ``kernel`` compiled with checks=True (no GPU needed)."""
    return simt.kernel(checks=True)(kernel.pyfunc).inspect_ptx(sig)


def recorded_codes(text):
    """The fault codes the PTX can write into the launch's record (its first word)."""
    return {int(c) for c in re.findall(r"atom\.[a-z.]*global\.cas\.b64\s+%rd\d+, \[%rd\d+\], "
                                       r"0, (\d+);", text)}


# ---------------------------------------------------------------- no GPU needed
def test_checks_is_an_option_of_gpu_devices():
    assert Device("cuda", 0).options["checks"] is False
    assert Device("cuda", 0, checks=True).options["checks"] is True
    k = simt.kernel(planted.fixed_shared.pyfunc)
    assert k.options_for("cuda", {"checks": True, "boundscheck": False}).checks


@pytest.mark.parametrize("kernel, sig, code", [
    (planted.oob_global, "void(float32[::1], float32[::1])", 1),
    (planted.race_shared, F32, 7),
    (planted.uninit_shared, F32, 8),
    (planted.diverge_if, F32, 9),
    (planted.diverge_return, F32, 9),
], ids=["bounds", "race", "uninitialized", "divergence", "divergence-in-device-function"])
def test_checked_ptx_holds_the_checks(kernel, sig, code):
    text = ptx(kernel, sig)
    assert code in recorded_codes(text)
    assert "barrier.sync \t0;" in text.replace("barrier.sync 0", "barrier.sync \t0")
    assert "simt_check_state" in text
    assert "bar.sync" not in text           # barrier.sync.aligned: divergent warps may wait
    plain = simt.kernel(kernel.pyfunc).inspect_ptx(sig)
    assert "simt_check" not in plain and code not in recorded_codes(plain) - {1}


def test_shared_arrays_get_a_shadow_unless_something_else_orders_them():
    assert "simt_check_w0" in ptx(planted.race_shared, F32)
    text = ptx(planted.fixed_in_warp, "void(int32[::1])")
    assert "simt_check_warp_epoch" in text and text.count("bar.warp.sync") == 2
    assert "simt_check_w0" not in ptx(publish_in_block, F32)   # a fence: no shadows
    text = ptx(publish_in_block, F32)
    assert 9 in recorded_codes(text)                           # barriers still checked


@simt.kernel
def publish_in_block(out):
    s = simt.shared.array(64, np.float32)
    flag = simt.shared.array(1, np.int32)
    i = threadIdx.x
    if i == 0:
        flag[0] = 0
    simt.syncthreads()
    if i == 0:
        s[0] = 1.0
        simt.threadfence_block()
        simt.atomic.store(flag, 0, 1, order="release", scope="block")
    simt.syncthreads()
    out[i] = s[0]


@simt.kernel
def own_lane_missing(out):
    i = threadIdx.x
    out[i] = simt.shfl_sync(0x0000FFFF, i, 0)      # lanes 16..31 are not in the mask


def test_warp_functions_check_the_callers_own_lane():
    assert 15 in recorded_codes(ptx(own_lane_missing, "void(int32[::1])"))


def test_local_arrays_are_checked_for_uninitialized_reads():
    assert 8 in recorded_codes(ptx(planted.local_unwritten, "void(float32[::1], float32[::1])"))


@simt.kernel
def big_tile(out):
    s = simt.shared.array(4096, np.float32)
    t = simt.shared.array(64, np.float32)
    i = threadIdx.x
    s[i] = 1.0
    t[i] = 2.0
    simt.syncthreads()
    out[i] = s[63 - i] + t[63 - i]


def test_arrays_too_large_to_shadow_are_named_in_a_warning():
    """16 bytes of shadow per element must fit in 48 KB of static shared memory with the
    arrays: the largest ones are left out, and a CompileWarning says so."""
    with pytest.warns(simt.CompileWarning, match="shared array\\(s\\) 's' too large to shadow"):
        text = ptx(big_tile, F32)
    assert "simt_check_w0[512]" in text and "simt_check_w1" not in text     # t: 64 x 8


@simt.kernel
def named_barrier(out):
    i = threadIdx.x
    simt.barrier_sync(1, 64)
    out[i] = 1.0


def test_named_and_tile_barriers_are_refused_with_checks_on_gpus():
    with pytest.raises(simt.NotSupportedError, match=r"(?s)named barriers.*'named_barrier'.*"
                                                     r"test_gpu_checked.py:\d+.*'cpu', checks=True"):
        ptx(named_barrier, F32)
    with pytest.raises(simt.NotSupportedError, match="tile barriers"):
        ptx(planted.tile_barriers, "void(int32[::1])")


def test_without_checks_no_checked_code_is_emitted(monkeypatch):
    """checks=False is the unchecked GPU path as it was: no function of checked.py runs
    (they are the only source of the checks), and the PTX has none of its names."""
    from simt.backends.cuda import checked

    def called(*args, **kwargs):
        raise AssertionError("checked.py reached by an unchecked compile")
    for name in ("Plan", "check_access", "barrier", "prologue", "returned", "ended", "settle"):
        monkeypatch.setattr(checked, name, called)
    for kernel, sig in [(planted.race_shared, F32), (planted.diverge_if, F32),
                        (early_exit, "void(float32[::1], float32[::1])"),
                        (count_positive, "void(float32[::1], int32[::1])"),
                        (transpose_tile, "void(float32[:, ::1], float32[:, ::1])")]:
        for boundscheck in (False, True):
            text = simt.kernel(boundscheck=boundscheck)(kernel.pyfunc).inspect_ptx(sig)
            assert "simt_check" not in text and "barrier.sync" not in text


# ---------------------------------------------------------------- clean kernels
@simt.kernel
def tree_sum(x, out):
    s = simt.shared.array(128, np.float32)
    i = threadIdx.x
    s[i] = x[blockIdx.x * 128 + i]
    simt.syncthreads()
    step = 64
    while step > 0:
        if i < step:
            s[i] += s[i + step]
        simt.syncthreads()
        step //= 2
    if i == 0:
        out[blockIdx.x] = s[0]


@simt.kernel
def transpose_tile(m, out):
    tile = simt.shared.array((16, 17), np.float32)
    x, y = threadIdx.x, threadIdx.y
    tile[y, x] = m[blockIdx.y * 16 + y, blockIdx.x * 16 + x]
    simt.syncthreads()
    out[blockIdx.x * 16 + y, blockIdx.y * 16 + x] = tile[x, y]


@simt.kernel
def early_exit(a, out):
    s = simt.shared.array(64, np.float32)
    i = threadIdx.x
    if i >= 48:
        return                                  # excused from the barrier below
    s[i] = a[i]
    simt.syncthreads()
    out[i] = s[47 - i]


@simt.kernel
def count_positive(a, out):
    i = threadIdx.x
    out[i] = simt.syncthreads_count(a[i] > 0)


@simt.kernel
def histogram(v, out):
    h = simt.shared.array(8, np.int32)
    i = threadIdx.x
    if i < 8:
        h[i] = 0
    simt.syncthreads()
    simt.atomic.add(h, v[i] % 8, 1)
    simt.syncthreads()
    if i < 8:
        out[i] = h[i]


def test_clean_kernels_compile_with_checks():
    for kernel, sig in [(tree_sum, "void(float32[::1], float32[::1])"),
                        (transpose_tile, "void(float32[:, ::1], float32[:, ::1])"),
                        (early_exit, "void(float32[::1], float32[::1])"),
                        (count_positive, "void(float32[::1], int32[::1])"),
                        (histogram, "void(int32[::1], int32[::1])")]:
        assert 9 in recorded_codes(ptx(kernel, sig))


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_checked_ptx_assembles(tmp_path):
    """ptxas takes the checked PTX (barrier.sync, 64-bit shared atomics, the record)."""
    for kernel, sig in [(planted.race_shared, F32), (planted.uninit_shared, F32),
                        (planted.diverge_return, F32),
                        (planted.fixed_in_warp, "void(int32[::1])"),
                        (own_lane_missing, "void(int32[::1])"),
                        (transpose_tile, "void(float32[:, ::1], float32[:, ::1])"),
                        (histogram, "void(int32[::1], int32[::1])")]:
        path = tmp_path / f"{kernel.__name__}.ptx"
        path.write_text(ptx(kernel, sig))
        subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "out.cubin")],
                       check=True, capture_output=True)


# ---------------------------------------------------------------- on a GPU
@pytest.fixture
def gpu(device):
    if device.kind != "cuda":
        pytest.skip("checked mode on a GPU: run with --device cuda:0")
    with simt.use_device(device.name, checks=True) as checked:
        yield checked


def _report(spec, kernel, grid, block, make):
    with simt.use_device(spec, checks=True):
        args = make()
        with pytest.raises(simt.LaunchError) as info:
            kernel[grid, block](*args)
            simt.synchronize()
    return info.value


def _same_report(gpu, kernel, grid, block, make):
    """The GPU's report of ``kernel`` and the CPU device's, of one class and kernel."""
    mine, cpu = (_report(spec, kernel, grid, block, make) for spec in (gpu.name, "cpu"))
    assert type(mine) is type(cpu), (str(mine), str(cpu))
    assert mine.kernel == cpu.kernel == kernel.__name__
    return mine, cpu


def _out(n, dtype=np.float32):
    return simt.to_device(poison(n, dtype))


@pytest.mark.parametrize("kernel, make", [
    (planted.oob_global, lambda: (planted.ones(32), _out(32))),
    (planted.oob_shared, lambda: (_out(32),)),
    (planted.uninit_shared, lambda: (_out(32),)),
], ids=["global", "shared", "uninitialized-shared"])
def test_one_thread_bugs_read_as_on_the_cpu(gpu, kernel, make):
    """One thread fails: the GPU names it, its line and the element as the CPU does."""
    mine, cpu = _same_report(gpu, kernel, 1, 32, make)
    assert str(mine) == str(cpu)
    assert (mine.block, mine.thread, mine.line) == (cpu.block, cpu.thread, cpu.line)


def test_every_thread_out_of_bounds_reads_as_on_the_cpu_but_the_thread(gpu):
    """Every thread fails: which one the GPU names is the first to record."""
    make = lambda: (simt.to_device(np.ones((32, 5), np.float32)), _out(32))   # noqa: E731
    mine, cpu = _same_report(gpu, planted.oob_2d, 1, 32, make)
    assert mine.line == cpu.line and mine.block == cpu.block
    assert "index 5 is outside dimension 1 (size 5) of 'm'" in str(mine)
    thread = f"thread {mine.thread}"
    assert str(mine) == str(cpu).replace(f"thread {cpu.thread}", thread)


def test_race_between_lanes_of_one_warp_and_syncwarp(gpu):
    mine, cpu = _same_report(gpu, planted.race_in_warp, 1, 32, lambda: (_out(1, np.int32),))
    assert mine.line == mine.other.line == cpu.line and mine.array == "s"
    out = _out(1, np.int32)
    planted.fixed_in_warp[1, 32](out)
    simt.synchronize()
    assert out.copy_to_host()[0] == sum(range(32))


def test_a_mask_without_the_callers_lane_reads_as_on_the_cpu(gpu):
    mine, cpu = _same_report(gpu, own_lane_missing, 1, 32, lambda: (_out(32, np.int32),))
    assert mine.line == cpu.line and mine.mask == cpu.mask == 0x0000FFFF
    lane = mine.thread[0]
    assert 16 <= lane < 32 and f"does not name its own lane {lane}" in str(mine)


def test_uninitialized_local_arrays(gpu, rng):
    host = random_array(rng, 4, np.float32)
    make = lambda: (simt.to_device(host), _out(4))         # noqa: E731
    for bad in (planted.local_unwritten, planted.local_unwritten_barrier):
        mine, cpu = _same_report(gpu, bad, 1, 4, make)
        assert mine.line == cpu.line
        if bad is planted.local_unwritten:
            assert mine.thread != (0, 0, 0)            # thread 0 wrote its own
        assert "a[" in str(mine) and "which nothing wrote" in str(mine)
    data, out = make()
    planted.local_written[1, 4](data, out)
    simt.synchronize()
    np.testing.assert_allclose(out.copy_to_host(), (host[0] + host[3]) * np.arange(4), rtol=1e-6)
    planted.local_written_barrier[1, 4](data, out)
    simt.synchronize()
    np.testing.assert_allclose(out.copy_to_host(), 3 * host, rtol=1e-6)


def test_shared_race_names_both_lines(gpu):
    mine, cpu = _same_report(gpu, planted.race_shared, 1, 64, lambda: (_out(64),))
    assert {mine.line, mine.other.line} == {cpu.line, cpu.other.line}
    assert mine.array == "s" and mine.other.block == mine.block == (0, 0, 0)
    # the first pair each device meets: lanes of one warp race too (no syncwarp between)
    assert mine.other.thread != mine.thread
    assert f"test_checked.py:{cpu.other.line}" in str(mine)


@pytest.mark.parametrize("kernel, missing", [
    (planted.diverge_if, 16), (planted.diverge_break, 0), (planted.diverge_return, 16)],
    ids=["if", "break", "return-then-continue"])
def test_barrier_divergence_names_the_missing_thread(gpu, kernel, missing):
    mine, cpu = _same_report(gpu, kernel, 1, 32, lambda: (_out(32),))
    assert mine.line == cpu.line
    assert mine.other.thread == cpu.other.thread == (missing, 0, 0)
    assert f"thread ({missing}, 0, 0), which has not returned" in str(mine)


def test_clean_kernels_run_clean_with_numpy_results(gpu, rng):
    x = random_array(rng, 4 * 128, np.float32)
    out = _out(4)
    tree_sum[4, 128](simt.to_device(x), out)
    np.testing.assert_allclose(out.copy_to_host(), x.reshape(4, 128).sum(1), rtol=1e-5)

    m = random_array(rng, (32, 48), np.float32)
    t = simt.to_device(poison((48, 32), np.float32))
    transpose_tile[(3, 2), (16, 16)](simt.to_device(m), t)
    np.testing.assert_array_equal(t.copy_to_host(), m.T)

    a = random_array(rng, 64, np.float32)
    out = _out(64)
    early_exit[1, 64](simt.to_device(a), out)
    expected = poison(64, np.float32)
    expected[:48] = a[47::-1]
    np.testing.assert_array_equal(out.copy_to_host(), expected)

    counts = _out(64, np.int32)
    count_positive[1, 64](simt.to_device(a), counts)
    np.testing.assert_array_equal(counts.copy_to_host(), np.full(64, (a > 0).sum()))

    v = np.abs(random_array(rng, 256, np.int32))
    h = _out(8, np.int32)
    histogram[1, 256](simt.to_device(v), h)
    np.testing.assert_array_equal(h.copy_to_host(), np.bincount(v % 8, minlength=8))

    lanes = _out(32, np.int32)
    planted.syncwarp_exited[1, 32](lanes)         # lane 31 returned: its syncwarp is excused
    expected = poison(32, np.int32)
    expected[:31] = 30
    np.testing.assert_array_equal(lanes.copy_to_host(), expected)

    out = _out(64)
    planted.fixed_shared[1, 64](out)
    planted.fixed_barrier[1, 32](_out(32))
    simt.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), (np.arange(64) + 1) % 64)


def test_the_gpu_stays_usable_after_a_report(gpu, rng):
    with pytest.raises(simt.BarrierDivergenceError):
        planted.diverge_if[1, 32](_out(32))
        simt.synchronize()
    x = random_array(rng, 128, np.float32)
    out = _out(1)
    tree_sum[1, 128](simt.to_device(x), out)
    np.testing.assert_allclose(out.copy_to_host(), [x.sum()], rtol=1e-5)
