"""CUDA graphs (guide 3.2.6.6, API.md 4 and 10): the explicit API, stream capture over one
and several streams, replay, updates of an instantiated graph, and the errors CUDA gives
for calls that conflict with a capture."""
import numpy as np
import pytest

import simt
from conftest import poison, random_array



N = 1000
CFG = ((N + 127) // 128, 128)


@simt.kernel
def axpy(y, a, x):
    """y = a*x + y."""
    i = simt.grid(1)
    if i < y.shape[0]:
        y[i] = a * x[i] + y[i]


@simt.kernel
def square(y, x):
    i = simt.grid(1)
    if i < y.shape[0]:
        y[i] = x[i] * x[i]


def _arrays(rng, count):
    return [simt.to_device(random_array(rng, N, np.float32)) for _ in range(count)]


def test_explicit_graph_every_node_kind(device, rng):
    x, y = _arrays(rng, 2)
    hx, hy = x.copy_to_host(), y.copy_to_host()
    z = simt.to_device(poison(N, np.float32))
    flags = simt.to_device(poison(N, np.int16))
    out = simt.pinned_array(N, np.float32)
    out[:] = np.nan
    calls = []
    g = simt.Graph()
    k1 = g.add_kernel(axpy, *CFG, (y, np.float32(2.0), x))        # y = 2x + y
    k2 = g.add_kernel(square, *CFG, (z, y), deps=[k1])            # z = y*y
    m = g.add_memset(flags, -3)                                   # a root of its own
    join = g.add_empty(deps=[k2, m])
    c = g.add_memcpy(out, z, deps=join)
    g.add_host(calls.append, ("copied",), deps=[c])
    assert [n.kind for n in g.nodes] == ["kernel", "kernel", "memset", "empty", "memcpy",
                                         "host"]
    exe = g.instantiate()
    s = simt.Stream()
    exe.launch(s)
    s.synchronize()
    expect_y = 2 * hx + hy
    np.testing.assert_allclose(out, expect_y * expect_y, rtol=1e-4, atol=1e-5)
    assert (flags.copy_to_host() == -3).all() and calls == ["copied"]
    exe.launch(s)                        # a replay runs everything again: y grows by 2x
    exe.launch()                         # and on the default stream
    simt.synchronize()
    expect_y = expect_y + 4 * hx
    np.testing.assert_allclose(out, expect_y * expect_y, rtol=1e-4, atol=1e-5)
    assert calls == ["copied"] * 3


def test_capture_one_stream_replays_with_new_inputs(device, rng):
    x, y = _arrays(rng, 2)
    z = simt.to_device(poison(N, np.float32))
    staged = simt.pinned_array(N, np.float32)
    staged[:] = random_array(rng, N, np.float32)
    s = simt.Stream()
    seen = []
    with s.capture() as g:
        x.copy_from(staged, stream=s)                    # pinned: capturable
        axpy[CFG + (0, s)](y, np.float32(-1.0), x)
        square[CFG + (0, s)](z, y)
        s.launch_host_func(seen.append, 1)
    assert np.isnan(z.copy_to_host()).all() and seen == []     # recorded, not run
    hy = y.copy_to_host()
    exe = g.instantiate()
    for _ in range(2):
        staged[:] = random_array(rng, N, np.float32)             # read at each replay
        exe.launch(s)
        s.synchronize()
        hy = hy - staged
        np.testing.assert_allclose(z.copy_to_host(), hy * hy, rtol=1e-4, atol=1e-5)
    assert seen == [1, 1]


def test_capture_forks_and_joins_streams_through_events(device, rng):
    a, b, x = _arrays(rng, 3)
    ha, hb, hx = a.copy_to_host(), b.copy_to_host(), x.copy_to_host()
    za, zb = (simt.to_device(poison(N, np.float32)) for _ in range(2))
    main, side = simt.Stream(), simt.Stream()
    fork, joined = simt.Event(timing=False), simt.Event(timing=False)
    with main.capture() as g:
        axpy[CFG + (0, main)](x, np.float32(1.0), a)        # x += a
        fork.record(main)
        side.wait_event(fork)                               # side joins the capture
        square[CFG + (0, side)](zb, x)                      # branch 1 reads x
        joined.record(side)
        axpy[CFG + (0, main)](b, np.float32(3.0), x)        # branch 2: b += 3x
        square[CFG + (0, main)](za, b)
        main.wait_event(joined)                             # joined back
    exe = g.instantiate()
    exe.launch(main)
    main.synchronize()
    nx = hx + ha
    np.testing.assert_allclose(zb.copy_to_host(), nx * nx, rtol=1e-4, atol=1e-5)
    nb = hb + 3 * nx
    np.testing.assert_allclose(za.copy_to_host(), nb * nb, rtol=1e-4, atol=1e-5)


def test_unjoined_capture_is_an_error(device, rng):
    (x,) = _arrays(rng, 1)
    main, side = simt.Stream(), simt.Stream()
    fork = simt.Event(timing=False)
    with pytest.raises(simt.CudaError, match="(?i)stream.?capture.?unjoined"):
        with main.capture():
            fork.record(main)
            side.wait_event(fork)
            square[CFG + (0, side)](x, x)
    square[CFG + (0, side)](x, x)          # both streams work normally again
    side.synchronize()


@pytest.mark.parametrize("call", ["device", "stream", "legacy"])
def test_calls_that_conflict_with_a_capture_raise(device, rng, call):
    x, y = _arrays(rng, 2)
    s = simt.Stream()
    error = "(?i)stream.?capture.?implicit" if call == "legacy" else \
        "(?i)stream.?capture.?(unsupported|invalidated)"
    with pytest.raises(simt.CudaError, match=error):
        with s.capture():
            square[CFG + (0, s)](y, x)
            if call == "device":
                simt.synchronize()
            elif call == "stream":
                s.synchronize()
            else:
                square[CFG](y, x)                       # the legacy default stream
    hx = x.copy_to_host()
    square[CFG + (0, s)](y, x)                          # the stream works again
    s.synchronize()
    np.testing.assert_allclose(y.copy_to_host(), hx * hx, rtol=1e-6)


def test_exec_update_and_set_kernel_args(device, rng):
    x, y, x2, y2 = _arrays(rng, 4)
    hx, hy, hx2, hy2 = (a.copy_to_host() for a in (x, y, x2, y2))
    z = simt.to_device(poison(N, np.float32))

    def build(dst, src, a):
        g = simt.Graph()
        k = g.add_kernel(axpy, *CFG, (dst, np.float32(a), src))
        g.add_kernel(square, *CFG, (z, dst), deps=[k])
        return g, k

    g1, k1 = build(y, x, 2.0)
    exe = g1.instantiate()
    g2, k2 = build(y2, x2, -1.0)
    exe.update(g2)                                       # same topology, new parameters
    exe.launch()
    simt.synchronize()
    np.testing.assert_allclose(y.copy_to_host(), hy)     # g1's arrays untouched
    ny2 = hy2 - hx2
    np.testing.assert_allclose(z.copy_to_host(), ny2 * ny2, rtol=1e-4, atol=1e-5)
    z.copy_from(poison(N, np.float32))
    exe.set_kernel_args(k2, y, np.float32(0.5), x)       # node of the graph it took last
    exe.launch()
    simt.synchronize()
    np.testing.assert_allclose(y.copy_to_host(), hy + 0.5 * hx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(z.copy_to_host(), ny2 * ny2, rtol=1e-4, atol=1e-5)  # y2 kept
    other = simt.Graph()
    other.add_kernel(square, *CFG, (z, y))
    with pytest.raises(simt.CudaError, match="(?i)graph.?exec.?update"):
        exe.update(other)
    with pytest.raises(ValueError, match="kernel node of the graph"):
        exe.set_kernel_args(k1, y, np.float32(1.0), x)


def test_child_graph_and_event_nodes(device, rng):
    x, y = _arrays(rng, 2)
    hx, hy = x.copy_to_host(), y.copy_to_host()
    z = simt.to_device(poison(N, np.float32))
    child = simt.Graph()
    child.add_kernel(axpy, *CFG, (y, np.float32(1.0), x))
    done, gate = simt.Event(), simt.Event()
    gate.record()
    g = simt.Graph()
    w = g.add_event_wait(gate)
    c = g.add_child_graph(child, deps=[w])
    child.add_kernel(square, *CFG, (y, y))          # added later: not in g's copy
    k = g.add_kernel(square, *CFG, (z, y), deps=[c])
    g.add_event_record(done, deps=[k])
    exe = g.instantiate()
    s = simt.Stream()
    exe.launch(s)
    done.synchronize()                               # waits for the graph's record
    ny = hy + hx
    np.testing.assert_allclose(z.copy_to_host(), ny * ny, rtol=1e-4, atol=1e-5)
    assert [n.kind for n in g.nodes] == ["event_wait", "graph", "kernel", "event_record"]


def test_graph_argument_errors(device, rng):
    (x,) = _arrays(rng, 1)
    g = simt.Graph()
    with pytest.raises(simt.InvalidConfiguration, match="NumPy argument"):
        g.add_kernel(square, *CFG, (x, np.zeros(N, np.float32)))
    with pytest.raises(ValueError, match="deps must be nodes of this graph"):
        g.add_empty(deps=[simt.Graph().add_empty()])
    with pytest.raises(ValueError, match="16- or 32-bit"):
        g.add_memset(simt.device_array(4, np.float64), 1.0)
    with pytest.raises(simt.InvalidConfiguration, match="legacy default stream cannot be"):
        with simt.default_stream().capture():
            pass


@simt.kernel
def bump_slowly(count, scratch):
    """count[0] += 1, a plain read and write far apart: launches that overlap lose updates."""
    if simt.grid(1) == 0:
        seen = count[0]
        for k in range(20000):
            scratch[k % scratch.shape[0]] = seen + k
        count[0] = seen + 1


def test_exec_launched_from_two_threads_runs_one_launch_at_a_time(device):
    """A graph exec runs one launch at a time, each after the launches made before it, in
    whichever streams (guide 3.2.6.6.5): 200 launches from two threads count to 200."""
    import threading
    count, scratch = simt.zeros(1, np.int32), simt.zeros(64, np.int32)
    s = simt.Stream()
    with s.capture() as g:
        bump_slowly[1, 32, 0, s](count, scratch)
    exe = g.instantiate()
    errors = []

    def launches():
        try:
            with simt.use_device(device):
                stream = simt.Stream()
                for _ in range(100):
                    exe.launch(stream)
                stream.synchronize()
        except BaseException as exc:        # seen by the test, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=launches) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert count.copy_to_host()[0] == 200


def test_exec_launched_inside_a_capture_is_a_child_graph(device):
    count, scratch = simt.zeros(1, np.int32), simt.zeros(64, np.int32)
    s = simt.Stream()
    with s.capture() as g:
        bump_slowly[1, 32, 0, s](count, scratch)
    exe = g.instantiate()
    with s.capture() as outer:
        exe.launch(s)
        exe.launch(s)
    twice = outer.instantiate()
    twice.launch(s)
    exe.launch(s)
    twice.launch(s)
    s.synchronize()
    assert count.copy_to_host()[0] == 5


def test_capture_copies_pageable_host_memory_at_each_replay(device, rng):
    """A stream copy from (or to) pageable host memory under capture is a memcpy node that
    reads (writes) the host array each time the graph runs, as CUDA records it
    (NVIDIA's jacobiCudaGraphs sample relies on it)."""
    x = simt.to_device(poison(N, np.float32))
    z = simt.to_device(poison(N, np.float32))
    source = random_array(rng, N, np.float32)           # plain NumPy: pageable
    result = np.full(N, np.nan, np.float32)
    s = simt.Stream()
    with s.capture() as g:
        x.copy_from(source, stream=s)
        square[CFG + (0, s)](z, x)
        z.copy_to_host(out=result, stream=s)
    assert np.isnan(result).all()                        # recorded, not run
    exe = g.instantiate()
    for _ in range(3):
        source[:] = random_array(rng, N, np.float32)    # the new data is what gets copied
        result[:] = np.nan
        exe.launch(s)
        s.synchronize()
        np.testing.assert_allclose(result, source * source, rtol=1e-6)


@simt.kernel
def write_past_end(y):
    y[simt.grid(1) + y.shape[0]] = 1.0


def test_event_record_after_a_failed_node_completes(device, rng):
    """A node's error ends the replay; the graph's event record still completes (its
    record was made at launch), so waiting for it raises the error instead of hanging."""
    import threading
    if device.kind != "cpu":
        pytest.skip("a kernel error is sticky on GPUs")
    y = simt.to_device(random_array(rng, 64, np.float32))
    graph, event, stream = simt.Graph(), simt.Event(), simt.Stream()
    graph.add_event_record(event, deps=[graph.add_kernel(write_past_end, 1, 64, (y,))])
    graph.instantiate().launch(stream)
    errors = []

    def wait():
        try:
            event.synchronize()
            stream.synchronize()
        except simt.LaunchError as exc:
            errors.append(exc)
    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    waiter.join(30)
    assert not waiter.is_alive(), "the event of a failed graph never completed"
    assert len(errors) == 1 and isinstance(errors[0], simt.IllegalAddressError), errors
    x = random_array(rng, 64, np.float32)        # the device computes on
    d_y = simt.to_device(poison(64, np.float32))
    square[1, 64](d_y, simt.to_device(x))
    np.testing.assert_array_equal(d_y.copy_to_host(), x * x)


# ---------------------------------------------------------------- on the sim device
# CI runs the suite on the cpu device: these run the tests above on the sim device too,
# whose graphs and capture are the cpu device's (backends/hostgraphs.py, hostcapture.py)
# with every node run at once, checked.
ON_SIM = [test_explicit_graph_every_node_kind, test_capture_one_stream_replays_with_new_inputs,
          test_capture_forks_and_joins_streams_through_events, test_unjoined_capture_is_an_error,
          test_exec_update_and_set_kernel_args, test_child_graph_and_event_nodes,
          test_capture_copies_pageable_host_memory_at_each_replay]


@pytest.mark.parametrize("test", ON_SIM, ids=lambda test: test.__name__[5:])
def test_sim(test, rng):
    with simt.use_device("sim") as sim:
        test(sim, rng)


@pytest.mark.parametrize("call", ["device", "stream", "legacy"])
def test_sim_calls_that_conflict_with_a_capture_raise(rng, call):
    with simt.use_device("sim") as sim:
        test_calls_that_conflict_with_a_capture_raise(sim, rng, call)
