"""simt's own share of a GPU launch, per kind of argument, on any machine (no GPU needed):
the native launch function (backends/cuda/packlaunch.py) bound as the GPU back end binds
it, with cuLaunchKernel replaced by a native function that returns 0 at once. What is
timed is everything simt does between ``kernel[grid, block](...)`` and the driver: the
call, the current-device and class checks, reading and packing the values, giving up the
GIL and taking it back. On the GPU the driver's own cuLaunchKernel adds 3.8-5 µs (H200,
bench/gpu/launch_kinds.py's "driver alone").

    PYTHONPATH=src python bench/launch_own_cost.py [out.json]
"""
import datetime
import json
import platform
import statistics
import sys
import threading
import time

import numpy as np

import simt
from simt.backends.cuda import packlaunch, params as P, trampoline
from simt.ir import types as T

NULL_LAUNCH = """define i32 @null_launch(ptr %f, i32 %gx, i32 %gy, i32 %gz, i32 %bx, i32 %by,
                                    i32 %bz, i32 %shared, ptr %stream, ptr %params, ptr %extra) {
  ret i32 0
}
"""
RECORD = np.dtype([("x", np.float32), ("n", np.int32), ("w", np.float64)])


class _Owner:
    error_source = None


def kinds():
    """kind -> one argument tuple (CPU device arrays stand in for GPU ones: the launch
    function reads the same ``_flat`` tuple from both)."""
    a = simt.to_device(np.arange(16, dtype=np.float32))
    return {
        "array": (a,),
        "int32 (NumPy)": (np.int32(7),),
        "int (Python)": (7,),
        "float (Python)": (2.5,),
        "record": (np.array((1.5, 2, 3.25), RECORD)[()],),
        "float4": (simt.float4(1, 2, 3, 4),),
        "3 arguments (array, int, array)": (a, 7, a),
        "26 arguments": tuple(a if i % 2 == 0 else i for i in range(26)),
    }


def bound(code, null, args, can_fail):
    """The launch function for these arguments, as Launcher.packed_route makes it."""
    types = [T.typeof(x) for x in args]
    flat = [k for t in types for k in P.kinds(t)]
    _, offsets, size = P.layout(flat)
    planned = packlaunch.plan(tuple(map(type, args)), types, flat, offsets, size)
    local, device = threading.local(), object()
    local.device = device
    owner = _Owner() if can_fail else None
    return packlaunch.launch_function(
        code, planned, 0x1234, null, (64, 1, 1), (256, 1, 1), 0, 0,
        dict(local=local, device=device, refused=None, failed=None, error_owner=owner,
             error_value=("kernel", 1) if can_fail else None))


def per_call_ns(go, args, calls=200_000, rounds=7):
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            go(*args)
        samples.append((time.perf_counter() - start) / calls * 1e9)
    return statistics.median(samples)


def main():
    simt.set_device("cpu")
    if trampoline.DATA_OFFSET is None or packlaunch.TYPE_OFFSET is None:
        sys.exit("objects of unknown layout in this interpreter: no native launch functions")
    code = trampoline.make(packlaunch.ir(trampoline.DATA_OFFSET), packlaunch.NAME)
    null = trampoline.make(NULL_LAUNCH, "null_launch")
    rows = {}
    loop = per_call_ns(lambda *a: None, (1,))          # a Python call of a lambda, for scale
    for kind, args in kinds().items():
        rows[kind] = {"own ns": per_call_ns(bound(code, null, args, False), args),
                      "own ns, kernel that can fail": per_call_ns(bound(code, null, args, True),
                                                                  args)}
    print(f"simt's own share of a GPU launch, ns per launch ({platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, {datetime.date.today()}); a Python lambda call: "
          f"{loop:.0f} ns")
    print(f"{'arguments':34s} {'own ns':>8s} {'can fail':>9s}")
    for kind, row in rows.items():
        print(f"{kind:34s} {row['own ns']:8.0f} {row['own ns, kernel that can fail']:9.0f}")
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"date": str(datetime.date.today()), "machine": platform.machine(),
                       "python": platform.python_version(), "lambda call ns": loop,
                       "unit": "ns per launch, the driver call replaced by a return",
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
