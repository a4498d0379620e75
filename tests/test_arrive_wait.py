"""Arrive/wait barriers (lang/barrier.py): split arrive and wait with work between, phases
reused in a loop, arrive_and_drop, the mbarrier PTX, and a wait that could never return."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.ir import types as T
from conftest import poison, random_array


@simt.kernel
def neighbours(a, out, rounds):
    """Each round every thread writes its value, arrives, does independent work, waits, then
    reads its neighbour's value: the barrier's phase is reused every round."""
    buf = simt.shared.array(64, np.float32)
    bar = simt.shared.barrier(simt.blockDim.x)
    t = simt.threadIdx.x
    x = a[simt.blockIdx.x * 64 + t]
    for r in range(rounds):
        buf[t] = x
        token = bar.arrive()
        y = x * np.float32(0.5)                  # work that needs no other thread
        bar.wait(token)
        x = y + buf[(t + 1) % 64]
        bar.arrive_and_wait()                    # every read done before the next writes
    out[simt.blockIdx.x * 64 + t] = x


def test_split_arrive_wait_in_a_loop(device, rng):
    a = random_array(rng, 128, np.float32)
    out = poison(128, np.float32)
    neighbours[2, 64](a, out, 3)
    x = a.reshape(2, 64).astype(np.float32)
    for _ in range(3):
        x = x * np.float32(0.5) + np.roll(x, -1, axis=1)
    np.testing.assert_allclose(out, x.reshape(-1), rtol=1e-6)


@simt.kernel
def drop_half(a, out):
    """Threads 32..63 leave after the first phase; the rest keep phasing with 32 arrivals."""
    buf = simt.shared.array(64, np.int32)
    bar = simt.shared.barrier(64)
    t = simt.threadIdx.x
    buf[t] = a[t]
    if t >= 32:
        bar.arrive_and_drop()
    else:
        bar.arrive_and_wait()
        total = 0
        for i in range(64):
            total += buf[i]
        bar.arrive_and_wait()                    # a phase of the 32 left
        buf[t] = total + t
        bar.arrive_and_wait()
        out[t] = buf[31 - t]


def test_arrive_and_drop(device, rng):
    a = random_array(rng, 64, np.int32)
    out = poison(32, np.int32)
    drop_half[1, 64](a, out)
    np.testing.assert_array_equal(out, a.sum() + np.arange(31, -1, -1))


@simt.kernel
def too_few(out):
    bar = simt.shared.barrier(simt.blockDim.x + 1)
    bar.arrive_and_wait()
    out[simt.threadIdx.x] = 1


def test_a_wait_that_never_completes_is_an_error_on_the_cpu():
    with simt.use_device("cpu"), pytest.raises(simt.LaunchError, match="never completes"):
        too_few[1, 32](np.zeros(32, np.int32))


@simt.device
def add_up(smem, acc, phases):
    """The guide's completion function: one thread a phase sums the block's shared values."""
    total = 0
    for i in range(smem.shape[0]):
        total += smem[i]
    acc[simt.blockIdx.x] += total
    phases[simt.blockIdx.x] += 1


@simt.kernel
def psum(data, acc, phases):
    """B.23's example: each phase the block writes 64 values, arrives, and the completion
    (run once, by the last to arrive, before anyone waits past it) adds them up."""
    smem = simt.shared.array(64, np.int64)
    bar = simt.shared.barrier(simt.blockDim.x, add_up, smem, acc, phases)
    t = simt.threadIdx.x
    base = simt.blockIdx.x * data.shape[1]
    for i in range(0, data.shape[1], 64):
        smem[t] = data[simt.blockIdx.x, i + t]
        token = bar.arrive()
        bar.wait(token)                  # smem is free again: the completion has read it


def test_a_completion_function_runs_once_a_phase(device, rng):
    data = random_array(rng, (3, 640), np.int64)
    acc = np.zeros(3, np.int64)
    phases = np.zeros(3, np.int64)
    psum[3, 64](data, acc, phases)
    np.testing.assert_array_equal(acc, data.sum(axis=1))
    np.testing.assert_array_equal(phases, [10, 10, 10])


@simt.device
def mark(log, counts):
    log[counts[0]] = counts[1]
    counts[0] += 1


@simt.kernel
def drop_with_completion(out, log, counts):
    """Half the block leaves in the first phase: each later phase completes with 32."""
    bar = simt.shared.barrier(64, mark, log, counts)
    t = simt.threadIdx.x
    if t >= 32:
        bar.arrive_and_drop()
        return
    for r in range(3):
        bar.arrive_and_wait()
        if t == 0:
            counts[1] += 10
        bar.arrive_and_wait()
    out[t] = counts[1]


def test_arrive_and_drop_with_a_completion_function(device):
    out = poison(32, np.int64)
    log = np.full(8, -1, np.int64)
    counts = np.zeros(2, np.int64)
    drop_with_completion[1, 64](out, log, counts)
    np.testing.assert_array_equal(out, np.full(32, 30))
    np.testing.assert_array_equal(log, [0, 10, 10, 20, 20, 30, -1, -1])   # 6 phases


@simt.kernel
def copy_then_double(a, out):
    """memcpy_async tied to a barrier: the tile is in shared memory once the phase the
    copies belong to has completed."""
    tile = simt.shared.array(256, np.float32)
    bar = simt.shared.barrier(simt.blockDim.x)
    t = simt.threadIdx.x
    base = simt.blockIdx.x * 256
    simt.memcpy_async(tile, t * 4, a, base + t * 4, 4, bar)
    bar.wait(bar.arrive())
    for k in range(4):
        out[base + t * 4 + k] = tile[(t * 4 + k + 128) % 256] * np.float32(2)


def test_memcpy_async_completes_with_a_barriers_phase(device, rng):
    a = random_array(rng, 1024, np.float32)
    out = poison(1024, np.float32)
    copy_then_double[4, 64](a, out)
    expected = np.roll(a.reshape(4, 256), -128, axis=1).reshape(-1) * np.float32(2)
    np.testing.assert_array_equal(out, expected)


def test_memcpy_async_refuses_a_completion_barrier():
    @simt.kernel
    def both(a, acc, phases):
        smem = simt.shared.array(64, np.int64)
        bar = simt.shared.barrier(64, add_up, smem, acc, phases)
        simt.memcpy_async(smem, 0, a, 0, 64, bar)
    with pytest.raises(simt.CompileError, match="completion function is not offered yet"):
        both[1, 64](np.zeros(64, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64))


@pytest.fixture(scope="module")
def barrier_ptx():
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions
    out = {}
    for kernel, sig in ((neighbours, "(float32[::1], float32[::1], int32)"),
                        (drop_half, "(int32[::1], int32[::1])"),
                        (psum, "(int64[:, ::1], int64[::1], int64[::1])"),
                        (copy_then_double, "(float32[::1], float32[::1])")):
        fn = kernel.typed_ir(T.parse_signature(sig))
        out[kernel.__name__] = compile_kernel(fn, CompileOptions(), "sm_90").ptx
    return out


def test_ptx_has_the_mbarrier_instructions(barrier_ptx):
    text = barrier_ptx["neighbours"]
    assert "mbarrier.init.shared.b64" in text
    assert re.search(r"mbarrier\.arrive\.shared\.b64\s+%rd\d+, \[", text)
    assert "mbarrier.try_wait.shared.b64" in text
    assert text.count("bar.sync") == 1            # the declaration's; waits are not barriers
    assert "mbarrier.arrive_drop.shared.b64" in barrier_ptx["drop_half"]
    completion = barrier_ptx["psum"]
    assert "mbarrier.try_wait.parity.shared.b64" in completion
    assert re.search(r"atom(\.acq_rel)?\.cta\.shared(::cta)?\.add\.u64|atom\.shared\.add\.u64",
                     completion), completion
    assert "cp.async.mbarrier.arrive.shared.b64" in barrier_ptx["copy_then_double"]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptxas_accepts_the_barriers(barrier_ptx, tmp_path):
    for name, text in barrier_ptx.items():
        path = tmp_path / f"{name}.ptx"
        path.write_text(text)
        done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                              capture_output=True, text=True)
        assert done.returncode == 0, (name, done.stderr)


@simt.device
def _arrive_and_count(bar, counts):
    bar.wait(bar.arrive())
    simt.atomic.add(counts, 0, 1)


@simt.kernel
def barriers_through_device_functions(counts, out):
    first = simt.shared.barrier(simt.blockDim.x)
    second = simt.shared.barrier(simt.blockDim.x)
    _arrive_and_count(first, counts)
    _arrive_and_count(second, counts)
    _arrive_and_count(first, counts)             # the first barrier's second phase
    simt.syncthreads()
    out[simt.threadIdx.x] = counts[0]


def test_a_barrier_passed_to_a_device_function_is_the_kernels(device):
    """The device function arrives on the kernel's barrier itself (on a GPU a copy of the
    storage would be another, uninitialized mbarrier), in every launch of two kernels."""
    for threads in (64, 96):
        counts = simt.to_device(np.zeros(1, np.int32))
        out = simt.to_device(np.full(threads, -1, np.int32))
        barriers_through_device_functions[1, threads](counts, out)
        assert counts.copy_to_host()[0] == 3 * threads
        assert (out.copy_to_host() == 3 * threads).all()
