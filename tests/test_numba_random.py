"""``cuda.random`` (issue 36 item 3): numba-cuda's xoroshiro128+ generators give numba's
states and numbers for a seed, on every device. The reference below is numba-cuda's
documented algorithm written out sequentially on Python ints (SplitMix64 seeding, one
jump of 2**64 steps per thread), plus values numba's own CUDA simulator printed."""
import math

import numpy as np
import pytest

from simt import cuda
from simt.cuda.random import (xoroshiro128p_uniform_float32, xoroshiro128p_uniform_float64,
                              xoroshiro128p_normal_float32, xoroshiro128p_normal_float64)

M64 = (1 << 64) - 1


def ref_next(s):
    """One step on a [s0, s1] list of Python ints; the uint64 drawn."""
    s0, s1 = s
    out = (s0 + s1) & M64
    s1 ^= s0
    s[0] = (((s0 << 55) | (s0 >> 9)) & M64) ^ s1 ^ ((s1 << 14) & M64)
    s[1] = ((s1 << 36) | (s1 >> 28)) & M64
    return out


def ref_states(n, seed, subsequence_start=0):
    z = (seed + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    z ^= z >> 31
    state, out = [z, z], []

    def jump():
        acc = [0, 0]
        for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
            for b in range(64):
                if word >> b & 1:
                    acc[0] ^= state[0]
                    acc[1] ^= state[1]
                ref_next(state)
        state[:] = acc

    for _ in range(subsequence_start):
        jump()
    for i in range(n):
        if i:
            jump()
        out.append(list(state))
    return out


def as_pairs(states):
    host = states.copy_to_host()
    return [[int(a), int(b)] for a, b in zip(host["s0"], host["s1"])]


@pytest.mark.parametrize("n, seed, start", [(10, 1, 0), (37, 12345, 3), (5, M64, 0),
                                            (1, 0, 0)])
def test_states_are_numbas(n, seed, start):
    states = cuda.random.create_xoroshiro128p_states(n, seed=seed, subsequence_start=start)
    assert states.dtype == cuda.random.xoroshiro128p_dtype and states.shape == (n,)
    assert as_pairs(states) == ref_states(n, seed, start)


def test_states_printed_by_numbas_simulator():
    # numba 0.68.1, NUMBA_ENABLE_CUDASIM=1: create_xoroshiro128p_states(3, seed=1)
    assert as_pairs(cuda.random.create_xoroshiro128p_states(3, seed=1)) == [
        [0x910a2dec89025cc1, 0x910a2dec89025cc1], [0x73c19a5348fc9098, 0x6c96c932f21d71ee],
        [0x0b3d0cd6ddfa7a4c, 0xd3c2c33e9b8e707a]]


def test_init_and_subsequence_start_shift_the_streams():
    states = cuda.device_array(8, dtype=cuda.random.xoroshiro128p_dtype)
    cuda.random.init_xoroshiro128p_states(states, 99, subsequence_start=2)
    shifted = as_pairs(cuda.random.create_xoroshiro128p_states(10, seed=99))
    assert as_pairs(states) == shifted[2:]


@cuda.jit
def draw_all(states, u32, u64, n32, n64):
    i = cuda.grid(1)
    if i < states.shape[0]:
        for j in range(u32.shape[1]):
            u32[i, j] = xoroshiro128p_uniform_float32(states, i)
            u64[i, j] = xoroshiro128p_uniform_float64(states, i)
            n32[i, j] = xoroshiro128p_normal_float32(states, i)
            n64[i, j] = xoroshiro128p_normal_float64(states, i)


def unit64(x):
    return (x >> 11) * (1.0 / (1 << 53))


def ref_draws(n, draws, seed):
    out = [np.zeros((n, draws), np.float32), np.zeros((n, draws)),
           np.zeros((n, draws), np.float32), np.zeros((n, draws))]
    for i, s in enumerate(ref_states(n, seed)):
        for j in range(draws):
            out[0][i, j] = np.float32(unit64(ref_next(s)))
            out[1][i, j] = unit64(ref_next(s))
            u1, u2 = np.float32(unit64(ref_next(s))), np.float32(unit64(ref_next(s)))
            out[2][i, j] = math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
            u1, u2 = np.float32(unit64(ref_next(s))), np.float32(unit64(ref_next(s)))
            out[3][i, j] = math.sqrt(-2 * np.log(u1)) * math.cos(2 * math.pi * np.float64(u2))
    return out


def test_draws_are_numbas(device):
    n, draws, seed = 40, 6, 42
    states = cuda.random.create_xoroshiro128p_states(n, seed=seed)
    outs = [np.full((n, draws), np.nan, np.float32), np.full((n, draws), np.nan),
            np.full((n, draws), np.nan, np.float32), np.full((n, draws), np.nan)]
    draw_all[2, 32](states, *outs)
    u32, u64, n32, n64 = ref_draws(n, draws, seed)
    np.testing.assert_array_equal(outs[0], u32)          # uniforms: bit for bit
    np.testing.assert_array_equal(outs[1], u64)
    np.testing.assert_allclose(outs[2], n32, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[3], n64, rtol=1e-6, atol=1e-7)   # log in float32
    # numba 0.68.1's simulator, seed 42: the first two draws of state 0
    assert outs[0][0, 0] == np.float32(0.4831297695636749)
    assert outs[1][0, 0] == 0.29246399390385114
    assert all(as_pairs(states)[i] != ref_states(n, seed)[i] for i in range(n))


@cuda.jit
def compute_pi(rng_states, iterations, out):
    thread_id = cuda.grid(1)
    inside = 0
    for i in range(iterations):
        x = xoroshiro128p_uniform_float32(rng_states, thread_id)
        y = xoroshiro128p_uniform_float32(rng_states, thread_id)
        if x ** 2 + y ** 2 <= 1.0:
            inside += 1
    out[thread_id] = 4.0 * inside / iterations


def test_numba_docs_compute_pi():
    """numba-cuda's "Random Number Generation" page, as written there."""
    rng_states = cuda.random.create_xoroshiro128p_states(64 * 4, seed=1)
    out = np.full(64 * 4, np.nan, dtype=np.float32)
    compute_pi[4, 64](rng_states, 2000, out)
    assert abs(out.mean() - math.pi) < 0.01


def test_two_million_states_are_quick():
    import time
    started = time.perf_counter()
    host = cuda.random.states_on_host(1 << 21, seed=1)
    assert time.perf_counter() - started < 30
    assert [int(host["s0"][5]), int(host["s1"][5])] == ref_states(6, 1)[5]
    assert len(np.unique(host["s0"][:4096])) == 4096


def test_draws_are_numbas_on_the_sim_device():
    """The generators' states are records: the sim device draws numba's numbers too."""
    import simt
    with simt.use_device("sim") as sim:
        test_draws_are_numbas(sim)
