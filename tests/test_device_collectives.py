"""Barriers, warp functions and group collectives inside @simt.device functions.

The GPU runs them natively; the CPU device inlines such device functions into the kernel
before it splits the kernel into thread loops (backends/cpu/inline.py)."""

import numpy as np
import pytest

import simt
from simt import cg
from conftest import poison, random_array


@simt.device
def warp_reduce(v):
    offset = 16
    while offset > 0:
        v += simt.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    return v


@simt.kernel
def block_sum(a, out):
    partial = simt.shared.array(32, np.float64)
    t = simt.threadIdx.x
    v = warp_reduce(a[simt.grid(1)])
    if t % 32 == 0:
        partial[t // 32] = v
    simt.syncthreads()
    if t < 32:
        w = partial[t] if t < simt.blockDim.x // 32 else np.float64(0)
        w = warp_reduce(w)
        if t == 0:
            out[simt.blockIdx.x] = w


def test_warp_reduce_in_device_function(device, rng):
    a = random_array(rng, 4 * 256, np.float64)
    out = poison(4, np.float64)
    block_sum[4, 256](a, out)
    np.testing.assert_allclose(out, a.reshape(4, -1).sum(1), rtol=1e-12)


@simt.device
def tree_step(buf, stride):
    t = simt.threadIdx.x
    if t < stride:
        buf[t] += buf[t + stride]
    simt.syncthreads()


@simt.kernel
def tree_sum(a, out):
    buf = simt.shared.array(128, np.int32)
    t = simt.threadIdx.x
    buf[t] = a[simt.blockIdx.x * 128 + t]
    simt.syncthreads()
    stride = 64
    while stride > 0:
        tree_step(buf, stride)
        stride //= 2
    for k in range(2):                  # called in a range loop too: sums are already done
        tree_step(buf, 0)
    if t == 0:
        out[simt.blockIdx.x] = buf[0]


def test_shared_tree_step_called_in_a_loop(device, rng):
    a = random_array(rng, 3 * 128, np.int32)
    out = poison(3, np.int32)
    tree_sum[3, 128](a, out)
    np.testing.assert_array_equal(out, a.reshape(3, -1).sum(1))


@simt.device
def first_at_least(buf, n, key):
    simt.syncthreads()
    for k in range(n):
        if buf[k] >= key:
            return k
    return -1


@simt.kernel
def search(table, keys, out):
    buf = simt.shared.array(64, np.float32)
    t = simt.threadIdx.x
    buf[t] = table[t]
    out[t] = first_at_least(buf, 64, keys[t]) * 2 + 1


def test_early_return_in_loop(device, rng):
    table = np.sort(random_array(rng, 64, np.float32))
    keys = random_array(rng, 64, np.float32) * 2     # some above every entry: -1
    out = poison(64, np.int32)
    search[1, 64](table, keys, out)
    want = np.array([np.argmax(table >= k) if (table >= k).any() else -1 for k in keys])
    np.testing.assert_array_equal(out, want * 2 + 1)


@simt.device
def butterfly(v):
    for k in range(5):
        v += simt.shfl_xor_sync(0xFFFFFFFF, v, 16 >> k)
    return v


@simt.device
def lane_total(v):
    first = simt.shfl_sync(0xFFFFFFFF, v, 0)
    return butterfly(v) + first - first


@simt.device
def scaled_total(a, i, scale):
    s = lane_total(a[i]) * scale
    return s + simt.reduce_add_sync(0xFFFFFFFF, 1)


@simt.kernel
def nested(a, out):
    i = simt.grid(1)
    out[i] = a[i] + scaled_total(a, i, 2)


def test_nested_device_functions(device, rng):
    a = random_array(rng, 128, np.int32)
    out = poison(128, np.int32)
    nested[2, 64](a, out)
    warp = np.repeat(a.reshape(-1, 32).sum(1), 32)
    np.testing.assert_array_equal(out, a + warp * 2 + 32)


@simt.device
def tile_max(v):
    tile = cg.tiled_partition(cg.this_thread_block(), 16)
    best = cg.reduce(tile, v, cg.greater)
    tile.sync()
    return best


@simt.kernel
def tiles(a, out):
    i = simt.grid(1)
    out[i] = tile_max(a[i])


def test_cg_tile_reduce_in_device_function(device, rng):
    a = random_array(rng, 256, np.int32)
    out = poison(256, np.int32)
    tiles[2, 128](a, out)
    np.testing.assert_array_equal(out, np.repeat(a.reshape(-1, 16).max(1), 16))


@simt.device
def bump_and_sum(buf):
    t = simt.threadIdx.x
    simt.syncthreads()
    buf[t] += 1
    simt.syncthreads()
    return buf[(t + 1) % simt.blockDim.x]


@simt.kernel
def operand_order(a, out):
    buf = simt.shared.array(32, np.int32)
    t = simt.threadIdx.x
    buf[t] = a[t]
    # buf[t] is read before the call (Python's order), the call adds 1 to every element
    out[t] = buf[t] * 1000 + bump_and_sum(buf)


def test_operands_before_the_call_are_read_first(device, rng):
    a = random_array(rng, 32, np.int32)
    out = poison(32, np.int32)
    operand_order[1, 32](a, out)
    np.testing.assert_array_equal(out, a * 1000 + np.roll(a, -1) + 1)


@simt.kernel
def short_circuit(a, out):
    i = simt.grid(1)
    if a[i] > 0 and warp_reduce(a[i]) > 0:
        out[i] = 1


def test_call_in_short_circuit(device, rng):
    # a whole warp takes one side of the 'and' (a full-mask shuffle needs every lane there)
    a = np.repeat(rng.choice([-1.0, 1.0], size=4), 32).astype(np.float32)
    out = np.zeros(128, np.int32)
    short_circuit[1, 128](a, out)
    np.testing.assert_array_equal(out, a > 0)


@simt.device
def checked_step(buf, i):
    simt.syncthreads()
    return buf[i + 1]


@simt.kernel
def overrun(a, out):
    buf = simt.shared.array(32, np.float32)
    t = simt.threadIdx.x
    buf[t] = a[t]
    out[t] = checked_step(buf, t)


def test_errors_in_inlined_code_name_the_device_function():
    with simt.use_device("cpu"):
        with pytest.raises(simt.IllegalAddressError, match="device function 'checked_step'"):
            overrun[1, 32](np.ones(32, np.float32), np.zeros(32, np.float32))
