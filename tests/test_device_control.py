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


# ------------------------------------------------------------ kernel attributes, cache config
@simt.kernel
def staged(a, out):
    tile = simt.shared.dynamic(np.float32)
    i = simt.threadIdx.x
    tile[i] = a[i] * 2.0
    simt.syncthreads()
    out[i] = tile[a.size - 1 - i]


def test_max_dynamic_shared_size_caps_launches(device, rng):
    kernel = simt.kernel(staged.pyfunc)                # attributes of its own
    a = random_array(rng, 64, np.float32)
    out = simt.to_device(poison(64, np.float32))
    kernel.set_attribute("max_dynamic_shared_size", 1024)
    kernel.set_attribute("preferred_shared_carveout", 50)
    kernel[1, 64, 256](simt.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), (a * 2)[::-1])
    with pytest.raises(simt.InvalidConfiguration, match="over the kernel's "
                       "max_dynamic_shared_size of 1024"):
        kernel[1, 64, 4096](simt.to_device(a), out)
    kernel.set_attribute("max_dynamic_shared_size", 80 * 1024)     # opt in above 48 KiB
    kernel[1, 64, 80 * 1024](simt.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), (a * 2)[::-1])


def test_kernel_attribute_errors(device):
    with pytest.raises(ValueError, match="unknown attribute.*max_dynamic_shared_size"):
        staged.set_attribute("max_shared", 10)
    with pytest.raises(ValueError, match="0 to 100"):
        staged.set_attribute("preferred_shared_carveout", 101)
    with pytest.raises(simt.InvalidConfiguration, match="shared_memory_per_block_optin"):
        staged.set_attribute("max_dynamic_shared_size", 1 << 30)
    with pytest.raises(TypeError, match="must be an int"):
        staged.set_attribute("max_dynamic_shared_size", 1.5)


def test_cache_config(device):
    before = simt.get_cache_config()
    try:
        for choice in ("prefer_shared", "prefer_l1", "prefer_equal", "prefer_none"):
            simt.set_cache_config(choice)
            assert simt.get_cache_config() == choice
    finally:
        simt.set_cache_config(before)
    with pytest.raises(ValueError, match="prefer_shared"):
        simt.set_cache_config("shared")


# ------------------------------------------------------------ L2 persistence
def test_access_policy_and_persisting_limit(device, rng):
    props = device.properties
    before = simt.get_limit("persisting_l2_cache_size")
    want = min(1 << 20, props.persisting_l2_cache_max_size) or (1 << 20)
    try:
        simt.set_limit("persisting_l2_cache_size", want)
        assert simt.get_limit("persisting_l2_cache_size") > 0 or device.kind == "cuda"
        s = simt.Stream()
        a = random_array(rng, 4096, np.float32)
        hot, out = simt.to_device(a), simt.to_device(poison(4096, np.float32))
        s.set_access_policy(hot, 0.75, hit="persisting", miss="streaming")
        assert s.access_policy.nbytes == hot.nbytes and s.access_policy.hit_ratio == 0.75
        scale[16, 256, 0, s](hot, out, np.float32(2))
        s.set_access_policy(None)
        assert s.access_policy is None
        s.synchronize()
        np.testing.assert_array_equal(out.copy_to_host(), a * 2)     # results unchanged
    finally:
        simt.set_limit("persisting_l2_cache_size", before)


def test_access_policy_errors(device):
    s = simt.Stream()
    d = simt.to_device(np.zeros(16, np.float32))
    with pytest.raises(ValueError, match="hit_ratio"):
        s.set_access_policy(d, 1.5)
    with pytest.raises(ValueError, match="hit must be one of"):
        s.set_access_policy(d, 0.5, hit="sticky")
    with pytest.raises(simt.InvalidConfiguration, match="device array"):
        s.set_access_policy(np.zeros(16, np.float32), 0.5)


# ------------------------------------------------------------ reset
def test_reset_device(device, rng):
    if device.kind == "cuda":
        pytest.skip("resetting the GPU's context under the rest of the suite: "
                    "tests/test_device_control.py::test_reset_device_in_a_process covers it")
    a = random_array(rng, 300, np.float32)
    before = simt.to_device(a)
    simt.set_cache_config("prefer_l1")
    out = simt.to_device(poison(300, np.float32))
    scale[2, 256](before, out, np.float32(3))
    simt.reset_device()
    assert simt.get_cache_config() == "prefer_none"
    assert not any(key[0] == device.name for key in scale.compiled)
    fresh, out = simt.to_device(a), simt.to_device(poison(300, np.float32))
    scale[2, 256](fresh, out, np.float32(3))            # loads the kernel again
    np.testing.assert_array_equal(out.copy_to_host(), a * np.float32(3))
    if device.kind == "sim":                             # an array of before: freed
        with pytest.raises(simt.IllegalAddressError, match="reset_device"):
            scale[2, 256](before, out, np.float32(3))


def test_reset_device_in_a_process(device):
    """The whole reset in a process of its own (on a GPU: the context goes and comes back)."""
    import subprocess
    import sys
    import os
    code = (
        "import numpy as np, simt\n"
        f"simt.set_device({device.name!r})\n"
        "@simt.kernel\n"
        "def twice(a):\n"
        "    i = simt.grid(1)\n"
        "    if i < a.size: a[i] *= 2\n"
        "d = simt.to_device(np.arange(100, dtype=np.float32)); twice[1, 128](d)\n"
        "simt.synchronize(); simt.reset_device()\n"
        "e = simt.to_device(np.arange(100, dtype=np.float32)); twice[1, 128](e)\n"
        "assert (e.copy_to_host() == 2 * np.arange(100)).all()\n"
        "print('ok')\n")
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
