"""The CPU device makes a kernel with barriers for the block shape it is launched with (its
thread loops' extents as constants: CompileOptions.block), and a kernel without them once
for every shape; both give the right results, and a warm disk cache finds either without
the compiler's front end."""
import os
import subprocess
import sys

import numpy as np
import pytest

import simt
from simt.ir import types as T

SRC = os.path.join(os.path.dirname(__file__), os.pardir, "src")


@simt.kernel
def reverse_tiles(a, out):
    """Each block reverses its slice of ``a`` through shared memory (a barrier)."""
    tile = simt.shared.array(1024, np.float32)
    n = simt.blockDim.x * simt.blockDim.y
    t = simt.threadIdx.y * simt.blockDim.x + simt.threadIdx.x
    i = simt.blockIdx.x * n + t
    if i < a.shape[0]:
        tile[t] = a[i]
    simt.syncthreads()
    j = simt.blockIdx.x * n + (n - 1 - t)
    if i < a.shape[0] and j < a.shape[0]:
        out[i] = tile[n - 1 - t]


@simt.kernel
def scale(a, out):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[i] = 2 * a[i]


def _reversed_tiles(a, n):
    want = a.copy()
    for s in range(0, a.size - a.size % n, n):
        want[s:s + n] = a[s:s + n][::-1]
    return want


@pytest.fixture
def cpu():
    if simt.get_device().kind != "cpu":
        pytest.skip("block shapes are the CPU device's")
    previous = simt.get_device()
    yield simt.set_device("cpu", boundscheck=False)
    simt.set_device(previous)


@pytest.mark.parametrize("block", [(32, 4), (7, 3), (64, 1)])
def test_a_kernel_with_barriers_is_made_for_its_block_shape(cpu, rng, block):
    n = block[0] * block[1]
    a = rng.random(n * 5, dtype=np.float32)
    out = simt.to_device(np.full_like(a, np.nan))
    reverse_tiles[5, block](simt.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), _reversed_tiles(a, n))
    types = (T.typeof(out), T.typeof(out))
    loaded = reverse_tiles.binary_for(types, cpu, (*block, 1))
    assert loaded.binary.block == (*block, 1) and loaded.binary.barriers
    assert reverse_tiles.binary_for(types, cpu).binary.block is None   # for any shape


def test_a_kernel_made_for_shapes_is_one_signature_to_inspect(cpu, rng):
    """After launches in two shapes, inspecting and occupancy questions without a
    signature find the one signature (not two compiles, not none)."""
    k = simt.kernel(reverse_tiles.pyfunc)
    a = simt.to_device(rng.random(1024, dtype=np.float32))
    out = simt.device_array(1024, np.float32)
    for block in ((32, 4), (64, 2)):
        k[2, block](a, out)
    assert "syncthreads" in k.inspect_types()
    assert k.max_active_blocks_per_multiprocessor(128) >= 1


def test_shapes_launched_in_turn_keep_their_own_code(cpu, rng):
    a = rng.random(4096, dtype=np.float32)
    da = simt.to_device(a)
    for _ in range(2):
        for block in ((32, 4), (16, 2)):
            out = simt.to_device(np.full_like(a, np.nan))
            reverse_tiles[8, block](da, out)
            np.testing.assert_array_equal(out.copy_to_host()[:8 * block[0] * block[1]],
                                          _reversed_tiles(a, block[0] * block[1])
                                          [:8 * block[0] * block[1]])


def test_after_a_few_shapes_one_kernel_serves_the_others(cpu, rng):
    """A kernel tried over many block sizes does not compile at each: after SHAPES shapes
    the kernel for any shape serves the rest."""
    from simt.runtime.kernel import SHAPES
    k = simt.kernel(reverse_tiles.pyfunc)
    a = rng.random(2048, dtype=np.float32)
    made = []
    for threads in [16 * (i + 1) for i in range(SHAPES + 2)]:
        out = simt.to_device(np.full_like(a, np.nan))
        k[4, threads](simt.to_device(a), out)
        np.testing.assert_array_equal(out.copy_to_host()[:4 * threads],
                                      _reversed_tiles(a, threads)[:4 * threads])
        types = (T.typeof(out), T.typeof(out))
        made.append(k.binary_for(types, cpu, (threads, 1, 1)).binary.block)
    assert made[:SHAPES] == [(16 * (i + 1), 1, 1) for i in range(SHAPES)]
    assert made[SHAPES:] == [None, None]


def test_a_kernel_without_barriers_is_made_once_for_every_shape(cpu, rng):
    a = rng.random(1000, dtype=np.float32)
    for threads in (32, 100, 256):
        out = simt.to_device(np.full_like(a, np.nan))
        scale[(a.size + threads - 1) // threads, threads](simt.to_device(a), out)
        np.testing.assert_array_equal(out.copy_to_host(), 2 * a)
    types = (T.typeof(out), T.typeof(out))
    made = {id(scale.binary_for(types, cpu, (t, 1, 1))) for t in (32, 100, 256)}
    assert len(made) == 1 and scale.binary_for(types, cpu, (32, 1, 1)).binary.block is None


def _reversed_on(kernel, a, **device_options):
    """``kernel`` run on a CPU device with these options (2 blocks of 128 threads, checked
    against NumPy); the binary a launch of that shape takes there."""
    with simt.use_device("cpu", **device_options) as device:
        out = simt.to_device(np.zeros_like(a))
        kernel[2, 128](simt.to_device(a), out)
        np.testing.assert_array_equal(out.copy_to_host(), _reversed_tiles(a, 128))
        return kernel.binary_for((T.typeof(out), T.typeof(out)), device, (128, 1, 1)).binary


def test_checked_mode_and_declared_signatures_keep_one_kernel(rng):
    if simt.get_device().kind != "cpu":
        pytest.skip("block shapes are the CPU device's")
    a = rng.random(256, dtype=np.float32)
    assert _reversed_on(reverse_tiles, a, checks=True).block is None
    declared = simt.kernel(reverse_tiles.pyfunc, signature="void(float32[:], float32[:])")
    assert _reversed_on(declared, a, boundscheck=False).block is None


PROGRAM = """
import sys
sys.path.insert(0, TESTS)
import numpy as np, simt
simt.set_device("cpu", boundscheck=False)
from test_cpu_block_shapes import reverse_tiles, scale, _reversed_tiles
a = np.arange(512, dtype=np.float32)
out = simt.device_array(512, np.float32)
reverse_tiles[4, (32, 4)](simt.to_device(a), out)
assert (out.copy_to_host() == _reversed_tiles(a, 128)).all()
scale[4, 128](simt.to_device(a), out)
assert (out.copy_to_host() == 2 * a).all()
blocks = sorted({f"{k.__name__}={v.binary.block}".replace(" ", "")
                 for k in (reverse_tiles, scale)
                 for v in (*k.compiled.values(), *k.shaped.values())})
front = any(m.startswith("simt.compiler.frontend") for m in sys.modules)
print(" ".join(blocks), "front-end" if front else "no-front-end")
""".replace("TESTS", repr(os.path.dirname(os.path.abspath(__file__))))


def test_a_warm_cache_finds_either_kernel_without_the_front_end(tmp_path):
    env = dict(os.environ, PYTHONPATH=SRC, SIMT_CACHE_DIR=str(tmp_path))
    env.pop("SIMT_DEVICE", None)
    runs = [subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    cold, warm = (run.stdout.split() for run in runs)
    assert cold[:-1] == warm[:-1] == ["reverse_tiles=(32,4,1)", "scale=None"]
    assert cold[-1] == "front-end" and warm[-1] == "no-front-end"
