"""CUDA streams and events: thin owners of CUstream / CUevent handles.

Create them while the device's context is current (CudaBackend.create_stream does so).
"""

import ctypes
import itertools
import threading

from simt.backends.cuda.driver import (api, call, check, destroy, error_name,
                                      pending_host_functions)
from simt.errors import CudaError
from simt.runtime.backend import refuse_in_host_function, running_host_function
from . import capture, graphs

_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_pending = pending_host_functions   # key -> (stream, fn, args) of host functions not yet run
_keys = itertools.count(1)
_pending_lock = threading.Lock()


def _run_host_func(key):
    """The one C callback behind every launch_host_func: runs the Python function."""
    with _pending_lock:
        stream, fn, args = _pending.pop(key)
    try:
        with running_host_function():
            fn(*args)
    except BaseException as exc:      # raised again at the stream's next synchronize
        stream.callback_errors.append(exc)


_trampoline = _HOST_FN(_run_host_func)   # lives as long as the module


def _is_ready(err, name):
    """True for CUDA_SUCCESS, False for CUDA_ERROR_NOT_READY; raise otherwise."""
    if not err:
        return True
    if error_name(err) == "CUDA_ERROR_NOT_READY":
        return False
    check(err, name)


class Stream:
    """A CUDA stream (cuStreamCreateWithPriority); lower priority numbers run first."""

    def __init__(self, non_blocking=False, priority=0, errors=None, backend=None):
        driver = api()
        self.backend = backend
        flags = driver.CUstream_flags.CU_STREAM_NON_BLOCKING if non_blocking else 0
        self.handle = call(driver.cuStreamCreateWithPriority, int(flags), priority)
        self.non_blocking, self.priority = non_blocking, priority
        self.callback_errors = [] if errors is None else errors

    def synchronize(self):
        """Wait for all work in the stream; raise an error a host function raised."""
        refuse_in_host_function("Stream.synchronize")
        call(api().cuStreamSynchronize, self.handle or 0)
        if self.callback_errors:
            raise self.callback_errors.pop(0)

    def query(self):
        """True when all work in the stream has completed."""
        (err,) = api().cuStreamQuery(self.handle or 0)
        return _is_ready(err, "cuStreamQuery")

    def wait_event(self, event):
        """Make later work in this stream wait for ``event`` (cuStreamWaitEvent)."""
        call(api().cuStreamWaitEvent, self.handle or 0, event.handle, 0)

    def launch_host_func(self, fn, *args):
        """Run ``fn(*args)`` on a driver thread once earlier work in the stream is done.

        ``fn`` must not call CUDA. An exception it raises comes back at ``synchronize``.
        """
        driver = api()
        ident = graphs.capture_id(self.handle) if self.handle is not None else None
        if ident is not None:             # a host node of the graph: replayed many times
            graphs.capture_host(self.handle, ident, fn, args, self.callback_errors)
            return
        key = next(_keys)
        with _pending_lock:
            _pending[key] = (self, fn, args)
        address = ctypes.cast(_trampoline, ctypes.c_void_p).value
        try:
            call(driver.cuLaunchHostFunc, self.handle or 0, driver.CUhostFn(address), key)
        except BaseException:
            with _pending_lock:
                _pending.pop(key, None)
            raise

    def begin_capture(self, mode="thread_local", where="a stream"):
        """Record this stream's work into a graph (cuStreamBeginCapture) in ``mode``
        (runtime/streams.CAPTURE_MODES); kept in capture.py for error messages. simt's
        own work at a kernel's first launch inside the block (compiling, loading) runs
        with the thread's mode relaxed (capture.relaxed), so it works in every mode."""
        call(api().cuStreamBeginCapture, self.handle, capture.driver_mode(mode))
        capture.began(self, mode, where)

    def end_capture(self, failed=False):
        """The captured graph (cuStreamEndCapture); after a failure, end and drop it."""
        try:
            try:
                hosts = graphs.take_captured(graphs.capture_id(self.handle))
            except CudaError:
                if not failed:
                    raise
            err, graph = api().cuStreamEndCapture(self.handle)
            if failed:
                if not err and graph is not None:
                    destroy("cuGraphDestroy", graph)
                return None
            check(err, "cuStreamEndCapture")
        finally:
            capture.ended(self)
        graph = graphs.GpuGraph(self.backend, graph)
        graph.hosts = hosts
        return graph

    def __del__(self):
        destroy("cuStreamDestroy", getattr(self, "handle", None))


class DefaultStream(Stream):
    """The legacy default stream (the NULL stream): never created or destroyed."""

    def __init__(self, errors=None):
        self.handle = None
        self.non_blocking, self.priority = False, 0
        self.callback_errors = [] if errors is None else errors


class ForeignStream(Stream):
    """A stream another library made (PyTorch, CuPy, cuda.core): used, never destroyed."""

    def __init__(self, handle, errors=None):
        driver = api()
        self.handle = driver.CUstream(int(handle))
        flags = call(driver.cuStreamGetFlags, self.handle)
        self.non_blocking = bool(int(flags) & int(driver.CUstream_flags.CU_STREAM_NON_BLOCKING))
        self.priority = call(driver.cuStreamGetPriority, self.handle)
        self.callback_errors = [] if errors is None else errors

    def __del__(self):
        pass


class Event:
    """A CUDA event; ``timing=False`` makes it cheaper (no elapsed_time)."""

    def __init__(self, timing=True):
        driver = api()
        flags = 0 if timing else driver.CUevent_flags.CU_EVENT_DISABLE_TIMING
        self.handle = call(driver.cuEventCreate, int(flags))

    def record(self, stream=None):
        """Record in ``stream`` (a Stream, a CUstream or None for the default stream)."""
        call(api().cuEventRecord, self.handle, getattr(stream, "handle", stream) or 0)

    def synchronize(self):
        """Wait until the work before the recorded point has completed."""
        refuse_in_host_function("Event.synchronize")
        call(api().cuEventSynchronize, self.handle)

    def query(self):
        """True when the work before the recorded point has completed."""
        (err,) = api().cuEventQuery(self.handle)
        return _is_ready(err, "cuEventQuery")

    def elapsed_time(self, end):
        """Milliseconds from this event to ``end`` (both recorded and complete)."""
        return call(api().cuEventElapsedTime, self.handle, end.handle)

    def __del__(self):
        destroy("cuEventDestroy", getattr(self, "handle", None))
