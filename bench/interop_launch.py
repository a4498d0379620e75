"""Host time of one launch with each kind of array argument, in one run: simt's own
arrays, the same array wrapped once, and CuPy/PyTorch arrays (on a GPU: the same objects at
every launch, and new views of them at every launch) or DLPack-only host tensors (CPU
device) passed straight in. Prints a table (microseconds per launch)."""
import sys
import time

import numpy as np

import simt


@simt.kernel
def axpy(a, x, y):
    i = simt.grid(1)
    if i < y.size:
        y[i] = a * x[i] + y[i]


def per_launch(fn, repeat=2000):
    for _ in range(50):
        fn()
    simt.synchronize()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
        simt.synchronize()
    return best * 1e6


class HostTensor:
    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None, **kw):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)


def main():
    device = simt.get_device()
    n = 1024
    x, y = simt.to_device(np.ones(n, np.float32)), simt.to_device(np.ones(n, np.float32))
    rows = [("simt DeviceArray", per_launch(lambda: axpy[4, 256](np.float32(2), x, y)))]
    if device.kind == "cuda":
        try:
            import cupy
            cx, cy = cupy.ones(n, cupy.float32), cupy.ones(n, cupy.float32)
            rows.append(("CuPy ndarray", per_launch(lambda: axpy[4, 256](np.float32(2), cx, cy))))
            rows.append(("CuPy, new array objects (views) each launch",
                         per_launch(lambda: axpy[4, 256](np.float32(2), cx[:], cy[:]))))
            wx, wy = simt.asarray(cx), simt.asarray(cy)
            rows.append(("CuPy wrapped once (simt.asarray)",
                         per_launch(lambda: axpy[4, 256](np.float32(2), wx, wy))))
        except ImportError:
            print("CuPy not installed", file=sys.stderr)
        try:
            import torch
            tx, ty = torch.ones(n, device="cuda"), torch.ones(n, device="cuda")
            rows.append(("torch tensor", per_launch(lambda: axpy[4, 256](np.float32(2), tx, ty))))
            rows.append(("torch, new tensor objects (views) each launch",
                         per_launch(lambda: axpy[4, 256](np.float32(2), tx[:], ty[:]))))
        except ImportError:
            print("PyTorch not installed", file=sys.stderr)
    else:
        hx, hy = HostTensor(np.ones(n, np.float32)), HostTensor(np.ones(n, np.float32))
        rows.append(("DLPack host tensor", per_launch(lambda: axpy[4, 256](np.float32(2), hx, hy), 500)))
    print(f"launch host time on {device.name}, {time.strftime('%Y-%m-%d')}")
    for name, us in rows:
        print(f"  {name:<36} {us:8.1f} us")


if __name__ == "__main__":
    main()
