"""numba-cuda's ``cuda.random``: xoroshiro128+ generators, one state per thread.

The same algorithm, seeding and per-thread streams as numba-cuda's (its user guide,
"Random Number Generation"): SplitMix64 turns the seed into state 0 (both words set to
its output, as numba does), state i is state i - 1 advanced by the jump of 2**64 steps,
``subsequence_start`` jumps state 0 that many times first. A given seed therefore gives
numba's numbers, thread for thread. Quirks kept for that reason: ``uniform_float32``
rounds the float64 value to float32 (1.0 is possible), and ``normal_float64`` draws
its two uniforms as float32 and takes their log in float32.

Host side: where numba advances the states one after the other, this module treats the
jump as what it is, a linear map over the 128 state bits (GF(2)), and computes state
``i`` as J**i applied to state 0 for all i at once with NumPy (by doubling: the states
[k, 2k) are J**k of the states [0, k)), so 2 million states take a fraction of a second.
"""
import math

import numpy as np

from ..runtime.kernel import device as _device
from .arrays import device_array

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
xoroshiro128p_type = xoroshiro128p_dtype      # numba's type of a state: simt types by dtype

_MASK64 = (1 << 64) - 1
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)   # xoroshiro128+'s 2**64-step polynomial
_TWO_PI_F32 = np.float32(2 * math.pi)
_TWO_PI_F64 = np.float64(2 * math.pi)
_MINUS_TWO_F32 = np.float32(-2.0)
_MINUS_TWO_F64 = np.float64(-2.0)
_UNIT_F64 = np.float64(1.0 / (1 << 53))


# ----------------------------------------------------------------- device functions
@_device
def xoroshiro128p_next(states, index):
    """The next uint64 of generator ``states[index]``, which advances one step."""
    s0 = states[index]["s0"]
    s1 = states[index]["s1"]
    result = s0 + s1
    s1 ^= s0
    states[index]["s0"] = ((s0 << 55) | (s0 >> 9)) ^ s1 ^ (s1 << 14)
    states[index]["s1"] = (s1 << 36) | (s1 >> 28)
    return result


@_device
def uint64_to_unit_float64(x):
    """A uint64 as a float64 in [0, 1): its top 53 bits."""
    return (x >> 11) * _UNIT_F64


@_device
def uint64_to_unit_float32(x):
    """uint64_to_unit_float64 rounded to float32 (as numba: 1.0 is possible)."""
    return np.float32(uint64_to_unit_float64(x))


@_device
def xoroshiro128p_uniform_float32(states, index):
    """A float32 uniform on [0, 1) from generator ``states[index]`` (one step)."""
    return uint64_to_unit_float32(xoroshiro128p_next(states, index))


@_device
def xoroshiro128p_uniform_float64(states, index):
    """A float64 uniform on [0, 1) from generator ``states[index]`` (one step)."""
    return uint64_to_unit_float64(xoroshiro128p_next(states, index))


@_device
def xoroshiro128p_normal_float32(states, index):
    """A float32 from the standard normal distribution (Box-Muller, the first of the
    pair; two steps of ``states[index]``)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(_MINUS_TWO_F32 * math.log(u1)) * math.cos(_TWO_PI_F32 * u2)


@_device
def xoroshiro128p_normal_float64(states, index):
    """A float64 from the standard normal distribution (Box-Muller on two float32
    uniforms, as numba-cuda does; two steps of ``states[index]``)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(_MINUS_TWO_F64 * math.log(u1)) * math.cos(_TWO_PI_F64 * u2)


# ----------------------------------------------------------------- one state, in Python
def splitmix64(seed):
    """The state (s0, s1) numba makes from ``seed``: SplitMix64's first output, twice."""
    z = (int(seed) + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    z ^= z >> 31
    return z, z


def _step(s0, s1):
    """One step of xoroshiro128+ on Python ints (the state only)."""
    s1 ^= s0
    s0 = (((s0 << 55) | (s0 >> 9)) & _MASK64) ^ s1 ^ ((s1 << 14) & _MASK64)
    s1 = ((s1 << 36) | (s1 >> 28)) & _MASK64
    return s0, s1


def jump(s0, s1):
    """The state 2**64 steps after (s0, s1) (xoroshiro128+'s jump function)."""
    out0 = out1 = 0
    for word in _JUMP:
        for bit in range(64):
            if word >> bit & 1:
                out0 ^= s0
                out1 ^= s1
            s0, s1 = _step(s0, s1)
    return out0, out1


# ----------------------------------------------------------------- many states, in NumPy
class _Linear:
    """A linear map of 128-bit states: ``columns`` (lo and hi words, uint64[128]) are the
    images of the unit states (bits 0-63 are s0, 64-127 s1); applied to arrays of states
    through 16 tables of 256 entries, one per byte of the state."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi
        values = np.arange(256, dtype=np.uint64)
        self.tables = []
        for byte in range(16):
            t_lo = np.zeros(256, np.uint64)
            t_hi = np.zeros(256, np.uint64)
            for bit in range(8):
                has = (values >> np.uint64(bit)) & np.uint64(1) == 1
                t_lo[has] ^= lo[8 * byte + bit]
                t_hi[has] ^= hi[8 * byte + bit]
            self.tables.append((t_lo, t_hi))

    def __call__(self, s0, s1):
        out0, out1 = np.zeros_like(s0), np.zeros_like(s1)
        for byte, (t_lo, t_hi) in enumerate(self.tables):
            word = s0 if byte < 8 else s1
            index = (word >> np.uint64(8 * (byte % 8))) & np.uint64(0xFF)
            out0 ^= t_lo[index]
            out1 ^= t_hi[index]
        return out0, out1

    def then(self, other):
        """The map ``other(self(x))``."""
        return _Linear(*other(self.lo, self.hi))


_jump_map = None


def _the_jump():
    global _jump_map
    if _jump_map is None:
        units = [(1 << b, 0) if b < 64 else (0, 1 << (b - 64)) for b in range(128)]
        images = [jump(s0, s1) for s0, s1 in units]
        _jump_map = _Linear(np.array([i[0] for i in images], np.uint64),
                            np.array([i[1] for i in images], np.uint64))
    return _jump_map


def _jumped(s0, s1, times):
    """(s0, s1) after ``times`` jumps: J**times by squaring."""
    s0, s1 = np.array([s0], np.uint64), np.array([s1], np.uint64)
    power = _the_jump()
    while times:
        if times & 1:
            s0, s1 = power(s0, s1)
        times >>= 1
        if times:
            power = power.then(power)
    return int(s0[0]), int(s1[0])


def states_on_host(n, seed, subsequence_start=0):
    """numba's n generator states for ``seed`` as a NumPy array of xoroshiro128p_dtype."""
    states = np.empty(n, dtype=xoroshiro128p_dtype)
    if n == 0:
        return states
    first = _jumped(*splitmix64(int(seed) & _MASK64), int(subsequence_start) & _MASK64)
    s0, s1 = np.empty(n, np.uint64), np.empty(n, np.uint64)
    s0[0], s1[0] = first
    done, power = 1, _the_jump()
    while done < n:                           # states [done, 2 done) from [0, done)
        count = min(done, n - done)
        s0[done:done + count], s1[done:done + count] = power(s0[:count], s1[:count])
        done += count
        if done < n:
            power = power.then(power)
    states["s0"], states["s1"] = s0, s1
    return states


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Fill the device array ``states`` (xoroshiro128p_dtype) with numba's generators
    for ``seed``: state i is 2**64 * (subsequence_start + i) steps into the sequence."""
    states.copy_to_device(states_on_host(states.shape[0], seed, subsequence_start),
                          stream=stream)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A new device array of ``n`` generators for ``seed``, as numba-cuda's: thread i
    draws from ``states`` at index i with the xoroshiro128p_* functions."""
    states = device_array(n, dtype=xoroshiro128p_dtype, stream=stream)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states
