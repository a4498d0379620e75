"""Streams and events of the sim device. Everything runs at once on the calling thread, in
call order: every stream is in order with every other stream and with the host (CUDA
allows that order), which keeps a debugging session deterministic. An event stamps the
time when it is recorded. A kernel's error is kept for the calling thread's next
synchronizing call, as CUDA reports launch errors.

A stream under capture (backends/hostcapture.py) records its work as graph nodes instead
of running it, as on the CPU device; a graph's replay runs its nodes at once, in order."""
import threading
import time

from ...errors import CudaError
from ...runtime.backend import refuse_in_host_function, running_host_function
from .. import hostcapture


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

    def run(self, fn, kind="work", config=None, kernel=None):
        """Do ``fn()`` now, or record it as a node of the capture this stream is in."""
        if self.capture is not None:
            self.capture.record(self, kind, fn, config, kernel)
        else:
            fn()

    def synchronize(self):
        refuse_in_host_function("Stream.synchronize")
        self._refuse_captured("Stream.synchronize")
        self.backend.trim_pools()
        self.backend.pending.raise_it()

    def query(self):
        self._refuse_captured("Stream.query")
        return True

    def _refuse_captured(self, what):
        hostcapture.refuse_in_capture(f"{what} of a stream under capture",
                                     captured=self.capture is not None)

    def wait_event(self, event):
        """Nothing to wait for outside captures: the recorded work is done."""
        hostcapture.wait_in_capture(self, event)

    def launch_host_func(self, fn, *args):
        def call():
            with running_host_function():
                fn(*args)
        if self.capture is not None:
            self.capture.record(self, "host", call)
            return
        try:
            call()
        except Exception as exc:              # kept for the next synchronize, as on the CPU
            self.backend.pending.keep(exc)

    def begin_capture(self, mode="thread_local", where="a stream"):
        if self.handle is None:
            raise CudaError("internal: the legacy default stream is never captured")
        hostcapture.begin(self, mode, where)

    def end_capture(self, failed=False):
        return self.capture.end(check=not failed)


class _Mark:
    """One recording of an event (a graph's event record node makes one per launch):
    done once the replay reaches it, which on the sim is before anything could wait."""

    def __init__(self, event):
        self.event = event
        self.done = self

    def complete(self):
        self.event.stamp = time.perf_counter()

    def wait(self):
        """What a graph's event wait node does: the recorded work is done already."""


class SimEvent:
    """An event: the time it was recorded at."""

    def __init__(self, backend, timing=True):
        self.backend, self.timing, self.stamp = backend, timing, None
        self.mark = None          # the latest recording (graphs' event nodes use it)
        self.captured = None      # (HostCapture, its nodes) when last recorded in a capture

    def record(self, stream):
        if stream is not None and stream.capture is not None:
            capture = stream.capture          # a position in the capture, not a record
            self.captured = (capture, list(capture.tails[stream]))
            return
        self.new_record().complete()

    def new_record(self):
        self.mark, self.captured = _Mark(self), None
        return self.mark

    def synchronize(self):
        """The recorded work is done; a kernel's error kept since is raised, as on the
        cpu device (cudaEventSynchronize returns it)."""
        refuse_in_host_function("Event.synchronize")
        hostcapture.refuse_captured_event(self, "Event.synchronize")
        self.backend.pending.raise_it()

    def query(self):
        hostcapture.refuse_captured_event(self, "Event.query")
        return True

    def elapsed_time(self, end):
        if not (self.timing and end.timing):
            raise CudaError("elapsed_time needs two events made with timing=True")
        if self.stamp is None or end.stamp is None:
            raise CudaError("elapsed_time of an event that was never recorded: record both "
                            "events first")
        return (end.stamp - self.stamp) * 1000.0
