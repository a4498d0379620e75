"""Checked mode (cpu, checks=True) and the sim device: what the host writes (memsets of
every element size, copies, 2-D copies, graph memset and memcpy nodes, captured memsets)
counts as written, so a kernel reading it is clean; memory nothing wrote is still an
uninitialized read (issue 34 item 2)."""
import numpy as np
import pytest

import simt
from conftest import poison, random_array
from simt import threadIdx

SPECS = {"cpu-checked": ("cpu", {"checks": True}), "sim": ("sim", {})}
N = 32


@simt.kernel
def twice(src, out):
    i = threadIdx.x
    out[i] = 2 * src[i]                                        # <- twice


def run(src, out):
    twice[1, N](src, out)
    simt.synchronize()


def memset_value(src, value):
    simt.memset(src, value)


def stream_memset(src, value):
    stream = simt.Stream()
    simt.memset(src, value, stream=stream)
    stream.synchronize()


def graph_memset(src, value):
    graph = simt.Graph()
    graph.add_memset(src, value)
    graph.instantiate().launch()


def graph_memcpy(src, value):
    graph = simt.Graph()
    graph.add_memcpy(src, np.full(src.shape, value, src.dtype))
    graph.instantiate().launch()


def captured_memset(src, value):
    stream = simt.Stream()
    with stream.capture() as graph:
        simt.memset(src, value, stream=stream)
    graph.instantiate().launch(stream)
    stream.synchronize()


def copy_2d(src, value):
    rows = src.reshape(4, N // 4)
    simt.copy_2d(rows, np.full((4, N // 4), value, src.dtype))


WRITES = {"memset": memset_value, "stream_memset": stream_memset,
          "graph_memset": graph_memset, "graph_memcpy": graph_memcpy,
          "captured_memset": captured_memset, "copy_2d": copy_2d}


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.float32])
@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("spec", sorted(SPECS))
def test_host_writes_count_as_written(spec, write, dtype, rng):
    name, options = SPECS[spec]
    with simt.use_device(name, **options):
        value = int(rng.integers(1, 100))
        src = simt.device_array(N, dtype)
        out = simt.to_device(poison(N, dtype))
        WRITES[write](src, value)
        run(src, out)
        expected = np.full(N, value, dtype) * 2
        np.testing.assert_array_equal(out.copy_to_host(), expected.astype(dtype))


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_unwritten_memory_is_still_reported(spec, rng):
    """A fresh device_array is an uninitialized read; a memset of half of it leaves the
    other half unwritten (the allocation's shadow exists by then: it was launched)."""
    name, options = SPECS[spec]
    with simt.use_device(name, **options):
        out = simt.to_device(poison(N, np.float32))
        src = simt.device_array(N, np.float32)
        with pytest.raises(simt.UninitializedReadError, match=r"src\[0\]"):
            run(src, out)
        simt.memset(src[:N // 2], 0)
        with pytest.raises(simt.UninitializedReadError, match=rf"src\[{N // 2}\]"):
            run(src, out)
        host = random_array(rng, N, np.float32)
        src.copy_from(host)
        run(src, out)
        np.testing.assert_array_equal(out.copy_to_host(), 2 * host)
