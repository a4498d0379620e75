"""SIMD video intrinsics (simt.math.vadd4 ... vmin2, guide B.34) and the lane masks
(simt.lanemask_lt ... lanemask_gt, PTX's %lanemask_*): issue 35 item 8."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from conftest import poison
from simt.backends.cuda.compile import compile_kernel as compile_ptx
from simt.compiler.options import CompileOptions
from simt.ir import types as T

NAMES = ["vadd4", "vsub4", "vabsdiff4", "vmax4", "vmin4",
         "vadd2", "vsub2", "vabsdiff2", "vmax2", "vmin2"]


@simt.kernel
def simd_kernel(a, b, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[0, i] = simt.math.vadd4(a[i], b[i])
        out[1, i] = simt.math.vsub4(a[i], b[i])
        out[2, i] = simt.math.vabsdiff4(a[i], b[i])
        out[3, i] = simt.math.vmax4(a[i], b[i])
        out[4, i] = simt.math.vmin4(a[i], b[i])
        out[5, i] = simt.math.vadd2(a[i], b[i])
        out[6, i] = simt.math.vsub2(a[i], b[i])
        out[7, i] = simt.math.vabsdiff2(a[i], b[i])
        out[8, i] = simt.math.vmax2(a[i], b[i])
        out[9, i] = simt.math.vmin2(a[i], b[i])


def _reference(name, a, b):
    """Each unsigned byte (4) or halfword (2) lane on its own, wrapping within the lane."""
    lane = np.uint8 if name.endswith("4") else np.uint16
    x, y = a.view(lane), b.view(lane)
    op = name[:-1]
    if op == "vadd":
        r = x + y
    elif op == "vsub":
        r = x - y
    elif op == "vabsdiff":
        r = np.maximum(x, y) - np.minimum(x, y)
    else:
        r = (np.maximum if op == "vmax" else np.minimum)(x, y)
    return r.astype(lane).view(np.uint32)


def _operands(rng, n):
    a = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    b[:16] = a[:16]                              # equal lanes: |a - b| = 0, max = min
    b[16:32] = ~a[16:32]                         # every lane pair sums to all ones
    b[32:40] = 0xFFFFFFFF                        # the largest lanes: add and sub wrap
    return a, b


@pytest.fixture(params=["cpu", "sim"])
def host_device(request):
    """Both host devices, whatever --device says: the sim device computes these in Python,
    the cpu device runs the LLVM lowering the GPU shares."""
    with simt.use_device(request.param) as current:
        yield current


def test_simd_intrinsics_match_numpy(host_device, rng):
    n = 300
    a, b = _operands(rng, n)
    out = poison((len(NAMES), n), np.uint32)
    simd_kernel[(n + 127) // 128, 128](a, b, out)
    for row, name in enumerate(NAMES):
        np.testing.assert_array_equal(out[row], _reference(name, a, b), err_msg=name)


@simt.kernel
def lanemask_kernel(out):
    i = simt.grid(1)
    if i < out.shape[1]:
        out[0, i] = simt.lanemask_lt()
        out[1, i] = simt.lanemask_le()
        out[2, i] = simt.lanemask_eq()
        out[3, i] = simt.lanemask_ge()
        out[4, i] = simt.lanemask_gt()
        out[5, i] = np.uint32(simt.laneid())


def test_lanemasks_match_lane_ids(host_device):
    n = 96 + 7                                   # a partial last warp too
    out = poison((6, n), np.uint32)
    lanemask_kernel[2, 64](out)
    lane = np.arange(n, dtype=np.uint64) % 64 % 32
    np.testing.assert_array_equal(out[5], lane)
    bits = np.uint64(1) << lane
    full = np.uint64(0xFFFFFFFF)
    want = [bits - 1, (bits << np.uint64(1)) - 1, bits, full ^ (bits - 1),
            full ^ ((bits << np.uint64(1)) - 1)]
    for row, kind in enumerate(("lt", "le", "eq", "ge", "gt")):
        np.testing.assert_array_equal(out[row], (want[row] & full).astype(np.uint32),
                                      err_msg=kind)


def test_simd_arguments_are_checked():
    @simt.kernel
    def bad(a, out):
        out[0] = simt.math.vadd4(a[0])
    with pytest.raises(simt.CompileError, match=r"vadd4 takes 2 arguments, got 1"):
        bad.typed_ir([T.Array(np.dtype(np.uint32), 1, "C")] * 2)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptx_assembles(tmp_path):
    """The GPU lowering: vector IR the NVPTX back end turns into valid PTX, and the lane
    masks read from their special registers."""
    u32 = T.Array(np.dtype(np.uint32), 1, "C")
    u32x2 = T.Array(np.dtype(np.uint32), 2, "C")
    ptxs = [compile_ptx(simd_kernel.typed_ir([u32, u32, u32x2]), CompileOptions(), "sm_90").ptx,
            compile_ptx(lanemask_kernel.typed_ir([u32x2]), CompileOptions(), "sm_90").ptx]
    for kind in ("lt", "le", "eq", "ge", "gt"):
        assert f"%lanemask_{kind}" in ptxs[1], kind
    for k, ptx in enumerate(ptxs):
        path = tmp_path / f"k{k}.ptx"
        path.write_text(ptx)
        done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
