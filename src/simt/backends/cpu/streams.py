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

An error of queued work (a kernel's fault, a host function's exception) belongs to the
stream it ran in and to the host thread that queued it (``Faults``): that stream's
``synchronize`` raises it, and so does any other synchronizing call of that thread;
another thread never sees it.
"""
import queue
import threading
import time
import weakref

from ...errors import CudaError
from ...runtime.backend import refuse_in_host_function, running_host_function
from .. import hostcapture as capture


STACK_BYTES = 64 * 1024 * 1024   # stack of each thread simt starts: kernels' local arrays


def with_stack(start):
    """Call ``start()`` (which may start threads) with simt's thread stack size, then
    restore the size before (it is read when a thread starts)."""
    before = threading.stack_size(STACK_BYTES)
    try:
        return start()
    finally:
        threading.stack_size(before)


class Faults:
    """Errors not yet raised, each with the host thread (a threading.Thread) that queued
    the failed work and the stream worker it ran in (None: the default stream, run by
    that thread)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.items = []           # [(error, thread, worker or None)]

    def add(self, error, thread, worker):
        """Keep ``error``: the first one of a thread in a stream wins, as in CUDA. Errors
        no one can synchronize for any more (a finished thread's, in no stream still
        alive) are dropped."""
        with self.lock:
            self.items = [item for item in self.items if item[1].is_alive() or
                          (item[2] is not None and not item[2].stopped)]
            if not any(t is thread and w is worker for _, t, w in self.items):
                self.items.append((error, thread, worker))

    def raise_for_thread(self):
        """Raise (and forget) the first error of work the calling thread queued."""
        if self.items:                # none: the usual case, checked without the lock
            thread = threading.current_thread()
            self._raise(lambda t, w: t is thread)

    def raise_for_stream(self, worker):
        """Raise (and forget) the first error of work that ran in ``worker``'s stream."""
        if self.items:
            self._raise(lambda t, w: w is worker)

    def _raise(self, match):
        with self.lock:
            for i, (error, thread, worker) in enumerate(self.items):
                if match(thread, worker):
                    del self.items[i]
                    raise error


class _Mark:
    """One recording of an event: completes (with a time stamp) in stream order."""

    def __init__(self):
        self.done = threading.Event()
        self.when = None

    def complete(self):
        self.when = time.perf_counter()
        self.done.set()


class _Held:
    """A queue item that only keeps memory alive until the worker reaches it."""

    __slots__ = ("owner",)

    def __init__(self, owner):
        self.owner = owner


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
        self.queued = 0            # work items put so far
        self.finished = 0          # work items done so far: served in order, the first ones
        self.thread = None

    def put(self, fn):
        with self.idle:            # numbered and queued in one step: the queue's order
            self.queued += 1
            if self.thread is None:
                self.thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
                with_stack(self.thread.start)
            self.items.put(fn)

    def _serve(self):
        while True:
            fn = self.items.get()
            if fn is None:
                return
            if type(fn) is _Held:        # memory freed in stream order: now it may go
                del fn
                continue
            try:
                fn()
            finally:
                del fn                   # what the item held goes now, not at the next item
                with self.idle:
                    self.finished += 1
                    self.idle.notify_all()

    def drain(self, poll=False):
        """Wait for the work queued before the call, not for what other threads queue
        meanwhile (they could keep the stream busy for ever); ``poll``: by polling,
        yielding between polls (schedule_spin/schedule_yield), not sleeping."""
        with self.idle:
            target = self.queued
            while self.finished < target and not poll:
                self.idle.wait()
        while self.finished < target:
            time.sleep(0)

    def busy(self):
        return self.finished < self.queued

    def hold(self, owner):
        """Keep ``owner`` alive until the work queued so far is done (stream-ordered free).

        Called from ``__del__`` (of an Allocation), at any point of any thread: so it
        takes no lock and only puts in the queue (SimpleQueue.put is reentrant). The
        item does not count as work: waiting for the stream never waits for it. A stopped
        worker (its stream gone) may still have work queued: then the item lands behind
        the end mark and goes with the worker, once its thread has served the work."""
        if self.busy():
            self.items.put(_Held(owner))

    def stop(self):
        """End the thread once its queue is served (from the stream's __del__: no lock)."""
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
        self.handle = self
        self.capture = None               # the HostCapture recording this stream's work
        backend.workers.add(self.worker)     # a running worker outlives its stream

    def enqueue(self, fn, kind="work", config=None, kernel=None):
        """Run ``fn()`` after the work already in this stream; what it raises is kept
        for this stream and the calling thread (Faults). While the stream is captured,
        ``fn`` becomes a graph node of ``kind`` instead."""
        refuse_in_host_function("queueing work in a stream")
        if self.capture is not None:
            self.capture.record(self, kind, fn, config, kernel)
            return
        faults, thread, worker = self.backend.faults, threading.current_thread(), self.worker

        def run():
            try:
                fn()
            except BaseException as exc:
                faults.add(exc, thread, worker)
        worker.put(run)

    def synchronize(self):
        refuse_in_host_function("Stream.synchronize")
        self._refuse_captured("Stream.synchronize")
        self.worker.drain(self.backend.poll)
        self.backend.trim_pools()
        self.backend.faults.raise_for_stream(self.worker)

    def query(self):
        self._refuse_captured("Stream.query")
        return not self.worker.busy()

    def _refuse_captured(self, what):
        capture.refuse_in_capture(f"{what} of a stream under capture",
                                 captured=self.capture is not None)

    def wait_event(self, event):
        if capture.wait_in_capture(self, event):
            return
        mark = event.mark
        if mark is not None:
            self.enqueue(mark.done.wait, "event_wait")

    def launch_host_func(self, fn, *args):
        def run():
            with running_host_function():
                fn(*args)
        self.enqueue(run, "host")

    def begin_capture(self, mode="thread_local", where="a stream"):
        capture.begin(self, mode, where)

    def end_capture(self, failed=False):
        return self.capture.end(check=not failed)

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

    def synchronize(self):
        self.backend.drain_blocking()
        self.backend.trim_pools()
        self.backend.raise_pending()

    def query(self):
        return not any(w.busy() for w in list(self.backend.workers) if w.blocking)

    def wait_event(self, event):
        capture.refuse_in_capture("Stream.wait_event on the legacy default stream",
                                 "cudaErrorStreamCaptureImplicit")
        mark = event.mark
        if mark is not None:
            mark.done.wait()

    def begin_capture(self, mode="thread_local", where=""):
        raise CudaError("internal: the legacy default stream is never captured")

    def launch_host_func(self, fn, *args):
        self.backend.drain_blocking()
        try:
            with running_host_function():
                fn(*args)
        except BaseException as exc:
            self.backend.faults.add(exc, threading.current_thread(), None)


class CpuEvent:
    """An event of the CPU device; ``timing=False`` events cannot be timed, as in CUDA."""

    def __init__(self, backend, timing=True):
        self.backend = backend
        self.timing = timing
        self.mark = None          # the latest recording; None until recorded
        self.captured = None      # (HostCapture, its nodes) when last recorded in a capture

    def record(self, stream=None):
        stream = self.backend.per_thread(stream)
        if stream is not None and stream.capture is not None:
            capture = stream.capture          # a position in the capture, not a record
            self.captured = (capture, list(capture.tails[stream]))
            return
        mark = self.new_record()
        if stream is None:
            self.backend.drain_blocking()
            mark.complete()
        else:
            stream.enqueue(mark.complete)

    def new_record(self):
        """A new latest record (its _Mark) that completes when the work before it does."""
        self.mark, self.captured = _Mark(), None
        return self.mark

    def synchronize(self):
        refuse_in_host_function("Event.synchronize")
        self._refuse_captured("Event.synchronize")
        mark = self.mark
        if mark is not None:
            while self.backend.poll and not mark.done.is_set():
                time.sleep(0)
            mark.done.wait()
        self.backend.raise_pending()

    def query(self):
        self._refuse_captured("Event.query")
        return self.mark is None or self.mark.done.is_set()

    def _refuse_captured(self, what):
        capture.refuse_captured_event(self, what)

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


class Workers:
    """The stream workers of a CPU backend, held weakly: a worker leaves once its thread
    ends (its queue served) and its stream is gone.

    Threads add workers while others go over them, Allocation.__del__ included (at any
    point of any thread, so no lock): iteration goes over a copy taken in one step, as a
    WeakSet's iterator fails when another thread adds to it meanwhile."""

    def __init__(self):
        self.refs = {}             # id(worker) -> weak reference

    def add(self, worker):
        refs, key = self.refs, id(worker)
        refs[key] = weakref.ref(worker, lambda _: refs.pop(key, None))

    def __iter__(self):
        workers = [ref() for ref in list(self.refs.values())]
        return iter([worker for worker in workers if worker is not None])

    def __bool__(self):
        return bool(self.refs)
