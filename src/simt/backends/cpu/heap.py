"""The CPU device's heap for ``simt.malloc``/``simt.free`` (guide B.30).

One buffer of ``malloc_heap_size`` bytes (8 MiB, CUDA's default), made when a
kernel first calls malloc; blocks are handed out first-fit, 16-byte aligned,
and coalesced when freed, so a heap that is full (or too fragmented) returns
null as CUDA's does. Like the GPU's heap it lives as long as the process, so
what a kernel does not free stays taken. Kernels reach it through two
callbacks registered with the JIT.
"""
import ctypes
import threading

import llvmlite.binding as llvm
import numpy as np

from ...errors import CudaError
from ..heapblocks import ALIGN, Blocks

MALLOC, FREE = "simt_cpu_malloc", "simt_cpu_free"
DEFAULT_SIZE = 8 << 20


class Heap(Blocks):
    """First-fit blocks (heapblocks.Blocks) in one buffer."""

    def __init__(self, size):
        super().__init__(size)
        self.buffer = np.empty(size + ALIGN, np.uint8)
        self.base = self.buffer.ctypes.data + (-self.buffer.ctypes.data) % ALIGN
        self.lock = threading.Lock()

    def malloc(self, nbytes):
        """The address of a new block, or 0 when no free range holds it."""
        with self.lock:
            offset = self.take(nbytes)
            if offset is None:
                return 0
            if _State.watcher is not None:
                _State.watcher.heap_malloc(self.base + offset, self.used[offset])
            return self.base + offset

    def free(self, address):
        """0 when ``address`` was a live block (or null), else 1."""
        if address == 0:
            return 0
        with self.lock:
            size = self.give(address - self.base)
            if size is None:
                return 1
            if _State.watcher is not None:
                _State.watcher.heap_freed(address, size)
        return 0

    def bytes_in_use(self):
        with self.lock:
            return super().bytes_in_use()


class _State:
    size = DEFAULT_SIZE
    heap = None
    lock = threading.Lock()
    watcher = None          # checked mode, during a launch: told of each malloc and free


def get_heap():
    """The heap, made at a kernel's first malloc with the size set then."""
    with _State.lock:
        if _State.heap is None:
            _State.heap = Heap(_State.size)
        return _State.heap


def watch(watcher):
    """Checked mode: ``watcher.heap_malloc``/``heap_freed(address, nbytes)`` at each malloc
    and free from now on (None: stop)."""
    _State.watcher = watcher


def set_size(nbytes):
    with _State.lock:
        if _State.heap is not None and nbytes != _State.size:
            raise CudaError("set_limit('malloc_heap_size') after a kernel called simt.malloc "
                            "on the 'cpu' device: the heap's size is fixed once it is in use "
                            "(CUDA's cudaErrorInvalidValue); set it before the first such launch")
        _State.size = nbytes


def size():
    return _State.size


def reset():
    """simt.reset_device: the heap is given back, its size to the default."""
    with _State.lock:
        _State.heap, _State.size = None, DEFAULT_SIZE


def _malloc(nbytes):
    return get_heap().malloc(nbytes) or None


def _free(address):
    return get_heap().free(address or 0)


_malloc_callback = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint64)(_malloc)
_free_callback = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(_free)
llvm.add_symbol(MALLOC, ctypes.cast(_malloc_callback, ctypes.c_void_p).value)
llvm.add_symbol(FREE, ctypes.cast(_free_callback, ctypes.c_void_p).value)
