"""The stream captures under way in this process, for what the driver does not say.

The driver refuses a call that a capture forbids with a bare CUDA_ERROR_STREAM_CAPTURE_*
code. simt keeps each capture it began (the stream, named where the ``with`` block is, the
thread that began it and its mode) so that the error can say which capture forbids the
call and what to do (``advice``, which driver.check asks), and so that simt's own one-time
work inside a capture runs with the calling thread's mode relaxed (``relaxed``).
"""
import contextlib
import threading

from . import driver
from .driver import api, call

_UNSAFE = ("cuMemAlloc", "cuMemFree", "cuMemHostAlloc", "cuMemFreeHost", "cuMemHostRegister",
           "cuMemHostUnregister", "cuMemAllocManaged", "cuMemAllocPitch")


class Capture:
    """One capture begun by simt: ``where`` names the stream, ``thread`` began it."""

    def __init__(self, where, mode, non_blocking):
        self.where, self.mode, self.non_blocking = where, mode, non_blocking
        self.thread = threading.current_thread()

    def __str__(self):
        return (f"{self.where} is being captured by thread {self.thread.name!r} in mode "
                f"{self.mode!r}")


_active = {}                      # id(backend stream) -> Capture
_lock = threading.Lock()


def driver_mode(mode):
    """The CUstreamCaptureMode of a simt mode name (runtime/streams.CAPTURE_MODES)."""
    return getattr(api().CUstreamCaptureMode, f"CU_STREAM_CAPTURE_MODE_{mode.upper()}")


def began(stream, mode, where):
    with _lock:
        _active[id(stream)] = Capture(where, mode, stream.non_blocking)


def ended(stream):
    with _lock:
        _active.pop(id(stream), None)


def under_way():
    """Whether any capture simt began is under way (a cheap check: no lock)."""
    return bool(_active)


driver.capture_under_way = under_way       # driver.destroy defers while one is


@contextlib.contextmanager
def relaxed():
    """simt's own one-time work in a thread that a capture may forbid it to (loading a
    kernel's module at its first launch, its error record, its module-level arrays): the
    thread's capture mode is relaxed meanwhile (cuThreadExchangeStreamCaptureMode, in the
    push-pop fashion the driver documents), so a first launch inside a `with
    stream.capture()` block works in every mode. Outside captures it costs nothing."""
    if not _active:
        yield
        return
    d = api()
    previous = call(d.cuThreadExchangeStreamCaptureMode,
                    d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED)
    try:
        yield
    finally:
        call(d.cuThreadExchangeStreamCaptureMode, previous)


def advice(cuda_name, call_name):
    """What to do about a CUDA_ERROR_STREAM_CAPTURE_* error of driver call ``call_name``,
    naming the captures under way; None when simt began none (driver.check keeps its own)."""
    with _lock:
        captures = list(_active.values())
    if not captures:
        return None
    me = threading.current_thread()
    mine = [c for c in captures if c.thread is me]
    named = "; ".join(map(str, captures))
    if cuda_name == "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT":
        return (f"{named}. Work on the legacy default stream, from any thread (a synchronous "
                "copy such as to_device or copy_to_host without stream=, a launch without a "
                "stream), would wait for a blocking stream under capture, whose work is only "
                "recorded; CUDA refuses it in every capture mode. Capture a "
                "simt.Stream(non_blocking=True), or put this work in a stream of its own")
    if cuda_name == "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED":
        return (f"{named}. An earlier call that the capture forbids, in this thread or "
                "another, broke it (that call's own error says which); its graph is lost. "
                "End the `with stream.capture()` block and capture again without that call")
    if call_name.startswith(_UNSAFE) and not mine:
        return (f"{named}. A capture begun with mode='global' forbids allocating and freeing "
                "memory in every thread of the process; begin it with "
                "mode='thread_local' (the default) to let other threads go on, or make this "
                "call before the capture begins or after it ends")
    if call_name.startswith(_UNSAFE):
        return (f"{named}. No launch of the graph would repeat this call, so CUDA forbids it "
                "in the capturing thread; make it before the `with stream.capture()` block, "
                "or begin the capture with mode='relaxed'")
    return (f"{named}. Captured work is recorded into the graph, not run, so nothing can wait "
            "for it, in any thread and any mode (a device-wide synchronize, or a stream or "
            "event of the capture); end the `with stream.capture()` block first, then "
            "launch the graph and wait for that")


driver.capture_advice = advice
