"""``round(x, ndigits)`` of a float in kernels: CPython's fallback algorithm (the one it
uses without dtoa, as numba-cuda does on GPUs): scale by a power of ten in float64, round
to the nearest integer with halves to even, scale back; infinities, NaNs and a scaled
value that overflows return x unchanged. The result has x's type."""
import math

from .mathlib import math_ns
from .registry import PlainDeviceFunction

_compiled = []


def _round_ndigits(x, ndigits):
    if math.isinf(x) or math.isnan(x):
        return x
    pow1 = 1.0
    pow2 = 1.0
    if ndigits >= 0:
        if ndigits > 22:              # pow1 * pow2 may overflow where each does not
            pow1 = 10.0 ** (ndigits - 22)
            pow2 = 1e22
        else:
            pow1 = 10.0 ** ndigits
        y = (x * pow1) * pow2
        if math.isinf(y):
            return x
    else:
        pow1 = 10.0 ** (-ndigits)
        y = x / pow1
    z = math_ns.round(y)              # halves away from zero
    if math.fabs(y - z) == 0.5:
        z = 2.0 * math_ns.round(y / 2.0)          # halves to even
    if ndigits >= 0:
        z = (z / pow2) / pow1
    else:
        z = z * pow1
    return z


def function():
    """The device function ``round(x, ndigits)`` calls."""
    if not _compiled:
        _compiled.append(PlainDeviceFunction(_round_ndigits))
    return _compiled[0]
