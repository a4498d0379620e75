"""The device copies of the NumPy arrays a launch gets (copied in, run, copied back).

Arguments that share memory (the same array twice, views of one base) must stay
shared on the device, as they are on the CPU device: a copy per argument would give
the kernel two unrelated buffers and let the last copy back win. So the memory the
arrays span is merged into regions (address ranges that overlap are one region), each
region is copied to the device once, and every array becomes a pointer into its
region's copy."""
import ctypes

import numpy as np


def host_regions(arrays):
    """The regions of ``arrays`` (NumPy arrays): [(uint8 view of the region's host
    bytes, [(array, byte offset of its element 0 in the region)])]. Empty arrays
    belong to no region."""
    spans = []
    for array in arrays:
        lo = hi = 0
        for n, s in zip(array.shape, array.strides):
            if n == 0:
                break
            if s < 0:
                lo += (n - 1) * s
            else:
                hi += (n - 1) * s
        else:
            start = array.ctypes.data
            spans.append((start + lo, start + hi + array.itemsize, array))
    spans.sort(key=lambda span: span[0])
    regions = []                                # [lo, hi, [(array, element 0 address)]]
    for lo, hi, array in spans:
        if regions and lo < regions[-1][1]:
            regions[-1][1] = max(regions[-1][1], hi)
        else:
            regions.append([lo, hi, []])
        regions[-1][2].append((array, array.ctypes.data))
    out = []
    for lo, hi, members in regions:
        raw = (ctypes.c_uint8 * (hi - lo)).from_address(lo)
        out.append((np.ctypeslib.as_array(raw), [(a, start - lo) for a, start in members]))
    return out


def numpy_arguments(args):
    """The NumPy arrays among a launch's arguments (tuples included) that live in host
    memory the GPU cannot address (mapped memory has a ``device_ptr``)."""
    for value in args:
        if isinstance(value, tuple):
            yield from numpy_arguments(value)
        elif isinstance(value, np.ndarray) and getattr(value, "device_ptr", None) is None:
            yield value
