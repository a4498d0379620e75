"""Several GPUs (guide 3.2.7, 3.2.8): peer access, peer copies, the check that a kernel
is given only memory its device can reach, and CUDA_VISIBLE_DEVICES. Tests that need two
GPUs skip on one; the rules are checked here on stand-in arrays of named devices."""
import os
import subprocess
import sys
import types

import numpy as np
import pytest

import simt
from simt.runtime import peer
from conftest import poison, random_array


@simt.kernel
def add(out, a, b):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]


def _gpus():
    return [d for d in simt.devices() if d.kind == "cuda"]


def _on(name, managed=False):
    """A stand-in array of device ``name`` (devices are named, not created: no GPU needed)."""
    kind, _, index = name.partition(":")
    return types.SimpleNamespace(device=simt.Device(kind, int(index or 0)),
                                 alloc=types.SimpleNamespace(managed=managed))


def test_a_device_reaches_its_own_memory(device):
    assert simt.can_access_peer(device, device) is True
    if device.kind == "cpu":
        with pytest.raises(simt.NotSupportedError, match="peer access is between two GPUs"):
            simt.enable_peer_access("cpu")
    else:
        with pytest.raises(ValueError, match="reaches its own memory"):
            simt.enable_peer_access(device)
        assert simt.can_access_peer(device, "cpu") is False


def test_arrays_a_kernel_cannot_reach_are_refused(monkeypatch):
    cuda0, cuda1 = simt.Device("cuda", 0), simt.Device("cuda", 1)
    with pytest.raises(simt.InvalidConfiguration,
                       match=r"k: the array lives on cuda:1 and the kernel runs on cuda:0, "
                             r"which has no peer access to it.*"
                             r"simt.enable_peer_access\('cuda:1'\)"):
        peer.check_reachable(_on("cuda:1"), cuda0, "k")
    peer.check_reachable(_on("cuda:1", managed=True), cuda0, "k")     # unified memory
    monkeypatch.setattr(peer, "_enabled", {("cuda:0", "cuda:1")})
    peer.check_reachable(_on("cuda:1"), cuda0, "k")                   # a peer let in
    with pytest.raises(simt.InvalidConfiguration, match="no peer access"):
        peer.check_reachable(_on("cuda:0"), cuda1, "k")               # one direction only
    with pytest.raises(simt.InvalidConfiguration,
                       match=r"lives on cpu and the kernel runs on cuda:0; copy it there"):
        peer.check_reachable(_on("cpu"), cuda0, "k")


def test_a_launch_checks_where_its_arrays_live(rng):
    """On every launch: the prepared launch function of the second launch on is bound to
    its arrays' classes, which record their device, so another device's array goes the
    full way and is refused there."""
    from simt.runtime.arrays import DeviceArray
    from simt.runtime.backend import Allocation
    with simt.use_device("cpu"):
        a = simt.to_device(random_array(rng, 8, np.float32))
        out = simt.to_device(poison(8, np.float32))
        elsewhere = DeviceArray(8, np.float32, alloc=Allocation(0x1000, 32, None),
                                device=simt.Device("cuda", 0))   # a GPU's, made by name
        assert type(elsewhere) is not type(a)
        for _ in range(3):                                       # full, prepared, fast
            add[1, 8](out, a, a)
        np.testing.assert_array_equal(out.copy_to_host(), a.copy_to_host() * 2)
        with pytest.raises(simt.InvalidConfiguration,
                           match=r"launching 'add', argument 2: the array lives on cuda:0 "
                                 "and the kernel runs on cpu"):
            add[1, 8](out, a, elsewhere)


def test_peer_copy_and_peer_kernel(rng):
    """The guide's peer-access sample: a kernel on GPU 1 reads GPU 0's memory."""
    gpus = _gpus()
    if len(gpus) < 2:
        pytest.skip(f"needs 2 GPUs, this machine has {len(gpus)}")
    g0, g1 = gpus[:2]
    n = 1 << 20
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    with simt.use_device(g0):
        p0 = simt.to_device(x)
    with simt.use_device(g1):
        p1 = simt.to_device(poison(n, np.float32))
        p0.copy_to_device(p1)                          # cudaMemcpyPeer
        np.testing.assert_array_equal(p1.copy_to_host(), x)
        b = simt.to_device(y)
        out = simt.to_device(poison(n, np.float32))
        if not simt.can_access_peer(g1, g0):
            pytest.skip("the two GPUs are not peers")
        with pytest.raises(simt.InvalidConfiguration, match="enable_peer_access"):
            add[n // 256, 256](out, p0, b)
        simt.enable_peer_access(g0)
        simt.enable_peer_access(g0)                    # twice is not an error
        add[n // 256, 256](out, p0, b)
        np.testing.assert_array_equal(out.copy_to_host(), x + y)


def _simt_in(env_value, code):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=env_value)
    env.pop("SIMT_DEVICE", None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_cuda_visible_devices(device):
    if device.kind != "cuda":
        pytest.skip("GPU only: CUDA_VISIBLE_DEVICES selects GPUs")
    code = ("import simt\nfor d in simt.devices():\n    print(d.name, "
            "d.properties.pci_bus_id if d.kind == 'cuda' else '')")
    assert _simt_in("", code).split() == ["cpu", "sim"]
    index = os.environ.get("CUDA_VISIBLE_DEVICES", str(device.index)).split(",")[device.index]
    lines = _simt_in(index, code).splitlines()
    assert lines[0].split() == ["cuda:0", device.properties.pci_bus_id]
    info = _simt_in(index, "import simt.cli\nsimt.cli.info()")
    assert "Device 'cuda:0'" in info and "Device 'cuda:1'" not in info
    assert f"CUDA_VISIBLE_DEVICES={index!r}" in info
