"""The CPU device: runs compiled kernels over the grid with a pool of worker
threads (ctypes releases the GIL, so blocks really run in parallel).

Launch errors are kept and raised at the next synchronizing call, as CUDA
reports them; unlike a GPU, the device stays usable afterwards."""
import ctypes
import itertools
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ...compiler.options import CompileOptions
from ...config import config
import simt.fault as fault
from ...runtime.backend import Native
from ..hostjit import LoadedObject
from .memory import CpuMemory
from .args import ArgPacker
from . import streams, texmem
from . import cooperative     # registers simt_cpu_grid_sync with the JIT

KERNEL_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                             ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)


class CpuKernel:
    """A CPU binary loaded into this process, ready to launch."""

    def __init__(self, binary):
        self.binary = binary
        self.loaded = LoadedObject(binary.object_code)
        self.entry = KERNEL_FN(self.loaded.address(binary.symbol))
        self.packer = ArgPacker(binary.params, len(binary.symbols))


class _Arena(threading.local):
    """Per-worker scratch memory: shared memory and per-thread slots."""

    def get(self, name, nbytes):
        buf = getattr(self, name, None)
        if buf is None or buf.nbytes < nbytes:
            buf = np.empty(max(nbytes, 64), np.uint8)
            setattr(self, name, buf)
        return buf.ctypes.data


class CpuBackend(CpuMemory):
    """The host CPU as a CUDA device."""

    compile_options = CompileOptions(boundscheck=True)   # out-of-bounds accesses raise

    def __init__(self, index=0):
        super().__init__(index)
        self.pending = None
        self.lock = threading.Lock()
        self.arena = _Arena()
        self.pool = None
        self.workers = streams.worker_set()
        self.callback_errors = []           # exceptions of host functions, raised at sync
        self.default = streams.CpuDefaultStream(self)

    @classmethod
    def default_options(cls):
        """boundscheck: check every array index (on by default: ``compile_options``);
        checks: checked mode, refused until it is built (runtime/devices.py)."""
        return {"boundscheck": cls.compile_options.boundscheck, "checks": False}

    def _workers(self):
        if self.pool is None:
            threading.stack_size(64 * 1024 * 1024)
            self.pool = ThreadPoolExecutor(max_workers=config.cpu_threads,
                                           thread_name_prefix="simt-cpu")
            threading.stack_size(0)
        return self.pool

    # ------------------------------------------------------------ errors
    def raise_pending(self):
        with self.lock:
            error, self.pending = self.pending, None
        if error is not None:
            raise error

    def record_error(self, error):
        """Keep a launch error for the next synchronizing call (the first one wins)."""
        with self.lock:
            if self.pending is None:
                self.pending = error

    def synchronize(self):
        for worker in list(self.workers):
            worker.drain()
        self.raise_pending()
        if self.callback_errors:
            raise self.callback_errors.pop(0)

    # ------------------------------------------------------------ streams (see streams.py)
    def create_stream(self, non_blocking=False, priority=0):
        return streams.CpuStream(self, non_blocking, priority)

    def default_stream(self):
        return self.default

    def create_event(self, timing=True):
        return streams.CpuEvent(self, timing)

    def drain_blocking(self):
        """Legacy default-stream rule: finish the work queued in blocking streams."""
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
        self._in_order(stream, lambda: CpuMemory.copy_htod(self, dst_ptr, host_array))

    def copy_dtoh(self, host_array, src_ptr, stream=None):
        if stream is not None and not _is_pinned(host_array):
            stream.synchronize()                   # pageable: the copy is done on return
            stream = None
        if stream is None:
            self.drain_blocking()
            self.raise_pending()
        self._in_order(stream, lambda: CpuMemory.copy_dtoh(self, host_array, src_ptr))

    def copy_dtod(self, dst_ptr, src_ptr, nbytes, stream=None):
        self._in_order(stream, lambda: CpuMemory.copy_dtod(self, dst_ptr, src_ptr, nbytes))

    def memset(self, ptr, byte, nbytes, stream=None):
        self._in_order(stream, lambda: CpuMemory.memset(self, ptr, byte, nbytes))

    def alloc_pinned(self, nbytes):
        buffer = super().alloc_pinned(nbytes)
        root = _root(buffer)
        _pinned_roots[id(root)] = weakref.ref(root, lambda _, key=id(root): _pinned_roots.pop(key, None))
        return buffer

    # ------------------------------------------------------------ compile and load
    def target_id(self):
        from .. import hostjit as jit
        return "cpu " + jit.host_description()

    def compile(self, fn, options):
        from .compile import compile_kernel
        return compile_kernel(fn, options)

    def load_binary(self, binary):
        return CpuKernel(binary)

    def resources(self, kernel):
        b = kernel.binary
        return {"registers": None, "shared_bytes": b.shared_static_bytes, "local_bytes": b.slot_bytes}

    def run_cooperative(self, kernel, loaded, grid, block, shared_bytes, stream, args):
        """kernel.launch_cooperative: every block at once, so grid.sync() works."""
        if stream is not None:
            stream.synchronize()
        cooperative.launch_cooperative(self, kernel, loaded, grid, block, shared_bytes, args,
                                       self.properties())
        if any(isinstance(a, np.ndarray) for a in args):
            self.synchronize()

    def run_launch(self, kernel, loaded, grid, block, shared_bytes, stream, args):
        symbols = loaded.binary.symbol_objects
        name = kernel.__name__
        if stream is None:
            self.drain_blocking()
            self.raise_pending()
            self.launch(loaded, grid, block, shared_bytes, args, symbols, name)
        else:
            stream.enqueue(lambda: self.launch(loaded, grid, block, shared_bytes, args,
                                               symbols, name))
        if any(isinstance(a, np.ndarray) and getattr(a, "device_ptr", None) is None
               for a in args):
            (stream or self).synchronize()     # NumPy arguments: the launch is synchronous

    def native_launch(self, kernel, loaded, types, grid, block, shared_bytes, stream):
        """This kernel's launch for runtime/binder.py: the full launch, minus the checks."""
        return Native(["run(kernel, loaded, grid, block, shared, stream, ({args}))"],
                      dict(run=self.run_launch, kernel=kernel, loaded=loaded, grid=grid,
                           block=block, shared=shared_bytes, stream=stream))

    # ------------------------------------------------------------ textures (see texmem.py)
    def texture_array(self, array):
        return texmem.HostArray(self, array)

    def texture_object(self, texture):
        return texmem.HostTexture(texture.source, texture._simt_type.source)

    def surface_object(self, surface):
        return texmem.HostTexture(surface.source, "array")

    # ------------------------------------------------------------ launch
    def launch(self, kernel, grid, block, shared_bytes, args, symbols, kernel_name):
        binary = kernel.binary
        packed, keep = kernel.packer.pack(args, symbols)
        err = np.zeros(fault.WORDS, np.int64)
        launch = (ctypes.c_int64 * 8)(*grid, *block, shared_bytes, err.ctypes.data)
        nblocks = grid[0] * grid[1] * grid[2]
        nthreads = block[0] * block[1] * block[2]
        shared_size = binary.shared_static_bytes + shared_bytes
        slot_size = binary.slot_bytes * nthreads
        args_ptr = ctypes.addressof(packed)
        launch_ptr = ctypes.addressof(launch)

        def run(first, last):
            shared = self.arena.get("shared", shared_size)
            slots = self.arena.get("slots", slot_size)
            return kernel.entry(args_ptr, launch_ptr, first, last, shared, slots)

        workers = min(config.cpu_threads, nblocks)
        if workers <= 1:
            run(0, nblocks)
        else:
            self._run_parallel(run, nblocks, workers)
        if err[0]:
            self.record_error(fault.decode(err, binary, kernel_name))
        del keep

    def _run_parallel(self, run, nblocks, workers):
        chunk = max(1, nblocks // (workers * 8))
        starts = itertools.count(0, chunk)
        failed = threading.Event()

        def worker():
            while not failed.is_set():
                first = next(starts)
                if first >= nblocks:
                    return
                if run(first, min(first + chunk, nblocks)):
                    failed.set()
        futures = [self._workers().submit(worker) for _ in range(workers - 1)]
        worker()                       # the calling thread takes chunks too
        for f in futures:
            f.result()


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
