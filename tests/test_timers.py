"""simt.clock, clock64, globaltimer and nanosleep (guide B.13, B.21; lang/timers.py): the
counters increase across a loop, nanosleep sleeps about as long as asked, and the PTX
reads the right special registers."""
import re

import numpy as np

import simt
from simt.backends.cuda.compile import compile_kernel
from simt.compiler.options import CompileOptions
from simt.ir import types as T

STEPS = 8


@simt.kernel
def readings(cycles32, cycles, times):
    for i in range(STEPS):
        cycles32[i] = simt.clock()
        cycles[i] = simt.clock64()
        times[i] = simt.globaltimer()
        simt.nanosleep(2000)


@simt.kernel
def sleeper(ns, times):
    times[0] = simt.globaltimer()
    simt.nanosleep(ns)
    times[1] = simt.globaltimer()


def test_counters_increase_across_a_loop(device):
    cycles32 = np.zeros(STEPS, np.uint32)
    cycles = np.zeros(STEPS, np.int64)
    times = np.zeros(STEPS, np.uint64)
    readings[1, 1](cycles32, cycles, times)
    assert (np.diff(cycles) > 0).all()
    steps32 = np.diff(cycles32)                          # uint32 differences: wrap-safe
    assert ((steps32 > 0) & (steps32 < 2**31)).all()
    assert (np.diff(times.astype(np.int64)) > 0).all()


def test_nanosleep_sleeps_about_the_time(device):
    times = np.zeros(2, np.uint64)
    sleeper[1, 1](np.uint32(1_000_000), times)           # 1 ms
    slept = int(times[1]) - int(times[0])
    if device.kind == "cpu":                             # a GPU sleeps between 0 and 2 ms
        assert slept >= 1_000_000
    assert 0 <= slept < 1_000_000_000


def _ptx(kernel, types):
    return compile_kernel(kernel.typed_ir(types), CompileOptions(), "sm_90").ptx


def test_ptx_reads_the_special_registers_and_sleeps():
    arrays = [T.Array(np.dtype(d), 1, "C") for d in ("uint32", "int64", "uint64")]
    ptx = _ptx(readings, arrays)
    assert re.search(r"mov\.u32\s+%r\d+, %clock;", ptx)
    assert re.search(r"mov\.u64\s+%rd\d+, %clock64;", ptx)
    assert re.search(r"mov\.u64\s+%rd\d+, %globaltimer;", ptx)
    assert re.search(r"nanosleep\.u32\s+%r\d+;", ptx)
