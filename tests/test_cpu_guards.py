"""Kernels of the shape ``i = ...; if guard: body``: on the CPU, blocks whose threads all pass
the guard run the body unguarded (backends/cpu/guards.py). Partial last blocks, guards that
pass and fail within a block, 2-D guards and a return inside the guarded body."""
import numpy as np
import pytest

import simt
from simt.ir import types as T
from conftest import poison, random_array
from simt.backends.cpu import guards


@pytest.fixture(autouse=True)
def split_everywhere(monkeypatch):
    """The split is made on every host here (it is only wanted on Zen 1-3 cores)."""
    monkeypatch.setattr(guards, "SLOW_MASKED", True)


@simt.kernel
def axpy_guarded(a, x, y, out):
    i = simt.blockIdx.x * simt.blockDim.x + simt.threadIdx.x
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@simt.kernel
def every_third(x, out):
    i = simt.grid(1)
    if i % 3 == 0 and i < out.shape[0]:
        out[i] = x[i] * 2.0


@simt.kernel
def inside_2d(x, out):
    r = simt.blockIdx.y * simt.blockDim.y + simt.threadIdx.y
    c = simt.blockIdx.x * simt.blockDim.x + simt.threadIdx.x
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] = x[r, c] + r - c


@simt.kernel
def returns_early(x, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        if x[i] < 0.0:
            return
        out[i] = np.float32(1.0) / x[i]


def test_partial_last_block(device, rng):
    n = 1000 * 33 + 17
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    out = simt.to_device(poison(n, np.float32))
    axpy_guarded[(n + 255) // 256, 256](np.float32(1.5), simt.to_device(x),
                                        simt.to_device(y), out)
    want = (1.5 * x.astype(np.float64) + y).astype(np.float32)     # a fused multiply-add
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-6, atol=1e-7)


def test_guard_failing_inside_every_block(device, rng):
    n = 4000
    x = random_array(rng, n, np.float64)
    start = poison(n, np.float64)
    out = simt.to_device(start)
    every_third[(n + 127) // 128, 128](simt.to_device(x), out)
    want = start.copy()
    want[::3] = x[::3] * 2.0
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_two_dimensional_guard(device, rng):
    h, w = 70, 45
    x = random_array(rng, (h, w), np.float64)
    out = simt.to_device(poison((h, w), np.float64))
    inside_2d[((w + 15) // 16, (h + 7) // 8), (16, 8)](simt.to_device(x), out)
    rows, cols = np.indices((h, w))
    np.testing.assert_array_equal(out.copy_to_host(), x + rows - cols)


def test_return_inside_the_guard(device, rng):
    n = 3 * 256
    x = random_array(rng, n, np.float32)
    start = poison(n, np.float32)
    out = simt.to_device(start)
    returns_early[3, 256](simt.to_device(x), out)
    want = np.where(x < 0, start, np.float32(1) / x)
    np.testing.assert_array_equal(out.copy_to_host(), want)


def _body(kernel, signature):
    return kernel.typed_ir(T.parse_signature(signature)).body


@simt.kernel
def guard_reads_memory(x, out):
    i = simt.grid(1)
    if x[i] > 0.0:
        out[i] = 1.0


def test_only_pure_guards_are_split():
    with simt.use_device("cpu"):
        assert guards.split(_body(axpy_guarded, "void(float32, float32[::1], float32[::1], "
                                                "float32[::1])")) is not None
        assert guards.split(_body(returns_early, "void(float32[::1], float32[::1])")) is not None
        # a load in the guard is not evaluated twice
        assert guards.split(_body(guard_reads_memory, "void(float64[::1], float64[::1])")) is None
