"""Warp specialisation through arrive/wait barriers (the guide's B.23.6 producer/consumer
pattern): warp 0 fills a ring of shared stages (simt.tma.copy after arrive_expect_tx, or
memcpy_async then arrive), the other warps wait on each stage's full barrier, compute, and
arrive on its empty barrier. The waits are in different branches, so each side must make
progress on its own: the sim device runs it (against NumPy, under several seeds), and so
does the CPU device (its warps run as fibers there: tests/test_cpu_warps_wait.py). Also on
the sim: a phase that can never complete is a LaunchError naming the wait's line, for wait
and for a try_wait spin loop, and a consumer that does not wait is a race."""
import inspect

import numpy as np
import pytest

import simt
from conftest import poison, random_array

TILE, STAGES, CONSUMERS = 64, 2, 2          # a tile per step: one element per consumer thread


@simt.device
def tma_fill(full, tiles, stage, a, step):
    full.arrive_expect_tx(TILE * 4)
    simt.tma.copy(tiles[stage * TILE:], a[step * TILE:], TILE * 4, full)


@simt.device
def async_fill(full, tiles, stage, a, step):
    simt.memcpy_async(tiles, stage * TILE, a, step * TILE, TILE, full)
    full.arrive()


def _ring(fill, consumers_wait=True):
    @simt.kernel
    def ring(a, out, steps):
        tiles = simt.shared.array(STAGES * TILE, np.float32)
        full0 = simt.shared.barrier(1)
        full1 = simt.shared.barrier(1)
        empty0 = simt.shared.barrier(TILE)
        empty1 = simt.shared.barrier(TILE)
        t = simt.threadIdx.x
        if t < 32:                                   # warp 0: the producer
            if t == 0:
                for step in range(steps):
                    parity = (step // STAGES) % 2    # the first lap passes at once
                    if step % STAGES == 0:
                        empty0.wait_parity(parity ^ 1)
                        fill(full0, tiles, 0, a, step)
                    else:
                        empty1.wait_parity(parity ^ 1)
                        fill(full1, tiles, 1, a, step)
        else:                                        # warps 1..CONSUMERS: the consumers
            c = t - 32
            acc = np.float32(0)
            for step in range(steps):
                parity = (step // STAGES) % 2
                stage = step % STAGES
                if consumers_wait:
                    if stage == 0:
                        full0.wait_parity(parity)
                    else:
                        full1.wait_parity(parity)
                acc += tiles[stage * TILE + c] * np.float32(step + 1)
                if stage == 0:
                    empty0.arrive()
                else:
                    empty1.arrive()
            out[c] = acc
    return ring


def _expected(a, steps):
    weights = np.arange(1, steps + 1, dtype=np.float32)[:, None]
    return (a.reshape(steps, TILE) * weights).sum(axis=0, dtype=np.float32)


RINGS = {"tma": _ring(tma_fill), "memcpy_async": _ring(async_fill)}


@pytest.mark.parametrize("copy", RINGS)
def test_producer_and_consumer_warps_on_the_sim(copy, rng):
    steps = 7
    a = random_array(rng, steps * TILE, np.float32)
    for seed in (0, 1, 2):
        out = poison(TILE, np.float32)
        with simt.use_device("sim", seed=seed):
            RINGS[copy][1, 32 * (1 + CONSUMERS)](a, out, steps)
        np.testing.assert_allclose(out, _expected(a, steps), rtol=1e-5)


@pytest.mark.parametrize("copy", RINGS)
@pytest.mark.parametrize("blocks", [1, 4])
def test_producer_and_consumer_warps_on_the_cpu(copy, blocks, rng):
    """The CPU device runs such a kernel's warps as fibers: a wait lets the other warps run
    (docs/cpu-device.md); several blocks run on the worker team at once."""
    steps = 7
    a = random_array(rng, steps * TILE, np.float32)
    out = poison(TILE, np.float32)
    with simt.use_device("cpu"):
        RINGS[copy][blocks, 32 * (1 + CONSUMERS)](a, out, steps)
    # a sum of 7 products, contracted to fmas: cancellation near 0 needs an atol
    np.testing.assert_allclose(out, _expected(a, steps), rtol=1e-5, atol=1e-5)


def _line(kernel, text):
    lines, start = inspect.getsourcelines(kernel.pyfunc)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_a_consumer_that_does_not_wait_is_a_race(rng):
    a = random_array(rng, 4 * TILE, np.float32)
    for seed in (0, 3):
        with simt.use_device("sim", seed=seed), pytest.raises(
                simt.RaceConditionError, match=r"(write and read|read and write) of tiles\["):
            _ring(tma_fill, consumers_wait=False)[1, 96](a, poison(TILE, np.float32), 4)


@simt.kernel
def too_few(out):
    bar = simt.shared.barrier(simt.blockDim.x + 1)
    bar.arrive_and_wait()
    out[simt.threadIdx.x] = 1


@simt.kernel
def spin_too_few(out):
    bar = simt.shared.barrier(simt.blockDim.x + 1)
    token = bar.arrive()
    while not bar.try_wait(token):
        pass
    out[simt.threadIdx.x] = 1


@pytest.mark.parametrize("kernel, text", [(too_few, "bar.arrive_and_wait()"),
                                          (spin_too_few, "bar.try_wait(token)")])
def test_a_phase_that_never_completes_is_an_error_on_the_sim(kernel, text):
    """Every thread still running waits and none can arrive: a LaunchError at the wait's
    line, never a hang (a try_wait spin loop gets False once, then the same error)."""
    with simt.use_device("sim"), pytest.raises(simt.LaunchError,
                                               match="never completes") as info:
        kernel[1, 32](np.zeros(32, np.int32))
    assert info.value.line == _line(kernel, text)
    assert text in str(info.value)


@simt.kernel
def spin_until_written(a, out):
    """The last thread writes the buffer before it arrives; the others arrive first and
    spin on try_wait (on the sim device each try_wait yields until the phase completes)."""
    buf = simt.shared.array(64, np.float32)
    bar = simt.shared.barrier(simt.blockDim.x)
    t = simt.threadIdx.x
    if t == simt.blockDim.x - 1:
        for i in range(64):
            buf[i] = a[i] * np.float32(2)
    token = bar.arrive()
    while not bar.try_wait(token):
        pass
    out[t] = buf[63 - t]


def test_try_wait_in_a_spin_loop_makes_progress(device, rng):
    a = random_array(rng, 64, np.float32)
    out = poison(64, np.float32)
    spin_until_written[1, 64](a, out)
    np.testing.assert_array_equal(out, (a * np.float32(2))[::-1])
