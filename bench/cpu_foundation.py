"""Foundation figures for the CPU device: compile times (cold, disk-cached),
and vector add / dot product against NumPy doing the same work, with bounds
checks on (the default) and off. Usage: python bench/cpu_foundation.py"""
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

PROBE = r'''
import time, sys
t0 = time.perf_counter()
import numpy as np, simt
from simt.examples import vectoradd, dot
t1 = time.perf_counter()
a = simt.to_device(np.ones(1024, np.float32)); c = simt.device_array(1024, np.float32)
s = time.perf_counter(); vectoradd.add[4, 256](a, a, c); t2 = time.perf_counter()
p = simt.device_array(32, np.float32)
s2 = time.perf_counter(); dot.dot[32, 256](a, a, p); t3 = time.perf_counter()
print(t1 - t0, t2 - s, t3 - s2)
'''


def probe(cache_dir):
    env = dict(os.environ, SIMT_CACHE_DIR=cache_dir, SIMT_DEVICE="cpu")
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    return [float(v) * 1e3 for v in out]


def best(fn, repeat=20):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main():
    import simt
    from simt.examples import dot, vectoradd
    results = {"device": "cpu", "machine": platform.processor() or platform.machine(),
               "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d")}
    with tempfile.TemporaryDirectory() as cache_dir:
        cold = probe(cache_dir)
        warm = probe(cache_dir)
    results["import_ms"] = round(warm[0], 1)
    results["compile_cold_ms"] = {"vectoradd": round(cold[1], 1), "dot_shared": round(cold[2], 1)}
    results["disk_cached_ms"] = {"vectoradd": round(warm[1], 1), "dot_shared": round(warm[2], 1)}
    n = 1 << 24
    rng = np.random.default_rng(0)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    rows = {}
    for check in (True, False):
        simt.set_device("cpu", boundscheck=check)
        da, db, dc = simt.to_device(a), simt.to_device(b), simt.device_array(n, np.float32)
        partial = simt.device_array(256, np.float32)
        blocks = (n + 255) // 256
        t_add = best(lambda: (vectoradd.add[blocks, 256](da, db, dc), simt.synchronize()))
        t_dot = best(lambda: (dot.dot[256, 256](da, db, partial), simt.synchronize()))
        rows["checks on" if check else "checks off"] = {"vectoradd_ms": round(t_add, 2),
                                                        "dot_ms": round(t_dot, 2)}
    out = np.empty_like(a)
    rows["numpy"] = {"vectoradd_ms": round(best(lambda: np.add(a, b, out=out)), 2),
                     "dot_ms": round(best(lambda: np.dot(a, b)), 2)}
    results["n"] = n
    results["timings"] = rows
    path = os.path.join(os.path.dirname(__file__), "results",
                        f"cpu-foundation-{results['date']}.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
