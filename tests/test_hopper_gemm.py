"""The Hopper GEMM written in simt (bench/hopper_gemm.py: TMA with 128-byte swizzle, wgmma
m64n256k16, a 4-stage mbarrier ring) gives NumPy's product, bit for bit on small integers,
on the cpu and sim devices (CI) and on a compute capability 9.0 GPU."""
import pathlib
import sys

import numpy as np
import pytest

import simt
from conftest import poison

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "bench"))
import hopper_gemm  # noqa: E402


def _skip_unless_runs(device):
    if device.kind == "cuda" and device.properties.compute_capability != (9, 0):
        pytest.skip("wgmma needs a compute capability 9.0 GPU")


@pytest.mark.parametrize("shape", [(128, 256, 256), (256, 512, 512)])
def test_hopper_gemm_is_exact(device, rng, shape):
    _skip_unless_runs(device)
    if device.kind == "sim" and shape != (128, 256, 256):
        pytest.skip("one tile is enough on the sim device (its wgmma is Python: 13 s a tile)")
    m, n, k = shape
    a = rng.integers(-4, 5, (m, k)).astype(np.float16)
    bt = rng.integers(-4, 5, (n, k)).astype(np.float16)
    a[0, 0] = bt[0, 0] = 3                       # never all zero
    c = simt.to_device(poison((m, n), np.float16))
    hopper_gemm.gemm(simt.to_device(a), simt.to_device(bt), c)
    want = (a.astype(np.float32) @ bt.T.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(c.copy_to_host(), want)


def test_shapes_the_kernel_does_not_tile_are_refused(device):
    _skip_unless_runs(device)
    a = simt.to_device(np.ones((100, 256), np.float16))
    bt = simt.to_device(np.ones((256, 256), np.float16))
    with pytest.raises(ValueError, match="M % 128"):
        hopper_gemm.gemm(a, bt, simt.to_device(np.zeros((100, 256), np.float16)))


@pytest.mark.parametrize("epilogue", ["direct", "tma"])
@pytest.mark.parametrize("schedule", ["cooperative", "pingpong"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float8_e4m3"])
def test_persistent_warp_specialised_gemm_is_exact(device, rng, dtype, schedule, epilogue):
    """bench/hopper_gemm_ws.py: a producer warpgroup and two consumer warpgroups waiting on
    each other's barriers (the cpu device runs the warps as fibers), 3 blocks walking 4 tiles;
    bfloat16 (its accumulators narrowed in pairs: cvt.rn.bf16x2.f32 on the GPU); FP8 with a
    per-tensor scale into float16. The ping-pong schedule: each consumer warpgroup a tile of
    its own, taking turns through named barriers (3 blocks walking 8 tiles: odd and even
    counts per warpgroup). The TMA-store epilogue: each consumer warpgroup's tile through a
    128B-swizzled shared buffer (stmatrix) and TMA stores, the buffer reused across tiles
    (and, cooperative, across the two halves of a tile) once the stores have read it."""
    _skip_unless_runs(device)
    if device.kind == "sim":
        pytest.skip("the sim device runs it too (minutes: python bench/hopper_gemm_ws.py sim)")
    import hopper_gemm_ws
    m, n, k = 256, 512, 1024 if dtype == "float8_e4m3" else 512
    a = rng.integers(-3, 4, (m, k)).astype(np.float32)
    bt = rng.integers(-3, 4, (n, k)).astype(np.float32)
    a[0, 0] = bt[0, 0] = 3                       # never all zero
    kind = {"float16": np.float16, "bfloat16": simt.bfloat16,
            "float8_e4m3": simt.float8_e4m3}[dtype]
    out = simt.bfloat16 if dtype == "bfloat16" else np.float16
    scale = 0.5 if dtype == "float8_e4m3" else 1.0
    c = simt.to_device(poison((m, n), out))
    hopper_gemm_ws.gemm(simt.to_device(a.astype(kind)), simt.to_device(bt.astype(kind)), c,
                        blocks=3, scale=scale, schedule=schedule, epilogue=epilogue)
    want = ((a @ bt.T) * scale).astype(out)
    np.testing.assert_array_equal(c.copy_to_host().astype(np.float32), want.astype(np.float32))
