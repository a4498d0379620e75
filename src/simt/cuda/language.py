"""numba-cuda's kernel-side names: simt's own objects (the front end resolves names by
value, so ``cuda.threadIdx`` must be ``simt.threadIdx``), and the few numba has that
simt spells otherwise (``cuda.laneid`` read without a call, ``selp``, the atomics
``compare_and_swap``, ``nanmax`` and ``nanmin``, fp16's comparisons) as device functions."""
import numpy as np

from ..lang import atomic as _atomic, math as _math, warp as _warp
from ..lang.half import ENTRIES as _HALF
from ..lang.indices import warpSize
from ..lang.registry import Namespace
from ..runtime.kernel import device as _device

warpsize = warpSize
fma, cbrt, brev, clz, ffs, popc = _math.fma, _math.cbrt, _math.brev, _math.clz, \
    _math.ffs, _math.popc
float16, float32, float64 = np.float16, np.float32, np.float64
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
complex64, complex128, boolean = np.complex64, np.complex128, np.bool_


class _ReadAsValue:
    """A simt intrinsic numba reads without a call (``cuda.laneid``, not laneid())."""

    value = True

    def __init__(self, entry):
        self.entry = entry

    def build(self, fc, args, kwargs, loc):
        return self.entry.build(fc, [], {}, loc)

    def __repr__(self):
        return f"<numba name for simt.{self.entry.op}()>"


laneid = _ReadAsValue(_warp.laneid)


@_device
def selp(cond, a, b):
    """numba's cuda.selp: ``a if cond else b``."""
    return a if cond else b


@_device
def _compare_and_swap(ary, old, val):
    return _atomic.cas(ary, 0, old, val)


@_device
def _nanmax(ary, idx, val):
    old = ary[idx]
    while not (val <= old or val != val):    # NaNs in val are missing; in ary replaced
        seen = _atomic.cas(ary, idx, old, val)
        if seen == old or (seen != seen and old != old):
            return old
        old = seen
    return old


@_device
def _nanmin(ary, idx, val):
    old = ary[idx]
    while not (val >= old or val != val):
        seen = _atomic.cas(ary, idx, old, val)
        if seen == old or (seen != seen and old != old):
            return old
        old = seen
    return old


atomic = Namespace("cuda.atomic", "numba's atomics: simt.atomic's, plus "
                   "compare_and_swap(ary, old, val) (index 0), nanmax and nanmin",
                   **{n: getattr(_atomic, n) for n in ("add", "sub", "and_", "or_", "xor",
                                                       "exch", "inc", "dec", "max", "min",
                                                       "cas")},
                   compare_and_swap=_compare_and_swap, nanmax=_nanmax, nanmin=_nanmin)
@_device
def _heq(a, b):
    return a == b


@_device
def _hne(a, b):
    return a != b


@_device
def _hge(a, b):
    return a >= b


@_device
def _hgt(a, b):
    return a > b


@_device
def _hle(a, b):
    return a <= b


@_device
def _hlt(a, b):
    return a < b


fp16 = Namespace("cuda.fp16", "numba's half-precision functions: simt's cuda_fp16 names, "
                 "and the comparisons heq, hne, hge, hgt, hle, hlt",
                 **{n: e for n, e in _HALF.items() if n.startswith("h")},
                 heq=_heq, hne=_hne, hge=_hge, hgt=_hgt, hle=_hle, hlt=_hlt)
libdevice = Namespace("cuda.libdevice", "numba's libdevice functions that simt.math has",
                      **{n: v for n, v in vars(_math).items() if not n.startswith("_")})
