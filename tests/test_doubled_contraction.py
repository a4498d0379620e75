"""x*y + y*x + c becomes fma(x*y, 2, c) (compiler/contract.py in the typed IR; compiler/ops.py
under fastmath=True): LLVM merges the two products and
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
        out[4, i] = a + a + k                  # a local read twice


SIG = "(float32[::1], float32[::1], float32[::1], float32[:, ::1])"


def test_doubled_products_are_exact(device, rng):
    n = 1000
    x, y, c = (random_array(rng, (n,), np.float32) * 100 for _ in range(3))
    out = simt.to_device(poison((5, n), np.float32))
    doubled[(n + 127) // 128, 128](simt.to_device(x), simt.to_device(y), simt.to_device(c), out)
    t = x * y                                   # float32 products, as the kernel's
    expect = np.stack([(t + t) + c, c + (t + t), (t + t) - c, (t + y * c) + c, (x + x) + c])
    got = out.copy_to_host()
    np.testing.assert_array_equal(got[[0, 1, 2, 4]], expect[[0, 1, 2, 4]])
    scale = np.abs(t) + np.abs(y * c) + np.abs(c)                # a*b + b*k may contract
    assert np.all(np.abs(got[3] - expect[3]) <= 1e-6 * scale)


def test_doubled_products_fuse_with_the_addend():
    with simt.use_device("cpu"):
        text = doubled.inspect_llvm(SIG)
    # the typed IR decided it (compiler/contract.py): math.fma(t, 2, c), an llvm.fma here
    assert text.count("llvm.fma.f32") >= 4 + 1, text    # four calls and the declaration
    assert text.count("2.000000e+00") >= 4 or text.count("0x4000000000000000") >= 4
    with simt.use_device("cpu"):                 # the PTX, made without a GPU
        ptx = doubled.inspect_ptx(SIG)
    fused = [line for line in ptx.splitlines() if "fma.rn.f32" in line and "0f40000000" in line]
    assert len(fused) >= 3, ptx                  # rows 0 and 1 are one value: LLVM merges them


def test_loads_with_a_write_between_are_not_the_same_value():
    """Two loads of one local are one value only with nothing between them that may write
    memory (a store, a call, an atomic); loads of different locals never are."""
    from llvmlite import ir as ll
    from simt.compiler import ops

    f32 = ll.FloatType()
    module = ll.Module()
    fn = ll.Function(module, ll.FunctionType(ll.VoidType(), [f32]), "f")
    b = ll.IRBuilder(fn.append_basic_block())
    a, other = b.alloca(f32), b.alloca(f32)
    b.store(fn.args[0], a)
    first, second = b.load(a), b.load(a)
    assert ops._same(b, first, second)
    assert not ops._same(b, first, b.load(other))
    b.store(fn.args[0], other)                    # any store between: not trusted
    assert not ops._same(b, first, b.load(a))
    third = b.load(a)
    callee = ll.Function(module, ll.FunctionType(ll.VoidType(), []), "g")
    b.call(callee, [])
    assert not ops._same(b, third, b.load(a))
    # the LLVM-level rewrite serves fastmath=True (contract flags); the IR decides otherwise
    product = b.fmul(first, second, flags=ops.FAST_FLAGS)
    swapped = b.fmul(second, first, flags=ops.FAST_FLAGS)
    assert ops._doubled(b, b.fadd(product, swapped, flags=ops.FAST_FLAGS)) is product
    assert ops._doubled(b, b.fadd(product, swapped)) is None       # no contract: left alone
