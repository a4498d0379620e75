"""Threads per second of the sim device and of numba's CUDA simulator on the same two
kernels: a vector add, and a shared-memory block reduction with a barrier per step.

One kernel source, written for either namespace (``ns`` is simt or numba.cuda), so both
simulators run the same code:
    python bench/sim_speed.py sim [n]                 (simt's venv)
    python bench/sim_speed.py numba [n]               (a venv with numba; it sets
                                                       NUMBA_ENABLE_CUDASIM=1 itself)
Each prints one JSON line: {"tool", "n", "vadd", "reduce"} in threads per second, best of
``repeats`` runs after a first (compiling) one."""
import importlib.util
import json
import os
import sys
import tempfile
import time

KERNELS = '''
def vadd(a, b, c, n):
    i = ns.blockIdx.x * ns.blockDim.x + ns.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


def reduce(a, out):
    s = ns.shared.array(256, float32)
    t = ns.threadIdx.x
    i = ns.blockIdx.x * ns.blockDim.x + t
    s[t] = a[i]
    ns.syncthreads()
    k = ns.blockDim.x // 2
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        ns.syncthreads()
        k //= 2
    if t == 0:
        out[ns.blockIdx.x] = s[0]
'''

HEADERS = {
    "sim": "import numpy as np\nimport simt as ns\nfrom numpy import float32\n"
           "jit = ns.kernel\n",
    "numba": "import numpy as np\nfrom numba import cuda as ns, float32\njit = ns.jit\n",
}


def load(tool):
    """The two kernels, jitted by ``tool``, from a module file (simt reads the source)."""
    folder = tempfile.mkdtemp(prefix="sim-speed-")
    path = os.path.join(folder, f"speed_kernels_{tool}.py")
    with open(path, "w") as f:
        f.write(HEADERS[tool] + KERNELS + "\nvadd = jit(vadd)\nreduce = jit(reduce)\n")
    spec = importlib.util.spec_from_file_location(f"speed_kernels_{tool}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(tool, n, repeats=3):
    import numpy as np
    k = load(tool)
    rng = np.random.default_rng(0)
    a, b = rng.random(n, np.float32), rng.random(n, np.float32)
    c, out = np.zeros(n, np.float32), np.zeros(n // 256, np.float32)
    grid = n // 256

    def best(run):
        run()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        return n / min(times)

    result = {"tool": tool, "n": n,
              "vadd": best(lambda: k.vadd[grid, 256](a, b, c, n)),
              "reduce": best(lambda: k.reduce[grid, 256](a, out))}
    assert np.array_equal(c, a + b)
    assert np.allclose(out, a.reshape(-1, 256).sum(1), rtol=1e-5)
    return result


def main():
    tool = sys.argv[1] if len(sys.argv) > 1 else "sim"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else (1 << 16 if tool == "sim" else 1 << 13)
    if tool == "numba":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        repeats = 1                      # minutes per run otherwise
    else:
        os.environ["SIMT_DEVICE"] = "sim"
        repeats = 3
    print(json.dumps(measure(tool, n, repeats)))


if __name__ == "__main__":
    main()
