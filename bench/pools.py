"""Allocation plus free per call (issue 14 item 4): a plain ``device_array`` dropped at
once (cudaMalloc + cudaFree) against ``device_array(..., stream=s)`` and
``free(stream=s)`` from a pool (cudaMallocAsync + cudaFreeAsync), for a few sizes.
Each figure is the median over 7 rounds of the mean of 200 alloc+free pairs, with the
stream synchronized at the end of each round.

    PYTHONPATH=src python bench/pools.py --device cpu
    PYTHONPATH=src python bench/pools.py --device cuda:0
"""
import argparse
import statistics
import time

import numpy as np

import simt

SIZES = (1 << 10, 1 << 20, 64 << 20)
PAIRS = 200


def _per_call_us(fn, sync):
    rounds = []
    for _ in range(8):
        started = time.perf_counter()
        for _ in range(PAIRS):
            fn()
        sync()
        rounds.append((time.perf_counter() - started) / PAIRS)
    return statistics.median(rounds[1:]) * 1e6           # the first round warms up


def run(device):
    simt.set_device(device)
    stream = simt.Stream()
    pool = simt.MemoryPool(release_threshold=1 << 30)
    rows = []
    for nbytes in SIZES:
        def plain():
            simt.device_array(nbytes, np.uint8)

        def pooled():
            simt.device_array(nbytes, np.uint8, stream=stream, pool=pool).free(stream=stream)
        rows.append((nbytes, _per_call_us(plain, simt.synchronize),
                     _per_call_us(pooled, stream.synchronize)))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    print(f"device {args.device}: alloc+free per call, median of 7 rounds of {PAIRS}")
    print("| bytes | plain device_array (us) | pool, stream-ordered (us) | ratio |")
    print("|---|---|---|---|")
    for nbytes, plain, pooled in run(args.device):
        print(f"| {nbytes} | {plain:.2f} | {pooled:.2f} | {plain / pooled:.1f}x |")


if __name__ == "__main__":
    main()
