"""Where the shared-atomics histogram program's time goes, part by part, simt against
the book's CUDA C (bench/gpu/hist_parts.cu, built here with nvcc -O3), each as fresh
processes, alternating, --runs times: an event after the allocation, the 100 MiB pageable
copy, the bins' allocation and memset, the kernel (2 blocks per SM of 256 threads) and the
copy back, as simt.examples.hist.histogram and the book's main do them.

    PYTHONPATH=src python3 bench/gpu/hist_parts.py [--runs 6] [out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

SIMT_SIDE = r"""
import json
import numpy as np
import simt
from simt.examples import hist
from simt.examples.book import big_random_block
SIZE = 100 * 1024 * 1024
buffer = big_random_block(SIZE)
hist.histogram(hist.histo_kernel_shmem, buffer[:4096])     # compiles, as the example does
ev = [simt.Event() for _ in range(6)]
ev[0].record()
dev_buffer = simt.device_array(SIZE, np.uint8)
ev[1].record()
dev_buffer.copy_from(buffer)
ev[2].record()
dev_histo = simt.zeros(256, np.uint32)
ev[3].record()
blocks = simt.get_device().properties.multiprocessor_count
hist.histo_kernel_shmem[blocks * 2, 256](dev_buffer, np.int64(SIZE), dev_histo)
ev[4].record()
histo = dev_histo.copy_to_host()
ev[5].record()
ev[5].synchronize()
names = ["malloc", "copy in", "bins", "kernel", "copy out"]
row = {"side": "simt"}
row.update({n: ev[k].elapsed_time(ev[k + 1]) for k, n in enumerate(names)})
row["total"] = ev[0].elapsed_time(ev[5])
row["sum"] = int(histo.sum(dtype=np.int64))
print(json.dumps(row))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("out", nargs="?")
    opts = ap.parse_args()
    exe = os.path.join(tempfile.mkdtemp(), "hist_parts")
    subprocess.run(["nvcc", "-O3", "-o", exe, os.path.join(HERE, "hist_parts.cu")], check=True)
    rows = []
    for _ in range(opts.runs):
        for command in ([exe], [sys.executable, "-c", SIMT_SIDE]):
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(rows[-1], flush=True)
    parts = ["malloc", "copy in", "bins", "kernel", "copy out", "total"]
    summary = {side: {p: statistics.median(r[p] for r in rows if r["side"] == side)
                      for p in parts} for side in ("nvcc", "simt")}
    for side, row in summary.items():
        print(side, " ".join(f"{p} {v:.2f}" for p, v in row.items()))
    if opts.out:
        with open(opts.out, "w") as f:
            json.dump({"runs": rows, "median_ms": summary}, f, indent=1)


if __name__ == "__main__":
    main()
