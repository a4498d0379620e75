"""Peer copy bandwidth (guide 3.2.7.5): GPU 0 to GPU 1 with copy_to_device (cudaMemcpyPeer,
over NVLink or PCIe where the GPUs are peers), with and without peer access enabled,
against the same bytes staged through pinned host memory (device to host, host to
device). Needs 2 GPUs: on fewer it says so and exits 0.

    python bench/peer_copy.py [--mib 256] [--reps 10]
"""
import argparse
import sys
import time

import numpy as np

import simt


def _best(copy, reps, *devices):
    """The best of ``reps`` timed copies (seconds), each fenced by synchronizing both GPUs."""
    copy()
    times = []
    for _ in range(reps):
        for d in devices:
            d.synchronize()
        start = time.perf_counter()
        copy()
        for d in devices:
            d.synchronize()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256, help="bytes per copy, in MiB")
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args(argv)
    gpus = [d for d in simt.devices() if d.kind == "cuda"]
    if len(gpus) < 2:
        print(f"bench/peer_copy.py needs 2 GPUs; this machine has {len(gpus)}: nothing to "
              "measure")
        return 0
    g0, g1 = gpus[:2]
    n = args.mib << 20
    data = np.random.default_rng(0).integers(0, 255, n, dtype=np.uint8)
    with simt.use_device(g0):
        src = simt.to_device(data)
    with simt.use_device(g1):
        dst = simt.device_array(n, np.uint8)
        staging = simt.pinned_array(n, np.uint8)

    def peer():
        with simt.use_device(g1):
            src.copy_to_device(dst)

    def staged():
        with simt.use_device(g0):
            src.copy_to_host(out=staging)
        with simt.use_device(g1):
            dst.copy_from(staging)

    rows = [("peer copy, peer access off", _best(peer, args.reps, g0, g1))]
    if simt.can_access_peer(g1, g0) and simt.can_access_peer(g0, g1):
        with simt.use_device(g1):
            simt.enable_peer_access(g0)
        with simt.use_device(g0):
            simt.enable_peer_access(g1)
        rows.append(("peer copy, peer access on", _best(peer, args.reps, g0, g1)))
    else:
        print(f"{g0.name} and {g1.name} are not peers: the driver stages peer copies")
    rows.append(("staged through pinned host memory", _best(staged, args.reps, g0, g1)))
    with simt.use_device(g1):
        assert np.array_equal(dst.copy_to_host(), data), "the copy is wrong"
    print(f"{args.mib} MiB from {g0.name} ({g0.properties.name}) to {g1.name}, best of "
          f"{args.reps}:")
    for label, seconds in rows:
        print(f"  {label:<36} {n / seconds / 1e9:8.1f} GB/s  ({seconds * 1e3:.2f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
