"""Streams and events of the CPU device.

A stream is an ordered queue served by its own worker thread: a launch, copy,
host function or event record put in a stream runs after everything put there
before it, and the host goes on meanwhile. The legacy default stream (handle
None) keeps CUDA's rule (guide 3.2.6.5): its work waits for all earlier work in
the device's blocking streams, and later work in those streams waits for it.
The CPU device runs default-stream work on the calling thread once the blocking
streams are drained, which gives both halves of that rule.

An event record is a queue item that stamps the time (``time.perf_counter``) when
the work before it is done, so ``elapsed_time`` times real work.
"""
import queue
import threading
import time
import weakref

from ...errors import CudaError


class _Mark:
    """One recording of an event: completes (with a time stamp) in stream order."""

    def __init__(self):
        self.done = threading.Event()
        self.when = None

    def complete(self):
        self.when = time.perf_counter()
        self.done.set()


class _Worker:
    """The thread and queue behind one stream; holds no reference to the stream."""

    def __init__(self, name, blocking):
        self.name = name
        self.blocking = blocking
        self.stopped = False
        self.after_fork()

    def after_fork(self):
        """Empty and idle, with no thread: what a forked child has of this worker (its
        thread did not survive the fork, and the parent's queued work is the parent's)."""
        self.items = queue.SimpleQueue()
        self.idle = threading.Condition()
        self.outstanding = 0
        self.thread = None

    def put(self, fn):
        with self.idle:
            self.outstanding += 1
            if self.thread is None:
                self.thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
                self.thread.start()
        self.items.put(fn)

    def _serve(self):
        while True:
            fn = self.items.get()
            if fn is None:
                return
            try:
                fn()
            finally:
                del fn                   # what the item held goes now, not at the next item
                with self.idle:
                    self.outstanding -= 1
                    if not self.outstanding:
                        self.idle.notify_all()

    def drain(self):
        with self.idle:
            while self.outstanding:
                self.idle.wait()

    def busy(self):
        return self.outstanding > 0

    def hold(self, owner):
        """Keep ``owner`` alive until the work queued so far is done (stream-ordered free)."""
        with self.idle:
            if self.outstanding and not self.stopped:
                self.outstanding += 1
                self.items.put(lambda: owner)

    def stop(self):
        with self.idle:
            self.stopped = True
            if self.thread is not None:
                self.items.put(None)


class CpuStream:
    """A stream of the CPU device (simt.Stream on 'cpu' holds one)."""

    def __init__(self, backend, non_blocking=False, priority=0):
        self.backend = backend
        self.non_blocking = non_blocking
        self.priority = priority          # accepted; the CPU device does not reorder by it
        self.worker = _Worker("simt-cpu-stream", blocking=not non_blocking)
        self.callback_errors = backend.callback_errors
        self.handle = self
        backend.workers.add(self.worker)     # a running worker outlives its stream

    def enqueue(self, fn):
        """Run ``fn()`` after the work already in this stream."""
        self.worker.put(fn)

    def synchronize(self):
        self.worker.drain()
        self.backend.raise_pending()
        if self.callback_errors:
            raise self.callback_errors.pop(0)

    def query(self):
        return not self.worker.busy()

    def wait_event(self, event):
        mark = event.mark
        if mark is not None:
            self.enqueue(mark.done.wait)

    def launch_host_func(self, fn, *args):
        errors = self.callback_errors

        def run():
            try:
                fn(*args)
            except BaseException as exc:      # raised again at the next synchronize
                errors.append(exc)
        self.enqueue(run)

    def __del__(self):
        worker = getattr(self, "worker", None)
        if worker is not None:
            worker.stop()


class CpuDefaultStream:
    """The legacy default stream: work runs on the caller once blocking streams are done."""

    handle = None
    non_blocking = False
    priority = 0

    def __init__(self, backend):
        self.backend = backend
        self.callback_errors = backend.callback_errors

    def synchronize(self):
        self.backend.drain_blocking()
        self.backend.raise_pending()
        if self.callback_errors:
            raise self.callback_errors.pop(0)

    def query(self):
        return not any(w.busy() for w in list(self.backend.workers) if w.blocking)

    def wait_event(self, event):
        mark = event.mark
        if mark is not None:
            mark.done.wait()

    def launch_host_func(self, fn, *args):
        self.backend.drain_blocking()
        try:
            fn(*args)
        except BaseException as exc:
            self.callback_errors.append(exc)


class CpuEvent:
    """An event of the CPU device; ``timing=False`` events cannot be timed, as in CUDA."""

    def __init__(self, backend, timing=True):
        self.backend = backend
        self.timing = timing
        self.mark = None          # the latest recording; None until recorded

    def record(self, stream=None):
        mark = _Mark()
        self.mark = mark
        if stream is None:
            self.backend.drain_blocking()
            mark.complete()
        else:
            stream.enqueue(mark.complete)

    def synchronize(self):
        if self.mark is not None:
            self.mark.done.wait()
        self.backend.raise_pending()

    def query(self):
        return self.mark is None or self.mark.done.is_set()

    def elapsed_time(self, end):
        for event, which in ((self, "start"), (end, "end")):
            if not event.timing:
                raise CudaError(f"elapsed_time: the {which} event was created with timing=False "
                                "(cudaErrorInvalidResourceHandle); create it with "
                                "simt.Event(timing=True)")
            if event.mark is None:
                raise CudaError(f"elapsed_time: the {which} event was never recorded "
                                "(cudaErrorInvalidResourceHandle); call .record() first")
            if not event.mark.done.is_set():
                raise CudaError(f"elapsed_time: the {which} event has not completed yet "
                                "(cudaErrorNotReady); call .synchronize() on it first")
        return (end.mark.when - self.mark.when) * 1e3


def worker_set():
    """The stream workers of a CPU backend: weak, so a worker leaves once its thread ends
    (its queue served) and its stream is gone."""
    return weakref.WeakSet()
