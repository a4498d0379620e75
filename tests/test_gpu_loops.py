"""Loop unrolling on NVIDIA GPUs (backends/cuda/loops.py): the PTX, made here without a
GPU, has the unrolled loops nvcc makes; and unrolled loops (remainders included) compute
the same as the Python loops on every device."""
import re

import numpy as np
import pytest

import simt
from simt.ir import types as T
from conftest import poison

TABLE_DATA = np.arange(20 * 7, dtype=np.float32).reshape(20, 7) / np.float32(7)
TABLE = simt.Constant(TABLE_DATA)


@simt.kernel
def histo(buf, out, end):
    temp = simt.shared.array(64, np.int32)
    temp[simt.threadIdx.x] = 0
    simt.syncthreads()
    for i in range(simt.threadIdx.x, end, 64):          # run-time trips, constant step
        simt.atomic.add(temp, buf[i], 1)
    simt.syncthreads()
    out[simt.threadIdx.x] = temp[simt.threadIdx.x]


@simt.kernel
def spheres(out):
    i = simt.grid(1)
    if i < out.shape[0]:
        x = np.float32(i)
        best = np.float32(0)
        for k in range(20):                               # constant trips, a long body
            d = x - TABLE[k, 4]
            r = TABLE[k, 3]
            if d * d < r * r + TABLE[k, 5]:
                t = (TABLE[k, 0] * d + TABLE[k, 1]) * r - TABLE[k, 2] * TABLE[k, 6]
                if t > best:
                    best = t
        out[i] = best


@simt.kernel
def with_barrier(out, n):
    s = simt.shared.array(32, np.float32)
    acc = np.float32(0)
    for k in range(n):
        s[simt.threadIdx.x] = np.float32(k)
        simt.syncthreads()
        acc += s[31 - simt.threadIdx.x]
        simt.syncthreads()
    out[simt.threadIdx.x] = acc


@simt.device
def take(mutex, i):
    # acquire: with relaxed atomics, as the book's lock.h, the H100 lost updates (67 of 192)
    while simt.atomic.cas(mutex, i, 0, 1, order="acquire") != 0:
        pass


@simt.kernel
def lanes_in_turn(mutex, out):
    tid = simt.grid(1)
    for i in range(32):                       # constant trips around a spin loop
        if tid % 32 == i:
            take(mutex, 0)
            out[0] += 1
            simt.atomic.exch(mutex, 0, 0, order="release")


def ptx(kernel, sig):
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions
    return compile_kernel(kernel.typed_ir(T.parse_signature(sig)), CompileOptions(), "sm_90")


def loop_body(text):
    """PTX of the last loop in ``text`` (from its last back-edge target to the branch)."""
    back = [m for m in re.finditer(r"@%p\d+ bra\s+(\$L__BB\d+_\d+);", text)
            if text.index(m.group(1) + ":") < m.start()]
    label = back[-1].group(1)
    return text[text.index(label + ":"):back[-1].end()]


def test_runtime_loop_unrolled_four_times():
    b = ptx(histo, "void(uint8[::1], int32[::1], int32)")
    assert "llvm.loop.unroll.count" in b.stages["llvm_ir"]
    assert loop_body(b.ptx).count("atom.shared.add") == 4
    assert loop_body(b.ptx).count("ld.global") == 4


def test_constant_loop_fully_unrolled():
    b = ptx(spheres, "void(float32[::1])")
    assert "llvm.loop.unroll.full" in b.stages["llvm_ir"]
    loads = re.findall(r"ld\.const\S*\s+\S+(?:, \S+)*\s*\[([^\]]+)\]", b.ptx)
    assert loads and all(re.fullmatch(r"simt_symbol_0(\+\d+)?", a) for a in loads), loads


def test_constant_loop_around_a_spin_loop_stays_rolled():
    """nvcc leaves it rolled; unrolled (fully, or 4 times as LLVM does by itself) the book's
    hash table took 62-68 ms against 54 rolled on the H100."""
    b = ptx(lanes_in_turn, "void(int32[::1], int32[::1])")
    assert "llvm.loop.unroll.disable" in b.stages["llvm_ir"]
    assert len(re.findall(r"atom\S*\.cas", b.ptx)) == 1
    assert "brx.idx" not in b.ptx


def test_lanes_in_turn_count_every_thread(device):
    out = simt.zeros(1, np.int32)
    lanes_in_turn[3, 64](simt.zeros(1, np.int32), out)
    assert out.copy_to_host()[0] == 3 * 64


def test_no_hint_on_loops_with_barriers():
    b = ptx(with_barrier, "void(float32[::1], int32)")
    assert "llvm.loop" not in b.stages["llvm_ir"]


@pytest.mark.parametrize("end", [0, 1, 63, 64 * 4 + 5, 64 * 7 + 3])
def test_unrolled_loops_compute_the_same(device, rng, end):
    buf = rng.integers(0, 64, 1000, dtype=np.uint8)
    out = simt.to_device(poison(64, np.int32))
    histo[1, 64](simt.to_device(buf), out, end)
    np.testing.assert_array_equal(out.copy_to_host(), np.bincount(buf[:end], minlength=64))
    res = simt.to_device(poison(100, np.float32))
    spheres[1, 128](res)
    tab = TABLE_DATA
    want = np.zeros(100, np.float32)
    for i in range(100):
        x = np.float32(i)
        for k in range(20):
            d = x - tab[k, 4]
            r = tab[k, 3]
            if d * d < r * r + tab[k, 5]:
                t = (tab[k, 0] * d + tab[k, 1]) * r - tab[k, 2] * tab[k, 6]
                want[i] = max(want[i], t)
    np.testing.assert_allclose(res.copy_to_host(), want, rtol=1e-5, atol=1e-5)


@simt.kernel
def grid_sum(a, out):
    acc = np.float32(0)
    for i in range(simt.grid(1), a.shape[0], simt.gridsize(1)):      # step known at run time
        acc += a[i]
    out[simt.grid(1)] = acc


@simt.kernel
def trips_of(starts, stops, steps, out):
    """How many times range(start, stop, step) runs, and the last value it took."""
    j = simt.grid(1)
    if j < out.shape[0]:
        count = np.int64(0)
        last = np.int64(-7)
        for i in range(starts[j], stops[j], steps[j]):
            count += 1
            last = i
        out[j, 0] = count
        out[j, 1] = last


def test_grid_stride_loop_unrolled_four_times():
    """A step known only at run time: the loop runs on a trip count computed before it,
    which LLVM unrolls as nvcc does (before, one load's latency per trip)."""
    b = ptx(grid_sum, "void(float32[::1], float32[::1])")
    assert "llvm.loop.unroll.count" in b.stages["llvm_ir"]
    text = b.ptx
    loops = [text[text.index(m.group(1) + ":"):m.end()]
             for m in re.finditer(r"@%p\d+ bra\s+(\$L__BB\d+_\d+);", text)
             if text.index(m.group(1) + ":") < m.start()]
    assert max(body.count("ld.global") for body in loops) == 4      # the main loop; then
    assert min(body.count("ld.global") for body in loops) == 1      # the remainder's


RANGES = [(0, 10, 3), (0, 9, 3), (10, 0, -3), (10, 1, -3), (5, 5, 1), (5, 4, 2), (4, 5, -2),
          (-7, 7, 2), (7, -7, -5), (0, 1, 1000), (3, 100, 1), (100, 3, -1)]
# ranges whose counter would step past int64's end after the last trip: the trip counter
# runs them as Python does; the plain lowering (counter < stop) is undefined there, as C is
EXTREMES = [(2**62, 2**63 - 1, 2**61), (-2**63, 2**63 - 1, 2**62), (2**63 - 1, -2**63, -2**62)]


@pytest.mark.parametrize("counted", [False, True])
def test_runtime_step_ranges_run_as_python_ranges(monkeypatch, device, counted):
    """Both lowerings of a run-time step (the GPU's trip counter, forced onto this device
    with ``counted``; the plain test of the counter) give Python's trips and last value,
    int64 extremes and negative steps included."""
    from simt.backends.cpu.target import CpuTarget
    from simt.backends.cuda.target import CudaTarget
    for target in (CpuTarget, CudaTarget):
        monkeypatch.setattr(target, "counted_range_loops", counted)
    ranges = RANGES + (EXTREMES if counted else [])
    starts, stops, steps = (np.array(col, np.int64) for col in zip(*ranges))
    out = simt.to_device(poison((len(ranges), 2), np.int64))
    kernel = simt.kernel(trips_of.pyfunc, cache=False)
    kernel[1, 32](simt.to_device(starts), simt.to_device(stops), simt.to_device(steps), out)
    want = np.array([(len(range(*r)), range(*r)[-1] if len(range(*r)) else -7) for r in ranges])
    np.testing.assert_array_equal(out.copy_to_host(), want)
