"""L2 persistence (guide 3.2.3, CUDA 11+): a small "hot" array read again and again while a
big "cold" array streams through the L2. Each launch computes out[i] = cold[i] + hot[i % H]:
without an access-policy window the cold stream evicts the hot lines; with
``stream.set_access_policy(hot, 1.0, hit='persisting', miss='streaming')`` and
``simt.set_limit('persisting_l2_cache_size', ...)`` they stay in the L2 set aside. Times both
(CUDA events, best of --reps), checks the result against NumPy, and prints the speedup.

    python bench/l2_persist.py [--device cuda:0] [--hot-mib 16] [--cold-mib 1024] [--reps 20]
    python bench/l2_persist.py --device cpu --hot-kib 64 --cold-mib 4    # runs anywhere

On the cpu and sim devices the window is checked and recorded and changes nothing: the two
times differ by noise only (docs/device-control.md).
"""
import argparse
import json
import sys

import numpy as np

import simt


@simt.kernel
def hot_and_cold(cold, hot, out):
    """Grid-stride: each element of cold read once, hot read over and over."""
    i = simt.grid(1)
    stride = simt.gridsize(1)
    h = hot.size
    while i < cold.size:
        out[i] = cold[i] + hot[i % h]
        i += stride


def _time(stream, launch, reps):
    """Best of ``reps`` launches in milliseconds, timed with events in ``stream``."""
    launch()
    stream.synchronize()
    start, stop = simt.Event(), simt.Event()
    best = float("inf")
    for _ in range(reps):
        start.record(stream)
        launch()
        stop.record(stream)
        stop.synchronize()
        best = min(best, start.elapsed_time(stop))
    return best


def measure(hot_bytes, cold_bytes, reps, hit_ratio=1.0):
    """{'plain_ms', 'persisting_ms', 'speedup', ...} on the current device."""
    props = simt.get_device().properties
    rng = np.random.default_rng(0)
    hot_n, cold_n = hot_bytes // 4, cold_bytes // 4
    hot_h = rng.standard_normal(hot_n).astype(np.float32)
    cold_h = rng.standard_normal(cold_n).astype(np.float32)
    hot, cold = simt.to_device(hot_h), simt.to_device(cold_h)
    out = simt.device_array(cold_n, np.float32)
    stream = simt.Stream()
    blocks = 4 * props.multiprocessor_count
    launch = lambda: hot_and_cold[blocks, 256, 0, stream](cold, hot, out)   # noqa: E731
    plain = _time(stream, launch, reps)
    set_aside = min(hot_bytes, props.persisting_l2_cache_max_size or hot_bytes)
    before = simt.get_limit("persisting_l2_cache_size")
    simt.set_limit("persisting_l2_cache_size", set_aside)
    window = hot if not props.access_policy_max_window_size else \
        hot[:max(1, min(hot_n, props.access_policy_max_window_size // 4))]
    stream.set_access_policy(window, hit_ratio, hit="persisting", miss="streaming")
    try:
        persisting = _time(stream, launch, reps)
    finally:
        stream.set_access_policy(None)
        simt.set_limit("persisting_l2_cache_size", before)
    want = cold_h + np.resize(hot_h, cold_n)
    correct = bool(np.array_equal(out.copy_to_host(), want))
    return {"device": simt.get_device().name, "hot_bytes": hot_bytes, "cold_bytes": cold_bytes,
            "persisting_l2_bytes": set_aside, "window_bytes": window.nbytes,
            "plain_ms": plain, "persisting_ms": persisting, "speedup": plain / persisting,
            "correct": correct}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cuda:0 (default: the current), cpu")
    parser.add_argument("--hot-mib", type=float, default=16.0)
    parser.add_argument("--hot-kib", type=float, default=None, help="overrides --hot-mib")
    parser.add_argument("--cold-mib", type=float, default=1024.0)
    parser.add_argument("--hit-ratio", type=float, default=1.0)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--json", default=None, help="write the result to this file")
    args = parser.parse_args(argv)
    if args.device:
        simt.set_device(args.device)
    hot = int(args.hot_kib * 1024) if args.hot_kib else int(args.hot_mib * (1 << 20))
    result = measure(hot - hot % 4, int(args.cold_mib * (1 << 20)) // 4 * 4, args.reps,
                     args.hit_ratio)
    print(f"{result['device']}: hot {hot / 2**20:.2f} MiB, cold {args.cold_mib:.0f} MiB, "
          f"{result['persisting_l2_bytes'] / 2**20:.2f} MiB of L2 set aside: "
          f"{result['plain_ms']:.3f} ms without the window, {result['persisting_ms']:.3f} ms "
          f"with it ({result['speedup']:.2f}x); result {'right' if result['correct'] else 'WRONG'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if result["correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
