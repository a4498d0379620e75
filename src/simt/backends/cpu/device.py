"""The CPU device: runs compiled kernels over the grid with a pool of worker
threads (ctypes releases the GIL, so blocks really run in parallel).

Launch errors are kept and raised at the next synchronizing call of the thread that
launched the work (or of its stream: streams.Faults), as CUDA reports them; unlike a
GPU, the device stays usable afterwards."""
import ctypes
import functools
import itertools
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ...compiler.options import CompileOptions
from ...config import config
import simt.fault as fault
from ...errors import CudaError
from ...runtime.backend import (Native, refuse_freed, refuse_in_host_function,
                                refuse_misaligned, refuse_overlapping)
from ..hostjit import LoadedObject
from ..hostmem import HostMemory as CpuMemory, aligned_buffer
from ...ir.nodes import MAX_ALIGN
from .. import devqueue
from .args import ArgPacker
from . import checklayout, disjoint
from ...errors import NotSupportedError
from .. import hostcapture as capture, hostgraphs as graphs, hostpools as pools
from . import devlaunch, fibers, frames, interrupt, shadow, streams, team, \
    texmem
from . import cooperative     # registers simt_cpu_grid_sync with the JIT
from . import cluster as cluster_mod   # registers the cluster queries with the JIT
from . import heap            # registers simt_cpu_malloc and simt_cpu_free
from . import stack           # registers simt_cpu_stack_limit with the JIT

KERNEL_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                             ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)


class CpuKernel:
    """A CPU binary loaded into this process, ready to launch."""

    def __init__(self, binary):
        self.binary = binary
        if binary.warps:
            fibers.ensure()            # the scheduler its entry calls
        self.loaded = LoadedObject(binary.object_code)
        self.address = self.loaded.address(binary.symbol)
        self.entry = KERNEL_FN(self.address)
        self.packer = ArgPacker(binary.params, len(binary.symbols))
        self.launches = binary.launches_kernels     # read at every launch
        self.plans = {}                # (grid, block, shared bytes) -> frames.Plan
        interrupt.install()            # its loops poll the flag that Ctrl-C sets
        # the kernels it may launch, by family index (0: itself; compiler/family.py)
        self.family = [self] + [CpuKernel(child) for child in binary.children]


class _Arena(threading.local):
    """Per-worker scratch memory: shared memory and per-thread slots."""

    def get(self, name, nbytes):
        """The address of this worker's buffer ``name`` of at least ``nbytes`` (kept with
        its address: ``ndarray.ctypes`` costs microseconds, under the GIL, per call)."""
        kept = getattr(self, name, None)
        if kept is None or kept[0].nbytes < nbytes:
            buf = aligned_buffer(max(nbytes, 64), MAX_ALIGN)    # arrays' alignment=
            kept = (buf, buf.ctypes.data)
            setattr(self, name, kept)
        return kept[1]


class CpuBackend(CpuMemory):
    """The host CPU as a CUDA device."""

    compile_options = CompileOptions(boundscheck=True)   # out-of-bounds accesses raise
    block_shaped = True    # a barrier kernel's thread loops over a known shape: 10% faster

    def __init__(self, index=0):
        super().__init__(index)
        self.faults = streams.Faults()
        self.arena = _Arena()
        self.pool = None
        self.team = None                 # team.Team, made at the first parallel launch
        self.workers = streams.Workers()
        self.default = streams.CpuDefaultStream(self)
        self.live = {}              # id(root buffer) -> (weak reference, bytes): bytes_in_use
        self.shadow = shadow.ShadowMemory()     # checked mode's view of memory
        self.pools = weakref.WeakSet()   # memory pools, trimmed at synchronizing calls
        self.own = threading.local()     # .stream: the thread's per-thread default stream
        self.poll = False                # set_device_flags: waits poll instead of sleeping
        self._default_pool = None
        _after_fork_in_child(self)

    def _after_fork(self):
        """In a forked child: no thread of the parent survived, so start over without them."""
        self.faults = streams.Faults()
        self.pool = None
        self.team = None
        global _team_lock
        _team_lock = threading.Lock()    # a parent's thread may have held it at the fork
        for worker in list(self.workers):
            worker.after_fork()

    @classmethod
    def default_options(cls):
        """boundscheck: check every array index (on by default: ``compile_options``);
        checks: checked mode (checked.py, docs/finding-bugs.md), off by default;
        narrowing: report implicit integer conversions that change the value, off."""
        return {"boundscheck": cls.compile_options.boundscheck, "checks": False,
                "narrowing": False}

    def _team(self):
        """The native team of config.cpu_threads members (remade when that changes), or
        None where there is none."""
        crew = self.team
        if crew is not None and crew.members == config.cpu_threads:
            return crew
        if not team.available():
            return None
        with _team_lock:
            crew = self.team
            if crew is None or crew.members != config.cpu_threads:
                if crew is not None:
                    crew.retire()
                crew = self.team = team.Team(config.cpu_threads)
        return crew

    def _workers(self):
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=config.cpu_threads,
                                           thread_name_prefix="simt-cpu")
        return self.pool

    # ------------------------------------------------------------ errors
    def raise_pending(self):
        """Raise the first kept error of work the calling thread launched."""
        self.faults.raise_for_thread()

    def record_error(self, error):
        """Keep an error of work the calling thread ran on the default stream."""
        self.faults.add(error, threading.current_thread(), None)

    def synchronize(self):
        refuse_in_host_function("synchronize")
        capture.refuse_in_capture("synchronize")
        for worker in list(self.workers):
            worker.drain(self.poll)
        self.trim_pools()
        self.raise_pending()

    def trim_pools(self):
        """At a synchronizing call, each pool hands back the freed memory it holds above
        its release threshold (as CUDA's pools do)."""
        for pool in list(self.pools):
            pool.trim(pool.threshold)

    # ------------------------------------------------------------ memory pools (../hostpools.py)
    def create_pool(self):
        return pools.HostPool(self)

    def default_pool(self):
        if self._default_pool is None:
            self._default_pool = pools.HostPool(self)
        return self._default_pool

    def release(self, owner):
        """Memory dropped by the program stays alive until the work already queued in the
        streams is done: that work may still read or write it (cudaFree waits for it too)."""
        for worker in list(self.workers):
            worker.hold(owner)

    def alloc(self, nbytes, *args, **kwargs):
        capture.refuse_unsafe("allocating device memory")
        allocation = super().alloc(nbytes, *args, **kwargs)
        self.shadow.allocated(allocation.ptr, nbytes, allocation.keepalive)
        return allocation

    def alloc_managed(self, nbytes):
        allocation = super().alloc_managed(nbytes)
        self.shadow.written(allocation.ptr, nbytes)      # the host writes it directly
        return allocation

    def _buffer(self, nbytes, alignment):
        buffer = super()._buffer(nbytes, alignment)
        root, live = _root(buffer), self.live
        live[id(root)] = (weakref.ref(root, lambda _, key=id(root): live.pop(key, None)), nbytes)
        return buffer

    def bytes_in_use(self):
        """Bytes of device and pinned memory this process holds: the CPU device's own
        accounting (mem_get_info reports the whole machine's), for leak checks."""
        return sum(nbytes for _, nbytes in list(self.live.values()))

    # ------------------------------------------------------------ limits
    NO_LIMIT = {"printf_fifo_size": "its printf writes each line at once, through no buffer"}

    pending_launch_limit = devqueue.PENDING_LIMIT
    persisting_l2 = 0

    def reset(self):
        """simt.reset_device: memory made before counts as freed (checked mode reports its
        use; the NumPy buffers stay alive while arrays hold them, so a use outside checked
        mode reads stale memory instead of crashing), the heap is given back, pools trimmed,
        and limits and the cache preference go back to their defaults."""
        super().reset()
        for pool in list(self.pools):
            pool.trim(0)
        heap.reset()
        stack.set_limit(stack.DEFAULT)
        for name in ("pending_launch_limit", "persisting_l2"):
            vars(self).pop(name, None)      # the class's defaults again
        self.faults = streams.Faults()

    def set_limit(self, name, value):
        if name in self.NO_LIMIT:
            raise self.unsupported(f"the limit {name!r}: {self.NO_LIMIT[name]}")
        if name == "dev_runtime_pending_launch_count":
            self.pending_launch_limit = value
        elif name == "persisting_l2_cache_size":
            self.persisting_l2 = value        # recorded: no L2 to set aside (docs/device-control.md)
        elif name == "stack_size":
            stack.set_limit(value)
        else:
            heap.set_size(value)

    def get_limit(self, name):
        if name in self.NO_LIMIT:
            raise self.unsupported(f"the limit {name!r}: {self.NO_LIMIT[name]}")
        if name == "dev_runtime_pending_launch_count":
            return self.pending_launch_limit
        if name == "persisting_l2_cache_size":
            return self.persisting_l2
        if name == "stack_size":
            return stack.get_limit()
        return heap.size()

    # ------------------------------------------------------------ streams (see streams.py)
    def create_stream(self, non_blocking=False, priority=0):
        return streams.CpuStream(self, non_blocking, priority)

    def default_stream(self):
        return self.per_thread(None) or self.default

    def per_thread(self, stream):
        """``stream``, or for None with SIMT_DEFAULT_STREAM=per-thread the calling
        thread's own default stream: a blocking stream (it waits for, and is waited for
        by, the legacy default stream) that no other thread's work waits for."""
        if stream is not None or config.default_stream != "per-thread":
            return stream
        own = getattr(self.own, "stream", None)
        if own is None:
            own = self.own.stream = streams.CpuStream(self)
        return own

    def create_event(self, timing=True):
        return streams.CpuEvent(self, timing)

    def drain_blocking(self):
        """Legacy default-stream rule: finish the work queued in blocking streams."""
        refuse_in_host_function("work on the default stream")
        capture.refuse_in_capture("work on the legacy default stream",
                                 "cudaErrorStreamCaptureImplicit")
        if self.workers:
            for worker in list(self.workers):
                if worker.blocking:
                    worker.drain(self.poll)

    def _in_order(self, stream, fn):
        """Run ``fn`` in stream order: queued on a stream, or now after the blocking streams
        (per-thread default stream: queued on it, and done when this returns)."""
        own = self.per_thread(stream)
        if own is not stream:
            own.enqueue(fn)
            own.synchronize()
        elif stream is None:
            self.drain_blocking()
            fn()
        else:
            stream.enqueue(fn)

    # ------------------------------------------------------------ copies in stream order
    def host_write(self, start, nbytes, fn):
        """``fn``, a host write of [start, start + nbytes), which marks those bytes written
        for checked mode when it runs (in stream order; in a graph, at each replay)."""
        def run():
            self.shadow.written(start, nbytes)
            fn()
        return run

    def copy_htod(self, dst_ptr, host_array, stream=None):
        if stream is not None and stream.capture is None and not _is_pinned(host_array):
            host_array = host_array.copy()         # pageable: staged now, as CUDA does
        # in a stream under capture, pinned or not: a memcpy node that reads the host
        # memory each time the graph runs, as CUDA records one
        self._in_order(stream, self.host_write(
            dst_ptr, host_array.nbytes, lambda: CpuMemory.copy_htod(self, dst_ptr, host_array)))

    def copy_dtoh(self, host_array, src_ptr, stream=None):
        if self.per_thread(stream) is not stream:
            self._in_order(None, lambda: CpuMemory.copy_dtoh(self, host_array, src_ptr))
            return
        if stream is not None and stream.capture is None and not _is_pinned(host_array):
            stream.synchronize()                   # pageable: the copy is done on return
            stream = None
        if stream is None:
            self.drain_blocking()
            self.raise_pending()
        self._in_order(stream, lambda: CpuMemory.copy_dtoh(self, host_array, src_ptr))

    def copy_dtod(self, dst_ptr, src_ptr, nbytes, stream=None):
        self._in_order(stream, self.host_write(
            dst_ptr, nbytes, lambda: CpuMemory.copy_dtod(self, dst_ptr, src_ptr, nbytes)))

    def memset(self, ptr, byte, nbytes, stream=None):
        self._in_order(stream, self.host_write(
            ptr, nbytes, lambda: CpuMemory.memset(self, ptr, byte, nbytes)))

    def memset_elements(self, ptr, bits, element_size, count, stream=None):
        self._in_order(stream, self.host_write(
            ptr, element_size * count, lambda: graphs.fill(ptr, bits, element_size, count)))

    # ------------------------------------------------------------ graphs (../hostgraphs.py)
    def create_graph(self):
        return graphs.HostGraph(self)

    interrupt = interrupt          # Ctrl-C stops a replay between nodes (interrupt.py)

    def add_device_graph(self, ident, replay):
        """An exec that kernels launch as ``ident`` (simt.graph_launch: devlaunch.py)."""
        devlaunch.add_device_graph(ident, replay)

    def remove_device_graph(self, ident):
        devlaunch.remove_device_graph(ident)

    def run_graph(self, stream, replay, nodes=None):
        """A graph launch: ``replay`` in stream order (its errors kept as a launch's); in a
        stream under capture, a child graph node of ``nodes`` instead."""
        stream = self.per_thread(stream)
        if stream is not None:
            stream.enqueue(replay, "graph", nodes)
            return
        self.drain_blocking()
        self.raise_pending()
        try:
            replay()
        except Exception as exc:
            self.record_error(exc)

    def captured(self, stream):
        """Whether work put in ``stream`` is recorded into a graph being captured."""
        stream = self.per_thread(stream)
        return stream is not None and stream.capture is not None

    def copy_3d(self, dst, src, extent, stream=None):
        """A 2-D/3-D copy: both sides are host memory here, so NumPy moves the rows."""
        dst_rows, src_rows = texmem.byte_rows(dst, extent), texmem.byte_rows(src, extent)
        if stream is None:
            self.raise_pending()
        def run():
            if dst.kind == "device":
                self.shadow.written_spans(texmem.row_spans(dst, extent))
            np.copyto(dst_rows, src_rows)
        self._in_order(stream, run)

    def host_register(self, array):
        """Nothing to lock: host memory is this device's memory. Registered arrays count
        as pinned, so stream copies with them are asynchronous, as on a GPU."""
        capture.refuse_unsafe("host_register")
        root = _root(array)
        if id(root) in _registered:
            raise CudaError("host_register: this array's memory is registered already "
                            "(cudaErrorHostMemoryAlreadyRegistered); register it once")
        _registered[id(root)] = root
        _pinned_roots[id(root)] = weakref.ref(root)

    def host_unregister(self, array):
        root = _root(array)
        if _registered.pop(id(root), None) is None:
            raise CudaError("host_unregister: this array's memory is not registered "
                            "(cudaErrorHostMemoryNotRegistered); call simt.host_register first")
        _pinned_roots.pop(id(root), None)

    def alloc_pinned(self, nbytes, write_combined=False):
        capture.refuse_unsafe("allocating pinned host memory")
        buffer = super().alloc_pinned(nbytes)
        root = _root(buffer)
        _pinned_roots[id(root)] = weakref.ref(root, lambda _, key=id(root): _pinned_roots.pop(key, None))
        return buffer

    # ------------------------------------------------------------ compile and load
    def target_id(self):
        from .. import hostjit as jit
        return "cpu " + jit.host_description()

    def warp_for(self, options):
        return self.warp                  # simt.arch() is (0, 0): no GPU target

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

    def set_flags(self, flags):
        """schedule_spin and schedule_yield: waiting threads poll, giving up the GIL
        between polls (spinning while holding it would stall the stream threads they
        wait for); the other flags: they sleep until woken. map_host: host memory is
        this device's memory, mapped always."""
        self.poll = bool(flags & {"schedule_spin", "schedule_yield"})

    def occupancy(self, loaded, threads, shared_bytes):
        """cooperative.blocks_per_core: the model cooperative launches check against too."""
        total = loaded.binary.shared_static_bytes + shared_bytes
        return cooperative.blocks_per_core(self.properties(), threads, total)

    def potential_block_size(self, loaded, shared_bytes, max_threads=0):
        return cooperative.potential_block_size(
            self.properties(), lambda threads: self.occupancy(loaded, threads, shared_bytes),
            max_threads)

    def max_active_clusters(self, loaded, grid, block, cluster, shared_bytes):
        """1, or 0 where a block of this shape cannot run: the device runs a grid's clusters
        one after another (cluster.py), so one is resident at a time."""
        threads = block[0] * block[1] * block[2]
        return 1 if self.occupancy(loaded, threads, shared_bytes) > 0 else 0

    def run_clustered(self, kernel, loaded, grid, block, shared_bytes, stream, args, cluster):
        """Clusters: the blocks of each run at once (backends/cpu/cluster.py)."""
        _refuse_launching(kernel, loaded, "cluster launches")
        if loaded.binary.checked:
            raise NotSupportedError(f"checked mode does not run cluster launches yet (kernel "
                                    f"'{kernel.__name__}'): launch it without checks=True")
        if stream is not None:
            stream.synchronize()
        blocks = functools.partial(cluster_mod.run_blocks, cluster=tuple(cluster))
        self._run(loaded, frames.plan(loaded, grid, block, shared_bytes), args, blocks=blocks)
        if any(isinstance(a, np.ndarray) for a in args):
            self.synchronize()
        elif config.launch_blocking:
            self.raise_pending()

    def run_cooperative(self, kernel, loaded, grid, block, shared_bytes, stream, args):
        """kernel.launch_cooperative: every block at once, so grid.sync() works."""
        _refuse_launching(kernel, loaded, "cooperative launches")
        if loaded.binary.checked:
            raise NotSupportedError(
                f"checked mode does not run cooperative launches yet (kernel "
                f"'{kernel.__name__}'): launch it without checks=True / SIMT_CHECKS=1, or "
                f"check the parts of it that need no grid.sync() with a normal launch")
        if stream is not None:
            stream.synchronize()
        blocks = functools.partial(cooperative.run_blocks, props=self.properties())
        self._run(loaded, frames.plan(loaded, grid, block, shared_bytes), args, blocks=blocks)
        if any(isinstance(a, np.ndarray) for a in args):
            self.synchronize()
        elif config.launch_blocking:
            self.raise_pending()

    def run_launch(self, kernel, loaded, grid, block, shared_bytes, stream, args):
        if loaded.binary.checked:
            refuse_freed(kernel, args)
            # data off the alignment is reported at the access (checked.py); strides
            # off it cannot be indexed at all
            refuse_misaligned(kernel, loaded.binary.params, args, data=False)
            refuse_overlapping(kernel, loaded.binary.params, args)
        stream = self.per_thread(stream)
        if stream is not None and stream.capture is not None:
            capture.refuse_numpy(kernel, args)
            make = functools.partial(self.graph_node, loaded, grid, block, shared_bytes, args)
            stream.enqueue(make, "kernel", (grid, block, shared_bytes), kernel)
        else:
            plan = frames.plan(loaded, grid, block, shared_bytes)
            if stream is None:
                self._run(loaded, plan, args)
            else:
                stream.enqueue(lambda: self._run(loaded, plan, args, queued=True))
        if config.launch_blocking and (stream is None or stream.capture is None):
            self._finish_launch(stream)
            return
        for a in args:       # a loop, not any(generator): this runs at every launch
            if isinstance(a, np.ndarray) and getattr(a, "device_ptr", None) is None:
                (stream or self).synchronize()   # NumPy arguments: the launch is synchronous
                break

    def _finish_launch(self, stream):
        """CUDA_LAUNCH_BLOCKING=1: the launch returns once its kernel ran, its error raised
        by the launch itself (the legacy default stream's ran already, on this thread)."""
        if stream is None:
            self.raise_pending()
        else:
            stream.synchronize()

    def native_launch(self, kernel, loaded, types, grid, block, shared_bytes, stream,
                      classes=None):
        """This kernel's launch for runtime/binder.py: the full launch, minus the checks;
        on the legacy default stream, for arguments that are no NumPy arrays, of a kernel
        that is not checked and launches none, that launch with its layers folded into
        one function (``_direct``)."""
        binary = loaded.binary
        if stream is None and classes is not None and not binary.checked and \
                not binary.launches_kernels and loaded.packer.flat is not None and \
                not any(issubclass(c, np.ndarray) for c in classes):
            go = self._direct(kernel, loaded, grid, block, shared_bytes)
            return Native(["go(({args}))"], dict(go=go))
        return Native(["run(kernel, loaded, grid, block, shared, stream, ({args}))"],
                      dict(run=self.run_launch, kernel=kernel, loaded=loaded, grid=grid,
                           block=block, shared=shared_bytes, stream=stream))

    def _direct(self, kernel, loaded, grid, block, shared_bytes):
        """``run_launch`` for one configuration on the legacy default stream, with its plan
        looked up once (a one-block launch is mostly Python calls)."""
        plan, run = frames.plan(loaded, grid, block, shared_bytes), self._run

        def go(args):
            if config.default_stream == "per-thread" or config.launch_blocking:
                return self.run_launch(kernel, loaded, grid, block, shared_bytes, None, args)
            run(loaded, plan, args)
        return go

    # ------------------------------------------------------------ textures (see texmem.py)
    def texture_array(self, array):
        return texmem.HostArray(self, array)

    def mipmapped_array(self, mipmap):
        return texmem.HostMipmap(self, mipmap)

    def texture_object(self, texture):
        return texmem.HostTexture(texture.source, texture._simt_type.source,
                                  getattr(texture, "mipmap_levels", None))

    def surface_object(self, surface):
        return texmem.HostTexture(surface.source, "array")

    def tensor_map(self, tmap):
        return None           # the kernel reads the description (cpu/lower/tma.py)

    # ------------------------------------------------------------ launch
    def _run(self, loaded, plan, args, queued=False, blocks=None):
        """A launch of ``loaded`` in the configuration ``plan``, now, on the calling thread
        and the team. On the legacy default stream (not ``queued``): after the blocking
        streams' work, an error kept from earlier work raised first, its own error kept.
        Queued on a stream: its error raised, for the stream to keep. ``blocks``: how a
        cooperative or cluster launch runs its blocks."""
        if not queued:
            self.drain_blocking()
            self.raise_pending()
        if loaded.launches:
            error = self.prepare(loaded, plan, args)()
        else:
            frame = plan.take()
            frame.fill(loaded, args)
            self._execute(loaded, plan, frame.args_ptr, frame.launch_ptr, frame.err,
                          frame.arrays, blocks=blocks)
            error = self._outcome(frame.err, loaded.binary)
            plan.give(frame)    # not after an exception (Ctrl-C): the record may be dirty
        if error is not None:
            if queued:
                raise error
            self.record_error(error)

    def graph_node(self, loaded, grid, block, shared_bytes, args):
        """A kernel launch with its arguments packed once, replayed by calling it (graph
        nodes); raises the kernel's error."""
        run = self.prepare(loaded, frames.plan(loaded, grid, block, shared_bytes), args,
                           in_graph=True)
        return lambda: _raise(run())

    def prepare(self, loaded, plan, args, child_of=None, in_graph=False):
        """A launch ready to run: calling it runs the kernel on the calling thread and the
        team, and returns its error or None. ``child_of``: a launch from a kernel
        (devlaunch.py): (its packed argument bytes, the parent's ``Family``); ``in_graph``:
        a kernel node of a graph (it may launch graphs: simt.graph_launch)."""
        binary, symbols = loaded.binary, loaded.binary.symbol_objects
        frame = frames.Frame(loaded, plan)
        if child_of is None:
            frame.fill(loaded, args)
            arrays = frames.arrays_of(args, symbols)
        else:
            argbytes, family = child_of
            devlaunch.fill(frame.packed, argbytes, symbols)
            arrays = family.arrays + frames.arrays_of((), symbols)
        record = frame.err.ctypes.data

        def go():
            if child_of is None:      # a host launch (a graph replays it): a new count
                fam = devlaunch.Family(loaded.family, arrays, self.pending_launch_limit,
                                       self.properties(), in_graph) \
                    if binary.launches_kernels else None
            else:
                fam = family
            queue = fam is not None and devlaunch.open_queue(record, fam)
            try:
                self._execute(loaded, plan, frame.args_ptr, frame.launch_ptr, frame.err,
                              arrays, read_only=child_of is None)
            finally:
                if queue:
                    devlaunch.close_queue(record)
            if not frame.err[0] and queue:
                go.queue = queue          # children's launches: their parent's loop runs them
                return None if child_of else devlaunch.run_children(self, queue)
            return self._outcome(frame.err, binary)
        go.keep = frame                     # what the addresses above point into
        return go

    def _execute(self, loaded, plan, args_ptr, launch_ptr, err, arrays, read_only=True,
                 blocks=None):
        """Run a launch's blocks: checked mode in order on this thread, one block on this
        thread, more on this thread and the team (``blocks``: as that says)."""
        interrupt.starting()
        try:
            if blocks is not None:
                blocks(loaded, plan, args_ptr, launch_ptr)
            elif loaded.binary.checked:
                self._run_checked(loaded, plan, args_ptr, launch_ptr, err, arrays, read_only)
            elif plan.nblocks == 1 or config.cpu_threads == 1:
                loaded.entry(args_ptr, launch_ptr, 0, plan.nblocks,
                             self.arena.get("shared", plan.shared_size),
                             self.arena.get("slots", plan.slot_size))
            else:
                self._run_team(loaded, plan, args_ptr, launch_ptr)
        finally:
            interrupt.ended()

    @staticmethod
    def _outcome(err, binary):
        """The launch's error from its fault record, or None; the record is left clean (a
        frame or a bound launch runs again)."""
        if not err[0]:
            return None
        record = err.copy()
        err[:] = 0
        if record[0] == fault.INTERRUPTED and interrupt.python_raises():
            return None           # Python raises KeyboardInterrupt for this Ctrl-C
        return fault.decode(record, binary, binary.name)

    def _run_checked(self, loaded, plan, args_ptr, launch_ptr, err, arrays, read_only):
        """Checked mode: one checked launch at a time, on one OS thread, the blocks in
        order (shadow memory takes no locks). A kernel that calls simt.malloc has the
        device heap checked too, its blocks followed from malloc to free."""
        binary = loaded.binary
        with self.shadow.lock:
            if binary.uses_heap:
                arrays = arrays + [self.shadow.heap_region(heap.get_heap())]
            keep = self.shadow.begin(err, arrays, plan.grid, plan.block, plan.shared_size)
            state = err[fault.WORDS:]
            shared = state[checklayout.SHARED_BASE] = self.arena.get("shared", plan.shared_size)
            state[checklayout.READ_ONLY] = self.shadow.read_only_mask(
                arrays, binary.read_only if read_only else ())
            state[checklayout.OWNED] = self.shadow.owned_mask(
                arrays, binary.owned if read_only else (), plan.grid, plan.block)
            state[checklayout.PRIVATE] = disjoint.private_mask(binary.private, plan.block)
            heap.watch(self.shadow if binary.uses_heap else None)
            try:
                loaded.entry(args_ptr, launch_ptr, 0, plan.nblocks, shared,
                             self.arena.get("slots", plan.slot_size))
            finally:
                heap.watch(None)
            self.shadow.launch_done(state)
            del keep

    def _run_team(self, loaded, plan, args_ptr, launch_ptr):
        """The blocks on the native team (team.py); on the Python pool where there is no
        team or another launch has it (launches of other streams run at once, as on a
        GPU)."""
        crew = self._team()
        if crew is None or not crew.lock.acquire(False):
            self._run_parallel(loaded, plan, args_ptr, launch_ptr)
            return
        try:
            crew.ensure(plan.shared_size, plan.slot_size)
            crew.launch(loaded.address, args_ptr, launch_ptr, plan.nblocks)
        finally:
            crew.lock.release()

    def _run_parallel(self, loaded, plan, args_ptr, launch_ptr):
        # Each chunk costs a few microseconds of Python under the GIL (next chunk, the native
        # call's entry and exit): 4 chunks per worker even out blocks of uneven cost.
        nblocks = plan.nblocks
        workers = min(config.cpu_threads, nblocks)

        def run(first, last):
            shared = self.arena.get("shared", plan.shared_size)
            slots = self.arena.get("slots", plan.slot_size)
            return loaded.entry(args_ptr, launch_ptr, first, last, shared, slots)
        chunk = max(1, nblocks // (workers * 4))
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
        futures = streams.with_stack(lambda: [pool.submit(worker) for _ in range(workers - 1)])
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


def _raise(error):
    if error is not None:
        raise error


def _after_fork_in_child(backend):
    """Have a forked child reset ``backend``'s threads (os.register_at_fork; weak, as a
    registration cannot be undone)."""
    if hasattr(os, "register_at_fork"):
        ref = weakref.ref(backend)
        os.register_at_fork(after_in_child=lambda: ref() is not None and ref()._after_fork())


_team_lock = threading.Lock()
_pinned_roots = {}     # id -> weak reference of the NumPy buffers alloc_pinned handed out
_registered = {}       # id -> the NumPy buffers host_register pinned (kept until unregistered)


def _root(array):
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _is_pinned(array):
    """Whether a host array lies in memory from pinned_array (async copies may use it)."""
    root = _root(array)
    ref = _pinned_roots.get(id(root))
    return ref is not None and ref() is root


def _refuse_launching(kernel, loaded, what):
    if loaded.binary.launches_kernels:
        raise NotSupportedError(
            f"kernel '{kernel.__name__}' launches kernels, and the CPU device does not run "
            f"the launches inside {what}: launch it with kernel[grid, block]")
