"""Trust in the runtime (issue 12): memory is not freed under queued work, read-only
host arrays stay unchanged, copies never cast, forked children launch, host functions
cannot deadlock a stream, local arrays have CUDA's limit, errors reach the thread whose
work failed, Ctrl-C stops a kernel. Tests taking ``device`` run on GPUs too
(``--device cuda:0``); the others are about the CPU device's threads."""

import numpy as np
import pytest

import simt

N = 4096          # small arrays: freed memory is reused at once by the host allocator


@simt.kernel
def fill_slowly(x, v, spin):
    """x[:] = v, after a busy loop, so that the work is still queued when the host goes on."""
    i = simt.grid(1)
    if i < x.shape[0]:
        acc = 0.0
        for k in range(spin):
            acc = acc * 0.5 + 1.0
        x[i] = v + (acc - acc)


def test_dropped_array_is_not_freed_under_queued_work(device):
    """The issue's loop: the output array is reassigned right after its async copy."""
    s = simt.Stream()
    iters = 24
    outs = [simt.pinned_array(N, np.float64) for _ in range(iters)]
    for i in range(iters):
        d = simt.device_array(N)
        fill_slowly[(N + 127) // 128, 128, 0, s](d, float(i), 300)
        d.copy_to_host(out=outs[i], stream=s)
        junk = [np.full(N, -1.0) for _ in range(4)]     # the host reuses freed memory
    s.synchronize()
    del junk
    for i, out in enumerate(outs):
        np.testing.assert_array_equal(out, np.full(N, float(i)), err_msg=f"iteration {i}")


def test_copies_refuse_read_only_destinations(device):
    d = simt.to_device(np.arange(8, dtype=np.float64))
    frozen = np.zeros(8)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        d.copy_to_host(out=frozen)
    immutable = np.frombuffer(bytes(64), dtype=np.float64)
    with pytest.raises(ValueError, match="read-only"):
        d.copy_to_host(out=immutable, stream=simt.Stream())
    with pytest.raises(ValueError, match="read-only"):
        d[::2].copy_to_host(out=np.frombuffer(bytes(32), dtype=np.float64))
    assert not frozen.any() and not immutable.any()


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
def test_copies_into_another_dtype_are_errors(device, dtype):
    d = simt.to_device(np.arange(8, dtype=np.float64))
    out = np.zeros(8, dtype)
    with pytest.raises(TypeError, match="do not convert"):
        d.copy_to_host(out=out)
    with pytest.raises(TypeError, match="do not convert"):
        d[::2].copy_to_host(out=out[:4])
    assert not out.any()
    with pytest.raises(TypeError, match="do not convert"):
        d.copy_from(np.ones(8, dtype))
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(8.0))


@simt.device
def _store_through(row, i, v):
    view = row[1:]
    view[i] = v


@simt.kernel
def write_direct(out, src):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = src[i] + 1.0


@simt.kernel
def write_in_device_function(out, src):
    i = simt.grid(1)
    if i < out.shape[0] - 1:
        _store_through(out, i, src[i])


@simt.kernel
def write_atomically(out, src):
    i = simt.grid(1)
    if i < src.shape[0]:
        simt.atomic.add(out, 0, src[i])


@simt.kernel
def write_through_alias(a, b, flag):
    i = simt.grid(1)
    target = b
    if flag > 0:
        target = a
    if i < target.shape[0]:
        target[i] = 7.0


def _read_only(values):
    array = np.array(values, dtype=np.float64)
    array.flags.writeable = False
    return array


@pytest.mark.parametrize("kernel, line_of", [
    (write_direct, "out[i] = src[i] + 1.0"),
    (write_in_device_function, "view[i] = v"),
    (write_atomically, "simt.atomic.add(out, 0, src[i])"),
])
def test_a_kernel_cannot_write_a_read_only_array(device, kernel, line_of):
    src = np.arange(8, dtype=np.float64)
    frozen = _read_only(np.zeros(8))
    immutable = bytes(64)
    with pytest.raises(ValueError, match=f"'{kernel.__name__}' writes its parameter 'out'") as info:
        kernel[1, 8](frozen, src)
    line = next(n for n, text in enumerate(open(__file__).read().splitlines(), 1)
                if line_of in text)
    assert f"line {line}" in str(info.value)
    with pytest.raises(ValueError, match="read-only"):
        kernel[1, 8](np.frombuffer(immutable, dtype=np.float64), src)
    assert not frozen.any() and immutable == bytes(64)


def test_read_only_arrays_may_be_read_and_aliases_are_followed(device):
    out = np.zeros(8)
    write_direct[1, 8](out, _read_only(np.arange(8.0)))          # read only: allowed
    np.testing.assert_array_equal(out, np.arange(8.0) + 1)
    with pytest.raises(ValueError, match="'a'"):
        write_through_alias[1, 8](_read_only(np.zeros(8)), np.zeros(8), 1)
    with pytest.raises(ValueError, match="'b'"):
        write_through_alias[1, 8](np.zeros(8), _read_only(np.zeros(8)), 0)


@simt.kernel
def add_one(x):
    i = simt.grid(1)
    if i < x.shape[0]:
        x[i] += 1.0


def _launch_in_child(queue):
    x = np.zeros(N)
    add_one[N // 128, 128](x)                      # many blocks: the worker pool
    s = simt.Stream()
    d = simt.to_device(x)
    add_one[N // 128, 128, 0, s](d)                # a stream: its worker thread
    s.synchronize()
    queue.put(float(d.copy_to_host().sum()))


def test_a_forked_child_launches(monkeypatch):
    """Pool and stream threads of the parent do not survive fork; the child makes its own."""
    import multiprocessing
    from simt.config import config
    monkeypatch.setattr(config, "cpu_threads", 4)
    with simt.use_device("cpu"):
        x = np.zeros(N)
        add_one[N // 128, 128](x)
        s = simt.Stream()
        add_one[N // 128, 128, 0, s](simt.to_device(x))
        s.synchronize()
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        child = ctx.Process(target=_launch_in_child, args=(queue,))
        child.start()
        child.join(30)
        hung = child.is_alive()
        if hung:
            child.kill()
        assert not hung, "the forked child hung on its first launch"
        assert child.exitcode == 0 and queue.get(timeout=5) == 2.0 * N


def _finished(stream, seconds=20.0):
    """Whether the stream's work finishes in time (a deadlock would never)."""
    import time
    deadline = time.monotonic() + seconds
    while not stream.query():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_host_function_cannot_launch_copy_or_synchronize(device):
    s = simt.Stream()
    d = simt.zeros(N)
    forbidden = {
        "Stream.synchronize": s.synchronize,
        "synchronize": simt.synchronize,
        "a launch on the default stream": lambda: add_one[N // 128, 128](d),
        "a launch on its own stream": lambda: add_one[N // 128, 128, 0, s](d),
        "a copy": lambda: d.copy_to_host(),
    }
    for what, call in forbidden.items():
        s.launch_host_func(call)
        assert _finished(s), f"{what} in a host function deadlocked the stream"
        with pytest.raises(simt.CudaError, match="host function"):
            s.synchronize()
    s.synchronize()
    assert not d.copy_to_host().any()          # nothing the host functions tried ran


@simt.kernel
def write_past_end(x):
    i = simt.grid(1)
    x[i + 1] = 1.0


def _in_thread(fn):
    import threading
    result = {}

    def run():
        try:
            with simt.use_device("cpu"):
                fn()
        except BaseException as exc:
            result["error"] = exc
    t = threading.Thread(target=run)
    t.start()
    t.join(60)
    return result.get("error")


def test_an_error_goes_to_the_thread_that_launched_the_work():
    """On the CPU device errors belong to the launching thread and its stream (a GPU's
    sticky error belongs to its context, as CUDA has it: docs/gpu-device.md)."""
    with simt.use_device("cpu"):
        x = simt.zeros(8)
        write_past_end[1, 8](x)                       # default stream: this thread's error
        assert _in_thread(simt.synchronize) is None   # an innocent thread sees success
        with pytest.raises(simt.IllegalAddressError):
            simt.synchronize()
        simt.synchronize()                            # raised once

        s = simt.Stream()
        write_past_end[1, 8, 0, s](x)                 # a stream: its error
        assert _in_thread(simt.synchronize) is None
        assert isinstance(_in_thread(s.synchronize), simt.IllegalAddressError)
        s.synchronize()

        errors = _in_thread(lambda: write_past_end[1, 8](simt.zeros(8)))
        assert errors is None                         # launched, not yet synchronized there
        simt.synchronize()                            # that thread's error is not ours


LOCAL_LIMIT_ELEMS = 512 * 1024 // 8          # float64 elements in CUDA's 512 KB


def test_a_local_array_over_cudas_limit_is_a_compile_error(tmp_path):
    """In its own process: before the limit, 9 MB on the stack killed it with SIGSEGV."""
    import subprocess
    import sys
    script = tmp_path / "big_local.py"
    script.write_text(
        "import numpy as np, simt\n"
        "@simt.kernel\n"
        "def big(out, m):\n"
        "    buf = simt.local.array(1179648, np.float64)\n"
        "    for j in range(m):\n"
        "        buf[j] = j\n"
        "    out[0] = buf[m - 1]\n"
        "try:\n"
        "    big[1, 1](np.zeros(1), 1179648)\n"
        "except simt.CompileError as exc:\n"
        "    print(exc)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env=dict(__import__("os").environ, SIMT_DEVICE="cpu"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "9437184 bytes per thread" in done.stdout and "512 KB" in done.stdout
    assert "big_local.py:4" in done.stdout


@simt.device
def _half_limit_scratch(m):
    tmp = simt.local.array(LOCAL_LIMIT_ELEMS // 2 + 1, np.float64)
    for j in range(m):
        tmp[j] = j
    return tmp[m - 1]


@simt.kernel
def over_limit_in_total(out, m):
    buf = simt.local.array(LOCAL_LIMIT_ELEMS // 2, np.float64)
    for j in range(m):
        buf[j] = j
    out[0] = buf[m - 1] + _half_limit_scratch(m)


@simt.kernel
def at_the_limit(out, m):
    buf = simt.local.array(LOCAL_LIMIT_ELEMS, np.float64)
    for j in range(m):
        buf[j] = j
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = buf[m - 1] + buf[i]


def test_local_arrays_count_together_with_their_device_functions(device):
    with pytest.raises(simt.CompileError, match="over_limit_in_total.*local memory per thread"):
        over_limit_in_total[1, 1](np.zeros(1), 8)


def test_the_allowed_local_memory_fits_every_thread_that_runs_blocks():
    """512 KB per thread on the CPU device: on the calling thread, in a stream's thread,
    in pool threads and in another host thread. (A GPU reserves local memory for every
    resident thread: 512 KB each may not fit its memory.)"""
    with simt.use_device("cpu") as device:
        _run_at_the_limit(device)


def _run_at_the_limit(device):
    import threading
    m = LOCAL_LIMIT_ELEMS
    want = np.arange(64, dtype=np.float64) + (m - 1)
    out = np.zeros(64)
    at_the_limit[1, 64](out, m)
    np.testing.assert_array_equal(out, want)
    s = simt.Stream()
    d = simt.zeros(64)
    at_the_limit[4, 16, 0, s](d, m)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), want)
    out[:] = 0
    errors = []

    def launch():
        try:
            with simt.use_device(device.name):
                at_the_limit[1, 64](out, m)
        except BaseException as exc:
            errors.append(exc)
    t = threading.Thread(target=launch)
    t.start()
    t.join(60)
    assert not errors
    np.testing.assert_array_equal(out, want)


_SPIN = '''
import os, signal, sys, threading, time
# a shell's background job starts with SIGINT ignored, and a child inherits that
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np, simt
simt.set_device("cpu")

@simt.kernel
def spin(flag, out):
    i = simt.grid(1)
    while flag[0] == 0:
        out[i] += 1.0

@simt.kernel
def spin_for(out, n):
    i = simt.grid(1)
    for k in range(n):
        if out[i] < 0.0:
            continue
        for j in range(2):
            out[i] += 1.0

def interrupted(launch):
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    try:
        launch()
    except KeyboardInterrupt:
        return True
    return False

flag, out = np.zeros(1), np.zeros(256)
s = simt.Stream()
d_flag, d_out = simt.to_device(flag), simt.to_device(out)
# Compile and load first (the flag set: the loops end at once), so that the SIGINT of each
# case lands while its kernel runs, however slow compiling is on a loaded machine.
flag[0] = 1
d_flag.copy_from(flag)
spin[1, 1](flag, out), spin[64, 4](flag, out), spin[1, 4](d_flag, d_out)
spin[8, 32, 0, s](d_flag, d_out), spin_for[1, 1](out, 0)
s.synchronize(), simt.synchronize()
flag[0] = 0
d_flag.copy_from(flag)
cases = {
    "default stream, NumPy arguments": lambda: spin[1, 1](flag, out),
    "many blocks": lambda: spin[64, 4](flag, out),
    "device arrays, then synchronize": lambda: (spin[1, 4](d_flag, d_out),
                                                simt.synchronize()),
    "a stream": lambda: (spin[8, 32, 0, s](d_flag, d_out), s.synchronize()),
    "nested range loops": lambda: spin_for[1, 1](out, 1 << 62),
}
for what, launch in cases.items():
    print(what, interrupted(launch), flush=True)

x = np.zeros(8)
@simt.kernel
def ones(x):
    x[simt.grid(1)] = 1.0
ones[1, 8](x)
s.synchronize()
simt.synchronize()
print("usable", x.sum() == 8, flush=True)
'''


def test_ctrl_c_stops_a_spinning_kernel(tmp_path):
    """SIGINT ends the kernel (its loops poll a flag) with KeyboardInterrupt; the device
    stays usable. In its own process: a kernel that cannot be stopped would hang it."""
    import os
    import subprocess
    import sys
    script = tmp_path / "spin.py"
    script.write_text(_SPIN)
    env = dict(os.environ, SIMT_CPU_THREADS="2")
    try:
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=90, env=env)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"a kernel did not stop on SIGINT: {exc.stdout}")
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr[-3000:]
    assert lines and all(line.endswith("True") for line in lines), done.stdout
    assert len(lines) == 6
