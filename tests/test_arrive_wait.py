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


@pytest.fixture(scope="module")
def barrier_ptx():
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions
    out = {}
    for kernel, sig in ((neighbours, "(float32[::1], float32[::1], int32)"),
                        (drop_half, "(int32[::1], int32[::1])")):
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


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptxas_accepts_the_barriers(barrier_ptx, tmp_path):
    for name, text in barrier_ptx.items():
        path = tmp_path / f"{name}.ptx"
        path.write_text(text)
        done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                              capture_output=True, text=True)
        assert done.returncode == 0, (name, done.stderr)
