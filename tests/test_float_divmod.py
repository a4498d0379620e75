"""Float // and % follow NumPy (floor_divide, remainder) on every pair of special values:
1.0 // 0.0 is inf, 1.0 % 0.0 is nan, signs of zero quotients and remainders as NumPy's."""

import numpy as np
import pytest

import simt
from conftest import poison

SPECIAL = [1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 5.5, -5.5, 3.0, 1e300, -1e-300, 0.1]


@simt.kernel
def divmod_kernel(x, y, q, r):
    i = simt.grid(1)
    if i < x.shape[0]:
        q[i] = x[i] // y[i]
        r[i] = x[i] % y[i]


def same(got, expect):
    """Equal bit for bit up to the NaN payload: values, infinities and signs of zero."""
    return (np.isnan(got) == np.isnan(expect)) & \
        ((got == expect) & (np.signbit(got) == np.signbit(expect)) | np.isnan(expect))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_float_floordiv_and_mod_follow_numpy(device, rng, dtype):
    xs, ys = np.meshgrid(SPECIAL, SPECIAL)
    with np.errstate(over="ignore"):             # 1e300 is inf in float32
        x = np.concatenate([xs.ravel(), rng.standard_normal(200) * 100]).astype(dtype)
        y = np.concatenate([ys.ravel(), rng.standard_normal(200)]).astype(dtype)
    q, r = poison(x.size, dtype), poison(x.size, dtype)
    divmod_kernel[(x.size + 63) // 64, 64](x, y, q, r)
    with np.errstate(all="ignore"):
        eq, er = np.floor_divide(x, y), np.remainder(x, y)
    bad = ~same(q, eq) | ~same(r, er)
    assert not bad.any(), list(zip(x[bad], y[bad], q[bad], eq[bad], r[bad], er[bad]))[:5]


@simt.kernel
def literal_kernel(out):
    out[0] = 1.0 // 0.0
    out[1] = -1.0 // 0.0
    out[2] = 1.0 % 0.0
    out[3] = -7.0 // 2.0
    out[4] = -7.0 % 2.0
    out[5] = 7.0 % -2.0


def test_float_floordiv_literals(device):
    out = poison(6, np.float64)
    literal_kernel[1, 1](out)
    with np.errstate(all="ignore"):
        expect = [np.floor_divide(1.0, 0.0), np.floor_divide(-1.0, 0.0), np.remainder(1.0, 0.0),
                  -4.0, 1.0, -1.0]
    assert same(out, np.array(expect)).all(), out
