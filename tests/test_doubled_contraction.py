"""x*y + y*x + c becomes fma(x*y, 2, c) (compiler/ops.py): LLVM merges the two products and
writes 2*t as t + t, which no longer contracts with + c. t + t is exact, so the fused form
rounds as the unfused one: results must not change, on any device."""
import numpy as np
import pytest

import simt

from conftest import poison, random_array


@simt.kernel
def doubled(x, y, c, out):
    i = simt.grid(1)
    if i < out.shape[1]:
        a, b, k = x[i], y[i], c[i]
        out[0, i] = a * b + b * a + k          # a complex square's imaginary part
        out[1, i] = k + (a * b + a * b)
        out[2, i] = a * b + b * a - k
        out[3, i] = a * b + b * k + k          # not a doubling: stays as written


SIG = "(float32[::1], float32[::1], float32[::1], float32[:, ::1])"


def test_doubled_products_are_exact(device, rng):
    n = 1000
    x, y, c = (random_array(rng, (n,), np.float32) * 100 for _ in range(3))
    out = simt.to_device(poison((4, n), np.float32))
    doubled[(n + 127) // 128, 128](simt.to_device(x), simt.to_device(y), simt.to_device(c), out)
    t = x * y                                   # float32 products, as the kernel's
    expect = np.stack([(t + t) + c, c + (t + t), (t + t) - c, (t + y * c) + c])
    got = out.copy_to_host()
    np.testing.assert_array_equal(got[:3], expect[:3])
    scale = np.abs(t) + np.abs(y * c) + np.abs(c)                # a*b + b*k may contract
    assert np.all(np.abs(got[3] - expect[3]) <= 1e-6 * scale)


def test_doubled_products_fuse_with_the_addend():
    with simt.use_device("cpu"):
        text = doubled.inspect_llvm(SIG)
    assert text.count("llvm.fmuladd") >= 3 + 1, text    # three calls and the declaration
    assert text.count("2.000000e+00") >= 3 or text.count("0x4000000000000000") >= 3
    with simt.use_device("cpu"):                 # the PTX, made without a GPU
        ptx = doubled.inspect_ptx(SIG)
    fused = [line for line in ptx.splitlines() if "fma.rn.f32" in line and "0f40000000" in line]
    assert len(fused) >= 2, ptx                  # rows 0 and 1 are one value: LLVM merges them


@simt.kernel
def stored_between(x, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        a = x[i]
        p = a * a
        a = a + np.float32(1)                  # a store between the two reads of a
        out[i] = p + a * a + x[i]


def test_a_store_between_the_reads_is_not_a_doubling(device, rng):
    n = 256
    x = random_array(rng, (n,), np.float32)
    out = simt.to_device(poison(n, np.float32))
    stored_between[(n + 63) // 64, 64](simt.to_device(x), out)
    a1 = x + np.float32(1)
    scale = x * x + a1 * a1 + np.abs(x)                          # products may contract
    assert np.all(np.abs(out.copy_to_host() - ((x * x + a1 * a1) + x)) <= 1e-6 * scale)
    with simt.use_device("cpu"):
        assert "llvm.fmuladd" not in stored_between.inspect_llvm("(float32[::1], float32[::1])")
