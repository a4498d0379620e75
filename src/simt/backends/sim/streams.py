"""Streams and events of the sim device. Everything runs at once on the calling thread, in
call order: every stream is in order with every other stream and with the host (CUDA
allows that order), which keeps a debugging session deterministic. An event stamps the
time when it is recorded. A kernel's error is kept for the calling thread's next
synchronizing call, as CUDA reports launch errors."""
import threading
import time

from ...errors import CudaError
from ...runtime.backend import refuse_in_host_function, running_host_function


class Pending(threading.local):
    """The first error of work each host thread ran, not raised yet."""

    error = None

    def keep(self, error):
        if self.error is None:
            self.error = error

    def raise_it(self):
        error, self.error = self.error, None
        if error is not None:
            raise error


class SimStream:
    """A stream whose work is done when it is queued."""

    def __init__(self, backend, non_blocking=False, priority=0, default=False):
        self.backend, self.non_blocking, self.priority = backend, non_blocking, priority
        self.handle = None if default else self    # the default stream's handle is None
        self.capture = None               # the capture recording this stream's work

    def synchronize(self):
        refuse_in_host_function("Stream.synchronize")
        self.backend.pending.raise_it()

    def query(self):
        return True

    def wait_event(self, event):
        """Nothing to wait for: the recorded work is done."""

    def launch_host_func(self, fn, *args):
        with running_host_function():
            try:
                fn(*args)
            except Exception as exc:          # kept for the next synchronize, as on the CPU
                self.backend.pending.keep(exc)

    def begin_capture(self, mode="thread_local", where=""):
        raise self.backend.unsupported("stream capture (CUDA graphs)")

    def end_capture(self, failed=False):
        raise self.backend.unsupported("stream capture (CUDA graphs)")


class SimEvent:
    """An event: the time it was recorded at."""

    def __init__(self, backend, timing=True):
        self.backend, self.timing, self.stamp = backend, timing, None

    def record(self, stream):
        self.stamp = time.perf_counter()

    def synchronize(self):
        refuse_in_host_function("Event.synchronize")

    def query(self):
        return True

    def elapsed_time(self, end):
        if not (self.timing and end.timing):
            raise CudaError("elapsed_time needs two events made with timing=True")
        if self.stamp is None or end.stamp is None:
            raise CudaError("elapsed_time of an event that was never recorded: record both "
                            "events first")
        return (end.stamp - self.stamp) * 1000.0
