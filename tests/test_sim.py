"""The sim device: seeds change the order of threads, print and breakpoint() work in
kernels, a kernel gives the CPU device's results (fidelity), and planted bugs are
reported with their class and lines while their fixed twins and the traps a naive
checker would flag run clean."""
import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import simt
from simt.errors import (BarrierDivergenceError, DeviceAssertError, IllegalAddressError,
                         NotSupportedError, RaceConditionError, UninitializedReadError)
from conftest import poison, random_array

SIM = "sim"


def line_of(fn, marker):
    """The file line of the source line of ``fn`` holding ``# marker``."""
    lines, first = inspect.getsourcelines(fn.pyfunc if hasattr(fn, "pyfunc") else fn)
    return first + next(i for i, text in enumerate(lines) if f"# {marker}" in text)


# ---------------------------------------------------------------- seeds

@simt.kernel
def take_tickets(order, counter):
    t = simt.threadIdx.x
    ticket = simt.atomic.add(counter, 0, 1)
    order[ticket] = t


def _tickets(**options):
    order, counter = poison(64, np.int32), np.zeros(1, np.int32)
    with simt.use_device(SIM, **options):
        take_tickets[1, 64](order, counter)
    assert sorted(order) == list(range(64))
    return tuple(order)


def test_seed_zero_runs_threads_in_order_and_seeds_shuffle_them():
    assert _tickets() == tuple(range(64))
    shuffled = {_tickets(seed=s) for s in (1, 2, 3)}
    assert len(shuffled) == 3 and tuple(range(64)) not in shuffled
    assert _tickets(seed=2) == _tickets(seed=2)            # deterministic


def test_simt_sim_seed_is_the_default(monkeypatch):
    monkeypatch.setattr(simt.config.config, "sim_seed", 2)
    assert _tickets() == _tickets(seed=2) != tuple(range(64))


def test_seed_is_refused_on_other_devices():
    with pytest.raises(ValueError, match="no option seed"):
        simt.set_device("cpu", seed=1)


@simt.kernel
def first_wins(winner, counter):
    if simt.atomic.add(counter, 0, 1) == 0:         # the first thread to arrive
        winner[0] = simt.threadIdx.x + simt.blockIdx.x * simt.blockDim.x


def test_an_order_dependent_result_shows_in_a_few_seeds():
    seen = set()
    for seed in range(4):
        winner, counter = poison(1, np.int32), np.zeros(1, np.int32)
        with simt.use_device(SIM, seed=seed):
            first_wins[4, 32](winner, counter)
        seen.add(int(winner[0]))
    assert len(seen) > 1 and 0 in seen


# ---------------------------------------------------------------- print and pdb

@simt.kernel
def say(a):
    t = simt.threadIdx.x
    if t < 2:
        print("thread", t, "has", a[t])


def test_print_writes_each_threads_line(capfd):
    with simt.use_device(SIM):
        say[1, 4](np.array([1.5, 2.5, 0, 0]))
    assert capfd.readouterr().out == "thread 0 has 1.5\nthread 1 has 2.5\n"


PDB_SCRIPT = textwrap.dedent("""\
    import numpy as np
    import simt

    @simt.kernel
    def scale(a, factor):
        i = simt.blockIdx.x * simt.blockDim.x + simt.threadIdx.x
        x = a[i] * factor
        if i == 5:
            breakpoint()
        a[i] = x

    a = np.arange(8, dtype=np.float32)
    with simt.use_device("sim"):
        scale[2, 4](a, np.float32(2))
    print("done", a[5])
    """)


def test_breakpoint_stops_in_pdb_at_the_users_line(tmp_path):
    script = tmp_path / "debugged.py"
    script.write_text(PDB_SCRIPT)
    commands = "p i, x\np threadIdx.x, blockIdx.x\nx = 99.0\nc\n"
    env = dict(os.environ, PYTHONBREAKPOINT="pdb.set_trace")
    result = subprocess.run([sys.executable, str(script)], input=commands, capture_output=True,
                            text=True, env=env, timeout=120)
    out = result.stdout
    assert f"{script}(10)scale()" in out and "-> a[i] = x" in out, out + result.stderr
    assert "(5, 10.0)" in out and "(1, 1)" in out
    assert "done 99.0" in out                     # pdb changed the thread's variable


def test_breakpoint_is_refused_on_the_cpu_device():
    @simt.kernel
    def stop(a):
        breakpoint()
    with simt.use_device("cpu"), pytest.raises(NotSupportedError, match="only on the sim"):
        stop[1, 1](np.zeros(1))


# ---------------------------------------------------------------- fidelity with the CPU

def _on(device, kernel, config, *arrays):
    copies = [a.copy() for a in arrays]
    with simt.use_device(device):
        kernel[config](*copies)
    return copies


@simt.kernel
def arithmetic(x, y, out):
    i = simt.threadIdx.x
    a, b = x[i], y[i]
    out[i, 0] = a + b
    out[i, 1] = (a - b) * b                         # no a * b + c: the CPU may fuse it
    out[i, 2] = a // b
    out[i, 3] = a % b
    out[i, 4] = min(a, b) + max(a, b)
    out[i, 5] = a * a * a * a


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "uint32", "int64",
                                   "uint64", "float32", "float64"])
def test_arithmetic_matches_the_cpu_device(rng, dtype):
    x = random_array(rng, 32, dtype)
    y = random_array(rng, 32, dtype)
    if np.dtype(dtype).kind in "iu":
        x[:4] = np.iinfo(dtype).max                  # products that wrap
    out = poison((32, 6), dtype)
    sim, cpu = (_on(d, arithmetic, (1, 32), x, y, out)[2] for d in (SIM, "cpu"))
    np.testing.assert_array_equal(sim, cpu)


@simt.kernel
def conversions(x, i32, u8, f32):
    i = simt.threadIdx.x
    i32[i] = np.int32(x[i])                          # saturates, NaN gives 0
    u8[i] = np.uint8(np.int64(x[i]))                 # wraps
    f32[i] = np.float32(x[i]) / np.float32(3)


def test_conversions_match_the_cpu_device(rng):
    x = random_array(rng, 32, np.float64) * 1e3
    x[:4] = [np.nan, np.inf, -1e20, 3e9]
    outs = [poison(32, np.int32), poison(32, np.uint8), poison(32, np.float32)]
    sim = _on(SIM, conversions, (1, 32), x, *outs)
    cpu = _on("cpu", conversions, (1, 32), x, *outs)
    for s, c in zip(sim[1:], cpu[1:]):
        np.testing.assert_array_equal(s, c)


@simt.kernel
def block_sum(a, out):
    s = simt.shared.array(64, np.float32)
    t = simt.threadIdx.x
    s[t] = a[simt.blockIdx.x * 64 + t]
    simt.syncthreads()
    k = 32
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        simt.syncthreads()
        k //= 2
    if t == 0:
        out[simt.blockIdx.x] = s[0]


def test_shared_reduction_matches_the_cpu_device(rng):
    a = random_array(rng, 256, np.float32)
    sim, cpu = (_on(d, block_sum, (4, 64), a, poison(4, np.float32))[1] for d in (SIM, "cpu"))
    np.testing.assert_array_equal(sim, cpu)
    np.testing.assert_allclose(sim, a.reshape(4, 64).sum(1), rtol=1e-5)


@simt.kernel
def shift_then_swap(out, a, first):
    """Assigns its parameter, then waits at a barrier (a thread's function is a generator)."""
    first += simt.blockIdx.x * simt.blockDim.x
    t = simt.threadIdx.x
    s = simt.shared.array(64, np.float32)
    s[t] = a[first + t]
    simt.syncthreads()
    out[first + t] = s[63 - t]


def test_a_kernel_assigning_its_parameter_reads_the_launchs_value(rng):
    a = random_array(rng, 256, np.float32)
    results = []
    for device in (SIM, "cpu"):
        out = poison(256, np.float32)
        with simt.use_device(device):
            shift_then_swap[4, 64](out, a, 0)
        results.append(out)
    sim, cpu = results
    np.testing.assert_array_equal(sim, cpu)
    np.testing.assert_array_equal(sim, a.reshape(4, 64)[:, ::-1].ravel())


@simt.kernel
def warp_work(a, out):
    t = simt.threadIdx.x
    v = a[t]
    d = 16
    while d > 0:
        v += simt.shfl_down_sync(0xFFFFFFFF, v, d)
        d //= 2
    out[t, 0] = v
    out[t, 1] = simt.ballot_sync(0xFFFFFFFF, a[t] > 0)
    out[t, 2] = simt.shfl_xor_sync(0xFFFFFFFF, a[t], 3)
    out[t, 3] = simt.match_any_sync(0xFFFFFFFF, a[t] % 3)
    if t % 2 == 0:
        out[t, 4] = simt.activemask()
    else:
        out[t, 4] = simt.reduce_add_sync(0xAAAAAAAA, a[t])


def test_warp_functions_match_the_cpu_device(rng):
    a = random_array(rng, 64, np.int32)
    sim, cpu = (_on(d, warp_work, (1, 64), a, poison((64, 5), np.int32))[1]
                for d in (SIM, "cpu"))
    np.testing.assert_array_equal(sim, cpu)
    assert sim[0, 0] == a[:32].sum() and sim[0, 4] == 0x55555555


@simt.kernel
def histogram(values, bins):
    i = simt.blockIdx.x * simt.blockDim.x + simt.threadIdx.x
    if i < values.shape[0]:
        simt.atomic.add(bins, values[i] % 16, 1)
        simt.atomic.max(bins, 16, values[i])


def test_atomics_match_the_cpu_device(rng):
    values = rng.integers(0, 1000, 300).astype(np.int32)
    bins = np.zeros(17, np.int32)
    sim, cpu = (_on(d, histogram, (5, 64), values, bins)[1] for d in (SIM, "cpu"))
    np.testing.assert_array_equal(sim, cpu)
    assert sim[16] == values.max() and sim[:16].sum() == 300


# ---------------------------------------------------------------- planted bugs

@simt.kernel
def oob_global(a):
    a[simt.threadIdx.x + 1] = 1.0  # BUG


@simt.kernel
def oob_shared(out):
    s = simt.shared.array((4, 8), np.float32)
    t = simt.threadIdx.x
    s[t % 4, t] = 1.0  # BUG
    out[t] = 0.0


@simt.kernel
def oob_local(out):
    tmp = simt.local.array(4, np.int32)
    for k in range(5):
        tmp[k] = k  # BUG
    out[simt.threadIdx.x] = tmp[0]


@simt.kernel
def shared_race(out):
    s = simt.shared.array(32, np.int32)
    t = simt.threadIdx.x
    s[t] = t  # OTHER
    out[t] = s[(t + 1) % 32]  # BUG


@simt.kernel
def shared_race_fixed(out):
    s = simt.shared.array(32, np.int32)
    t = simt.threadIdx.x
    s[t] = t
    simt.syncthreads()
    out[t] = s[(t + 1) % 32]


@simt.kernel
def global_race_across_blocks(out):
    out[simt.threadIdx.x] = simt.blockIdx.x  # BUG


@simt.kernel
def warp_race(out):
    s = simt.shared.array(32, np.int32)
    t = simt.threadIdx.x
    s[t] = t  # OTHER
    out[t] = s[31 - t]  # BUG


@simt.kernel
def warp_synchronous_fixed(out):
    s = simt.shared.array(32, np.int32)
    t = simt.threadIdx.x
    s[t] = t
    simt.syncwarp()
    out[t] = s[31 - t]


@simt.kernel
def divergent_if(out):
    t = simt.threadIdx.x
    if t < 16:
        simt.syncthreads()  # BUG
    out[t] = t
    simt.syncthreads()  # OTHER


@simt.kernel
def divergent_break(out):
    t = simt.threadIdx.x
    for k in range(4):
        if k == 2 and t % 2 == 0:
            break
        simt.syncthreads()  # BUG
    out[t] = t
    simt.syncthreads()  # OTHER


@simt.kernel
def exited_before_barrier(a, out):
    s = simt.shared.array(64, np.float32)
    t = simt.threadIdx.x
    if t >= 48:
        return                                  # excused: it never comes back
    s[t] = a[t]
    simt.syncthreads()
    out[t] = s[47 - t]


@simt.kernel
def bad_mask(out):
    t = simt.threadIdx.x
    if t < 16:
        out[t] = simt.shfl_sync(0xFFFFFFFF, t, 0)  # BUG


@simt.kernel
def good_mask(out):
    t = simt.threadIdx.x
    if t < 16:
        out[t] = simt.shfl_sync(0x0000FFFF, t, 0)


@simt.kernel
def uninit_shared(out):
    s = simt.shared.array(32, np.int32)
    t = simt.threadIdx.x
    if t > 0:
        s[t] = t
    simt.syncthreads()
    out[t] = s[0]  # BUG


@simt.kernel
def uninit_global(a, out):
    out[simt.threadIdx.x] = a[simt.threadIdx.x]  # BUG


@simt.kernel
def traps(a, counter, out):
    s = simt.shared.array(64, np.int32)
    t = simt.threadIdx.x
    simt.atomic.add(counter, 0, 1)              # atomics order each other
    s[t] = a[t]
    simt.syncthreads()                          # a barrier between write and read
    v = s[63 - t]
    simt.syncthreads()
    if t < 32:                                  # disjoint halves
        s[t] = v
    else:
        s[t] = -v
    simt.syncthreads()
    out[t] = s[t] + counter[0] * 0


@simt.kernel
def failing_assert(a):
    t = simt.threadIdx.x
    assert a[t] > 0, "a must be positive"  # BUG


def _launch(kernel, grid, block, *args):
    with simt.use_device(SIM):
        kernel[grid, block](*args)
        simt.synchronize()


BUGS = [
    (oob_global, 1, 32, lambda: [np.zeros(32, np.float32)], IllegalAddressError,
     "index 32 is outside dimension 0 \\(size 32\\) of 'a'"),
    (oob_shared, 1, 32, lambda: [np.zeros(32, np.float32)], IllegalAddressError,
     "index 8 is outside dimension 1 \\(size 8\\)"),
    (oob_local, 1, 4, lambda: [np.zeros(4, np.int32)], IllegalAddressError,
     "index 4 is outside dimension 0 \\(size 4\\)"),
    (shared_race, 1, 32, lambda: [np.zeros(32, np.int32)], RaceConditionError,
     "read and write of s\\[1\\]"),
    (global_race_across_blocks, 2, 32, lambda: [np.zeros(32, np.int32)], RaceConditionError,
     "(?s)write and write of out\\[0\\].*different blocks"),
    (warp_race, 1, 32, lambda: [np.zeros(32, np.int32)], RaceConditionError,
     "read and write of s\\[16\\]"),
    (divergent_if, 1, 32, lambda: [np.zeros(32, np.int32)], BarrierDivergenceError,
     "wait at different barriers"),
    (divergent_break, 1, 32, lambda: [np.zeros(32, np.int32)], BarrierDivergenceError,
     "wait at different barriers"),
    (bad_mask, 1, 32, lambda: [np.zeros(32, np.int32)], BarrierDivergenceError,
     "(?s)mask names a lane that does not take part.*thread \\(16, 0, 0\\), which has exited"),
    (uninit_shared, 1, 32, lambda: [np.zeros(32, np.int32)], UninitializedReadError,
     "s\\[0\\] is read before anything wrote it"),
    (uninit_global, 1, 32, lambda: [simt.device_array(32, np.float32, device=SIM),
                                    np.zeros(32, np.float32)], UninitializedReadError,
     "a\\[0\\] is read"),
    (failing_assert, 1, 8, lambda: [np.array([1, 2, -1, 3, 4, 5, 6, 7], np.float32)],
     DeviceAssertError, "a must be positive"),
]


@pytest.mark.parametrize("kernel, grid, block, make, error, message", BUGS,
                         ids=[b[0].__name__ for b in BUGS])
def test_planted_bug_is_reported_at_its_line(kernel, grid, block, make, error, message):
    with pytest.raises(error, match=message) as info:
        _launch(kernel, grid, block, *make())
    err = info.value
    text = str(err)
    assert text.splitlines()[0].startswith(("Race condition in kernel", "Barrier divergence in",
                                            "Uninitialized read in", "out-of-bounds access",
                                            "assertion failed"))
    file = inspect.getsourcefile(kernel.pyfunc if hasattr(kernel, "pyfunc") else take_tickets)
    assert f"{file}:{line_of(kernel, 'BUG')}" in text
    if "OTHER" in inspect.getsource(kernel.pyfunc):
        assert f"{file}:{line_of(kernel, 'OTHER')}" in text
    if error in (RaceConditionError, BarrierDivergenceError):
        assert text.count("block (") >= 2 and text.count("thread (") >= 2
    with simt.use_device(SIM):                   # the device stays usable
        out = np.zeros(32, np.int32)
        shared_race_fixed[1, 32](out)
        assert list(out) == [(t + 1) % 32 for t in range(32)]


def test_fixed_twins_and_traps_run_clean(rng):
    out = poison(32, np.int32)
    for kernel in (shared_race_fixed, warp_synchronous_fixed, good_mask):
        out[:] = -1
        _launch(kernel, 1, 32, out)
    assert list(out[:16]) == [0] * 16
    a = random_array(rng, 64, np.float32)
    res = poison(64, np.float32)
    _launch(exited_before_barrier, 1, 64, a, res)
    np.testing.assert_array_equal(res[:48], a[:48][::-1])
    ints = random_array(rng, 64, np.int32)
    counter, res = np.zeros(1, np.int32), poison(64, np.int32)
    _launch(traps, 1, 64, ints, counter, res)
    expect = ints[::-1].copy()
    expect[32:] *= -1
    np.testing.assert_array_equal(res, expect)
    res32 = poison(32, np.float32)                # device memory a copy wrote
    _launch(uninit_global, 1, 32, simt.to_device(a[:32], device=SIM), res32)
    np.testing.assert_array_equal(res32, a[:32])


@simt.kernel
def block_offsets(out):
    base = (simt.blockIdx.y * simt.gridDim.x + simt.blockIdx.x) * simt.blockDim.x
    out[base + simt.threadIdx.x] = base - simt.blockDim.x * 3 + simt.threadIdx.x


def test_block_uniform_arithmetic_is_computed_once_per_block(rng):
    """Sums and products of blockIdx, blockDim, gridDim and constants move to the block
    function (the threads share them); the results are the CPU device's."""
    sig = "void(int32[::1])"
    with simt.use_device("sim"):
        assert "_k_u0 = " in block_offsets.compile(sig).binary.source
        out = poison(6 * 32, np.int32)
        block_offsets[(3, 2), 32](out)
    expected = np.arange(6 * 32, dtype=np.int32) - 96
    np.testing.assert_array_equal(out, expected)
