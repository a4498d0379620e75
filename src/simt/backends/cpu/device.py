"""The CPU device: runs compiled kernels over the grid with a pool of worker
threads (ctypes releases the GIL, so blocks really run in parallel). Streams, copies
and kept launch errors: hostdevice.HostBackend."""
import ctypes
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ...compiler.options import CompileOptions
from ...config import config
import simt.fault as fault
from ..hostjit import LoadedObject
from ..hostdevice import HostBackend
from .args import ArgPacker
from ..hoststreams import with_stack
from . import interrupt, texmem
from . import cooperative     # registers simt_cpu_grid_sync with the JIT
from . import heap            # registers simt_cpu_malloc and simt_cpu_free

KERNEL_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                             ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)


class CpuKernel:
    """A CPU binary loaded into this process, ready to launch."""

    def __init__(self, binary):
        self.binary = binary
        self.loaded = LoadedObject(binary.object_code)
        self.entry = KERNEL_FN(self.loaded.address(binary.symbol))
        self.packer = ArgPacker(binary.params, len(binary.symbols))
        interrupt.install()            # its loops poll the flag that Ctrl-C sets


class _Arena(threading.local):
    """Per-worker scratch memory: shared memory and per-thread slots."""

    def get(self, name, nbytes):
        buf = getattr(self, name, None)
        if buf is None or buf.nbytes < nbytes:
            buf = np.empty(max(nbytes, 64), np.uint8)
            setattr(self, name, buf)
        return buf.ctypes.data


class CpuBackend(HostBackend):
    """The host CPU as a CUDA device."""

    compile_options = CompileOptions(boundscheck=True)   # out-of-bounds accesses raise

    def __init__(self, index=0):
        super().__init__(index)
        self.arena = _Arena()
        self.pool = None

    def _after_fork(self):
        super()._after_fork()
        self.pool = None

    @classmethod
    def default_options(cls):
        """boundscheck: check every array index (on by default: ``compile_options``);
        checks: checked mode, refused until it is built (runtime/devices.py)."""
        return {"boundscheck": cls.compile_options.boundscheck, "checks": False}

    def _workers(self):
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=config.cpu_threads,
                                           thread_name_prefix="simt-cpu")
        return self.pool

    # ------------------------------------------------------------ limits
    NO_LIMIT = {"printf_fifo_size": "its printf writes each line at once, through no buffer",
                "stack_size": "its kernel threads run on the host threads' stacks"}

    def set_limit(self, name, value):
        if name in self.NO_LIMIT:
            raise self.unsupported(f"the limit {name!r}: {self.NO_LIMIT[name]}")
        heap.set_size(value)

    def get_limit(self, name):
        if name in self.NO_LIMIT:
            raise self.unsupported(f"the limit {name!r}: {self.NO_LIMIT[name]}")
        return heap.size()

    # ------------------------------------------------------------ compile and load
    def target_id(self):
        from .. import hostjit as jit
        return "cpu " + jit.host_description()

    def compile(self, fn, options):
        from .compile import compile_kernel
        from ...compiler.localmem import check_local_memory
        check_local_memory(fn)             # so that the thread stacks below have room
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

    # ------------------------------------------------------------ textures (see texmem.py)
    def texture_array(self, array):
        return texmem.HostArray(self, array)

    def texture_object(self, texture):
        return texmem.HostTexture(texture.source, texture._simt_type.source)

    def surface_object(self, surface):
        return texmem.HostTexture(surface.source, "array")

    # ------------------------------------------------------------ launch
    def launch(self, kernel, grid, block, shared_bytes, args, symbols, kernel_name):
        """Run a kernel now, on the calling thread and the pool; returns its error or None."""
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
        interrupt.clear()
        if workers <= 1:
            run(0, nblocks)
        else:
            self._run_parallel(run, nblocks, workers)
        del keep
        if not err[0]:
            return None
        if err[0] == fault.INTERRUPTED and interrupt.python_raises():
            return None               # Python raises KeyboardInterrupt for this Ctrl-C
        return fault.decode(err, binary, kernel_name)

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
        pool = self._workers()      # it starts its threads at submit: with simt's stack size
        futures = with_stack(lambda: [pool.submit(worker) for _ in range(workers - 1)])
        try:
            worker()                   # the calling thread takes chunks too
        except BaseException:
            failed.set()
            raise
        finally:
            _wait_all(futures, failed)


def _wait_all(futures, failed):
    """Wait for the pool's share of a launch, through Ctrl-C too: it uses the launch's memory."""
    interrupted = None
    for f in futures:
        while True:
            try:
                f.result()
                break
            except KeyboardInterrupt as exc:
                failed.set()
                interrupted = exc
    if interrupted is not None:
        raise interrupted
