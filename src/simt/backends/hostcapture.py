"""Stream capture on the host devices (CPU, sim; guide 3.2.6.6.3), and the calls a capture forbids.

``HostCapture`` turns the work a capturing stream would queue into nodes of a HostGraph:
each depends on the stream's previous node; an event recorded in a capturing stream
carries that stream's position, and a stream that waits for such an event joins the
capture from there (how work spread over several streams is captured, as in CUDA).

A capture forbids two kinds of calls, as CUDA does:

- calls that conflict with it (waiting for captured work, work on the legacy default
  stream in the capturing thread), in every mode: ``refuse_in_capture``;
- calls CUDA deems potentially unsafe during a capture, by the capture's mode
  (cuStreamBeginCapture's CUstreamCaptureMode): here allocating device, pinned or managed
  memory and registering host memory, which no replay of the graph repeats.
  'thread_local' forbids them in the thread that began the capture, 'global' in every
  thread of the process too, 'relaxed' nowhere: ``refuse_unsafe``.
"""
import threading

import numpy as np

from ..errors import CudaError, InvalidConfiguration
from .hostgraphs import HostGraph

class _Capturing(threading.local):
    def __init__(self):
        self.own = []            # the captures this thread began and has not ended


capturing = _Capturing()
_active = []                     # every capture under way, of any thread
_active_lock = threading.Lock()


def refuse_in_capture(what, error="cudaErrorStreamCaptureUnsupported", captured=False):
    """CUDA refuses synchronizing calls, and work on the legacy default stream, in a
    thread that captures a stream (or on a ``captured`` stream, from any thread): what
    they would wait for is only being recorded."""
    if capturing.own or captured:
        if error == "cudaErrorStreamCaptureImplicit":
            why = ("work on the legacy default stream waits for the capturing stream, "
                   "whose work is only recorded; put the work in the captured stream, or "
                   "make it in a Stream(non_blocking=True)")
        else:
            why = ("captured work is recorded into the graph, not run, so nothing can wait "
                   "for it; end the `with stream.capture()` block first, then launch the "
                   "graph and wait for that")
        raise CudaError(f"{what} while this thread captures a stream ({error}): {why}")


def refuse_unsafe(what):
    """Refuse a call CUDA deems potentially unsafe during a capture, where the mode of a
    capture under way forbids it to the calling thread."""
    own = [c for c in capturing.own if c.mode != "relaxed"]
    if own:
        raise CudaError(
            f"{what} while this thread captures {own[-1].where} in mode {own[-1].mode!r} "
            "(cudaErrorStreamCaptureUnsupported): no launch of the graph would repeat it, "
            "so CUDA forbids it in the capturing thread; do it before the `with "
            "stream.capture()` block, or begin the capture with mode='relaxed'")
    if not _active:
        return
    me = threading.current_thread()
    with _active_lock:
        strict = [c for c in _active if c.mode == "global" and c.thread is not me]
    if strict:
        raise CudaError(
            f"{what} while thread {strict[0].thread.name!r} captures {strict[0].where} in "
            "mode 'global' (cudaErrorStreamCaptureUnsupported): a capture begun with "
            "mode='global' forbids such calls in every thread of the process; begin it "
            "with mode='thread_local' (the default) to let other threads go on, or make "
            "this call before the capture begins or after it ends")


def refuse_numpy(kernel, args):
    """A kernel launched in a stream under capture with a NumPy argument is refused."""
    if any(isinstance(a, np.ndarray) and getattr(a, "device_ptr", None) is None for a in args):
        raise InvalidConfiguration(
            f"kernel '{kernel.__name__}' launched in a stream under capture with a NumPy "
            "argument: it is copied in and out around each launch, which a graph cannot "
            "repeat; pass device arrays (simt.to_device) or mapped memory")


def refuse_captured_event(event, what):
    """Event.synchronize and Event.query of an event recorded in a capture under way."""
    if event.captured is not None and event.captured[0].active:
        raise CudaError(f"{what} of an event recorded in a stream under capture "
                        "(cudaErrorStreamCaptureUnsupported): the record is a position "
                        "in the graph being captured, not work that runs; wait for it "
                        "with Stream.wait_event inside the capture")


def begin(stream, mode, where):
    """Stream.capture on ``stream`` (its ``capture`` attribute: None when not captured)."""
    if stream.capture is not None:
        raise CudaError("Stream.capture: the stream is already being captured "
                        "(cudaErrorIllegalState); end that capture first")
    stream.capture = HostCapture(stream, mode, where)


def wait_in_capture(stream, event):
    """Stream.wait_event's part in captures: True when ``stream`` has joined the capture
    ``event`` was recorded in (from the event's position); a captured stream waiting for
    an event recorded outside its capture is refused; False: an ordinary wait."""
    captured = event.captured
    if captured is not None and captured[0].active:
        captured[0].join(stream, captured[1])
        return True
    if stream is not None and stream.capture is not None:
        raise CudaError("Stream.wait_event in a stream under capture, for an event not "
                        "recorded in that capture (cudaErrorStreamCaptureIsolation): "
                        "a captured stream may only wait for events recorded in the "
                        "same capture; use Graph.add_event_wait for an outside event")
    return False


class HostCapture:
    """One capture under way: the graph it records and where each joined stream is.
    ``where`` names the captured stream for error messages; ``thread`` began it."""

    def __init__(self, origin, mode="thread_local", where="a stream"):
        self.graph = HostGraph(origin.backend)
        self.origin = origin
        self.tails = {origin: []}     # stream -> the nodes its next node depends on
        self.active = True
        self.mode, self.where = mode, where
        self.thread = threading.current_thread()
        capturing.own.append(self)
        with _active_lock:
            _active.append(self)

    def record(self, stream, kind, work, config=None, kernel=None):
        node = self.graph.node(kind, self.tails[stream], work, config, kernel)
        self.tails[stream] = [node]

    def join(self, stream, nodes):
        """``stream`` waited for an event recorded in this capture at ``nodes``."""
        if stream.capture is None:
            stream.capture = self
            self.tails[stream] = list(nodes)
        else:
            tail = self.tails[stream]
            self.tails[stream] = tail + [n for n in nodes if n not in tail]

    def end(self, check=True):
        """The recorded graph (``check``: every stream that joined must have been joined
        back); every stream leaves the capture either way."""
        self.active = False
        for stream in self.tails:
            stream.capture = None
        if self in capturing.own:
            capturing.own.remove(self)
        with _active_lock:
            _active.remove(self)
        if not check:
            return None
        seen, todo = set(), list(self.tails[self.origin])
        while todo:
            node = todo.pop()
            if id(node) not in seen:
                seen.add(id(node))
                todo += node.deps
        for stream, tail in self.tails.items():
            if any(id(node) not in seen for node in tail):
                raise CudaError("stream capture ended with work of another stream not joined "
                                "back into the capturing one (cudaErrorStreamCaptureUnjoined): "
                                "record an event in that stream after its work and have the "
                                "capturing stream wait for it before the block ends")
        return self.graph
