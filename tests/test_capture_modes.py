"""Stream capture modes (cudaStreamCaptureMode, issue 33 item 2): which threads may make the
calls CUDA deems unsafe during a capture (allocating memory), on every device with capture."""
import re
import threading

import numpy as np
import pytest

import simt
from conftest import poison, random_array




N = 256


@simt.kernel
def double(y, x):
    i = simt.grid(1)
    if i < y.shape[0]:
        y[i] = 2 * x[i]


def _while_capturing(device, mode, other):
    """Run ``other()`` in a second thread while this thread captures a non-blocking stream
    in ``mode`` (so that only the mode decides: the legacy default stream is not involved);
    return what it returned or raised."""
    outcome = {}

    def run():
        try:
            with simt.use_device(device):
                outcome["value"] = other()
        except Exception as exc:
            outcome["error"] = exc

    s = simt.Stream(non_blocking=True)
    x, y = simt.zeros(N, np.float32), simt.zeros(N, np.float32)
    try:
        with s.capture(mode=mode):
            double[1, N, 0, s](y, x)
            worker = threading.Thread(target=run, name="loader")
            worker.start()
            worker.join()
    except simt.CudaError as exc:      # a GPU may drop the capture the refused call broke
        outcome["capture"] = exc
    return outcome


def test_capture_mode_is_checked(device):
    s = simt.Stream()
    with pytest.raises(ValueError, match="'global', 'thread_local', 'relaxed'.*got 'local'"):
        s.capture(mode="local")


def test_thread_local_capture_lets_other_threads_allocate(device, rng):
    """The default: a capture in one thread does not stop another thread's to_device."""
    host = random_array(rng, N, np.float32)
    outcome = _while_capturing(device, "thread_local",
                               lambda: simt.to_device(host).copy_to_host())
    assert "error" not in outcome and "capture" not in outcome, outcome
    np.testing.assert_array_equal(outcome["value"], host)


def test_global_capture_refuses_other_threads_allocations(device, rng):
    host = random_array(rng, N, np.float32)
    outcome = _while_capturing(device, "global", lambda: simt.to_device(host))
    error = outcome.get("error")
    assert isinstance(error, simt.CudaError), outcome
    message = str(error)
    assert re.search("(?i)stream.?capture.?unsupported", message), message
    assert "MainThread" in message and "test_capture_modes.py" in message   # who captures, where
    assert "mode='thread_local'" in message                                 # what to use


def test_capturing_thread_may_not_allocate_unless_relaxed(device, rng):
    x = simt.to_device(random_array(rng, N, np.float32))
    y = simt.to_device(poison(N, np.float32))
    s = simt.Stream()
    with pytest.raises(simt.CudaError, match="(?i)stream.?capture.?(unsupported|invalidated)"):
        with s.capture():
            simt.device_array(N, np.float32)
    with s.capture(mode="relaxed") as g:                 # relaxed: allowed, done once
        scratch = simt.device_array(N, np.float32)
        double[1, N, 0, s](scratch, x)
        double[1, N, 0, s](y, scratch)
    g.instantiate().launch(s)
    s.synchronize()
    np.testing.assert_allclose(y.copy_to_host(), 4 * x.copy_to_host())


def test_cpu_refusal_names_the_capture(device):
    if device.kind != "cpu":
        pytest.skip("the CPU device's message (a GPU's names the driver call)")
    s = simt.Stream()
    with pytest.raises(simt.CudaError) as info:
        with s.capture(mode="global"):
            simt.pinned_array(4, np.float32)
    message = str(info.value)
    assert "allocating pinned host memory while this thread captures the stream captured " \
           f"at {__file__}:" in message and "mode 'global'" in message
    assert "mode='relaxed'" in message


def test_objects_dropped_inside_a_capture_are_destroyed_after_it(device, rng):
    """The garbage collector may drop streams, events, pool memory and kernel modules in
    the middle of a `with stream.capture()` block; destroying them there (an unload's
    implicit synchronization, a free on the legacy stream) invalidated the capture on the
    H200 (fuzz seed 21 in the GPU suite: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED). They are
    destroyed after the capture ends, and the captured graph is right."""
    import gc
    x = random_array(rng, N, np.float32)
    xd, y = simt.to_device(x), simt.to_device(poison(N, np.float32))
    side = simt.Stream()

    @simt.kernel
    def fill(a, v):
        a[simt.grid(1)] = v

    junk = [simt.Stream(), simt.Event(), simt.device_array(N, np.float32, stream=side)]
    fill[1, N](junk[2], np.float32(1.0))
    simt.synchronize()
    stream = simt.Stream()
    with stream.capture() as graph:
        del junk, fill
        gc.collect()
        double[(N + 127) // 128, 128, 0, stream](y, xd)
    graph.instantiate().launch(stream)
    stream.synchronize()
    assert np.array_equal(y.copy_to_host(), 2 * x)
