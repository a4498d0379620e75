"""Asynchronous copies through a thread-scope pipeline (lang/pipeline.py): a double-buffered
tiled matrix multiply against NumPy, the cp.async PTX it gets, and the errors."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import simt
from simt.ir import types as T
from conftest import poison, random_array

# The double-buffered matmul of bench/async_copy.py: the kernel the bench times is the one tested.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
from async_copy import TILE, pipelined as double_buffered   # noqa: E402


def test_double_buffered_matmul(device, rng):
    n = 64
    a, b = random_array(rng, (n, n), np.float32), random_array(rng, (n, n), np.float32)
    c = poison((n, n), np.float32)
    double_buffered[(n // TILE, n // TILE), (TILE, TILE)](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


@simt.kernel
def odd_copy(dst, src, start, count):
    """Copies of a run-time count from any offset: the GPU's fallback path."""
    buf = simt.shared.array(64, np.float16)
    pipe = simt.pipeline()
    if simt.threadIdx.x == 0:
        simt.memcpy_async(buf, 1, src, start, count, pipe)
    pipe.producer_commit()
    pipe.consumer_wait()
    simt.syncthreads()
    for i in range(simt.threadIdx.x, count, simt.blockDim.x):
        dst[i] = buf[1 + i]
    pipe.consumer_release()


def test_unaligned_copy_of_a_runtime_count(device, rng):
    src = random_array(rng, 64, np.float16)
    dst = poison(37, np.float16)
    odd_copy[1, 32](dst, src, 3, 37)
    np.testing.assert_array_equal(dst, src[3:40])


@pytest.fixture(scope="module")
def copy_ptx():
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions
    sig = T.parse_signature("(float32[:, ::1], float32[:, ::1], float32[:, ::1])")
    return compile_kernel(double_buffered.typed_ir(sig), CompileOptions(), "sm_90").ptx


def test_ptx_has_cp_async(copy_ptx):
    # 16 bytes bypass L1 (.cg) as CUDA's memcpy_async does; 4 bytes can only be .ca
    assert re.search(r"cp\.async\.cg\.shared\.global \[%rd\d+\], \[%rd\d+\], 16;", copy_ptx)
    assert re.search(r"cp\.async\.ca\.shared\.global \[%rd\d+\], \[%rd\d+\], 4;", copy_ptx)
    assert "cp.async.commit_group;" in copy_ptx
    for n in (0, 1):
        assert re.search(rf"cp\.async\.wait_group\s+{n};", copy_ptx)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptxas_accepts_the_copies(copy_ptx, tmp_path):
    path = tmp_path / "copy.ptx"
    path.write_text(copy_ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@simt.kernel
def no_pipe(a, b):
    simt.memcpy_async(a, 0, b, 0, 4, 0)


@simt.kernel
def mixed_types(a, b):
    pipe = simt.pipeline()
    simt.memcpy_async(a, 0, b, 0, 4, pipe)


def test_errors():
    x = np.zeros(8, np.float32)
    with pytest.raises(simt.CompileError, match="must be a simt.pipeline"):
        no_pipe[1, 1](x, x)
    with pytest.raises(simt.CompileError, match="the destination holds float32, the source int32"):
        mixed_types[1, 1](x, np.zeros(8, np.int32))
