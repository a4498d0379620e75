"""The sim device: kernels as generated Python (codegen.py), their threads interleaved in
an order a seed chooses (schedule.py), every access checked (memory.py); print and
breakpoint() work in kernels. Memory and copies are the host devices' (hostmem.py),
plus a record of which bytes of each allocation something wrote, for the
uninitialized-read check; work runs at once on the calling thread (streams.py).
"""
import dataclasses
import math
import functools
import platform
import uuid
import threading
import time
import weakref

import numpy as np

from ...compiler.options import CompileOptions
from ...compiler.localmem import check_local_memory
from ...config import config
from ...errors import CudaError, InvalidConfiguration, NotSupportedError
from ...runtime.backend import (Native, refuse_freed, refuse_in_host_function,
                                refuse_misaligned, refuse_overlapping)
from ...runtime.backend import deep_recursion
from .. import devqueue, occupancy
from ..hostmem import HostMemory, byte_rows, row_spans
from .. import hostcapture
from . import copies, devlaunch, exact, intbits, lanes, matrix, mbarrier, ordering, pools, values
from . import graphs, heap, records, textures
from ..hosttexels import HostArray
from .graphs import SimGraphs
from .compile import compile_kernel, load
from .launch import Launch
from .schedule import WARP
from .streams import Pending, SimEvent, SimStream


def _names():
    """The names generated code uses (codegen.py writes them)."""
    names = {"_k_f32": values.f32, "_k_f16": values.f16, "_k_c64": values.c64,
             "_k_i2f32": values.int_to_f32, "_k_math": values.MATH, "_k_v": values,
             "_k_printf": values.printf, "_k_range": range, "_k_nan": values.NAN,
             "_k_inf": values.INF, "_k_ns": time.perf_counter_ns, "_k_imod": values.int_mod,
             "_k_truediv": values.truediv, "_k_ffloordiv": values.float_floordiv,
             "_k_fmod": values.float_mod, "_k_fpow": values.float_pow,
             "_k_cdiv": values.complex_div, "_k_cpow": values.complex_pow, "_k_mb": mbarrier,
             "_k_cp": copies, "_k_mx": matrix, "_k_h": lanes, "_k_fence": ordering.fence,
             "_k_x": exact, "_k_ib": intbits, "_k_gs": graphs.set_condition,
             "_k_math_modf": math.modf, "_k_math_frexp": math.frexp,
             "_k_rec": records, "_k_tx": textures}
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        dtype = np.dtype(name)
        wrap = values.wrapper(dtype)
        lo, hi = values.int_limits(dtype)
        names[f"_k_wrap_{name}"] = wrap
        names[f"_k_f2i_{name}"] = values.float_to_int(lo, hi)
        names[f"_k_fdiv_{name}"] = values.int_floordiv(wrap)
        names[f"_k_shl_{name}"], names[f"_k_shr_{name}"] = values.shifter(
            dtype.itemsize * 8, dtype.kind == "i", wrap)
        names[f"_k_ipow_{name}"] = values.int_pow(wrap)
    return names


_NAMES = _names()


def _root(array):
    """The NumPy array that owns ``array``'s memory."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


class SimKernel:
    """A sim binary made ready to launch."""

    def __init__(self, binary):
        self.binary = binary
        self.launch_fn = load(binary, _NAMES)
        # the kernels its launches name by index (compiler/family.py): 0 is this one
        self.family = [self] + [SimKernel(child) for child in binary.children]


class SimBackend(SimGraphs, HostMemory):
    """Kernels run as checked, deterministic Python on the host: a debugger's device."""

    kind = "sim"
    compile_options = CompileOptions(boundscheck=True, seed=0)
    warp = WARP

    def __init__(self, index=0):
        super().__init__(index)
        # one launch at a time (values.py's buffers); a graph launched from a kernel
        # replays its kernel nodes once the launching grid has finished, within its launch
        self.lock = threading.RLock()
        self.device_graphs = {}           # id -> replay of an exec made with device_launch
        self.written = {}                 # allocation address -> (nbytes, bytes written)
        self.pending = Pending()
        self.live = {}                    # id(buffer) -> (weak reference, bytes)
        self.default = SimStream(self, default=True)
        self.registered = {}              # id(root buffer) -> it, while host_register holds it
        self.limits = dict(self.DEFAULT_LIMITS)
        self.heap = None                  # the device heap (sim/heap.py), at the first malloc
        self.pools = weakref.WeakSet()    # memory pools, trimmed at synchronizing calls
        self._default_pool = None

    @classmethod
    def default_options(cls):
        """seed: the order of threads and blocks (0: in order; SIMT_SIM_SEED);
        boundscheck: always on (False is refused when a kernel compiles); narrowing:
        report implicit integer conversions that change the value, off by default."""
        return {"seed": config.sim_seed, "boundscheck": True, "narrowing": False}

    def unsupported(self, feature):
        """The error for a runtime feature the sim does not have, with what to do
        (docs/sim-device.md, Limits). A
        feature only GPUs have says so instead (the cpu device has none of them)."""
        if self._GPU_ONLY in feature:
            return super().unsupported(feature)
        return NotSupportedError(
            f"the 'sim' device does not support {feature} yet: it is not built into the "
            "sim's interpreter (docs/sim-device.md, Limits); run this on the 'cpu' device, "
            "which has the same semantics")

    # ------------------------------------------------------------ work, at once
    def synchronize(self):
        refuse_in_host_function("synchronize")
        hostcapture.refuse_in_capture("synchronize")
        self.trim_pools()
        self.pending.raise_it()

    # ------------------------------------------------------------ memory pools (pools.py)
    def create_pool(self):
        return pools.SimPool(self)

    def default_pool(self):
        if self._default_pool is None:
            self._default_pool = pools.SimPool(self)
        return self._default_pool

    def trim_pools(self):
        """At a synchronizing call, each pool hands back the freed memory it holds above
        its release threshold (as CUDA's pools do)."""
        for pool in list(self.pools):
            pool.trim(pool.threshold)


    def create_stream(self, non_blocking=False, priority=0):
        return SimStream(self, non_blocking, priority)

    def default_stream(self):
        return self.default

    def create_event(self, timing=True):
        return SimEvent(self, timing)

    def run_launch(self, kernel, loaded, grid, block, shared_bytes, stream, args):
        refuse_in_host_function("a kernel launch")
        refuse_freed(kernel, args)
        refuse_overlapping(kernel, loaded.binary.params, args)
        refuse_misaligned(kernel, loaded.binary.params, args)     # as checked mode does
        if self.captured(stream):
            hostcapture.refuse_numpy(kernel, args)
            stream.capture.record(stream, "kernel", functools.partial(
                self.graph_node, loaded, grid, block, shared_bytes, args),
                (grid, block, shared_bytes), kernel)
            return
        self.in_order(stream, lambda: None)         # the legacy default stream's rule
        self.pending.raise_it()
        error = self.launch(loaded, grid, block, shared_bytes, args,
                            loaded.binary.symbol_objects, kernel.__name__)
        if error is not None:
            self.pending.keep(error)
        if config.launch_blocking:
            self.pending.raise_it()            # CUDA_LAUNCH_BLOCKING=1: raised by the launch
        if any(isinstance(a, np.ndarray) and getattr(a, "device_ptr", None) is None
               for a in args):
            self.synchronize()                 # NumPy arguments: the launch is synchronous

    def run_clustered(self, kernel, loaded, grid, block, shared_bytes, stream, args, cluster):
        """Thread block clusters: one cluster after another, its blocks taking turns between
        cluster.sync()s (schedule.run_grid), every block's shared memory made before any
        runs, for cluster.map_shared_rank."""
        self._run_together(kernel, loaded, grid, block, shared_bytes, stream, args,
                           "cluster launches", cluster=cluster)

    def max_active_clusters(self, loaded, grid, block, cluster, shared_bytes):
        """1, or 0 where a block of this shape cannot run: the sim runs one cluster at a
        time, as the cpu device does."""
        threads = block[0] * block[1] * block[2]
        return 1 if self.occupancy(loaded, threads, shared_bytes) > 0 else 0

    def _run_together(self, kernel, loaded, grid, block, shared_bytes, stream, args, what,
                      **how):
        refuse_in_host_function("a kernel launch")
        if loaded.binary.launches_kernels:
            raise NotSupportedError(
                f"kernel '{kernel.__name__}' launches kernels, and the sim device does not run "
                f"the launches inside {what}: launch it with kernel[grid, block]")
        refuse_freed(kernel, args)
        refuse_overlapping(kernel, loaded.binary.params, args)
        refuse_misaligned(kernel, loaded.binary.params, args)
        if stream is not None:
            stream.synchronize()
        self.pending.raise_it()
        error = self.launch(loaded, grid, block, shared_bytes, args,
                            loaded.binary.symbol_objects, kernel.__name__, **how)
        if error is not None:
            self.pending.keep(error)
        if config.launch_blocking or any(isinstance(a, np.ndarray) and
                                         getattr(a, "device_ptr", None) is None for a in args):
            self.synchronize()

    def run_cooperative(self, kernel, loaded, grid, block, shared_bytes, stream, args):
        """kernel.launch_cooperative: the blocks take turns between grid.sync()s, each
        running until all its threads wait there (schedule.run_grid). The grid must be
        co-resident by the cpu device's occupancy model on the sim's one multiprocessor."""
        nblocks, nthreads = math.prod(grid), math.prod(block)
        props = self.properties()
        limit = props.multiprocessor_count * max(1, occupancy.blocks_per_core(props, nthreads, 0))
        if nblocks > limit:
            raise InvalidConfiguration(
                f"cooperative launch of '{kernel.__name__}': {nblocks} blocks of {nthreads} "
                f"threads cannot all be resident at once on this device (at most {limit}); CUDA "
                "fails this launch with cudaErrorCooperativeLaunchTooLarge. Launch fewer blocks "
                "and loop over the data (a grid-stride loop)")
        self._run_together(kernel, loaded, grid, block, shared_bytes, stream, args,
                           "cooperative launches", cooperative=True)

    def native_launch(self, kernel, loaded, types, grid, block, shared_bytes, stream,
                      classes=None):
        """This kernel's launch for runtime/binder.py: the full launch, minus the checks."""
        return Native(["run(kernel, loaded, grid, block, shared, stream, ({args}))"],
                      dict(run=self.run_launch, kernel=kernel, loaded=loaded, grid=grid,
                           block=block, shared=shared_bytes, stream=stream))

    def properties(self):
        return dataclasses.replace(HostMemory.properties(self), kind="sim", name="simt sim",
                                   uuid=str(uuid.uuid5(uuid.NAMESPACE_DNS,
                                                       f"simt-sim.{platform.node()}")),
                                   multiprocessor_count=1)

    # ------------------------------------------------------------ what memory was written
    def alloc(self, nbytes, alignment=64):
        hostcapture.refuse_unsafe("allocating device memory")
        allocation = super().alloc(nbytes, alignment)
        self.track(allocation.ptr, nbytes)
        return allocation

    def track(self, ptr, nbytes):
        """Memory at ``ptr`` holds nothing written yet (the uninitialized-read check)."""
        self.written[ptr] = (nbytes, np.zeros(nbytes, np.bool_))

    def _buffer(self, nbytes, alignment):
        buffer = super()._buffer(nbytes, alignment)
        live = self.live
        live[id(buffer)] = (weakref.ref(buffer, lambda _, key=id(buffer): live.pop(key, None)),
                            nbytes)
        return buffer

    def bytes_in_use(self):
        """Bytes of device and pinned memory this process holds (for leak checks)."""
        return sum(nbytes for _, nbytes in list(self.live.values()))

    def alloc_managed(self, nbytes):
        hostcapture.refuse_unsafe("allocating managed memory")
        return HostMemory.alloc(self, nbytes)          # the host writes it directly

    def alloc_pinned(self, nbytes, write_combined=False):
        hostcapture.refuse_unsafe("allocating pinned host memory")
        return super().alloc_pinned(nbytes, write_combined)

    def release(self, owner):
        # the address through __array_interface__, not ndarray.ctypes: that imports a
        # module at its first use, and this runs from finalizers, at interpreter exit too
        interface = getattr(owner, "__array_interface__", None)
        self.written.pop(interface["data"][0] if interface is not None else None, None)

    def _mark(self, ptr, nbytes):
        # a copy made in one C call: the garbage collector can free an allocation (and
        # drop its entry) while a Python-level walk of the dict is under way
        for start, (size, written) in self.written.copy().items():
            if ptr < start + size and start < ptr + nbytes:
                lo = max(ptr, start) - start
                written[lo:min(ptr + nbytes, start + size) - start] = True
                if written.all():
                    self.written.pop(start, None)

    def copy_htod(self, dst_ptr, host_array, stream=None):
        # in a stream under capture: a memcpy node that reads the host memory each time
        # the graph runs, as CUDA records one
        refuse_in_host_function("a copy")
        self.in_order(stream, self.host_write(
            dst_ptr, host_array.nbytes,
            lambda: HostMemory.copy_htod(self, dst_ptr, host_array)))

    def copy_dtoh(self, host_array, src_ptr, stream=None):
        refuse_in_host_function("a copy")
        if not self.captured(stream):
            self.pending.raise_it()
        self.in_order(stream, lambda: HostMemory.copy_dtoh(self, host_array, src_ptr))

    def copy_dtod(self, dst_ptr, src_ptr, nbytes, stream=None):
        refuse_in_host_function("a copy")
        self.in_order(stream, self.host_write(
            dst_ptr, nbytes, lambda: HostMemory.copy_dtod(self, dst_ptr, src_ptr, nbytes)))

    def memset(self, ptr, byte, nbytes, stream=None):
        refuse_in_host_function("a memset")
        self.in_order(stream, self.host_write(
            ptr, nbytes, lambda: HostMemory.memset(self, ptr, byte, nbytes)))

    def memset_elements(self, ptr, bits, element_size, count, stream=None):
        refuse_in_host_function("a memset")
        self.in_order(stream, self.host_write(
            ptr, element_size * count,
            lambda: HostMemory.memset_elements(self, ptr, bits, element_size, count)))

    def region(self, lo, hi):
        """(first address, bytes, written) of the memory an array argument lies in:
        its allocation, with the bytes written so far, or the array alone (True)."""
        for start, (size, written) in self.written.items():
            if start <= lo and hi <= start + size:
                return start, size, written
        return lo, hi - lo, True

    def mark_written(self, shadows):
        """After a launch: the elements its threads wrote are initialized now."""
        for (root, item), shadow in shadows.items():
            if root in self.written:
                w = shadow.w
                done = [k for k in range(len(w)) if w[k] is not None]
                if done:
                    self._mark_elements(root, item, done)

    def _mark_elements(self, root, item, elements):
        size, written = self.written[root]
        index = np.asarray(elements, np.int64)[:, None] * item + np.arange(item)
        written[index.ravel()] = True
        if written.all():
            del self.written[root]

    def copy_3d(self, dst, src, extent, stream=None):
        """A 2-D/3-D copy between host and device rows (both host memory here): NumPy moves
        the rows, which count as written."""
        refuse_in_host_function("a copy")
        if dst.kind == "host" and not self.captured(stream):
            self.pending.raise_it()

        def copy():
            np.copyto(byte_rows(dst, extent), byte_rows(src, extent))
            if dst.kind == "device":
                for start, stop in row_spans(dst, extent):
                    self._mark(start, stop - start)
        self.in_order(stream, copy)

    def host_register(self, array):
        """Nothing to lock: host memory is this device's memory. Registering twice, or
        unregistering what is not registered, is refused as CUDA refuses it."""
        hostcapture.refuse_unsafe("host_register")
        root = _root(array)
        if id(root) in self.registered:
            raise CudaError("host_register: this array's memory is registered already "
                            "(cudaErrorHostMemoryAlreadyRegistered); register it once")
        self.registered[id(root)] = root

    def host_unregister(self, array):
        if self.registered.pop(id(_root(array)), None) is None:
            raise CudaError("host_unregister: this array's memory is not registered "
                            "(cudaErrorHostMemoryNotRegistered); call simt.host_register first")

    # ------------------------------------------------------------ limits, flags, occupancy
    NO_LIMIT = {"printf_fifo_size": "its print writes each line at once, through no buffer",
                "stack_size": "its kernel threads are Python frames, as deep as Python's "
                              "recursion limit lets them go (the cpu device has this limit)"}

    DEFAULT_LIMITS = {"malloc_heap_size": 8 << 20, "dev_runtime_pending_launch_count": 2048,
                      "persisting_l2_cache_size": 0}

    def reset(self):
        """simt.reset_device: memory made before counts as freed (a launch with it raises
        IllegalAddressError), limits and the cache preference back to their defaults."""
        super().reset()
        self.limits = dict(self.DEFAULT_LIMITS)
        self.written.clear()
        self.heap = None
        self.pending = Pending()

    def set_limit(self, name, value):
        """The heap and pending-launch limits are kept and read back (the pending-launch
        limit bounds launches from kernels; the heap's size is fixed once a kernel called
        simt.malloc, as on the cpu device)."""
        self._refuse_limit(name)
        if name == "malloc_heap_size":
            heap.check_size(self.heap, value)
        self.limits[name] = value

    def device_heap(self):
        """The heap of simt.malloc (sim/heap.py), made at the first call."""
        if self.heap is None:
            self.heap = heap.SimHeap(self.limits["malloc_heap_size"])
        return self.heap

    def get_limit(self, name):
        self._refuse_limit(name)
        return self.limits[name]

    def _refuse_limit(self, name):
        if name in self.NO_LIMIT:
            raise NotSupportedError(f"the 'sim' device does not support the limit {name!r}: "
                                    f"{self.NO_LIMIT[name]}")

    def set_flags(self, flags):
        """Accepted, with nothing to change: work runs at once on the calling thread, so
        nothing ever waits for the device."""

    def occupancy(self, loaded, threads, shared_bytes):
        """The cpu device's model (backends/occupancy.py) on the sim's one multiprocessor."""
        total = loaded.binary.shared_static_bytes + shared_bytes
        return occupancy.blocks_per_core(self.properties(), threads, total)

    def potential_block_size(self, loaded, shared_bytes, max_threads=0):
        return occupancy.potential_block_size(
            self.properties(), lambda threads: self.occupancy(loaded, threads, shared_bytes),
            max_threads)

    # ------------------------------------------------------------ kernels
    def target_id(self):
        return "sim python"

    def warp_for(self, options):
        return self.warp                  # simt.arch() is (0, 0): no GPU target

    def compile(self, fn, options):
        if not options.boundscheck:
            raise NotSupportedError("the sim device always checks every index: "
                                    "boundscheck=False is for the 'cpu' device")
        check_local_memory(fn)             # the same limit as on the other devices
        return compile_kernel(fn, options, self.warp)

    def load_binary(self, binary):
        return SimKernel(binary)

    def resources(self, kernel):
        return {"registers": None, "shared_bytes": kernel.binary.shared_static_bytes,
                "local_bytes": 0}

    def tensor_map(self, tmap):
        return None           # the kernel copies through the map's array (copies.py)

    # ------------------------------------------------------------ textures (sim/textures.py)
    def texture_array(self, array):
        """A CudaArray's texels in a host buffer, as on the cpu device (hosttexels.py);
        kernels read them through sim/textures.py."""
        return HostArray(self, array)

    def mipmapped_array(self, mipmap):
        return textures.Levels(self, mipmap)

    def texture_object(self, texture):
        return texture.source          # a launch makes its SimTexture (launch.py argument)

    def surface_object(self, surface):
        return surface.source

    def launch(self, kernel, grid, block, shared_bytes, args, symbols, kernel_name,
               in_graph=False, cooperative=False, cluster=None):
        """Run a kernel now on the calling thread; returns its error or None. ``in_graph``:
        it is a kernel node of a graph's replay (it may launch graphs: simt.graph_launch)."""
        family = None
        if kernel.binary.launches_kernels:
            family = devqueue.Family(kernel.family,
                                     self.limits["dev_runtime_pending_launch_count"],
                                     self.properties())
            family.in_graph = in_graph
        # a chain of device functions runs as nested generators, one frame per call
        with self.lock, deep_recursion():
            run = Launch(kernel, grid, block, shared_bytes, symbols, self, family,
                         cooperative=cooperative, cluster=cluster)
            error = run.run(args)
            if error is not None or not run.children:
                return error
            return devlaunch.run_children(self, family, run.children, lambda child, *shape:
                                          Launch(child, *shape, child.binary.symbol_objects,
                                                 self, family, child=True))
