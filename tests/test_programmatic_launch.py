"""Programmatic dependent launch (issue 32): ``kernel.configure(grid, block, stream=s,
programmatic=True)`` with ``simt.griddepcontrol`` in the kernels. A primary writes, the
dependent waits at griddepcontrol.wait() and reads: on a GPU of compute capability 9.0 the
dependent may start early, on the CPU and sim devices it runs in stream order; the results
are the same."""
import numpy as np
import pytest

import simt
from simt import cg
from conftest import poison, random_array


@simt.kernel
def primary(a, buf):
    i = simt.grid(1)
    if i < buf.size:
        buf[i] = a[i] * np.float32(3)
    simt.griddepcontrol.launch_dependents()        # the dependent may start now


@simt.kernel
def dependent(buf, b, out):
    i = simt.grid(1)
    scaled = np.float32(0)
    if i < out.size:
        scaled = b[i] * np.float32(2)              # work that needs nothing of the primary
    simt.griddepcontrol.wait()                     # the primary's writes are visible now
    if i < out.size:
        out[(i + 7) % out.size] = buf[(i + 7) % out.size] + scaled


def test_a_dependent_reads_what_the_primary_wrote(device, rng):
    n = 3000
    a, b = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    stream = simt.Stream()
    d_a, d_b = simt.to_device(a, stream=stream), simt.to_device(b, stream=stream)
    buf, out = simt.to_device(poison(n, np.float32)), simt.to_device(poison(n, np.float32))
    blocks = (n + 255) // 256
    for _ in range(3):                 # the same launch functions, launched again
        primary[blocks, 256, 0, stream](d_a, buf)
        dependent.configure(blocks, 256, stream=stream, programmatic=True)(buf, d_b, out)
    stream.synchronize()
    rolled = np.roll(np.arange(n), -7)
    want = np.empty(n, np.float32)
    want[rolled] = a[rolled] * np.float32(3) + b * np.float32(2)
    np.testing.assert_array_equal(out.copy_to_host(), want)


@simt.kernel
def step(src, dst):
    """One link of a chain: waits for the link before, lets the next one start early."""
    simt.griddepcontrol.wait()
    i = simt.grid(1)
    simt.griddepcontrol.launch_dependents()
    if i < dst.size:
        dst[i] = src[(i + 1) % src.size] + np.int32(1)


def test_a_chain_of_programmatic_launches(device, rng):
    n, links = 1000, 6
    a = random_array(rng, n, np.int32)
    stream = simt.Stream()
    src = simt.to_device(a, stream=stream)
    ping, pong = simt.to_device(poison(n, np.int32)), simt.to_device(poison(n, np.int32))
    launch = step.configure(4, 256, stream=stream, programmatic=True)
    dst = ping
    for _ in range(links):
        launch(src, dst)
        src, dst = dst, (pong if dst is ping else ping)
    stream.synchronize()
    expected = a.copy()
    for _ in range(links):
        expected = np.roll(expected, -1) + 1
    np.testing.assert_array_equal(src.copy_to_host(), expected)


@simt.kernel
def cluster_dependent(buf, out):
    simt.griddepcontrol.wait()
    c = cg.this_cluster()
    if simt.threadIdx.x == 0:
        out[simt.blockIdx.x] = buf[simt.blockIdx.x] * np.float32(10) + np.float32(c.block_rank())


def test_programmatic_launch_in_clusters(device, rng):
    a = random_array(rng, 8, np.float32)
    stream = simt.Stream()
    buf, out = simt.to_device(poison(8, np.float32)), simt.to_device(poison(8, np.float32))
    primary[1, 32, 0, stream](simt.to_device(a, stream=stream), buf)
    cluster_dependent.configure(8, 32, stream=stream, cluster=(4, 1, 1),
                                programmatic=True)(buf, out)
    stream.synchronize()
    want = a * np.float32(3) * np.float32(10) + (np.arange(8) % 4).astype(np.float32)
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-6)   # a fused multiply-add


def test_programmatic_is_true_or_false():
    with pytest.raises(TypeError, match=r"dependent.configure: programmatic is True or "
                                        r"False; got 'yes'"):
        dependent.configure(1, 32, programmatic="yes")


class _OldGpu:
    """What require_programmatic reads of a CUDA backend: an Ampere GPU."""
    index = 0

    def properties(self):
        class Props:
            compute_capability = (8, 0)
        return Props()


def test_gpus_below_9_0_refuse_programmatic_launches():
    from simt.backends.cuda.kernels import require_programmatic
    with pytest.raises(simt.NotSupportedError,
                       match=r"programmatic dependent launch of 'dependent' needs compute "
                             r"capability 9.0 or higher; cuda:0 is 8.0"):
        require_programmatic(_OldGpu(), dependent)
