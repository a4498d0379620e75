"""numba-cuda twins: the simt kernels' own Python source, compiled by numba-cuda
(simt's names mapped onto numba.cuda's), timed like the others. Run as its own
process (numba-cuda 0.30 needs NumPy <= 2.3): python bench/numba_twins.py out.json"""
import inspect
import json
import os
import re
import sys
import textwrap
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("SIMT_DEVICE", "cpu")   # simt only supplies the kernels' source here

from numba import cuda               # noqa: E402
from numba.cuda import libdevice     # noqa: E402

import simt                          # noqa: E402
from workloads import all_cases      # noqa: E402

BARE = re.compile(r"(?<![.\w])(threadIdx|blockIdx|blockDim|gridDim)\b")
_converted = {}


def convert(pyfunc, device=False):
    """The same source with simt's names spelled as numba.cuda's, jitted by numba:
    ``simt.math.rsqrt`` becomes libdevice's rsqrtf, ``simt.X`` ``cuda.X``, and bare
    ``threadIdx`` (imported from simt) ``cuda.threadIdx``."""
    if pyfunc in _converted:
        return _converted[pyfunc]
    lines = textwrap.dedent(inspect.getsource(pyfunc)).splitlines()
    source = "\n".join(l for l in lines if not l.startswith("@"))
    source = source.replace("simt.math.rsqrt", "libdevice.rsqrtf").replace("simt.", "cuda.")
    source = BARE.sub(r"cuda.\1", source)
    g = dict(pyfunc.__globals__, cuda=cuda, libdevice=libdevice)
    for name, value in pyfunc.__globals__.items():
        if getattr(value, "_simt_device", False) and value.pyfunc is not pyfunc:
            g[name] = convert(value.pyfunc, device=True)
    namespace = {}
    exec(compile(source, inspect.getsourcefile(pyfunc), "exec"), g, namespace)
    fn = namespace[pyfunc.__name__]
    out = cuda.jit(device=True)(fn) if device else cuda.jit(fn)
    _converted[pyfunc] = out
    return out


@cuda.jit
def spin(n):
    for _ in range(n):
        cuda.nanosleep(1000)


def times(launch, reps):
    launch()
    cuda.synchronize()
    evs = [(cuda.event(), cuda.event()) for _ in range(reps)]
    for a, b in evs:
        spin[1, 1](100)
        a.record()
        launch()
        b.record()
    cuda.synchronize()
    return [cuda.event_elapsed_time(a, b) for a, b in evs]


class Redirect:
    """Stands in for simt kernels inside Case.launch: kernel[grid, block](args) runs the
    numba version of the same source."""
    def __init__(self, kernel):
        self.numba = convert(kernel.pyfunc)

    def __getitem__(self, config):
        return self.numba[config]


def main():
    out = {"numba_cuda": None, "workloads": {}, "compile": {}}
    import numba_cuda
    out["numba_cuda"] = getattr(numba_cuda, "__version__", "?")
    out["numpy"] = np.__version__
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    rng = np.random.default_rng(2026)
    for case in all_cases():
        if not case.numba:
            continue
        try:
            size = case.size("gpu", sms=sms)
            h = case.make(size, rng)
            expected = case.reference(h, size)
            module = sys.modules[case.launch.__module__]
            saved = {}
            for k, _ in case.kernels:
                saved[k.__name__] = getattr(module, k.__name__)
                setattr(module, k.__name__, Redirect(k))
            try:
                d = {k: (cuda.to_device(v) if isinstance(v, np.ndarray) else v)
                     for k, v in h.items()}
                for name in case.outputs:
                    if name in case.zero:
                        d[name] = cuda.to_device(np.zeros_like(h[name]))
                t0 = time.perf_counter()
                case.launch(d, size)
                cuda.synchronize()
                first = time.perf_counter() - t0
                ok = case.ok({k: d[k].copy_to_host() for k in case.outputs}, expected)
                ms = times(lambda: case.launch(d, size), 25)
            finally:
                for name, k in saved.items():
                    setattr(module, name, k)
            out["workloads"][case.name] = {"ms": float(np.median(ms)), "correct": ok,
                                           "first_call_s": first}
            print(f"numba {case.name}: {np.median(ms):.4f} ms ok={ok}", flush=True)
        except Exception as exc:           # one case failing must not lose the others
            out["workloads"][case.name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            print(f"numba {case.name}: {type(exc).__name__}: {exc}"[:300], flush=True)
    # cold compile of the tiled matmul: numba's compile to PTX, then load and a first launch
    from workloads import matmul as mm
    _converted.clear()
    t0 = time.perf_counter()
    k = convert(mm.matmul.pyfunc)
    a = cuda.device_array((32, 32), np.float32)
    k[(1, 1), (32, 32)](a, a, a)
    cuda.synchronize()
    t1 = time.perf_counter()
    k[(1, 1), (32, 32)](a, a, a)
    cuda.synchronize()
    t2 = time.perf_counter()
    out["compile"]["matmul_cold_first_launch_ms"] = (t1 - t0) * 1e3
    out["compile"]["matmul_cached_launch_ms"] = (t2 - t1) * 1e3
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
