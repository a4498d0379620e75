"""Atomics, complete (issue 15 item 5): scopes and orders on every atomic, 16-bit
compare-and-swap, float16 add, inc/dec wrap-around, ordered loads and stores passing
messages between blocks, volatile accesses; and the PTX each makes (docs/atomics.md)."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.compiler.writes import written_params
from simt.ir import types as T
from conftest import poison

N = 64


@simt.kernel
def scoped_adds(slots, vals, olds):
    """Row 0 of slots takes device- and system-scope atomics from every block; row 1 + b
    the block-scope ones of block b (a block-scope atomic is atomic only within a block)."""
    i = simt.grid(1)
    row = 1 + simt.blockIdx.x
    v = vals[i]
    olds[0, i] = simt.atomic.add(slots, (row, 0), v, scope="block")
    olds[1, i] = simt.atomic.add(slots, (0, 1), v, scope="device", order="acq_rel")
    olds[2, i] = simt.atomic.add(slots, (0, 2), v, scope="system", order="seq_cst")
    olds[3, i] = simt.atomic.sub(slots, (0, 3), v, scope="system", order="release")
    olds[4, i] = simt.atomic.max(slots, (row, 4), v, scope="block", order="acquire")
    olds[5, i] = simt.atomic.exch(slots, (0, 5), v, scope="system")
    olds[6, i] = simt.atomic.xor(slots, (row, 6), v, scope="block", order="seq_cst")


@pytest.mark.parametrize("dtype", [np.uint32, np.int64], ids=lambda d: d.__name__)
def test_every_scope_and_order_counts(device, rng, dtype):
    vals = rng.integers(1, 1000, N).astype(dtype)
    init = rng.integers(1000, 2000, (3, 7)).astype(dtype)
    slots, olds = init.copy(), poison((7, N), dtype)
    with np.errstate(over="ignore"):
        scoped_adds[2, 32](slots, vals, olds)
        total = vals.sum(dtype=dtype)
        np.testing.assert_array_equal(slots[0, 1:4], [init[0, 1] + total, init[0, 2] + total,
                                                      init[0, 3] - total])
        for b in range(2):
            mine = vals[32 * b:32 * (b + 1)]
            assert slots[1 + b, 0] == init[1 + b, 0] + mine.sum(dtype=dtype)
            assert slots[1 + b, 4] == max(init[1 + b, 4], mine.max())
            assert slots[1 + b, 6] == init[1 + b, 6] ^ np.bitwise_xor.reduce(mine)
    assert sorted(np.append(olds[5], slots[0, 5])) == sorted(np.append(vals, init[0, 5]))
    for k in (1, 2):            # each add saw a distinct prefix sum: the olds are a chain
        chain = np.append(np.sort(olds[k]), slots[0, k])
        assert chain[0] == init[0, k]
        np.testing.assert_array_equal(np.sort(np.diff(chain)), np.sort(vals))


@simt.kernel
def inc_dec(slots, limits, olds):
    i = simt.grid(1)
    for k in range(slots.shape[0] // 2):
        olds[k, i] = simt.atomic.inc(slots, k, limits[k], scope="block")
        olds[k + 4, i] = simt.atomic.dec(slots, k + 4, limits[k], scope="system")


def _inc(old, limit):
    return 0 if old >= limit else old + 1


def _dec(old, limit):
    return limit if old == 0 or old > limit else old - 1


def test_inc_dec_wrap_as_cuda(device, rng):
    limits = rng.integers(3, 20, 4).astype(np.uint32)
    limits[3] = 0xFFFFFFFF                       # inc never wraps, dec wraps at 0 only
    starts = rng.integers(0, 40, 8).astype(np.uint32)   # some above their limit
    starts[4] = 0
    slots, olds = starts.copy(), poison((8, N), np.uint32)
    inc_dec[1, N](slots, limits, olds)        # block scope: one block
    for k in range(8):
        step, limit = (_inc, _dec)[k // 4], int(limits[k % 4])
        seen, value = [], int(starts[k])
        for _ in range(N):
            seen.append(value)
            value = step(value, limit)
        assert slots[k] == value, k
        assert sorted(olds[k].tolist()) == sorted(seen), k


@simt.kernel
def cas16_count(slots, olds):
    i = simt.grid(1)
    old = slots[0]
    while True:
        seen = simt.atomic.cas(slots, 0, old, old + 1, scope="device", order="acq_rel")
        if seen == old:
            break
        old = seen
    olds[i] = seen
    olds[N + i] = simt.atomic.cas(slots, 1, 0, i + 1, scope="block")


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.float16], ids=lambda d: d.__name__)
def test_16_bit_compare_and_swap(device, rng, dtype):
    start = dtype(rng.integers(1, 100))
    slots, olds = np.array([start, 0, 77], dtype), poison(2 * N, dtype)
    cas16_count[1, N](slots, olds)
    np.testing.assert_array_equal(np.sort(olds[:N]), start + np.arange(N, dtype=dtype))
    assert slots[0] == start + N and slots[2] == 77          # the neighbour is untouched
    winner = np.flatnonzero(olds[N:] == 0)
    assert len(winner) == 1 and slots[1] == winner[0] + 1


@simt.kernel
def half_add(slots, vals, olds):
    i = simt.grid(1)
    olds[i] = simt.atomic.add(slots, i % 2, vals[i])
    simt.atomic.add(slots, 2, vals[i], scope="block")


def test_float16_add(device, rng):
    vals = rng.integers(-8, 9, N).astype(np.float16)      # every partial sum exact in float16
    init = rng.integers(-50, 50, 3).astype(np.float16)
    slots, olds = init.copy(), poison(N, np.float16)
    half_add[1, N](slots, vals, olds)
    np.testing.assert_array_equal(slots, init + np.array([vals[0::2].sum(), vals[1::2].sum(),
                                                          vals.sum()], np.float16))
    assert not np.isnan(olds).any()


@simt.kernel
def last_block_sum(vals, partial, count, out):
    """The guide's B.5 pattern: each block publishes a partial sum, then takes a ticket;
    the last block to arrive reads every partial (acquire) and writes the total."""
    s = simt.shared.array(1, np.int64)
    i = simt.grid(1)
    if simt.threadIdx.x == 0:
        s[0] = 0
    simt.syncthreads()
    simt.atomic.add(s, 0, vals[i], scope="block")
    simt.syncthreads()
    if simt.threadIdx.x == 0:
        simt.atomic.store(partial, simt.blockIdx.x, s[0], order="release")
        ticket = simt.atomic.add(count, 0, 1, order="acq_rel")
        if ticket == simt.gridDim.x - 1:
            total = 0
            for b in range(simt.gridDim.x):
                total += simt.atomic.load(partial, b, order="acquire")
            out[0] = total
            simt.atomic.store(count, 0, 0, order="relaxed", scope="system")


@simt.kernel
def message_pass(data, flags, payload, seen):
    """Block b writes its payload, then releases its flag; it then looks (acquire) at
    block b-1's flag and, if it is up, reads block b-1's payload."""
    b = simt.blockIdx.x
    t = simt.threadIdx.x
    data[b, t] = payload[b, t]
    simt.syncthreads()
    if t == 0:
        simt.atomic.store(flags, b, 1, order="release", scope="device")
    prev = (b + simt.gridDim.x - 1) % simt.gridDim.x
    up = simt.atomic.load(flags, prev, order="acquire")
    seen[0, b, t] = up
    seen[1, b, t] = simt.volatile_load(data, (prev, t)) if up == 1 else -1


def test_release_acquire_between_blocks(device, rng):
    if device.kind == "sim":
        pytest.skip("blocks that wait for each other's releases: the sim device runs one "
                    "block at a time, and its race check does not know release/acquire")
    blocks = 8
    vals = rng.integers(-100, 100, blocks * 32).astype(np.int64)
    partial, count, out = poison(blocks, np.int64), np.zeros(1, np.uint32), poison(1, np.int64)
    last_block_sum[blocks, 32](vals, partial, count, out)
    assert out[0] == vals.sum() and count[0] == 0
    np.testing.assert_array_equal(partial, vals.reshape(blocks, 32).sum(axis=1))
    payload = rng.integers(1, 1 << 30, (blocks, 32)).astype(np.int32)
    data, flags, seen = poison((blocks, 32), np.int32), np.zeros(blocks, np.int32), \
        poison((2, blocks, 32), np.int32)
    message_pass[blocks, 32](data, flags, payload, seen)
    np.testing.assert_array_equal(data, payload)
    assert (flags == 1).all() and set(np.unique(seen[0]).tolist()) <= {0, 1}
    up = seen[0] == 1
    np.testing.assert_array_equal(seen[1][up], np.roll(payload, 1, axis=0)[up])


@simt.kernel
def volatile_copy(src, dst, flags):
    i = simt.grid(1)
    simt.volatile_store(dst, i, simt.volatile_load(src, i) * 2)
    simt.volatile_store(flags, i, src[i] > 0)
    if simt.volatile_load(flags, i):
        simt.atomic.store(dst, i, simt.atomic.load(dst, i, order="seq_cst") + 1, order="seq_cst")


def test_volatile_and_seq_cst_accesses(device, rng):
    src = rng.standard_normal(N).astype(np.float32)
    dst, flags = poison(N, np.float32), poison(N, np.bool_)
    volatile_copy[2, 32](src, dst, flags)
    np.testing.assert_array_equal(flags, src > 0)
    np.testing.assert_array_equal(dst, np.where(src > 0, src * 2 + 1, src * 2))


# ------------------------------------------------------------------ PTX (no GPU needed)
PTX_KERNELS = [
    (scoped_adds, "void(uint32[:, ::1], uint32[::1], uint32[:, ::1])"),
    (cas16_count, "void(int16[::1], int16[::1])"),
    (half_add, "void(float16[::1], float16[::1], float16[::1])"),
    (inc_dec, "void(uint32[::1], uint32[::1], uint32[:, ::1])"),
    (last_block_sum, "void(int64[::1], int64[::1], uint32[::1], int64[::1])"),
    (volatile_copy, "void(float32[::1], float32[::1], bool[::1])"),
]


@pytest.fixture(scope="module")
def ptx():
    return {k.__name__: k.inspect_ptx(sig) for k, sig in PTX_KERNELS}


def test_ptx_has_the_scoped_and_ordered_instructions(ptx):
    adds = ptx["scoped_adds"]
    for instruction in ("atom.cta.global.add.u32", "atom.acq_rel.gpu.global.add.u32",
                        "atom.acquire.sys.global.add.u32", "atom.release.sys.global.add.u32",
                        "atom.acquire.cta.global.max.u32", "atom.sys.global.exch.b32",
                        "atom.acquire.cta.global.xor.b32"):
        assert instruction in adds, instruction
    assert re.search(r"fence\.sc\.sys;\s*atom\.acquire\.sys\.global\.add\.u32", adds)
    assert re.search(r"fence\.sc\.cta;\s*atom\.acquire\.cta\.global\.xor\.b32", adds)
    assert "atom.acq_rel.gpu.global.cas.b16" in ptx["cas16_count"]
    assert "atom.cta.global.cas.b16" in ptx["cas16_count"]
    assert "atom.global.add.noftz.f16" in ptx["half_add"]
    assert "atom.cta.global.add.noftz.f16" in ptx["half_add"]
    assert "atom.cta.global.inc.u32" in ptx["inc_dec"]
    assert "atom.sys.global.dec.u32" in ptx["inc_dec"]
    last = ptx["last_block_sum"]
    for instruction in ("st.release.gpu.global.b64", "atom.acq_rel.gpu.global.add.u32",
                        "ld.acquire.gpu.global.b64", "st.relaxed.sys.global.b32"):
        assert instruction in last, instruction
    copy = ptx["volatile_copy"]
    for instruction in ("ld.volatile.global.b32", "st.volatile.global.b32",
                        "st.volatile.global.b8", "ld.volatile.global.b8"):
        assert instruction in copy, instruction
    assert re.search(r"fence\.sc\.gpu;\s*ld\.acquire\.gpu\.global\.b32", copy)
    assert re.search(r"fence\.sc\.gpu;\s*st\.release\.gpu\.global\.b32", copy)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptxas_accepts_the_inline_atomics(ptx, tmp_path):
    for name, text in ptx.items():
        path = tmp_path / f"{name}.ptx"
        path.write_text(text)
        done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                              capture_output=True, text=True)
        assert done.returncode == 0, (name, done.stderr)


# ------------------------------------------------------------------ errors and bookkeeping
@simt.kernel
def bad_scope(a):
    simt.atomic.add(a, 0, 1, scope="warp")


@simt.kernel
def bad_load_order(a):
    a[1] = simt.atomic.load(a, 0, order="release")


@simt.kernel
def bad_keyword(a):
    simt.atomic.store(a, 0, 1, ordering="release")


@simt.kernel
def complex_volatile(a):
    simt.volatile_store(a, 0, 1j)


@pytest.mark.parametrize("kernel, dtype, message", [
    (bad_scope, np.int32, r"simt.atomic.add: scope='warp' is not one of 'block', 'device', "
                          r"'system'"),
    (bad_load_order, np.int32, r"order='release' is not one of 'relaxed', 'acquire', 'seq_cst'"),
    (bad_keyword, np.int32, r"simt.atomic.store got an unexpected keyword 'ordering'"),
    (complex_volatile, np.complex64, r"simt.volatile_store is not available for complex64"),
])
def test_bad_arguments_are_compile_errors(kernel, dtype, message):
    with pytest.raises(simt.CompileError, match=message):
        kernel.typed_ir([T.Array(np.dtype(dtype), 1, "C")])


def test_ordered_and_volatile_stores_are_writes():
    writes = written_params(message_pass.typed_ir(
        [T.Array(np.dtype(np.int32), 2, "C"), T.Array(np.dtype(np.int32), 1, "C"),
         T.Array(np.dtype(np.int32), 2, "C"), T.Array(np.dtype(np.int32), 3, "C")]))
    assert sorted(writes) == [0, 1, 3]             # payload is only read
    writes = written_params(volatile_copy.typed_ir(
        [T.Array(np.dtype(d), 1, "C") for d in (np.float32, np.float32, np.bool_)]))
    assert sorted(writes) == [1, 2]
