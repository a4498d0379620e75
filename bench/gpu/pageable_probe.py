"""Why the book's copy_timed "malloc up" is faster in C: its buffer is malloc'd and never
written, so the driver's staging memcpy reads the kernel's zero page. 100 host-to-device
copies of 40 MB (as copy_timed), simt's copy_from from: NumPy's np.empty (which asks for
transparent huge pages on large allocations), libc malloc wrapped as an array (the
book's buffer), np.empty with huge pages refused, and a buffer written before copying.

    PYTHONPATH=src python3 bench/gpu/pageable_probe.py [out.json]
"""
import ctypes
import datetime
import json
import sys

import numpy as np

import simt
from simt.examples.book import EventTimer

SIZE = 10 * 1024 * 1024


def timed(host):
    dev = simt.device_array(SIZE, np.int32)
    dev.copy_from(host)
    timer = EventTimer()
    for _ in range(100):
        dev.copy_from(host)
    return timer.elapsed_ms()


def main():
    rows = {}
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    rows["np.empty (huge pages asked for)"] = timed(np.empty(SIZE, np.int32))
    raw = libc.malloc(SIZE * 4)
    rows["libc malloc, never written (the book's)"] = timed(
        np.ctypeslib.as_array((ctypes.c_int32 * SIZE).from_address(raw)))
    try:
        from numpy._core import multiarray
    except ImportError:                   # NumPy 1.x
        from numpy.core import multiarray
    multiarray._set_madvise_hugepage(False)
    rows["np.empty, no huge pages"] = timed(np.empty(SIZE, np.int32))
    multiarray._set_madvise_hugepage(True)
    rows["np.ones (written)"] = timed(np.ones(SIZE, np.int32))
    try:
        rows["transparent_hugepage"] = open(
            "/sys/kernel/mm/transparent_hugepage/enabled").read().strip()
    except OSError:
        pass
    for k, v in rows.items():
        print(f"{k:45s} {v}")
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"device": simt.get_device().name, "date": str(datetime.date.today()),
                       "ms_for_100_copies_of_40MB": rows}, f, indent=1)


if __name__ == "__main__":
    main()
