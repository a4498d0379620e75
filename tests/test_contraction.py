"""Float contraction is decided in the typed IR (compiler/contract.py), so every device fuses
the same ``a*b + c`` into one fma and rounds the rest step by step (issue 36 item 7: the cpu
device fused a*x+y and the sim device did not)."""
from fractions import Fraction

import numpy as np
import pytest

import simt

from conftest import poison


@simt.kernel
def forms(a, x, y, out):
    i = simt.grid(1)
    if i < x.size:
        out[0, i] = a * x[i] + y[i]           # fused: fma(a, x, y)
        out[1, i] = y[i] + a * x[i]           # fused
        out[2, i] = a * x[i] - y[i]           # fma(a, x, -y)
        out[3, i] = y[i] - a * x[i]           # fma(-a, x, y)
        t = x[i] * y[i]
        out[4, i] = t + a                     # a product held in a variable: rounded first
        acc = y[i]
        acc += x[i] * x[i]                    # fused
        out[5, i] = acc


def fma_exact(a, b, c, dtype):
    """a*b + c rounded once to ``dtype`` (through exact fractions)."""
    return np.array([float(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r)))
                     for p, q, r in np.broadcast(a, b, c)]).astype(dtype)


def expected(a, x, y, dtype):
    if dtype == np.float32:        # the float64 sum of an exact product, rounded once more:
        fma = lambda p, q, r: (np.float64(p) * q.astype(np.float64) + r).astype(dtype)  # noqa
    else:
        fma = lambda p, q, r: fma_exact(p, q, r, dtype)       # noqa: E731
    return np.stack([fma(a, x, y), fma(a, x, y), fma(a, x, -y), fma(-a, x, y),
                     (x * y) + a, fma(x, x, y)])


def run(a, x, y):
    out = poison((6, x.size), x.dtype)
    forms[(x.size + 63) // 64, 64](a, x, y, out)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_feeding_an_add_fuse_on_every_device(device, rng, dtype):
    x, y = (rng.standard_normal(300).astype(dtype) for _ in range(2))
    a = dtype(1.0 + 1 / 3)
    np.testing.assert_array_equal(run(a, x, y), expected(a, x, y, dtype))


def test_cpu_and_sim_agree_bit_for_bit(rng):
    x, y = (rng.standard_normal(256).astype(np.float32) for _ in range(2))
    a = np.float32(0.7)
    results = []
    for name in ("cpu", "sim"):
        with simt.use_device(name):
            results.append(run(a, x, y))
    np.testing.assert_array_equal(results[0], results[1])


def test_the_typed_ir_shows_the_decision():
    text = forms.inspect_types("void(float32, float32[:], float32[:], float32[:, :])")
    assert text.count("math.fma{contracted=True}(") == 5, text
    assert "t + %a" in text


@simt.kernel
def shared_product(x, y, r, out):
    i = simt.grid(1)
    if i < x.size:
        dx = x[i]
        dy = y[i]
        out[0, i] = dx * dx + dy * dy             # fma(dx, dx, dy*dy)
        out[1, i] = r * r - dx * dx - dy * dy     # fma(-dy, dy, fma(r, r, -(dx*dx)))


SHARED = "void(float32[::1], float32[::1], float32, float32[:, ::1])"


def test_a_product_fused_in_one_expression_and_rounded_in_another(device, rng):
    """dx*dx is fused in the first line and rounded on its own in the second: the GPU's
    optimizer must not merge the two products (which dropped the fusion on the GPU alone:
    bench raytrace's sphere test, 2026-12-02)."""
    x, y = (rng.standard_normal(300).astype(np.float32) for _ in range(2))
    r = np.float32(1.0 + 1 / 3)
    out = poison((2, 300), np.float32)
    shared_product[5, 64](x, y, r, out)
    f = np.float32
    want0 = fma_exact(x, x, y * y, f)
    want1 = fma_exact(-y, y, fma_exact(r, r, -(x * x), f), f)
    np.testing.assert_array_equal(out, np.stack([want0, want1]))


def test_the_gpu_code_fuses_a_product_also_rounded_elsewhere():
    """The same kernel's PTX (made without a GPU): three fmas, one per fused product."""
    ptx = str(shared_product.inspect_ptx(SHARED))
    assert ptx.count("fma.rn.f32") == 3, ptx
