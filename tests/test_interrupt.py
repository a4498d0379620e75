"""Ctrl-C on the CPU device through the launch paths beside a plain launch: graph launches
(on the legacy default stream and in a stream) and checked-mode launches (issue 33 item 6).
Each case runs in its own process: a launch that cannot be stopped would hang the tests.
test_runtime_trust.py has the plain launches."""
import os
import subprocess
import sys

import pytest

_PRELUDE = '''
import os, signal, sys, threading, time
# a shell's background job starts with SIGINT ignored, and a child inherits that
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np, simt
simt.set_device("cpu", checks=sys.argv[1] == "checked")

@simt.kernel
def spin(out, n):
    i = simt.grid(1)
    k = 0
    while k < n:
        out[i] += 1.0
        k += 1

@simt.kernel
def count(out, n):                 # an innermost range loop
    i = simt.grid(1)
    for k in range(n):
        out[i] += 1.0

@simt.kernel
def axpy(y, a, x):
    i = simt.grid(1)
    if i < y.shape[0]:
        y[i] = a * x[i] + y[i]

def interrupted(what, launch):
    """Seconds from launch to KeyboardInterrupt; SIGINT after one second."""
    threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.perf_counter()
    try:
        launch()
    except KeyboardInterrupt:
        print(what, round(time.perf_counter() - start, 2), flush=True)
        return
    print(what, "end", flush=True)     # not interrupted

def usable():
    """The device computes right after the interrupts."""
    rng = np.random.default_rng(7)
    x, y = rng.random(1000) + 0.5, rng.random(1000) + 0.5
    d_y = simt.to_device(np.full(1000, np.nan))           # poisoned, then the input
    d_y.copy_from(y)
    axpy[4, 256](d_y, 3.0, simt.to_device(x))
    simt.synchronize()
    print("usable", bool(np.allclose(d_y.copy_to_host(), 3.0 * x + y)), flush=True)

out = simt.to_device(np.zeros(64))
'''

_GRAPH = _PRELUDE + '''
def chain(n, event):
    """Three kernels that spin n times, one after the other, then an event record."""
    graph, deps = simt.Graph(), []
    for _ in range(3):
        deps = [graph.add_kernel(spin, 2, 32, (out, np.int64(n)), deps=deps)]
    graph.add_event_record(event, deps=deps)
    return graph.instantiate()

event, stream = simt.Event(), simt.Stream()
chain(1, event).launch()                   # compiled and loaded before the clock runs
simt.synchronize()
forever = chain(1 << 62, event)
interrupted("default stream", lambda: (forever.launch(), simt.synchronize()))
interrupted("stream", lambda: (forever.launch(stream), stream.synchronize()))
start = time.perf_counter()
stream.synchronize()                       # the rest of the graph did not run on
event.synchronize()                        # its event record completed all the same
print("synchronized", round(time.perf_counter() - start, 2), flush=True)
usable()
'''

_CHECKED = _PRELUDE + '''
spin[2, 32](out, np.int64(1)), count[2, 32](out, np.int64(1))
simt.synchronize()
interrupted("while loop", lambda: (spin[2, 32](out, np.int64(1 << 62)), simt.synchronize()))
interrupted("innermost range loop", lambda: (count[2, 32](out, np.int64(1 << 62)),
                                             simt.synchronize()))
usable()
'''


def _run(tmp_path, source, mode):
    script = tmp_path / "ctrl_c.py"
    script.write_text(source)
    env = dict(os.environ, SIMT_CPU_THREADS="2")
    try:
        done = subprocess.run([sys.executable, str(script), mode], capture_output=True,
                              text=True, timeout=30, env=env)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"a launch did not stop on SIGINT: {(exc.stdout or b'').decode()}")
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())


def _assert_prompt(seconds, *whats):
    for what in whats:
        assert seconds[what] != "end", f"{what}: {seconds}"
        assert float(seconds[what]) < 4.0, f"{what}: {seconds}"


def test_ctrl_c_stops_a_graph(tmp_path):
    """SIGINT ends a graph launch with KeyboardInterrupt, in a stream too: the nodes after
    the interrupted kernel do not run, its event record completes, the device computes."""
    seconds = _run(tmp_path, _GRAPH, "plain")
    _assert_prompt(seconds, "default stream", "stream", "synchronized")
    assert seconds["usable"] == "True", seconds


def test_ctrl_c_stops_a_checked_launch(tmp_path):
    """Checked mode polls the flag in every loop, innermost range loops too (checks make
    them 10 to 100 times slower, so Ctrl-C matters more there)."""
    seconds = _run(tmp_path, _CHECKED, "checked")
    _assert_prompt(seconds, "while loop", "innermost range loop")
    assert seconds["usable"] == "True", seconds
