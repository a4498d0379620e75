"""What every device that runs its work on the host shares (the CPU and sim devices):
host memory (hostmem.py), streams served by host threads (hoststreams.py), launch errors
kept for the next synchronizing call, and copies in stream order.

Launch errors are kept and raised at the next synchronizing call of the thread that
launched the work (or of its stream: streams.Faults), as CUDA reports them; unlike a
GPU, the device stays usable afterwards."""
import os
import threading
import weakref

import numpy as np

from ..runtime.backend import Native, refuse_in_host_function
from .hostmem import HostMemory
from . import hoststreams as streams


class HostBackend(HostMemory):
    """A device whose memory is host memory and whose work runs on the host: the streams,
    the kept launch errors and the copies in stream order. A subclass supplies
    ``launch(loaded, grid, block, shared_bytes, args, symbols, kernel_name)``, which runs a
    kernel now and returns its LaunchError or None."""

    def __init__(self, index=0):
        super().__init__(index)
        self.faults = streams.Faults()
        self.workers = streams.Workers()
        self.default = streams.CpuDefaultStream(self)
        self.live = {}              # id(root buffer) -> (weak reference, bytes): bytes_in_use
        _after_fork_in_child(self)

    def _after_fork(self):
        """In a forked child: no thread of the parent survived, so start over without them."""
        self.faults = streams.Faults()
        for worker in list(self.workers):
            worker.after_fork()

    # ------------------------------------------------------------ errors
    def raise_pending(self):
        """Raise the first kept error of work the calling thread launched."""
        self.faults.raise_for_thread()

    def record_error(self, error):
        """Keep an error of work the calling thread ran on the default stream."""
        self.faults.add(error, threading.current_thread(), None)

    def synchronize(self):
        refuse_in_host_function("synchronize")
        for worker in list(self.workers):
            worker.drain()
        self.raise_pending()

    def release(self, owner):
        """Memory dropped by the program stays alive until the work already queued in the
        streams is done: that work may still read or write it (cudaFree waits for it too)."""
        for worker in list(self.workers):
            worker.hold(owner)

    def _buffer(self, nbytes, alignment):
        buffer = super()._buffer(nbytes, alignment)
        root, live = _root(buffer), self.live
        live[id(root)] = (weakref.ref(root, lambda _, key=id(root): live.pop(key, None)), nbytes)
        return buffer

    def bytes_in_use(self):
        """Bytes of device and pinned memory this process holds: the CPU device's own
        accounting (mem_get_info reports the whole machine's), for leak checks."""
        return sum(nbytes for _, nbytes in list(self.live.values()))

    # ------------------------------------------------------------ streams (see hoststreams.py)
    def create_stream(self, non_blocking=False, priority=0):
        return streams.CpuStream(self, non_blocking, priority)

    def default_stream(self):
        return self.default

    def create_event(self, timing=True):
        return streams.CpuEvent(self, timing)

    def drain_blocking(self):
        """Legacy default-stream rule: finish the work queued in blocking streams."""
        refuse_in_host_function("work on the default stream")
        if self.workers:
            for worker in list(self.workers):
                if worker.blocking:
                    worker.drain()

    def _in_order(self, stream, fn):
        """Run ``fn`` in stream order: queued on a stream, or now after the blocking streams."""
        if stream is None:
            self.drain_blocking()
            fn()
        else:
            stream.enqueue(fn)

    # ------------------------------------------------------------ copies in stream order
    def copy_htod(self, dst_ptr, host_array, stream=None):
        if stream is not None and not _is_pinned(host_array):
            host_array = host_array.copy()         # pageable: staged now, as CUDA does
        self._in_order(stream, lambda: HostMemory.copy_htod(self, dst_ptr, host_array))

    def copy_dtoh(self, host_array, src_ptr, stream=None):
        if stream is not None and not _is_pinned(host_array):
            stream.synchronize()                   # pageable: the copy is done on return
            stream = None
        if stream is None:
            self.drain_blocking()
            self.raise_pending()
        self._in_order(stream, lambda: HostMemory.copy_dtoh(self, host_array, src_ptr))

    def copy_dtod(self, dst_ptr, src_ptr, nbytes, stream=None):
        self._in_order(stream, lambda: HostMemory.copy_dtod(self, dst_ptr, src_ptr, nbytes))

    def memset(self, ptr, byte, nbytes, stream=None):
        self._in_order(stream, lambda: HostMemory.memset(self, ptr, byte, nbytes))

    def alloc_pinned(self, nbytes):
        buffer = super().alloc_pinned(nbytes)
        root = _root(buffer)
        _pinned_roots[id(root)] = weakref.ref(root, lambda _, key=id(root): _pinned_roots.pop(key, None))
        return buffer

    def run_launch(self, kernel, loaded, grid, block, shared_bytes, stream, args):
        symbols = loaded.binary.symbol_objects
        name = kernel.__name__
        if stream is None:
            self.drain_blocking()
            self.raise_pending()
            error = self.launch(loaded, grid, block, shared_bytes, args, symbols, name)
            if error is not None:
                self.record_error(error)
        else:
            stream.enqueue(lambda: _raise(self.launch(loaded, grid, block, shared_bytes, args,
                                                      symbols, name)))
        if any(isinstance(a, np.ndarray) and getattr(a, "device_ptr", None) is None
               for a in args):
            (stream or self).synchronize()     # NumPy arguments: the launch is synchronous

    def native_launch(self, kernel, loaded, types, grid, block, shared_bytes, stream):
        """This kernel's launch for runtime/binder.py: the full launch, minus the checks."""
        return Native(["run(kernel, loaded, grid, block, shared, stream, ({args}))"],
                      dict(run=self.run_launch, kernel=kernel, loaded=loaded, grid=grid,
                           block=block, shared=shared_bytes, stream=stream))


def _raise(error):
    if error is not None:
        raise error


def _after_fork_in_child(backend):
    """Have a forked child reset ``backend``'s threads (os.register_at_fork; weak, as a
    registration cannot be undone)."""
    if hasattr(os, "register_at_fork"):
        ref = weakref.ref(backend)
        os.register_at_fork(after_in_child=lambda: ref() is not None and ref()._after_fork())


_pinned_roots = {}     # id -> weak reference of the NumPy buffers alloc_pinned handed out


def _root(array):
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _is_pinned(array):
    """Whether a host array lies in memory from pinned_array (async copies may use it)."""
    root = _root(array)
    ref = _pinned_roots.get(id(root))
    return ref is not None and ref() is root
