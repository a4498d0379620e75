"""The backend contract: everything the runtime asks of a device, in one place.

The runtime (devices, arrays, streams, textures, the launch path) talks to a device
only through a ``Backend``; it never imports a backend module (runtime/devices.py
finds the class by name). A backend subclasses ``Backend`` and fills in the hooks its
device has. A hook it lacks raises NotSupportedError naming the feature and the
device, so a missing feature never shows up as an AttributeError. Capability
attributes say what a device's memory is (host-accessible, CUDA pointers), so the
runtime asks about a capability, not about a device's kind.

Pointers are plain ints (device addresses; host addresses on the CPU device).
"""

import contextlib
import sys
import threading

import numpy as np

from simt.compiler.options import CompileOptions
from simt.errors import CudaError, IllegalAddressError, MisalignedAddressError, NotSupportedError
from simt.ir import types as T


class Allocation:
    """A block of device memory. Freed when the last reference goes away."""

    def __init__(self, ptr, nbytes, backend, keepalive=None):
        self.ptr = ptr
        self.nbytes = nbytes
        self.backend = backend
        self.keepalive = keepalive   # the object that owns the memory (CPU: a NumPy buffer)
        self.generation = getattr(backend, "generation", 0)    # reset_device counts them

    def __del__(self):
        backend = getattr(self, "backend", None)
        if backend is not None and self.generation == getattr(backend, "generation", 0):
            try:
                if self.keepalive is None:
                    backend.free(self.ptr)
                else:
                    backend.release(self.keepalive)
            except Exception:
                pass


from .properties import DeviceProperties    # noqa: E402,F401  (backends import it from here)


class Native:
    """What a back end's ``native_launch`` gives runtime/binder.py, which writes the
    launch function around it.

    ``lines``: the statements of one launch; ``{args}`` in them stands for the
    arguments, each followed by a comma. ``scope``: the names they use. ``plan``
    (back ends that pack a parameter buffer, with ``pack(storage, 0, *values)`` in
    ``scope``): per parameter, None for an array (its values are its ``_flat``) or
    the expressions of its values, with ``{a}`` standing for the argument. ``slots``:
    how many parameter buffers it has, ``storage0``, ``storage1``... in ``scope``;
    ``{slot}`` in ``lines`` stands for the buffer's number. Or ``complete(local, device,
    refused)``: the launch function itself, made by the back end (one native call that
    checks ``local.device is device``, each argument's class, packs and launches), which
    hands arguments it was not made for to ``refused(*args)``. ``later``: None, or
    ``later(hook)``, which calls ``hook()`` (on some thread) once the back end could make
    a faster launch for these arguments (native code that was still being made)."""

    def __init__(self, lines=(), scope=None, plan=None, slots=1, complete=None, later=None):
        self.lines = lines
        self.scope = scope or {}
        self.plan = plan
        self.slots = slots
        self.complete = complete
        self.later = later


class Backend:
    """One device, as the runtime sees it. ``stream`` arguments are the handles of
    this backend's streams (``create_stream``), or None for the default stream."""

    kind = "abstract"              # the device kind: the key of runtime.devices.BACKENDS
    compile_options = CompileOptions()   # this kind's compile defaults (compiler/options.py)
    warp = T.WARP32                # the warp facts its kernels are typed for: its Target's

    # Capabilities (what the runtime asks instead of a device's kind).
    host_accessible = False        # device memory is host memory: NumPy views, DLPack, wrapping
    cuda_pointers = False          # addresses are CUDA device pointers (__cuda_array_interface__)
    block_shaped = False           # kernels with barriers are made per block shape (binary_for)

    def __init__(self, index=0):
        self.index = index

    # ------------------------------------------------------------ the device
    @classmethod
    def device_count(cls):
        """How many devices of this kind the machine has (0 when none can be used)."""
        return 1

    @classmethod
    def why_none(cls):
        """When device_count() is 0: why, in words a user can act on (None otherwise)."""
        return None

    @classmethod
    def device_name(cls, index):
        """The name of device ``index`` of this kind, as users write it."""
        return cls.kind

    @classmethod
    def default_options(cls):
        """The launch options a Device of this kind accepts, with their defaults."""
        return {}

    @property
    def name(self):
        return self.device_name(self.index)

    @property
    def dlpack_device(self):
        """(DLPack device type, index) of this device's memory (kDLCPU = 1, kDLCUDA = 2)."""
        return (2, self.index) if self.cuda_pointers else (1, 0)

    def unsupported(self, feature):
        """The error for a feature this device does not have."""
        return NotSupportedError(f"the {self.name!r} device does not support {feature}")

    def properties(self):
        """This device's DeviceProperties."""
        raise self.unsupported("device properties")

    def device_attribute(self, name):
        """The driver's CU_DEVICE_ATTRIBUTE_<name> of this device (an int), or None where
        the device has no driver to ask or the name is unknown (numba's Device reads any
        attribute by this name: simt/cuda/host.py)."""
        return None

    def profiler(self, on):
        """cuProfilerStart (``on``) or cuProfilerStop: the range a profiler started with
        ``--capture-range=cudaProfilerApi`` collects. No CUDA profiler watches the other
        devices: nothing to do."""

    def synchronize(self):
        """Wait for all work on the device; raise any pending LaunchError."""
        raise self.unsupported("synchronization")

    def mem_get_info(self):
        """(free, total) bytes."""
        raise self.unsupported("memory queries")

    def set_limit(self, name, value):
        """cudaDeviceSetLimit: ``name`` one of limits.LIMITS, ``value`` bytes."""
        raise self.unsupported(f"set_limit({name!r})")

    def get_limit(self, name):
        """cudaDeviceGetLimit: the value in bytes."""
        raise self.unsupported(f"get_limit({name!r})")

    def set_cache_config(self, config):
        """cudaDeviceSetCacheConfig: ``config`` one of control.CACHE_CONFIGS."""
        raise self.unsupported("cache configuration")

    def get_cache_config(self):
        raise self.unsupported("cache configuration")

    def set_access_policy(self, stream, policy):
        """Give ``stream`` (a handle, None: the default stream) the L2 access-policy window
        ``policy`` (a control.AccessPolicy; 0 bytes clears it)."""
        raise self.unsupported("L2 access policy windows")

    def reset(self):
        """cudaDeviceReset, after the runtime finished the work and dropped the loaded
        kernels: give back all memory, settings to their defaults."""
        raise self.unsupported("device reset")

    # ------------------------------------------------------------ memory and copies
    def alloc(self, nbytes):
        """An Allocation of at least nbytes (raise OutOfMemoryError)."""
        raise self.unsupported("device memory")

    def free(self, ptr):
        """Free memory from ``alloc``, once the queued work that uses it is done (cudaFree)."""
        raise self.unsupported("device memory")

    def release(self, owner):
        """An Allocation over memory that ``owner`` keeps alive died: keep ``owner`` until the
        queued work that may use that memory is done. Default: nothing queues work."""

    def alloc_pinned(self, nbytes, write_combined=False):
        """Page-locked host memory as a uint8 NumPy array (write-combined if asked)."""
        raise self.unsupported("pinned memory")

    def alloc_mapped(self, nbytes, write_combined=False):
        """(uint8 NumPy array, device pointer) over host memory the device can address."""
        raise self.unsupported("mapped memory")

    def alloc_managed(self, nbytes):
        """An Allocation usable from host and device (unified memory)."""
        raise self.unsupported("managed memory")

    def copy_htod(self, dst_ptr, host_array, stream=None):
        """Copy a C-contiguous NumPy array to device address dst_ptr."""
        raise self.unsupported("host-to-device copies")

    def copy_dtoh(self, host_array, src_ptr, stream=None):
        """Fill a C-contiguous NumPy array from device address src_ptr."""
        raise self.unsupported("device-to-host copies")

    def copy_dtod(self, dst_ptr, src_ptr, nbytes, stream=None):
        raise self.unsupported("device-to-device copies")

    def memset(self, ptr, byte, nbytes, stream=None):
        raise self.unsupported("memset")

    def alloc_pitch(self, width_bytes, height, element_size):
        """(Allocation, pitch): ``height`` rows of ``width_bytes``, each row starting
        ``pitch`` bytes after the one before (cuMemAllocPitch)."""
        raise self.unsupported("pitched memory")

    def copy_3d(self, dst, src, extent, stream=None):
        """Copy ``extent`` = (row bytes, rows, slices) between two runtime.memory.Side
        descriptions (cuMemcpy3D)."""
        raise self.unsupported("2-D and 3-D copies")

    def host_register(self, array):
        """Page-lock a NumPy array's memory (cuMemHostRegister)."""
        raise self.unsupported("registering host memory")

    def host_unregister(self, array):
        """Undo host_register (cuMemHostUnregister)."""
        raise self.unsupported("registering host memory")

    def memset_elements(self, ptr, bits, element_size, count, stream=None):
        """Set ``count`` elements of ``element_size`` bytes (1, 2 or 4) to the unsigned
        value ``bits`` (cuMemsetD8/D16/D32)."""
        raise self.unsupported("memset of 8-, 16- and 32-bit values")

    def create_pool(self):
        """A new memory pool object (runtime/pools.py wraps it): alloc(nbytes, stream) ->
        an Allocation whose keepalive has free_async(stream); attribute(name) for
        'release_threshold', 'used', 'reserved', 'used_high', 'reserved_high';
        set_release_threshold(nbytes); trim(keep_bytes)."""
        raise self.unsupported("memory pools")

    def default_pool(self):
        """The device's default memory pool object (as create_pool's)."""
        raise self.unsupported("memory pools")

    # ------------------------------------------------------------ streams and events
    def create_stream(self, non_blocking=False, priority=0):
        """A stream object: handle, non_blocking, priority, synchronize(), query(),
        wait_event(event), launch_host_func(fn, *args), begin_capture(mode, where) (mode:
        one of streams.CAPTURE_MODES, checked; where: the captured stream named for error
        messages) and end_capture(failed=False) -> a graph object as create_graph's
        (runtime/streams.py wraps it)."""
        raise self.unsupported("streams")

    def stream_priority_range(self):
        """(least, greatest) stream priorities (cuCtxGetStreamPriorityRange): lower numbers
        are higher priorities."""
        raise self.unsupported("stream priorities")

    def default_stream(self):
        """The legacy default stream, as a stream object."""
        raise self.unsupported("streams")

    def create_event(self, timing=True):
        """An event object: record(stream), synchronize(), query(), elapsed_time(end)."""
        raise self.unsupported("events")

    def create_graph(self):
        """An empty graph object (runtime/graphs.py wraps it): add_kernel(kernel, loaded,
        grid, block, shared_bytes, args, deps), add_memcpy(dst, dst_is_host, src,
        src_is_host, nbytes, deps), add_memset(ptr, bits, element_size, count, deps),
        add_host(fn, args, deps), add_empty(deps), add_child(graph, deps),
        add_event_record(event, deps), add_event_wait(event, deps), each returning a
        node, and instantiate() -> an exec with launch(stream), update(graph),
        kernel_config(node) and set_kernel_args(node, kernel, loaded, args)."""
        raise self.unsupported("graphs")

    def wrap_stream(self, handle):
        """A stream object over another library's stream (an address): not owned, never
        destroyed here (Stream.from_handle)."""
        raise self.unsupported("streams of other libraries (CUDA streams exist on GPUs only)")

    # ------------------------------------------------------------ kernels
    def target_id(self):
        """A string naming what this device's binaries are compiled for (the disk cache key)."""
        raise self.unsupported("kernels")

    def warp_for(self, options):
        """The warp facts a kernel compiled with ``options`` is typed for (ir/types.Warp,
        whose ``arch`` is what ``simt.arch()`` folds to: (0, 0) but on GPUs)."""
        raise self.unsupported("kernels")

    def compile(self, fn, options):
        """A binary (picklable, for the disk cache) of a typed IR kernel."""
        raise self.unsupported("kernels")

    def load_binary(self, binary):
        """A binary made ready to launch on this device (the ``loaded`` of the hooks below)."""
        raise self.unsupported("kernels")

    def set_function_attribute(self, loaded, name, value):
        """cuFuncSetAttribute on a loaded kernel: ``name`` one of control.KERNEL_ATTRIBUTES
        (checked)."""
        raise self.unsupported("kernel attributes")

    def resources(self, loaded):
        """{'registers', 'shared_bytes', 'local_bytes'} of a loaded kernel."""
        raise self.unsupported("kernel resources")

    def occupancy(self, loaded, threads, shared_bytes):
        """Blocks of ``threads`` threads and ``shared_bytes`` dynamic shared memory that can
        be resident on one multiprocessor at once (cuOccupancyMaxActiveBlocksPerMultiprocessor)."""
        raise self.unsupported("occupancy queries")

    def potential_block_size(self, loaded, shared_bytes, max_threads=0):
        """(min_grid, block) as cuOccupancyMaxPotentialBlockSize gives them, blocks of at
        most ``max_threads`` (0: the device's limit)."""
        raise self.unsupported("occupancy queries")

    def set_flags(self, flags):
        """Device flags (a set of 'schedule_spin', 'schedule_yield', 'schedule_blocking_sync',
        'schedule_auto', 'map_host'), as cuDevicePrimaryCtxSetFlags sets them."""
        raise self.unsupported("device flags")

    def run_launch(self, kernel, loaded, grid, block, shared_bytes, stream, args):
        """Launch ``loaded`` over ``grid`` x ``block`` with ``args`` (checked by the runtime)."""
        raise self.unsupported("kernel launches")

    def run_cooperative(self, kernel, loaded, grid, block, shared_bytes, stream, args):
        """A cooperative launch: every block resident at once, so grid.sync() works."""
        raise self.unsupported("cooperative launches")

    def run_clustered(self, kernel, loaded, grid, block, shared_bytes, stream, args, cluster):
        """A launch in thread block clusters of ``cluster`` blocks (compute capability 9.0)."""
        raise self.unsupported("thread block cluster launches")

    def run_programmatic(self, kernel, loaded, grid, block, shared_bytes, stream, args,
                         cluster=None):
        """A programmatic dependent launch: it may start before the kernel before it in its
        stream ends (its blocks call griddepcontrol.wait() before reading what that one
        wrote). The early start is allowed, never required, so a device whose launches run
        in stream order runs it as any other launch, and griddepcontrol does nothing there."""
        if cluster is not None:
            self.run_clustered(kernel, loaded, grid, block, shared_bytes, stream, args, cluster)
        else:
            self.run_launch(kernel, loaded, grid, block, shared_bytes, stream, args)

    def max_active_clusters(self, loaded, grid, block, cluster, shared_bytes):
        """Clusters of ``cluster`` blocks of this configuration that can be resident at once
        (cuOccupancyMaxActiveClusters); 0 when such a cluster cannot run."""
        raise self.unsupported("thread block clusters (max_active_clusters)")

    def native_launch(self, kernel, loaded, types, grid, block, shared_bytes, stream,
                      classes=None):
        """The launch of ``loaded`` with this configuration as a ``Native``, around which
        runtime/binder.py writes the launch function of later calls of one argument
        signature (``classes``: the arguments' classes); or None: the runtime then keeps
        going the full way."""
        return None

    @classmethod
    def compile_for(cls, fn, options, arch):
        """A binary of a typed IR kernel for ``arch`` made without a device (for
        ``kernel.inspect_ptx`` on other devices), where this kind of device can."""
        raise NotSupportedError(f"the {cls.kind} back end compiles only for its devices")

    def sass(self, binary):
        """The GPU machine code (SASS) of a binary as text (``kernel.inspect_sass``)."""
        raise self.unsupported("SASS, NVIDIA GPU machine code: select a GPU ('cuda:0') to "
                               "see it; inspect_ptx works on every device")

    # ------------------------------------------------------------ textures and surfaces
    def texture_array(self, array):
        """The storage of a runtime CudaArray: copy_from_host(host),
        copy_from_device(device_array), copy_to_host(out)."""
        raise self.unsupported("CUDA arrays")

    def mipmapped_array(self, mipmap):
        """The storage of a runtime MipmappedArray: ``level(l, level_array)`` gives the
        storage of level l (as texture_array does for a CudaArray)."""
        raise self.unsupported("mipmapped arrays")

    def texture_object(self, texture):
        """The device object of a runtime Texture (what kernels get)."""
        raise self.unsupported("textures")

    def surface_object(self, surface):
        """The device object of a runtime Surface (what kernels get)."""
        raise self.unsupported("surfaces")

    def tensor_map(self, tmap):
        """The device form of a runtime TensorMap (runtime/tensormaps.py): on the GPU the
        driver's 128-byte CUtensorMap; None where kernels read its description itself."""
        raise self.unsupported("TMA tensor maps")

    # ------------------------------------------------------------ modules made elsewhere
    _GPU_ONLY = (", which only NVIDIA GPUs have: select one with simt.set_device('cuda:0') "
                 "(simt.devices() lists them)")

    def load_module(self, image):
        """A PTX, cubin or fatbin image loaded: get_function(name) -> a function object,
        get_global(name) -> (address, bytes), info_log (runtime/modules.py)."""
        raise self.unsupported(f"CUDA modules (PTX, cubin, fatbin){self._GPU_ONLY}")

    def compile_cuda_c(self, source, name, options, name_expressions):
        """(image, [(name expression, lowered name)], log): CUDA C++ compiled for this
        device (NVRTC); a failed compile raises CompileError carrying the compiler's log."""
        raise self.unsupported(f"CUDA C++ modules (SourceModule, compiled by NVRTC){self._GPU_ONLY}")

    def launch_raw(self, function, grid, block, shared_bytes, stream, kinds, values):
        """Launch a module's function; ``kinds``: per parameter 'pointer' or a NumPy
        dtype, ``values``: int addresses and NumPy scalars."""
        raise self.unsupported(f"CUDA modules{self._GPU_ONLY}")

    # ------------------------------------------------------------ several GPUs, IPC
    def can_access_peer(self, other):
        """Whether this device can be let into ``other``'s memory (cuDeviceCanAccessPeer)."""
        raise self.unsupported("peer access (between two GPUs)")

    def enable_peer_access(self, other):
        """Let this device's kernels reach ``other``'s memory (cuCtxEnablePeerAccess)."""
        raise self.unsupported("peer access (between two GPUs)")

    def copy_peer(self, dst_ptr, dst_backend, src_ptr, nbytes, stream=None):
        """Copy ``nbytes`` from this device's ``src_ptr`` to another device's memory
        without the host (cuMemcpyPeerAsync)."""
        raise self.unsupported("peer copies (between two GPUs)")

    def ipc_handle(self, ptr):
        """(handle bytes, offset of ptr in its allocation) for another process
        (cuIpcGetMemHandle)."""
        raise self.unsupported(f"IPC memory handles{self._GPU_ONLY}")

    def open_ipc_handle(self, handle, nbytes):
        """An Allocation over another process's memory (cuIpcOpenMemHandle), closed when
        it dies."""
        raise self.unsupported(f"IPC memory handles{self._GPU_ONLY}")

    def create_ipc_event(self):
        """An event object (as create_event's, without timing) that other processes can
        open: ipc_handle() -> bytes (cuIpcGetEventHandle)."""
        raise self.unsupported(f"interprocess events{self._GPU_ONLY}")

    def open_ipc_event(self, handle):
        """The event object of another process's interprocess event (cuIpcOpenEventHandle)."""
        raise self.unsupported(f"interprocess events{self._GPU_ONLY}")

    # ------------------------------------------------------------ graphics interop
    def register_gl_buffer(self, buffer_id, flags):
        """An OpenGL buffer object of the GL context current on this thread, registered
        for this device (cuGraphicsGLRegisterBuffer): an object with ``map(stream)``,
        ``pointer()`` -> (address, bytes) while mapped, ``unmap(stream)`` and
        ``unregister()``. ``flags``: 'none', 'read_only' or 'write_discard'."""
        raise self.unsupported(f"OpenGL interop (simt.gl.register_buffer){self._GPU_ONLY}")

    # ------------------------------------------------------------ unified memory, VMM
    def prefetch(self, ptr, nbytes, target, stream=None):
        """Move managed memory to ``target`` (a backend, or None for the host) in stream
        order (cuMemPrefetchAsync)."""
        raise self.unsupported("managed memory")

    def advise(self, ptr, nbytes, advice, target, unset=False):
        """cuMemAdvise: ``advice`` one of 'read_mostly', 'preferred_location',
        'accessed_by'; ``target`` a backend or None (the host)."""
        raise self.unsupported("managed memory")

    def symbol_storage(self, symbol):
        """The Allocation holding module-level ``symbol`` (a lang.memory._Symbol) on this
        device, made now if no kernel placed it yet (cudaGetSymbolAddress); for a
        ``Managed`` symbol flagged ``managed``."""
        raise self.unsupported("the addresses of module-level symbols")

    def attach_mem(self, stream, ptr, nbytes, flags):
        """cuStreamAttachMemAsync: managed memory at ``ptr`` is reached by the work of
        ``stream`` only ('single'), by every stream ('global') or by the host ('host')."""
        raise self.unsupported("managed memory")

    def pointer_attributes(self, ptr):
        """cuPointerGetAttributes of an address, as a dict (memory_type, device,
        device_pointer, host_pointer, ...), or None where this device has no driver to
        ask (runtime/pointers.py then answers from simt's own records)."""
        return None

    def virtual_memory(self, reserve_bytes):
        """A VirtualMemory object: granularity, grow(nbytes) -> Allocation of the mapped
        range, release() (cuMemAddressReserve / cuMemCreate / cuMemMap)."""
        raise self.unsupported(f"virtual memory management (appendix E){self._GPU_ONLY}")


# -- stream host functions: CUDA forbids CUDA calls in them -------------------------

class _HostFunction(threading.local):
    running = False        # this thread is in a stream host function


_host_function = _HostFunction()


@contextlib.contextmanager
def running_host_function():
    """Mark the calling thread as running a stream host function (backends wrap each one)."""
    outer = _host_function.running
    _host_function.running = True
    try:
        yield
    finally:
        _host_function.running = outer


def in_host_function():
    """True on a thread running a stream host function, and on any thread Python did not
    start (a CUDA driver's callback thread among them): the garbage collector can run a
    finalizer there before the function's own mark is set (tools/stress.py deadlocked on a
    cuStreamDestroy from a callback thread), and driver calls there wait for the stream
    that waits for the callback."""
    return _host_function.running or isinstance(threading.current_thread(), threading._DummyThread)


def refuse_in_host_function(what):
    """CUDA forbids CUDA calls in a host function (cudaErrorNotPermitted): a launch or a
    synchronize there waits for the stream that waits for the host function, a deadlock.
    Backends call this before such work; it raises inside a host function."""
    if _host_function.running:
        raise CudaError(f"{what} inside a stream host function (launch_host_func): CUDA "
                        "forbids simt calls there (cudaErrorNotPermitted), as they wait for "
                        "the stream that waits for the host function. Do the work after the "
                        "stream's synchronize, or signal a host thread from the function")


def refuse_misaligned(kernel, params, args, data=True):
    """Checked mode: an array of a vector type (float4, int2 ...) whose data or strides
    are not aligned as CUDA aligns the type (each access of an element is one vector
    access), or a device array of a scalar type whose data or strides are not a multiple
    of its item's alignment (a view made at a byte offset: ``raw[1:5].view(np.int32)``):
    a GPU refuses such an access (misaligned address). A MisalignedAddressError naming
    the argument; the launch does not run. ``data=False``: a vector array's strides only
    (the CPU device's checked mode reports an access of misaligned vector data at its
    line); scalar arrays are checked whole either way."""
    for position, (t, value) in enumerate(zip(params, args)):
        align = _alignment_needed(t, value)
        if not align:
            continue
        address = value.ctypes.data if hasattr(value, "ctypes") else getattr(value, "ptr", 0)
        bad = [s for s in value.strides if s % align]
        vector = isinstance(t.element, T.Vector)
        misplaced = (data or not vector) and address % align
        if misplaced or bad:
            code = kernel.pyfunc.__code__
            name = code.co_varnames[position] if position < code.co_argcount else "?"
            what = f"its data at {address:#x} is" if misplaced else \
                f"its strides {tuple(value.strides)} are"
            fix = f"simt.{t.element!r}.view of an aligned array" if vector else \
                "a view that starts at a multiple of the item size"
            raise MisalignedAddressError(
                f"kernel '{kernel.__name__}', argument '{name}': {what} not aligned to "
                f"{align} bytes, as each {t.element!r} access needs (a misaligned "
                f"{'vector ' if vector else ''}access on a GPU). Copy the data to a fresh "
                f"array (simt.to_device, or {fix}) first")


def _alignment_needed(t, value):
    """The alignment each element access of argument ``value`` (of type ``t``) needs on a
    GPU, or 0 when it is not checked: a vector type's CUDA alignment; a scalar's own for a
    device array (a NumPy argument is copied to aligned device memory on a GPU)."""
    if not isinstance(t, T.Array) or t.align is not None:
        return 0
    if isinstance(t.element, T.Vector):
        return t.element.align
    if isinstance(t.element, T.Scalar) and not isinstance(value, np.ndarray):
        return t.dtype.alignment
    return 0


from .restrict import refuse_overlapping    # noqa: E402,F401  (checked mode's noalias test)


def _stale(alloc):
    """Whether an Allocation was made before its device's last reset_device."""
    backend = getattr(alloc, "backend", None)
    return backend is not None and \
        getattr(alloc, "generation", 0) != getattr(backend, "generation", 0)


def refuse_freed(kernel, args):
    """Checked mode and the sim device: an argument whose memory was freed
    (``DeviceArray.free``) is a use after free, an IllegalAddressError naming it; the
    launch does not run."""
    for position, value in enumerate(args):
        alloc = getattr(value, "alloc", None)
        if alloc is not None and _stale(alloc):
            code = kernel.pyfunc.__code__
            name = code.co_varnames[position] if position < code.co_argcount else "?"
            raise IllegalAddressError(
                f"kernel '{kernel.__name__}', argument '{name}': its device array was made "
                f"before simt.reset_device, which freed it. Make the arrays again after a reset")
        if alloc is not None and getattr(alloc, "freed", False):
            code = kernel.pyfunc.__code__
            name = code.co_varnames[position] if position < code.co_argcount else "?"
            raise IllegalAddressError(
                f"kernel '{kernel.__name__}', argument '{name}': its device array was freed "
                f"(DeviceArray.free) before this launch: a use after free. Launch it with an "
                f"array that is still allocated, or free it after the kernels that use it")


# ------------------------------------------------------------ the compile recursion limit (runtime/kernel.py and the sim device launch under it)
_deep = {"depth": 0, "saved": None}
_deep_lock = threading.Lock()


@contextlib.contextmanager
def deep_recursion(limit=20000):
    """A recursion limit for compiling: the front end, the IR passes and the code
    generators recurse over expressions, and a long one (a sum of 2000 terms) nests
    deeper than Python's default of 1000 frames allows. Process-wide, as Python's limit
    is, and restored when the last compile in any thread ends."""
    with _deep_lock:
        if _deep["depth"] == 0:
            _deep["saved"] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(limit, _deep["saved"]))
        _deep["depth"] += 1
    try:
        yield
    finally:
        with _deep_lock:
            _deep["depth"] -= 1
            if _deep["depth"] == 0:
                sys.setrecursionlimit(_deep["saved"])
