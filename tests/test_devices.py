"""The device registry, properties, settings and the command line (API.md sections 4 and 9)."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import simt
from simt import config as config_module
from simt.errors import NotSupportedError
from simt.lang import registry
from simt.runtime import devices
from simt.runtime.backend import Backend, DeviceProperties
from simt.runtime.devices import Device, get_device, set_device, use_device
from nulldevice.device import NullBackend

SRC = str(Path(__file__).resolve().parent.parent / "src")


def test_registry_lists_gpus_then_cpu_and_sim():
    found = devices.devices()
    names = [d.name for d in found]
    assert names[-2:] == ["cpu", "sim"]
    assert all(d.kind == "cuda" for d in found[:-2])
    assert names[:-2] == [f"cuda:{i}" for i in range(len(found) - 2)]


def test_no_gpu_is_not_an_error():
    assert isinstance(devices._devices_of("cuda"), list)


@pytest.mark.parametrize("spec", ["cpu", "cpu:0", "CPU", Device("cpu")], ids=str)
def test_set_device_specs(spec):
    with use_device("cpu"):
        assert set_device(spec).name == "cpu"
        assert get_device() == Device("cpu")


def test_unknown_device_names_valid_ones():
    with pytest.raises(ValueError, match="valid devices: .*cpu"):
        set_device("tpu:0")
    with pytest.raises(ValueError, match="cuda:99"):
        set_device(99)
    with pytest.raises(TypeError):
        set_device(3.5)


def test_use_device_restores_previous(device):
    before = get_device()
    with use_device("cpu", boundscheck=False) as inner:
        assert get_device() is inner and inner.options["boundscheck"] is False
    assert get_device() is before


def test_cpu_options():
    with use_device("cpu") as cpu:
        assert cpu.options == {"boundscheck": True, "checks": False, "narrowing": False}
    with use_device("cpu", boundscheck=False) as unchecked:
        assert unchecked.options == {"boundscheck": False, "checks": False, "narrowing": False}
        assert unchecked == Device("cpu") and unchecked.backend is Device("cpu").backend
        assert "boundscheck=False" in repr(unchecked)
    with pytest.raises(ValueError, match="no option fast"):
        set_device("cpu", fast=True)


def test_current_device_is_per_thread(device):
    seen = []
    with use_device("cpu", boundscheck=False):
        thread = threading.Thread(target=lambda: seen.append(get_device()))
        thread.start()
        thread.join()
    other = seen[0]            # the other thread starts from its own default device and options
    assert other.options == devices.backend_class(other.kind).default_options()
    assert not (other.kind == "cpu" and other.options["boundscheck"] is False)


def test_properties(device):
    props = device.properties
    assert isinstance(props, DeviceProperties)
    assert props.warp_size == 32 and props.max_threads_per_block == 1024
    assert len(props.max_block_dim) == 3 and len(props.max_grid_dim) == 3
    assert props.total_memory > 0 and props.multiprocessor_count >= 1
    assert props.as_dict()["name"] == props.name
    if device.kind == "cpu":
        assert props.compute_capability == (9, 0) and props.max_grid_dim[0] == 2**31 - 1
        assert props.shared_memory_per_block == 48 * 1024


def test_synchronize_and_equality(device):
    devices.synchronize()
    device.synchronize()
    assert device == Device(device.kind, device.index)
    assert len({device, Device(device.kind, device.index)}) == 1
    assert device != "cpu"


def test_config_from_environment(monkeypatch):
    for name in ("SIMT_DEVICE", "SIMT_CHECKS", "SIMT_CACHE", "SIMT_CPU_THREADS", "SIMT_DUMP"):
        monkeypatch.delenv(name, raising=False)
    default = config_module.Config.from_environ()
    assert default.device is None and default.cache and not default.checks
    assert default.cpu_threads == (os.cpu_count() or 1)
    monkeypatch.setenv("SIMT_DEVICE", "cpu")
    monkeypatch.setenv("SIMT_CHECKS", "1")
    monkeypatch.setenv("SIMT_CACHE", "0")
    monkeypatch.setenv("SIMT_CPU_THREADS", "3")
    monkeypatch.setenv("SIMT_CACHE_DIR", "/tmp/x")
    changed = config_module.Config.from_environ()
    assert (changed.device, changed.checks, changed.cache, changed.cpu_threads, changed.cache_dir) == \
        ("cpu", True, False, 3, "/tmp/x")
    assert {row[1] for row in changed.describe()} >= {"SIMT_DEVICE", "SIMT_DEBUG", "SIMT_DUMP"}


def _simt(*args, **env):
    environ = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), **env}
    return subprocess.run([sys.executable, "-m", "simt", *args], capture_output=True, text=True,
                          env=environ, timeout=120)


def test_cli_info():
    result = _simt("info")
    assert result.returncode == 0, result.stderr
    assert "Device 'cpu'" in result.stdout and "max_threads_per_block" in result.stdout
    assert "SIMT_CACHE_DIR" in result.stdout


def test_cli_examples_and_unknown_example():
    listed = _simt("examples")
    assert listed.returncode == 0, listed.stderr
    missing = _simt("run", "no_such_example")
    assert missing.returncode == 2
    assert "no example 'no_such_example'" in missing.stderr and "Traceback" not in missing.stderr


def test_cli_bad_device_is_clean():
    result = _simt("info", SIMT_DEVICE="tpu")
    assert result.returncode == 2
    assert "SIMT_DEVICE" in result.stderr and "Traceback" not in result.stderr


def test_backends_are_found_by_name():
    assert set(devices.BACKENDS) == {"cpu", "cuda", "sim"}
    cls = devices.backend_class("cpu")
    assert devices.BACKENDS["cpu"] == f"{cls.__module__}:{cls.__name__}"
    assert isinstance(Device("cpu").backend, cls) and cls.host_accessible
    with pytest.raises(ValueError, match="unknown device kind 'tpu'"):
        Device("tpu")


def test_sim_takes_a_seed_and_always_checks():
    with use_device("sim", seed=3) as device:
        assert device.options == {"seed": 3, "boundscheck": True, "narrowing": False}
    with pytest.raises(ValueError, match="no option checks"):
        Device("sim", checks=True)


@pytest.fixture
def null_device(monkeypatch):
    """The 'null' device (tests/nulldevice/: one folder) registered by one line in the
    table, as a new backend would be."""
    monkeypatch.setitem(devices.BACKENDS, "null", "nulldevice.device:NullBackend")
    monkeypatch.setattr(devices, "_classes", {})
    monkeypatch.setattr(devices, "_found", {})
    monkeypatch.setattr(devices, "_backends", {})
    with use_device("null") as device:
        yield device
    registry.TARGETS.pop("null", None)            # what its lowerings declared
    for entry in registry.REGISTRY.values():
        entry.unsupported.pop("null", None)


def test_a_new_device_is_one_folder_and_one_table_line(null_device):
    assert [d.name for d in devices.devices()][-1] == "null"
    assert isinstance(null_device.backend, NullBackend) and null_device.properties.name == "null"
    assert null_device.options == {}
    devices.load_lowerings()                      # the registry learns its targets from the table
    assert set(registry.TARGETS) == set(devices.BACKENDS)
    assert simt.math.sin.unsupported["null"] == "the null device runs no kernels"


def test_missing_hooks_raise_not_supported(null_device):
    import numpy as np

    @simt.kernel
    def k(a):
        a[0] = 1

    attempts = {
        "device memory": lambda: simt.zeros(4),
        "pinned memory": lambda: simt.pinned_array(4),
        "managed memory": lambda: simt.managed_array(4),
        "streams": simt.Stream,
        "events": simt.Event,
        "synchronization": simt.synchronize,
        "kernels": lambda: k[1, 1](np.zeros(1)),
        "CUDA arrays": lambda: simt.CudaArray((4,), np.float32),
    }
    for feature, attempt in attempts.items():
        with pytest.raises(NotSupportedError, match=f"'null' device does not support {feature}"):
            attempt()


def test_every_hook_of_the_contract_has_a_default(null_device):
    """Each hook the runtime may call exists on the base: a device without it raises
    NotSupportedError (native_launch, an optional fast path, release, which has
    nothing to keep on a device without queued work, device_attribute and
    pointer_attributes, which have no driver to ask, and profiler, which no CUDA profiler
    watches, answer None)."""
    import inspect
    backend = null_device.backend
    hooks = [name for name, fn in vars(Backend).items()
             if inspect.isfunction(fn) and not name.startswith("_") and name != "unsupported"]
    assert {"alloc", "copy_htod", "create_stream", "compile", "run_launch",
            "texture_array"} <= set(hooks)
    for name in hooks:
        method = getattr(backend, name)
        args = [None] * len(inspect.signature(method).parameters)
        if name == "properties":
            continue                                   # NullBackend has it
        if name in ("native_launch", "release", "device_attribute", "profiler",
                    "pointer_attributes"):
            assert method(*args) is None
            continue
        with pytest.raises(NotSupportedError, match="'null' device does not support"):
            method(*args)
