"""Issue 35 item 9: cudaDeviceProp in full, stream priority ranges, CUDA_LAUNCH_BLOCKING,
kernel attributes and cache configuration, L2 persistence settings and device reset, on
every device (the GPU paths run with --device cuda:0)."""
import dataclasses
import uuid

import numpy as np
import pytest

import simt
from simt.config import config
from conftest import poison, random_array


# ------------------------------------------------------------ properties
def test_properties_have_the_whole_of_cudaDeviceProp(device):
    p = device.properties
    assert p.compute_mode in ("default", "exclusive_process", "prohibited")
    uuid.UUID(p.uuid)                                  # a well-formed UUID
    assert len(p.max_texture_2d) == 2 and len(p.max_texture_3d) == 3
    assert len(p.max_texture_2d_layered) == 3 and len(p.max_surface_cubemap_layered) == 2
    assert min(p.max_texture_1d, *p.max_texture_3d, *p.max_surface_2d) > 0
    assert p.texture_pitch_alignment > 0 and p.surface_alignment > 0
    assert p.persisting_l2_cache_max_size is not None
    assert p.access_policy_max_window_size is not None
    assert isinstance(p.stream_priorities_supported, bool)
    fields = {f.name for f in dataclasses.fields(p)}
    for name in ("l2_cache_size", "reserved_shared_memory_per_block", "cluster_launch",
                 "max_surface_3d", "max_texture_cubemap", "pci_domain_id", "numa_id",
                 "host_native_atomic_supported", "memory_pools_supported"):
        assert name in fields


def test_cpu_and_sim_have_their_own_uuid():
    assert simt.Device("cpu").properties.uuid != simt.Device("sim").properties.uuid


# ------------------------------------------------------------ stream priorities
def test_stream_priority_range(device):
    least, greatest = simt.stream_priority_range()
    assert greatest <= least
    assert simt.Stream(priority=greatest - 10).priority == greatest      # clamped, as CUDA
    assert simt.Stream(priority=least + 10).priority == least
    assert simt.Stream(priority=greatest).priority == greatest
    with pytest.raises(TypeError, match="priority"):
        simt.Stream(priority=0.5)


@simt.kernel
def scale(a, out, k):
    i = simt.grid(1)
    if i < a.size:
        out[i] = a[i] * k


def test_priority_streams_compute(device, rng):
    _, greatest = simt.stream_priority_range()
    s = simt.Stream(priority=greatest, non_blocking=True)
    a = random_array(rng, 1000, np.float32)
    out = simt.to_device(poison(1000, np.float32))
    scale[4, 256, 0, s](simt.to_device(a), out, np.float32(3))
    s.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), a * np.float32(3))


# ------------------------------------------------------------ CUDA_LAUNCH_BLOCKING
@simt.kernel
def out_of_bounds(a):
    a[simt.grid(1) + 100] = 1.0


@pytest.mark.parametrize("where", ["default", "stream"])
def test_launch_blocking_raises_at_the_launch(device, monkeypatch, where):
    if device.kind == "cuda":
        pytest.skip("on a GPU the driver reads CUDA_LAUNCH_BLOCKING when the context starts")
    monkeypatch.setattr(config, "launch_blocking", True)
    d = simt.to_device(np.zeros(4, np.float32))
    stream = simt.Stream() if where == "stream" else None
    for _ in range(3):                    # the first launch, then the bound fast path
        with pytest.raises(simt.IllegalAddressError, match="out_of_bounds"):
            out_of_bounds[1, 1, 0, stream](d)
    simt.synchronize()                    # nothing left over


def test_without_launch_blocking_the_error_waits(device, monkeypatch):
    if device.kind == "cuda":
        pytest.skip("a GPU does not check indices")
    monkeypatch.setattr(config, "launch_blocking", False)
    d = simt.to_device(np.zeros(4, np.float32))
    s = simt.Stream()
    out_of_bounds[1, 1, 0, s](d)          # queued: raised at the stream's synchronize
    with pytest.raises(simt.IllegalAddressError):
        s.synchronize()


def test_launch_blocking_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    assert type(config).from_environ().launch_blocking
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "0")
    assert not type(config).from_environ().launch_blocking
