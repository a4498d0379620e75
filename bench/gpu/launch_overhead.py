"""Launch overhead on a GPU: microseconds per launch of a one-block empty kernel
launched 10,000 times and synchronized at the end, with 1, 5 and 26 arguments
(alternately a float32 array and an int32), for simt's full path
(``kernel[1, 1](*args)``) against cuda.core's ``launch``, a raw cuda.bindings
cuLaunchKernel and CuPy's RawKernel, in one run, median of interleaved rounds.

Run from the repository root: PYTHONPATH=src python3 bench/gpu/launch_overhead.py [out.json]
"""
import datetime
import importlib.util
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests"))
import gpu_driver_check as drv          # noqa: E402  (the driver-level baselines live there)

import simt                             # noqa: E402
from simt.backends.cuda import launch as cuda_launch   # noqa: E402
from simt.backends.cuda.module import Module    # noqa: E402

COUNTS = (1, 5, 26)
ROUNDS = 5


def simt_kernels():
    """Empty simt kernels of 1, 5 and 26 parameters, from a generated source file."""
    lines = ["import simt\n"]
    for n in COUNTS:
        params = ", ".join(f"p{i}" for i in range(n))
        lines.append(f"@simt.kernel\ndef empty{n}({params}):\n    pass\n")
    path = os.path.join(tempfile.mkdtemp(prefix="simt-launch-"), "empty_kernels.py")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    spec = importlib.util.spec_from_file_location("empty_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {n: getattr(module, f"empty{n}") for n in COUNTS}


def main():
    device = simt.get_device()
    backend = device.backend
    kernels = simt_kernels()
    buf = simt.zeros(16, np.float32)
    import cupy as cp
    dbuf = cp.zeros(16, cp.float32)
    rows = {}
    for _ in range(ROUNDS):
        for n in COUNTS:
            args = tuple(buf if i % 2 == 0 else np.int32(i) for i in range(n))
            k = kernels[n]
            for via in ("native", "bindings"):       # the prepared path's route to the driver
                cuda_launch.VIA = via
                k.launches.clear()
                label = "simt kernel[1, 1](*args)" + ("" if via == "native" else " via cuda.bindings")
                rows.setdefault(label, {}).setdefault(n, []).append(
                    drv.timed(lambda: k[1, 1](*args), backend.synchronize))
            cuda_launch.VIA = "native"
            k.launches.clear()              # bound again on the native route, not the last one's
            other = tuple(simt.zeros(16, np.float32) if i % 2 == 0 else np.int32(i + 1)
                          for i in range(n))
            pair = (args, other)
            flip = [0]

            def alternating():          # new arguments at every launch: checks and packing
                flip[0] ^= 1
                k[1, 1](*pair[flip[0]])
            rows.setdefault("simt kernel[1, 1](*args), arguments alternating", {}).setdefault(
                n, []).append(drv.timed(alternating, backend.synchronize))
            ptx = drv.HEADER.format(version="8.0", target="sm_90") + drv.empty_ptx(n)
            fn = Module(ptx, backend).get_function(f"empty{n}")
            kinds = [drv.PTR if i % 2 == 0 else drv.ctypes.c_int32 for i in range(n)]
            values = tuple(buf.ptr if i % 2 == 0 else i for i in range(n))
            rows.setdefault("simt Launcher.launch (driver layer)", {}).setdefault(n, []).append(
                drv.bench_simt(backend, fn, kinds, values))
            rows.setdefault("raw cuLaunchKernel, prebuilt params", {}).setdefault(n, []).append(
                drv.bench_raw_address(backend, fn, kinds, values))
            rows.setdefault("ctypes libcuda cuLaunchKernel + pack", {}).setdefault(n, []).append(
                drv.bench_ctypes(backend, fn, kinds, values))
            label, value = drv.bench_cuda_core(n, values)
            rows.setdefault(label, {}).setdefault(n, []).append(value)
            backend.make_current(force=True)
            label, value = drv.bench_cupy(n, dbuf)
            rows.setdefault(label, {}).setdefault(n, []).append(value)
            backend.make_current(force=True)
    table = {label: {n: drv._median(v) for n, v in cells.items()} for label, cells in rows.items()}
    name = device.properties.name
    print(f"\nLaunch overhead, µs per launch ({name}, {datetime.date.today()}; 10,000 "
          f"one-block launches then sync; median of {ROUNDS} interleaved rounds)")
    print(f"{'path':44s} " + " ".join(f"{f'{n} args':>9s}" for n in COUNTS))
    for label, cells in table.items():
        print(f"{label:44s} " + " ".join(
            f"{cells[n]:9.2f}" if isinstance(cells[n], float) else f" {cells[n]}" for n in COUNTS))
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"device": name, "date": str(datetime.date.today()),
                       "unit": "microseconds per launch", "rows": table}, f, indent=1)


if __name__ == "__main__":
    main()
