"""Streams and events, the runtime half (API.md section 4, guide 3.2.6.5 and 3.2.6.8).

``simt.Stream`` and ``simt.Event`` belong to the device that was current when they
were made, as in CUDA, and hold that device's backend object (backends/*/streams.py);
backends take the object's ``handle`` (None for the legacy default stream).
"""
import contextlib
import sys
from typing import Any, Callable, ContextManager, Optional

from .devices import Device, get_device
from .graphs import CAPTURING, Graph
from ..errors import InvalidConfiguration
from ..devstreams import refuse_on_host
from .backend import refuse_in_host_function

CAPTURE_MODES = ("global", "thread_local", "relaxed")    # cudaStreamCaptureMode


class Stream:
    """A CUDA stream: work put in it runs in order, concurrently with other streams.

    ``non_blocking=True`` makes a stream that does not synchronize with the legacy
    default stream; a lower ``priority`` number is a higher priority, clamped into
    ``simt.stream_priority_range()`` as CUDA clamps it (it orders work on GPUs only).
    """

    def __init__(self, non_blocking=False, priority=0, device=None):
        self.device = device or get_device()
        priority = _clamped_priority(self.device, priority)
        self.impl = self.device.backend.create_stream(non_blocking=non_blocking,
                                                      priority=priority)
        self.handle = self.impl.handle
        self.launches = {}      # (kernel, grid, block, shared) -> Launch (runtime/kernel.py)

    @classmethod
    def _wrap(cls, device, impl):
        stream = cls.__new__(cls)
        stream.device, stream.impl, stream.handle = device, impl, impl.handle
        stream.launches = {}
        return stream

    @classmethod
    def from_handle(cls, stream: Any, device: "Device | None" = None) -> "Stream":
        """A simt Stream over another library's stream, which stays the owner: a CUstream
        address (an int), or an object with ``__cuda_stream__`` (cuda.core, CuPy 13+,
        PyTorch 2.5+), ``cuda_stream`` (torch.cuda.Stream) or ``ptr`` (cupy.cuda.Stream).
        Work put in it is ordered with that library's work in the same stream."""
        refuse_on_host(stream, "Stream.from_handle")
        device = device or get_device()
        handle = foreign_handle(stream)
        wrapped = cls._wrap(device, device.backend.wrap_stream(handle))
        wrapped.owner = stream          # the foreign stream must outlive the wrapper
        return wrapped

    def __cuda_stream__(self):
        """(version, address): the stream protocol of cuda.core and the CUDA array interface."""
        return (0, _address(self.handle))

    @property
    def non_blocking(self) -> bool:
        return self.impl.non_blocking

    @property
    def priority(self) -> int:
        return self.impl.priority

    def set_access_policy(self, array: Any, hit_ratio: float = 1.0, hit: str = "persisting",
                          miss: str = "streaming") -> None:
        """An L2 access-policy window for the kernels later put in this stream
        (cudaStreamSetAttribute, cudaStreamAttributeAccessPolicyWindow): accesses to
        ``array``'s memory get the ``hit`` property ('persisting', 'streaming' or 'normal')
        for a ``hit_ratio`` fraction of them, ``miss`` for the rest. Persisting lines stay in
        the L2 set aside by ``simt.set_limit('persisting_l2_cache_size', bytes)``.
        ``set_access_policy(None)`` removes the window. A hint: results never change; the
        cpu and sim devices check and record it (``stream.access_policy``) and nothing more."""
        from .control import access_policy
        policy = access_policy(self, array, hit_ratio, hit, miss)
        self.device.backend.set_access_policy(self.handle, policy)
        self.access_policy = policy if policy.nbytes else None

    access_policy = None     # the window set_access_policy gave the stream, or None

    def attach_mem(self, array: Any, flags: str = "single") -> None:
        """Say which work reaches a managed array or ``simt.Managed`` symbol
        (cudaStreamAttachMemAsync, in this stream's order): 'single' (the default, as
        CUDA's) only kernels of this stream, 'host' the host alone (no stream), 'global'
        every stream (what managed memory starts as). The whole allocation is attached,
        as CUDA attaches it. On devices without concurrent managed access the host may
        then touch the array once this stream's work is done (with 'host': at any time);
        on the rest (H100/H200, the cpu and sim devices) it is a hint, and the host may
        touch managed memory whenever no kernel is using it."""
        from .unified import attach
        attach(self, array, flags)

    def synchronize(self) -> None:
        """Wait until all work in the stream is done (cudaStreamSynchronize); raise its errors."""
        self.impl.synchronize()

    def query(self) -> bool:
        """True when all work in the stream is done (cudaStreamQuery)."""
        return self.impl.query()

    def wait_event(self, event: "Event") -> None:
        """Later work in this stream waits for ``event``'s latest record (cudaStreamWaitEvent)."""
        if not isinstance(event, Event):
            raise TypeError(f"wait_event takes a simt.Event, got {type(event).__name__}")
        self.impl.wait_event(event.impl)

    def launch_host_func(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the host once earlier work in the stream is done
        (cudaLaunchHostFunc). ``fn`` must not call simt (launches, copies and
        synchronizing calls raise CudaError there, as CUDA forbids them); an exception
        it raises comes back at the stream's next synchronize."""
        if not callable(fn):
            raise TypeError(f"launch_host_func needs a callable, got {fn!r}")
        self.impl.launch_host_func(fn, *args)

    def capture(self, mode: str = "thread_local") -> ContextManager[Graph]:
        """``with stream.capture() as graph:`` records the work put in this stream, and in
        the streams that join it through events, into ``graph`` (a simt.Graph, complete
        once the block ends) instead of running it (cudaStreamBeginCapture/EndCapture).
        Inside the block, synchronizing calls and work on the legacy default stream
        raise CudaError, as CUDA refuses them; every stream that joined must be joined
        back into this one (``s.wait_event(e)`` with ``e`` recorded in the other).

        ``mode`` (cudaStreamCaptureMode) says which threads may make calls CUDA deems
        unsafe during a capture, such as allocating memory: 'thread_local' (the default)
        forbids them in this thread only, 'global' in every thread of the process,
        'relaxed' nowhere (docs/graphs.md)."""
        if mode not in CAPTURE_MODES:
            raise ValueError(f"Stream.capture: mode must be one of "
                             f"{', '.join(map(repr, CAPTURE_MODES))} (cudaStreamCaptureMode"
                             f"Global, ThreadLocal, Relaxed), got {mode!r}")
        if self.handle is None:
            raise InvalidConfiguration("the legacy default stream cannot be captured "
                                       "(cudaErrorStreamCaptureUnsupported); capture a "
                                       "simt.Stream()")
        caller = sys._getframe(1)
        where = f"the stream captured at {caller.f_code.co_filename}:{caller.f_lineno}"
        return self._captured(mode, where)

    @contextlib.contextmanager
    def _captured(self, mode, where):
        graph = Graph(self.device, _impl=CAPTURING)
        self.impl.begin_capture(mode, where)
        try:
            yield graph
        except BaseException:
            self.impl.end_capture(failed=True)
            raise
        graph.impl = self.impl.end_capture()

    def __repr__(self):
        kind = "default stream" if self.handle is None else \
            "non-blocking stream" if self.non_blocking else "stream"
        return f"<simt {kind} on {self.device.name}>"


def stream_priority_range(device: "Device | None" = None) -> "tuple[int, int]":
    """(least, greatest) stream priorities of the current device (or ``device``), as
    cudaDeviceGetStreamPriorityRange gives them: a lower number is a higher priority, so
    ``Stream(priority=greatest)`` is the most urgent stream. An sm_90 GPU gives (0, -5); the
    cpu and sim devices give the same range and keep each stream's priority, which orders
    nothing there (docs/runtime.md)."""
    device = device or get_device()
    return device.backend.stream_priority_range()


def _clamped_priority(device, priority):
    """``priority`` brought into the device's range, as cudaStreamCreateWithPriority clamps
    it (``Stream.priority`` reads the value the stream got)."""
    if isinstance(priority, bool) or not isinstance(priority, int):
        import numpy as np
        if not isinstance(priority, np.integer):
            raise TypeError(f"Stream(priority=...) takes an int (lower is more urgent; "
                            f"simt.stream_priority_range() gives the range), got {priority!r}")
    if priority == 0:                 # every range holds 0, the default
        return 0
    least, greatest = device.backend.stream_priority_range()
    return min(max(int(priority), greatest), least)


def default_stream(device: "Device | None" = None) -> Stream:
    """The legacy default stream of the current device (guide 3.2.6.5.2): its work waits
    for earlier work in every blocking stream, and theirs waits for it."""
    device = device or get_device()
    return Stream._wrap(device, device.backend.default_stream())


class Event:
    """A CUDA event: a point in a stream to wait for or time from (cudaEventCreate)."""

    def __init__(self, timing: Optional[bool] = None, device: "Device | None" = None,
                 interprocess: bool = False):
        self.device = device or get_device()
        if interprocess and timing:
            raise ValueError("an interprocess event cannot time (CUDA requires "
                             "cudaEventDisableTiming with cudaEventInterprocess): "
                             "Event(interprocess=True) without timing=True")
        self.timing = not interprocess if timing is None else bool(timing)
        self.interprocess = bool(interprocess)
        backend = self.device.backend
        self.impl = backend.create_ipc_event() if interprocess else \
            backend.create_event(timing=self.timing)

    def ipc_handle(self):
        """A picklable handle another process opens with simt.Event.from_ipc_handle
        (cudaIpcGetEventHandle); the event must be Event(interprocess=True)."""
        from .handles import event_handle
        return event_handle(self)

    @classmethod
    def from_ipc_handle(cls, handle: Any) -> "Event":
        """The event of another process, from its ipc_handle(): record, wait for and
        synchronize with it here (cudaIpcOpenEventHandle). GPU only."""
        from .handles import open_event
        return open_event(cls, handle)

    def record(self, stream: Any = None) -> "Event":
        """Record the event in ``stream`` (the default stream when None)."""
        self.impl.record(stream_handle(stream, self.device, "Event.record"))
        return self

    def synchronize(self) -> None:
        """Wait until the work before the latest record is done (cudaEventSynchronize)."""
        self.impl.synchronize()

    def query(self) -> bool:
        """True when the work before the latest record is done (cudaEventQuery)."""
        return self.impl.query()

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds from this event to ``end``, both recorded and complete."""
        if not isinstance(end, Event):
            raise TypeError(f"elapsed_time takes a simt.Event, got {type(end).__name__}")
        return self.impl.elapsed_time(end.impl)

    def __repr__(self):
        return f"<simt Event on {self.device.name}>"


def foreign_handle(stream):
    """The CUstream address of another library's stream object (or of an int)."""
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        found = protocol() if callable(protocol) else protocol
        return int(found[1])
    for attr in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attr, None)
        if value is not None and not callable(value):
            return _address(value)
    raise InvalidConfiguration(f"{stream!r} is not a stream: a stream is a simt.Stream, None "
                               "(the default stream), or another library's stream (an object "
                               "with __cuda_stream__, cuda_stream or ptr, or a CUstream address)")


def _address(handle):
    """The integer address of a CUstream handle object, an int or None (0)."""
    return 0 if handle is None else int(handle)     # CUstream: int() is the handle's value


def stream_handle(stream, device, what):
    """The backend handle for a ``stream`` argument given with work for ``device``
    (another library's stream is wrapped: Stream.from_handle)."""
    if stream is None or (isinstance(stream, int) and stream == 0):
        return None
    if not isinstance(stream, Stream):
        refuse_on_host(stream, what)
        try:
            stream = Stream.from_handle(stream, device)
        except InvalidConfiguration as exc:
            raise InvalidConfiguration(f"{what}: {exc}") from None
    if stream.device != device:
        refuse_in_host_function(what)     # a host function's thread has a current device of its own
        raise InvalidConfiguration(f"{what}: the stream belongs to {stream.device.name}, the "
                                   f"work to {device.name}; make the stream while that device "
                                   f"is current (simt.use_device)")
    return stream.handle
