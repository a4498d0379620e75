"""The parts of one launch's host time on a GPU (microseconds per call, 20,000 calls,
median of 5 rounds), to see where simt's launch spends what the C runtime's <<<>>> does not:

- trampoline: the prepared native call alone (``go()``, a builtin calling cuLaunchKernel);
- ctypes: a ctypes call of the same kind to a native function that does nothing;
- launch, same args: ``k[1, 1](a)`` with the same array every time (no packing);
- launch, alternating: ``k[1, 1](x)`` with x alternating between two arrays (packs);
- heat-like: ``k[(64, 64), (16, 16)](dst, src, n)`` alternating src/dst, as heat's loop;
- hoisted: the same with ``f = k[(64, 64), (16, 16)]`` looked up once;
- cuda.bindings: cuLaunchKernel through cuda.bindings with a prepared parameter array.

    PYTHONPATH=src python3 bench/gpu/launch_parts.py [out.json]
"""
import ctypes
import datetime
import json
import statistics
import sys
import time

import numpy as np

import simt
from simt.backends.cuda import launch as cuda_launch
from simt.runtime.launch import arg_types

N = 20000


def per_call(fn):
    rounds = []
    for _ in range(5):
        simt.synchronize()
        began = time.perf_counter()
        fn()
        rounds.append((time.perf_counter() - began) / N * 1e6)
        simt.synchronize()
    return statistics.median(rounds)


@simt.kernel
def one(a):
    pass


@simt.kernel
def three(dst, src, n):
    pass


def main():
    a, b = simt.zeros(16, np.float32), simt.zeros(16, np.float32)
    for _ in range(3):
        one[1, 1](a)
        one[1, 1](b)
        three[(64, 64), (16, 16)](a, b, 7)
        three[(64, 64), (16, 16)](b, a, 7)
    simt.synchronize()
    rows = {}

    code = cuda_launch.native_trampoline()
    loaded = one.binary_for(arg_types(one, (a,)), simt.get_device())
    launcher = loaded.launcher          # its storage holds the first launch's values
    go = cuda_launch.builtin(code, cuda_launch.descriptor(
        cuda_launch._address(launcher._handle), cuda_launch._cu_launch_address(),
        (1, 1, 1), (1, 1, 1), 0, None, launcher.params))

    def trampoline():
        for _ in range(N):
            go()
    rows["trampoline go() (a builtin)"] = per_call(trampoline)

    libc = ctypes.CDLL(None)
    noop = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(
        ctypes.cast(libc.abs, ctypes.c_void_p).value)

    def ctypes_only():
        for _ in range(N):
            noop(1)
    rows["ctypes call of abs()"] = per_call(ctypes_only)

    def same():
        for _ in range(N):
            one[1, 1](a)
    rows["k[1, 1](a), same array"] = per_call(same)

    def alternating():
        for i in range(N // 2):
            one[1, 1](a)
            one[1, 1](b)
    rows["k[1, 1](x), alternating arrays"] = per_call(alternating)

    def heat_like():
        for i in range(N // 2):
            three[(64, 64), (16, 16)](a, b, 7)
            three[(64, 64), (16, 16)](b, a, 7)
    rows["heat-like k[(64,64),(16,16)](dst, src, n)"] = per_call(heat_like)

    def hoisted():
        f = three[(64, 64), (16, 16)]
        for i in range(N // 2):
            f(a, b, 7)
            f(b, a, 7)
    rows["hoisted f(dst, src, n)"] = per_call(hoisted)

    def lookup():
        for i in range(N):
            three[(64, 64), (16, 16)]
    rows["k[(64,64),(16,16)] lookup only"] = per_call(lookup)

    from cuda.bindings import driver
    cu = driver.cuLaunchKernel
    handle = launcher._handle
    params = launcher.params

    def bindings():
        for _ in range(N):
            cu(handle, 1, 1, 1, 1, 1, 1, 0, None, params, 0)
    rows["cuda.bindings cuLaunchKernel"] = per_call(bindings)

    from simt.examples import heat
    sim = heat.Simulation("global")
    sim.frame()
    blocks, threads = (64, 64), (16, 16)

    def heat_real():
        src, dst = sim.inp, sim.out
        for i in range(N // 2):
            heat.copy_const_kernel[blocks, threads](src, sim.const)
            heat.blend_kernel[blocks, threads](dst, src, sim.dim)
            src, dst = dst, src
    rows["heat's two kernels (GPU busy)"] = per_call(heat_real)

    def heat_empty():
        src, dst = sim.inp, sim.out
        for i in range(N // 2):
            one[blocks, threads](src)
            three[blocks, threads](dst, src, sim.dim)
            src, dst = dst, src
    rows["empty kernels, heat's arrays and shape"] = per_call(heat_empty)
    rows["k[1, 1](a), same array, again"] = per_call(same)

    for k, v in rows.items():
        print(f"{k:52s} {v:6.2f} us" if isinstance(v, float) else f"{k:52s} {v}")
    result = {"device": simt.get_device().name, "date": str(datetime.date.today()),
              "us_per_call": rows}
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
