"""Launch cost with and without CUDA graphs (issue 14 item 1): a chain of 100 small
kernels put in a stream one launch at a time, against one launch of a graph captured
from the same chain. Each sample is the wall time of the 100 kernels plus the stream's
synchronize; the median of the samples is reported, per kernel.

    PYTHONPATH=src python bench/graphs.py --device cpu
    PYTHONPATH=src python bench/graphs.py --device cuda:0
"""
import argparse
import statistics
import time

import numpy as np

import simt

KERNELS = 100


@simt.kernel
def bump(x, step):
    i = simt.grid(1)
    if i < x.shape[0]:
        x[i] = x[i] + step


def _median_us(fn, repeats):
    fn()                                      # warm: compiles, prepares the launch path
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def run(device, n, repeats):
    simt.set_device(device)
    x = simt.to_device(np.zeros(n, np.float32))
    stream = simt.Stream()
    grid, block = (n + 127) // 128, 128
    launch = bump[grid, block, 0, stream]
    step = np.float32(1.0)

    def one_by_one():
        for _ in range(KERNELS):
            launch(x, step)
        stream.synchronize()

    with stream.capture() as graph:
        for _ in range(KERNELS):
            launch(x, step)
    exe = graph.instantiate()

    def replay():
        exe.launch(stream)
        stream.synchronize()

    direct = _median_us(one_by_one, repeats)
    graphed = _median_us(replay, repeats)
    expected = KERNELS * (2 * repeats + 2)     # every run added 1 per kernel
    assert (x.copy_to_host() == expected).all(), "the kernels did not all run"
    return direct, graphed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--n", type=int, default=1024, help="elements per kernel")
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    direct, graphed = run(args.device, args.n, args.repeats)
    print(f"device {args.device}, {KERNELS} kernels of {args.n} elements, median of "
          f"{args.repeats} runs")
    print(f"| way | per run (us) | per kernel (us) |\n|---|---|---|")
    print(f"| one launch at a time | {direct:.0f} | {direct / KERNELS:.2f} |")
    print(f"| graph replay | {graphed:.0f} | {graphed / KERNELS:.2f} |")
    print(f"speed-up {direct / graphed:.2f}x")


if __name__ == "__main__":
    main()
