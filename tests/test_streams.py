"""Streams and events (API.md 4, guide 3.2.6.5 and 3.2.6.8): ordering within a stream,
across streams through events, the legacy default stream, host functions, timing."""

import numpy as np
import pytest

import simt
from conftest import poison, random_array

N = 1 << 14
SPIN = 400          # iterations that make a kernel slow enough to overtake if unordered


def spin(device, n=SPIN):
    """n; on the sim device 1: its work runs when it is queued, in call order, so nothing
    can overtake, and 400 iterations of 16384 threads take minutes at its speed."""
    return 1 if device.kind == "sim" else n


@simt.kernel
def slow_square(x, a, spin):
    """x = a*a, after a busy loop that does not change the result."""
    i = simt.grid(1)
    if i < x.shape[0]:
        v = a[i]
        acc = v * 0.0
        for k in range(spin):
            acc = acc * 0.5 + v
        x[i] = v * v + (acc - acc)


@simt.kernel
def plus_one(y, x):
    i = simt.grid(1)
    if i < y.shape[0]:
        y[i] = x[i] + 1.0


@simt.kernel
def write_past_end(x):
    i = simt.grid(1)
    x[i + 1] = 1.0


def launch_cfg(n=N):
    return (n + 127) // 128, 128


def test_work_in_one_stream_runs_in_order(device, rng):
    a = random_array(rng, N, np.float32)
    s = simt.Stream()
    d_a, d_x, d_y = simt.to_device(a), simt.to_device(poison(N, np.float32)), \
        simt.to_device(poison(N, np.float32))
    out = simt.pinned_array(N, np.float32)
    out[:] = np.nan
    slow_square[launch_cfg() + (0, s)](d_x, d_a, spin(device))
    plus_one[launch_cfg() + (0, s)](d_y, d_x)
    d_y.copy_to_host(out, stream=s)
    s.synchronize()
    assert s.query()
    np.testing.assert_allclose(out, a * a + 1, rtol=1e-6)


def test_wait_event_orders_two_streams(device, rng):
    n = 128                       # one block: on the CPU it runs on the stream's own thread
    a = random_array(rng, n, np.float32)
    s1, s2 = simt.Stream(), simt.Stream(non_blocking=True)
    done = simt.Event(timing=False)
    d_a, d_x, d_y = simt.to_device(a), simt.to_device(poison(n, np.float32)), \
        simt.to_device(poison(n, np.float32))
    d_w = simt.device_array(n, np.float32)
    slow_square[1, n](d_w, d_a, 1)                # compiled now, not while s1 works
    plus_one[1, n](d_w, d_w)
    simt.synchronize()
    slow_square[1, n, 0, s1](d_x, d_a, spin(device, 200_000))
    done.record(s1)
    s2.wait_event(done)
    plus_one[1, n, 0, s2](d_y, d_x)
    out = simt.pinned_array(n, np.float32)
    d_y.copy_to_host(out, stream=s2)
    s2.synchronize()
    np.testing.assert_allclose(out, a * a + 1, rtol=1e-6)
    assert done.query()


def test_legacy_default_stream_waits_for_blocking_streams(device, rng):
    a = random_array(rng, N, np.float32)
    s = simt.Stream()
    d_a, d_x, d_y = simt.to_device(a), simt.to_device(poison(N, np.float32)), \
        simt.to_device(poison(N, np.float32))
    simt.synchronize()
    slow_square[launch_cfg() + (0, s)](d_x, d_a, spin(device) * 4)
    plus_one[launch_cfg()](d_y, d_x)                      # default stream: after s's work
    np.testing.assert_allclose(d_y.copy_to_host(), a * a + 1, rtol=1e-6)
    simt.default_stream().synchronize()
    assert simt.default_stream().query()


def test_default_stream_object_is_the_default_stream(device, rng):
    a = random_array(rng, N, np.float32)
    d_a, d_x = simt.to_device(a), simt.to_device(poison(N, np.float32))
    slow_square[launch_cfg() + (0, simt.default_stream())](d_x, d_a, 1)
    slow_square[launch_cfg() + (0, 0)](d_x, d_a, 1)        # 0 means the default stream too
    np.testing.assert_allclose(d_x.copy_to_host(), a * a, rtol=1e-6)
    assert simt.default_stream().handle is None


def test_host_function_runs_after_earlier_work(device, rng):
    a = random_array(rng, N, np.float32)
    s = simt.Stream()
    d_a, d_x = simt.to_device(a), simt.to_device(poison(N, np.float32))
    out = simt.pinned_array(N, np.float32)
    out[:] = np.nan
    seen = []
    slow_square[launch_cfg() + (0, s)](d_x, d_a, spin(device))
    d_x.copy_to_host(out, stream=s)
    s.launch_host_func(lambda tag: seen.append((tag, out.copy())), "after copy")
    s.synchronize()
    assert len(seen) == 1 and seen[0][0] == "after copy"
    np.testing.assert_allclose(seen[0][1], a * a, rtol=1e-6)


def test_host_function_error_comes_back_at_synchronize(device):
    s = simt.Stream()

    def fails():
        raise ValueError("host function failed on purpose")
    s.launch_host_func(fails)
    with pytest.raises(ValueError, match="on purpose"):
        s.synchronize()
    s.synchronize()                                        # reported once


def test_async_copy_from_pageable_memory_is_staged(device, rng):
    a = random_array(rng, N, np.float32)
    s = simt.Stream()
    d_a, d_x = simt.to_device(a), simt.to_device(poison(N, np.float32))
    host = random_array(rng, N, np.float32)
    expected = host.copy()
    slow_square[launch_cfg() + (0, s)](d_x, d_a, spin(device))
    d_x.copy_from(host, stream=s)
    host[:] = 0                         # pageable source: CUDA has staged it already
    s.synchronize()
    np.testing.assert_array_equal(d_x.copy_to_host(), expected)


def test_events_time_real_work(device, rng):
    a = random_array(rng, N, np.float32)
    s = simt.Stream()
    start, stop = simt.Event(), simt.Event()
    d_a, d_x = simt.to_device(a), simt.to_device(poison(N, np.float32))
    start.record(s)
    slow_square[launch_cfg() + (0, s)](d_x, d_a, spin(device))
    stop.record(s)
    stop.synchronize()
    assert start.query() and stop.query()
    elapsed = start.elapsed_time(stop)
    assert 0 < elapsed < 60_000
    # default-stream records work as well
    start.record()
    slow_square[launch_cfg()](d_x, d_a, spin(device))
    stop.record()
    stop.synchronize()
    assert start.elapsed_time(stop) > 0


def test_event_timing_errors(device):
    never, untimed, done = simt.Event(), simt.Event(timing=False), simt.Event()
    done.record()
    done.synchronize()
    with pytest.raises(simt.CudaError):
        never.elapsed_time(done)
    untimed.record()
    untimed.synchronize()
    with pytest.raises(simt.CudaError):
        untimed.elapsed_time(done)
    assert never.query()                          # never recorded: nothing to wait for
    with pytest.raises(TypeError):
        done.elapsed_time(3)


def test_numpy_arguments_in_a_stream_are_synchronous(device, rng):
    a = random_array(rng, N, np.float32)
    x = poison(N, np.float32)
    s = simt.Stream()
    slow_square[launch_cfg() + (0, s)](x, a, 3)
    np.testing.assert_allclose(x, a * a, rtol=1e-6)


def test_many_streams_pipeline(device, rng):
    """Chapter 10's pattern: chunks spread over streams, copies and kernels interleaved."""
    chunks, size = 4, N // 4
    a = simt.pinned_array(N, np.float32)
    a[:] = random_array(rng, N, np.float32)
    out = simt.pinned_array(N, np.float32)
    out[:] = np.nan
    streams = [simt.Stream() for _ in range(2)]
    buffers = [(simt.device_array(size, np.float32), simt.device_array(size, np.float32))
               for _ in streams]
    for c in range(chunks):
        s, (d_in, d_out) = streams[c % 2], buffers[c % 2]
        d_in.copy_from(a[c * size:(c + 1) * size], stream=s)
        slow_square[launch_cfg(size) + (0, s)](d_out, d_in, 2)
        d_out.copy_to_host(out[c * size:(c + 1) * size], stream=s)
    for s in streams:
        s.synchronize()
    np.testing.assert_allclose(out, a * a, rtol=1e-6)


def test_stream_argument_is_checked(device):
    d = simt.device_array(4, np.float32)
    with pytest.raises(simt.InvalidConfiguration, match="simt.Stream"):
        plus_one[1, 4, 0, "fast"](d, d)


def test_stream_of_another_device_is_refused(device):
    if device.kind == "cpu":
        pytest.skip("needs a second device kind: run with --device cuda:0")
    with simt.use_device("cpu"):
        other = simt.Stream()
    d = simt.device_array(4, np.float32)
    with pytest.raises(simt.InvalidConfiguration, match="belongs to cpu"):
        plus_one[1, 4, 0, other](d, d)


def test_launch_error_in_a_stream_is_raised_at_synchronize():
    """CPU device only: on a GPU an illegal address is sticky and ends the context."""
    with simt.use_device("cpu", boundscheck=True):
        s = simt.Stream()
        d = simt.device_array(4, np.float32)
        write_past_end[1, 4, 0, s](d)
        with pytest.raises(simt.IllegalAddressError, match="write_past_end|outside"):
            s.synchronize()
        s.synchronize()                                    # the device stays usable
