"""A short run of tools/stress.py on the device under test: host threads and processes
(spawn and fork) launching, copying and synchronizing at once, every result checked, no
failure and no leak of device memory or file descriptors. Long runs: see the tool."""
import gc
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import simt
from simt.config import config

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "stress.py"


def test_short_stress_run_has_no_failure_and_no_leak(device):
    if device.kind == "sim":
        pytest.skip("the sim device runs far fewer than 100 operations in its 3 seconds")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src")] + [p for p in
                                        env.get("PYTHONPATH", "").split(os.pathsep) if p])
    run = subprocess.run([sys.executable, str(TOOL), "--device", device.name, "--seconds", "3",
                          "--threads", "3", "--processes", "1"],
                         env=env, capture_output=True, text=True, timeout=300)
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    assert "failures: 0" in report and "LEAK" not in report, report
    ops = int(report.split("operations: ")[1].split()[0])
    assert ops > 100, report


def test_accounting_sees_memory_held_and_let_go(device):
    """The device's bytes_in_use (device and pinned memory this process holds), which the
    stress tool's leak check reads."""
    if device.kind == "sim":
        pytest.skip("the sim device counts device memory only, not pinned memory")
    backend = device.backend
    simt.synchronize()
    gc.collect()                  # earlier tests' garbage would be freed inside the window
    before = backend.bytes_in_use()
    held = [simt.to_device(np.zeros(1 << 18)), simt.pinned_array(1 << 16, np.uint8)]
    view = held[0][10:20]
    assert backend.bytes_in_use() - before >= (1 << 21) + (1 << 16)
    held.clear()
    assert backend.bytes_in_use() - before >= 1 << 21     # the view keeps its memory
    del view
    assert backend.bytes_in_use() == before


def test_memory_dropped_in_a_host_function_is_freed_after_it(device):
    """cudaFree waits for the device, so freeing on a stream host function's thread (the
    last reference dropped there, or the garbage collector running there) would wait for
    the stream that waits for the function: a hang. Such memory is freed after it."""
    backend = device.backend
    simt.synchronize()
    gc.collect()
    before = backend.bytes_in_use()
    s = simt.Stream()
    box = [simt.to_device(np.arange(1 << 16, dtype=np.float64))]
    s.launch_host_func(box.clear)                  # the last reference goes there
    s.synchronize()
    simt.synchronize()
    assert not box and backend.bytes_in_use() == before


def test_threads_that_race_for_a_lazy_module_all_see_it_loaded(tmp_path, monkeypatch):
    """Found by the stress tool: the first launches of a kernel in several threads at once
    raised "module 'simt.runtime.cache' has no attribute 'lookup_key'", as the other threads
    saw the lazy module while one thread was still executing it (importlib's LazyLoader is
    not thread-safe before Python 3.12)."""
    import threading
    from simt.lazy import lazy_module
    (tmp_path / "simt_slow_module.py").write_text("import time\ntime.sleep(0.3)\nvalue = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "simt_slow_module", raising=False)
    module, seen = lazy_module("simt_slow_module"), []

    def read():
        try:
            seen.append(module.value)
        except AttributeError as exc:
            seen.append(exc)
    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [42] * 4


def test_synchronize_waits_for_earlier_work_only(device):
    """Found by reading the stress runs' device_synchronize: on the CPU device,
    synchronize waited until a stream had nothing queued at all, so while another host
    thread kept queueing work it never returned. CUDA waits for the work queued before
    the call (cudaDeviceSynchronize, cudaStreamSynchronize)."""
    import threading
    import time
    s = simt.Stream()
    stop = threading.Event()

    def producer():             # the queue grows: 5 ms of work every 3 ms, for 4 s at most
        simt.set_device(device)
        end = time.monotonic() + 4
        while not stop.is_set() and time.monotonic() < end:
            s.launch_host_func(time.sleep, 0.005)
            time.sleep(0.003)
    thread = threading.Thread(target=producer)
    thread.start()
    try:
        time.sleep(0.1)
        for wait in (simt.synchronize, s.synchronize):
            start = time.monotonic()
            wait()
            took = time.monotonic() - start
            assert took < 1.5, f"{wait.__qualname__} took {took:.1f} s behind a busy producer"
    finally:
        stop.set()
        thread.join()
        s.synchronize()


def test_streams_made_while_another_thread_synchronizes(device):
    """Found by tools/stress.py: on the CPU device a stream made in one thread while
    another thread went over the device's streams (synchronize, a default-stream copy,
    the stream-ordered free of a dropped array) raised "RuntimeError: Set changed size
    during iteration" there."""
    import threading
    import time
    keep = [simt.Stream() for _ in range(50)]       # long to go over
    errors, stop = [], threading.Event()

    def make_streams():
        simt.set_device(device)
        while not stop.is_set():
            keep.append(simt.Stream())
            del keep[50:]
    thread = threading.Thread(target=make_streams)
    thread.start()
    try:
        end = time.monotonic() + 1.0
        while time.monotonic() < end and not errors:
            try:
                simt.synchronize()
            except RuntimeError as exc:
                errors.append(exc)
    finally:
        stop.set()
        thread.join()
    assert not errors, errors[0]


def test_memory_dropped_behind_a_dropped_stream_waits_for_its_work():
    """Found by tools/stress.py ("work of a dropped stream": a wrong copy, 1 in 7000): an
    array dropped after its stream was collected was freed at once, though a copy from it
    was still queued there; the copy then read freed memory."""
    import gc
    import threading
    with simt.use_device("cpu") as cpu:
        x = np.arange(8192, dtype=np.float64)          # 64 KiB: heap memory, not unmapped
        d, out = simt.to_device(x), simt.pinned_array(x.shape, x.dtype)
        s, gate = simt.Stream(), threading.Event()
        s.launch_host_func(gate.wait)
        d.copy_to_host(out, stream=s)
        done = simt.Event().record(s)
        before = cpu.backend.bytes_in_use()
        del s
        gc.collect()                                     # the stream goes; its work stays
        del d
        held = cpu.backend.bytes_in_use() - before
        gate.set()
        done.synchronize()
        assert held == 0, f"{-held} bytes freed while a copy from them was queued"
        np.testing.assert_array_equal(out, x)


def test_a_dropped_stream_is_released_after_a_launch_in_it(device):
    """Found by tools/stress.py's count of running stream threads: Kernel.launches kept
    every launch configuration with its stream, so a stream used in a launch stayed alive
    (its CPU worker thread, its CUDA stream) until 64 other configurations cleared the
    table. A configuration with a stream now lives in that stream's own table."""
    import gc
    import weakref
    s = simt.Stream()
    d = simt.zeros(BINS_FOR_RELEASE, np.int64)
    for _ in range(3):                      # the prepared path from the second launch on
        _fill[1, BINS_FOR_RELEASE, 0, s](d)
    s.synchronize()
    assert d.copy_to_host().sum() == BINS_FOR_RELEASE
    released = weakref.ref(s)
    del s
    gc.collect()
    assert released() is None


BINS_FOR_RELEASE = 32


@simt.kernel
def _fill(x):
    x[simt.grid(1)] = 1


def test_threads_sharing_a_launch_function_launch_their_own_values():
    """Found by tools/stress.py on a GPU (wrong results, 5 in 1945 operations): the launch
    function of a configuration packs its arguments into one buffer that every host thread
    shares, and a thread could launch with the values another thread had packed in
    between. The native call here stands for cuLaunchKernel: it gives up the GIL, then
    reads the buffer."""
    import struct
    import threading
    import time
    from simt.runtime.backend import Native
    from simt.runtime.binder import bind
    from simt.runtime.devices import _local
    storages, wrong = (bytearray(8), bytearray(8)), []

    def go(buffer, a0):
        time.sleep(0.0002)                       # another thread may run here
        if struct.unpack_from("<q", buffer)[0] != a0:
            wrong.append(a0)
        return 0
    native = Native(["err = go(storage{slot}, {args})"], {"go": go},
                    plan=[["{a}"]], slots=2)
    native.scope.update(pack=struct.Struct("<q").pack_into, storage0=storages[0],
                        storage1=storages[1])
    device = getattr(_local, "device", None)
    fast = bind("k", (int,), device, lambda *a: None, native)

    def run(value):
        _local.device = device
        for k in range(200):
            fast(value * 1000 + k % 7)
    threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong, f"{len(wrong)} of 800 launches read another thread's values"


@simt.kernel
def _add_k(out, x, k):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = x[i] + k


def test_threads_launching_one_configuration_get_their_own_results(device):
    """The same, end to end: four host threads launch one kernel configuration with
    arrays and scalars of their own (the prepared path from the second launch on)."""
    import threading
    n, failures = 256, []

    def run(t):
        simt.set_device(device)
        rng = np.random.default_rng(t)
        for k in range(60):
            x = rng.integers(-1000, 1000, n).astype(np.int64)
            d_x, d_out = simt.to_device(x), simt.device_array(n, np.int64)
            _add_k[2, 128](d_out, d_x, np.int64(t * 100 + k))
            if not np.array_equal(d_out.copy_to_host(), x + t * 100 + k):
                failures.append((t, k))
    threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, f"{len(failures)} launches of 240 gave another thread's result"


def test_a_kept_launch_function_outlives_its_dropped_stream(device):
    """A launch function kept after its stream was dropped still launches in that stream
    (the Launch keeps the backend stream alive, not the simt.Stream)."""
    s = simt.Stream()
    d = simt.zeros(BINS_FOR_RELEASE, np.int64)
    launch = _fill[1, BINS_FOR_RELEASE, 0, s]
    launch(d)
    launch = _fill[1, BINS_FOR_RELEASE, 0, s]       # the prepared function
    del s
    import gc
    gc.collect()
    d2 = simt.zeros(BINS_FOR_RELEASE, np.int64)
    launch(d2)
    simt.synchronize()
    assert d2.copy_to_host().sum() == BINS_FOR_RELEASE


def test_a_thread_python_did_not_start_counts_as_a_host_function():
    """A CUDA driver's callback thread is not a Python thread; the garbage collector can run
    finalizers there before a host function marks itself, and a driver call from such a
    finalizer deadlocked (tools/stress.py on a GPU): frees and destroys on such threads are
    deferred. Here a thread started by pthread_create through ctypes stands in for it."""
    import ctypes
    import ctypes.util
    from simt.runtime.backend import in_host_function
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    seen = []
    callback = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(
        lambda _: seen.append(in_host_function()) or 0)
    thread = ctypes.c_ulong()
    assert libc.pthread_create(ctypes.byref(thread), None, callback, None) == 0
    assert libc.pthread_join(thread, None) == 0
    assert seen == [True]
    assert in_host_function() is False            # a Python thread, outside any function


_KERNELS = '''
import numpy as np
import simt


@simt.device
def mix(v, k):
    return v * 0.5 + k


def make(c):
    """A new kernel (a first compile) that adds c: loops (llvm.loop metadata), shared
    memory and a barrier, a device function every kernel shares."""
    @simt.kernel
    def add_c(out, x, n):
        buf = simt.shared.array(128, np.float64)
        t = simt.threadIdx.x
        i = simt.grid(1)
        acc = 0.0
        if i < x.shape[0]:
            acc = x[i]
        buf[t] = acc
        simt.syncthreads()
        for j in range(n):
            k = 0
            while k < 2:
                acc = mix(acc, 0.0) + acc * 0.5
                k += 1
        if i < out.shape[0]:
            out[i] = buf[t] + acc - x[i] + c
    return add_c
'''


def test_threads_compiling_at_once_all_compute_right(device, tmp_path, monkeypatch):
    """Threads making first launches at once, of different kernels (and of one kernel):
    compiling shares the front end's caches and llvmlite objects, and a compile lock
    keeps that safe (issue 33 item 23: the stress tool's warm-up raised a KeyError from
    llvmlite's IR objects). Several rounds, each of new kernels, results against NumPy."""
    import importlib
    import threading
    (tmp_path / "threadkernels.py").write_text(_KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("threadkernels")
    monkeypatch.setattr(config, "cache", False)      # compile, not load from disk
    threads, n = 8, 1000
    rng = np.random.default_rng(23)
    for round_ in range(4):
        kernels = [module.make(float(round_ * 10 + t)) for t in range(threads - 2)]
        kernels += kernels[:2]                 # two kernels compiled by two threads at once
        start, failures, outs = threading.Barrier(threads), [], [None] * threads
        x = rng.random(n) + 0.5

        def first_launch(t):
            try:
                simt.set_device(device.name)
                out = np.full(n, np.nan)
                start.wait()
                kernels[t][(n + 127) // 128, 128](out, x, 3)
                outs[t] = out
            except BaseException as exc:      # noqa: BLE001 - reported below, whole
                failures.append(exc)
        pool = [threading.Thread(target=first_launch, args=(t,)) for t in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        assert not failures, failures
        for t, out in enumerate(outs):
            c = round_ * 10 + t % (threads - 2)
            np.testing.assert_allclose(out, x + c, rtol=1e-12)


def test_a_failure_keeps_its_whole_traceback(monkeypatch):
    """The stress tool reports the innermost frames of a failure (issue 33 item 23: a
    KeyError deep in llvmlite showed only its outermost four frames)."""
    import importlib.util
    import threading
    spec = importlib.util.spec_from_file_location("stress_tool", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)

    def deep(level):
        if level == 0:
            raise KeyError("innermost_frame_marker")
        deep(level - 1)
    monkeypatch.setattr(tool, "operations", lambda spec: ["device_synchronize"])
    monkeypatch.setattr(tool.Worker, "device_synchronize", lambda self: deep(8))
    stats = {"ops": {}, "failures": []}
    tool.run_thread("cpu", 0, time.monotonic() + 0.5, stats, threading.Lock())
    assert stats["failures"], stats
    assert 'raise KeyError("innermost_frame_marker")' in stats["failures"][0], \
        stats["failures"][0]                      # the frame that raised is there
