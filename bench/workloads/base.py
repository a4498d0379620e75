"""What a benchmark case is: inputs, a simt launcher, a NumPy reference, and how
its C twins are called.

A C twin (bench/cuda/*.cu, bench/openmp/*.c) is ``NAME(void **arrays, const
long *ints, const double *reals[, int reps, float *ms])``: ``arrays`` in the
order of ``Case.arrays``, ``ints`` and ``reals`` in the order of ``Case.ints``
and ``Case.reals`` (names of the size dict, or of scalars the case computes).
"""
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass
class Case:
    name: str                       # e.g. "transpose_tiled"; also the C twins' function name
    workload: str
    sizes: dict                     # {"gpu": {...}, "cpu": {...}}
    make: Callable                  # (size, rng) -> dict of host arrays and scalars
    outputs: list                   # names of the arrays the case writes
    launch: Callable                # (dict of device arrays and scalars, size) -> None (simt)
    reference: Callable             # (host dict, size) -> {output name: expected}
    arrays: list                    # argument order for the C twins
    ints: list = field(default_factory=list)
    reals: list = field(default_factory=list)
    work: Callable = None           # size -> (bytes moved, flops)
    check: Callable = None          # (got dict, expected dict) -> bool; default allclose
    kernels: list = field(default_factory=list)   # [(simt kernel, signature)] for compile times
    cupy: Callable = None           # (cupy arrays dict, size) -> None, where natural
    numba: bool = True              # the simt source also compiles under numba-cuda
    zero: list = field(default_factory=list)      # outputs that start at zero (accumulators)
    requires: str = ""              # a simt attribute this case needs (e.g. shfl_down_sync)
    note: str = ""

    def available(self):
        import simt
        return not self.requires or hasattr(simt, self.requires)

    def ok(self, got, expected):
        if self.check is not None:
            return bool(self.check(got, expected))
        return all(np.allclose(got[k], v, rtol=1e-4, atol=1e-4) for k, v in expected.items())

    def size(self, kind, sms=132):
        """The size dict for 'gpu' or 'cpu', with the device's kind and SM count."""
        return dict(self.sizes[kind], kind=kind, sms=sms)


def mostly_equal(fraction=1e-3):
    """A check that allows a small fraction of differing elements (pixels on an
    edge where contraction into fma changes a comparison)."""
    def check(got, expected):
        return all(np.mean(got[k] != v) <= fraction for k, v in expected.items())
    return check
