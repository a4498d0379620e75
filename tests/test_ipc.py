"""Interprocess communication (guide 3.2.9): handles pickle and refuse misuse here; on a
GPU a spawned process opens an array and an event of this one and works on the array."""
import multiprocessing
import os
import pickle

import numpy as np
import pytest

import simt
from simt.runtime.handles import IpcEventHandle, IpcHandle
from conftest import random_array

HANDLE = IpcHandle(bytes(range(64)), 256, (3, 4), (16, 4), "<f4", "cuda:0", os.getpid() + 1)


@simt.kernel
def scale(a, factor):
    i = simt.grid(1)
    if i < a.shape[0]:
        a[i] *= factor


def test_handles_pickle():
    assert pickle.loads(pickle.dumps(HANDLE)) == HANDLE
    assert HANDLE.np_dtype == np.float32
    event = IpcEventHandle(bytes(64), "cuda:0", 1)
    assert pickle.loads(pickle.dumps(event)) == event


def test_a_process_cannot_open_its_own_handle():
    mine = IpcHandle(bytes(64), 0, (4,), (4,), "<f4", "cuda:0", os.getpid())
    with pytest.raises(ValueError, match="made by this process"):
        simt.open_ipc_handle(mine)
    with pytest.raises(ValueError, match="made by this process"):
        simt.Event.from_ipc_handle(IpcEventHandle(bytes(64), "cuda:0", os.getpid()))
    with pytest.raises(TypeError, match="what DeviceArray.ipc_handle"):
        simt.open_ipc_handle(b"\0" * 64)


def test_interprocess_events_do_not_time(device):
    with pytest.raises(ValueError, match="cannot time"):
        simt.Event(interprocess=True, timing=True)


def test_pool_memory_is_not_shared(device):
    stream = simt.Stream()
    pooled = simt.device_array(16, np.float32, stream=stream)
    with pytest.raises(simt.NotSupportedError, match="memory pool"):
        pooled.ipc_handle()
    pooled.free(stream)
    stream.synchronize()


def test_cpu_device_refuses_ipc():
    with simt.use_device("cpu"):
        with pytest.raises(simt.NotSupportedError, match="IPC memory handles.*NVIDIA GPUs"):
            simt.zeros(4).ipc_handle()
        with pytest.raises(simt.NotSupportedError, match="interprocess events.*NVIDIA GPUs"):
            simt.Event(interprocess=True)
        with pytest.raises(simt.NotSupportedError, match="IPC memory handles"):
            simt.open_ipc_handle(HANDLE)
        with pytest.raises(simt.NotSupportedError, match="interprocess events"):
            simt.Event.from_ipc_handle(IpcEventHandle(bytes(64), "cuda:0", 1))


def test_another_process_opens_an_array_and_an_event(device, rng):
    if device.kind != "cuda":
        pytest.skip("GPU only: test_cpu_device_refuses_ipc covers the CPU device")
    from ipc_child import child
    host = random_array(rng, 1000, np.float32)
    whole = simt.to_device(np.concatenate([host, host]))
    d = whole[1000:]                                      # a view: the offset travels
    scale[8, 128](d, np.float32(3))
    event = simt.Event(interprocess=True).record()
    handle = pickle.loads(pickle.dumps(d.ipc_handle()))
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    process = context.Process(target=child, args=(device.name, handle, event.ipc_handle(),
                                                  results))
    process.start()
    status, value = results.get(timeout=180)
    process.join(60)
    assert status == "ok", value
    np.testing.assert_array_equal(value, host * np.float32(3))
    np.testing.assert_array_equal(d.copy_to_host(), host * np.float32(6))
    np.testing.assert_array_equal(whole[:1000].copy_to_host(), host)
