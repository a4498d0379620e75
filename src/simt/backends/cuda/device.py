"""One NVIDIA GPU as a simt Backend: its primary context, memory and copies."""

import dataclasses
import threading

from . import capture, hostmem
from .driver import (api, available, call, check, context_dead, deferred_destroys,
                     destroy_deferred, set_thread_device, thread_device, why_unavailable)
from .properties import device_properties
from simt.compiler.kernel_options import capability
from simt.compiler.options import CompileOptions
from simt.runtime.backend import Allocation, Backend, DeviceProperties
from simt.runtime.backend import in_host_function, refuse_in_host_function
from . import driver
from simt.errors import NotSupportedError, OutOfMemoryError
import simt.fault as fault

driver.in_host_function = in_host_function      # driver.destroy defers on those threads

__all__ = ["CudaBackend", "device_count", "device_properties"]


def device_count():
    """Number of CUDA devices; 0 when cuda-bindings or the driver is missing."""
    if not available():
        return 0
    try:
        return call(api().cuDeviceGetCount)
    except Exception:
        return 0


def _handle(stream):
    """The CUstream of a streams.Stream, or the argument itself (None: default stream)."""
    return getattr(stream, "handle", stream)


def _wrap_properties(props):
    """DeviceProperties from our dict, keeping the fields it has."""
    props = dict(props, kind="cuda")
    if "max_shared_memory_per_multiprocessor" in props:
        props.setdefault("shared_memory_per_multiprocessor",
                         props["max_shared_memory_per_multiprocessor"])
    known = DeviceProperties.__dataclass_fields__
    return DeviceProperties(**{key: value for key, value in props.items() if key in known})


class CudaBackend(Backend):
    """Device ``index``: retains its primary context and makes it current per host thread."""

    kind = "cuda"
    cuda_pointers = True
    generation = 0                 # simt.reset_device counts up (Allocation.generation)
    compile_options = CompileOptions(boundscheck=False)   # as CUDA: no index checks

    def __init__(self, index=0):
        super().__init__(index)
        driver = api()
        self.device = call(driver.cuDeviceGet, index)
        self.context = call(driver.cuDevicePrimaryCtxRetain, self.device)
        self._properties = None
        self.held = {}                 # address -> bytes, of the memory this process holds
        self.held_lock = threading.Lock()
        self.deferred = []             # (driver call name, address) freed after a host function
        self.make_current()

    @classmethod
    def device_count(cls):
        return device_count()

    @classmethod
    def why_none(cls):
        return why_unavailable() or "the NVIDIA driver reports no GPU"

    @classmethod
    def device_name(cls, index):
        return f"cuda:{index}"

    @classmethod
    def default_options(cls):
        """boundscheck: check every array index (off by default, as CUDA has no checks:
        ``compile_options``); narrowing: report implicit integer conversions that change
        the value (off); checks: checked mode (off; checked.py says what a GPU checks)."""
        return {"boundscheck": cls.compile_options.boundscheck, "narrowing": False,
                "checks": False}

    def make_current(self, force=False):
        """Make this device's context current on the calling host thread (cheap if it is).

        ``force`` sets it even where simt believes it current (another library may have
        changed the thread's context). Every driver call of this backend comes here
        first, so this is where a call from a stream host function is refused.
        """
        refuse_in_host_function("a CUDA call")
        self.set_current(force)

    def set_current(self, force=False):
        """make_current without the host-function check: for freeing, which a host
        function may cause by dropping the last reference to an array."""
        if force or thread_device() != self.index:
            call(api().cuCtxSetCurrent, self.context)
            set_thread_device(self.index)

    def properties(self):
        if self._properties is None:
            self._properties = _wrap_properties(device_properties(self.index))
        return self._properties

    def device_attribute(self, name):
        driver = api()
        attr = getattr(driver.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + name, None)
        return None if attr is None else int(call(driver.cuDeviceGetAttribute, attr,
                                                  self.device))

    def profiler(self, on):
        self.make_current()
        call(api().cuProfilerStart if on else api().cuProfilerStop)

    def alloc(self, nbytes):
        self.make_current()
        if self.deferred or deferred_destroys:
            self.free_deferred()
        err, ptr = api().cuMemAlloc(max(nbytes, 1))   # cuMemAlloc refuses 0 bytes
        check(err, "cuMemAlloc", request=nbytes)
        return self.hold(int(ptr), nbytes)

    def hold(self, ptr, nbytes):
        """An Allocation of memory just allocated, counted by bytes_in_use until freed."""
        with self.held_lock:
            self.held[ptr] = nbytes
        return Allocation(ptr, nbytes, self)

    def bytes_in_use(self):
        """Bytes of device, managed and page-locked host memory this process holds, by
        simt's own count (mem_get_info reports the whole GPU, every process on it): what
        leak checks compare (tools/stress.py)."""
        with self.held_lock:
            return sum(self.held.values())

    def free(self, ptr, how="cuMemFree"):
        """Free device (``how`` cuMemFree) or page-locked (cuMemFreeHost) memory. Both wait
        for the device, so on a stream host function's thread (where the last reference
        can go, by the garbage collector too) that would wait for the stream that waits
        for the function: the memory is freed by the next alloc or synchronize instead.
        So is memory dropped while a stream capture is under way (a capture forbids
        cuMemFree, and the garbage collector may drop an array anywhere in the block)."""
        if in_host_function() or capture.under_way():
            with self.held_lock:
                self.deferred.append((how, ptr))
            return
        with self.held_lock:
            self.held.pop(ptr, None)
        if context_dead(self.index):
            return   # the context is gone and its memory with it
        self.set_current()
        call(getattr(api(), how), ptr)

    def free_deferred(self):
        """Free what host functions dropped (see free), and destroy the driver objects they
        dropped (driver.destroy); not while a capture is under way (see free)."""
        if capture.under_way():
            return
        destroy_deferred()
        while self.deferred:
            with self.held_lock:
                pending, self.deferred = self.deferred, []
            for how, ptr in pending:
                self.free(ptr, how)

    def copy_htod(self, dst_ptr, host_array, stream=None):
        self.make_current()
        driver = api()
        src, nbytes = host_array.ctypes.data, host_array.nbytes
        if stream is None:
            call(driver.cuMemcpyHtoD, dst_ptr, src, nbytes)
        else:
            call(driver.cuMemcpyHtoDAsync, dst_ptr, src, nbytes, _handle(stream))

    def copy_dtoh(self, host_array, src_ptr, stream=None):
        self.make_current()
        driver = api()
        dst, nbytes = host_array.ctypes.data, host_array.nbytes
        if stream is None:
            self._waiting_call(driver.cuMemcpyDtoH, dst, src_ptr, nbytes)
        else:
            call(driver.cuMemcpyDtoHAsync, dst, src_ptr, nbytes, _handle(stream))

    def copy_dtod(self, dst_ptr, src_ptr, nbytes, stream=None):
        self.make_current()
        driver = api()
        if stream is None:
            call(driver.cuMemcpyDtoD, dst_ptr, src_ptr, nbytes)
        else:
            call(driver.cuMemcpyDtoDAsync, dst_ptr, src_ptr, nbytes, _handle(stream))

    def memset(self, ptr, byte, nbytes, stream=None):
        self.make_current()
        driver = api()
        if stream is None:
            call(driver.cuMemsetD8, ptr, byte, nbytes)
        else:
            call(driver.cuMemsetD8Async, ptr, byte, nbytes, _handle(stream))

    def alloc_pitch(self, width_bytes, height, element_size):
        from .copies import alloc_pitch
        ptr, pitch = alloc_pitch(self, width_bytes, height, element_size)
        return Allocation(ptr, pitch * height, self), pitch

    def copy_3d(self, dst, src, extent, stream=None):
        from .copies import memcpy3d
        memcpy3d(self, dst, src, extent, _handle(stream))

    def host_register(self, array):
        """cuMemHostRegister (portable: every context may use it); the array is kept
        alive until host_unregister, as the driver keeps its pages locked until then."""
        self.make_current()
        call(api().cuMemHostRegister, array.ctypes.data, max(array.nbytes, 1),
             api().CU_MEMHOSTREGISTER_PORTABLE)
        self.registered[array.ctypes.data] = array

    def host_unregister(self, array):
        self.make_current()
        call(api().cuMemHostUnregister, array.ctypes.data)
        self.registered.pop(array.ctypes.data, None)

    @property
    def registered(self):
        """Address -> the NumPy array host_register locked there."""
        if "_registered" not in vars(self):
            self._registered = {}
        return self._registered

    def memset_elements(self, ptr, bits, element_size, count, stream=None):
        self.make_current()
        driver = api()
        width = {1: "D8", 2: "D16", 4: "D32"}[element_size]
        if stream is None:
            call(getattr(driver, "cuMemset" + width), ptr, bits, count)
        else:
            call(getattr(driver, f"cuMemset{width}Async"), ptr, bits, count, _handle(stream))

    def create_pool(self):
        from .pools import GpuPool
        return GpuPool(self)

    def default_pool(self):
        from .pools import GpuPool
        self.make_current()
        return GpuPool(self, call(api().cuDeviceGetDefaultMemPool, self.device))

    def temporary(self, nbytes):
        """simt's own scratch memory (the device copies of a launch's NumPy arguments):
        from the default pool, so a launch does not pay cuMemAlloc and cuMemFree. In the
        legacy default stream's order: the synchronous copies that fill it follow it, and
        the free when it dies comes after the work of every blocking stream."""
        if "_scratch_pool" not in vars(self):
            self._scratch_pool = self.default_pool()
        return self._scratch_pool.alloc(nbytes, None)

    def create_graph(self):
        from .graphs import GpuGraph
        return GpuGraph(self)

    def synchronize(self):
        self.make_current()
        self._waiting_call(api().cuCtxSynchronize)
        if self.deferred or deferred_destroys:
            self.free_deferred()
        if self.callback_errors:
            raise self.callback_errors.pop(0)

    @property
    def callback_errors(self):
        """Exceptions raised by host functions (launch_host_func), raised at the next sync."""
        if "_callback_errors" not in vars(self):
            self._callback_errors = []
        return self._callback_errors

    # ------------------------------------------------------------ kernel-recorded errors
    error_source = None           # (CudaBinary, kernel name) of the last launch that can fail
    _error_record = None

    def error_record(self):
        """(int64 host view, device address) of the mapped record kernels write errors to."""
        if self._error_record is None:
            host, address = hostmem.alloc_mapped(self, fault.WORDS * 8)
            words = host.view("int64")
            words[:] = 0
            self._error_record = (words, int(address), host)
            driver.recorded_errors[self.index] = self.take_recorded
        return self._error_record[:2]

    def _waiting_call(self, fn, *args):
        """A driver call that waits for the device's work, then the error a kernel recorded.
        (A launch that trapped fails the call itself: driver.check raises the record's
        error then, through ``recorded_errors``, whichever call meets it first.)"""
        call(fn, *args)
        self.raise_recorded()

    def take_recorded(self):
        """The error a bounds check, assert or trap recorded, or None; the record is cleared,
        so each is raised once."""
        if self._error_record is None or not self._error_record[0][0]:
            return None
        from .kernels import launch_error
        words = self._error_record[0]
        record = words.copy()
        words[:] = 0
        binary, name = self.error_source
        return launch_error(binary, record, name)

    def raise_recorded(self):
        """Raise the error a kernel recorded, if any (after a call that waited for it)."""
        error = self.take_recorded()
        if error is not None:
            raise error

    LIMITS = {"stack_size": "CU_LIMIT_STACK_SIZE", "printf_fifo_size": "CU_LIMIT_PRINTF_FIFO_SIZE",
              "malloc_heap_size": "CU_LIMIT_MALLOC_HEAP_SIZE",
              "dev_runtime_pending_launch_count": "CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT",
              "persisting_l2_cache_size": "CU_LIMIT_PERSISTING_L2_CACHE_SIZE"}

    def set_limit(self, name, value):
        self.make_current()
        driver = api()
        call(driver.cuCtxSetLimit, getattr(driver.CUlimit, self.LIMITS[name]), value)

    def get_limit(self, name):
        self.make_current()
        driver = api()
        return int(call(driver.cuCtxGetLimit, getattr(driver.CUlimit, self.LIMITS[name])))

    def mem_get_info(self):
        self.make_current()
        free, total = call(api().cuMemGetInfo)
        return int(free), int(total)

    def alloc_pinned(self, nbytes, write_combined=False):
        """Page-locked host memory as a uint8 NumPy array, freed when the array dies."""
        return hostmem.alloc_pinned(self, nbytes, write_combined)

    def alloc_mapped(self, nbytes, write_combined=False):
        """(uint8 NumPy array, device pointer) over host memory mapped into the device."""
        return hostmem.alloc_mapped(self, nbytes, write_combined)

    def alloc_managed(self, nbytes):
        """Unified memory as an Allocation; refused beyond the device's free memory."""
        free, total = self.mem_get_info()
        if nbytes > free:
            # Asking the driver for more managed memory than is free can hang the GPU.
            raise OutOfMemoryError(
                f"cuMemAllocManaged: {nbytes} bytes requested, {free} of {total} bytes "
                f"free on cuda:{self.index}: ask for less managed memory")
        driver = api()
        flag = driver.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL
        err, ptr = driver.cuMemAllocManaged(max(nbytes, 1), flag)
        check(err, "cuMemAllocManaged", request=nbytes)
        return self.hold(int(ptr), nbytes)

    def create_stream(self, non_blocking=False, priority=0):
        """A new streams.Stream on this device."""
        from .streams import Stream
        self.make_current()
        return Stream(non_blocking=non_blocking, priority=priority, errors=self.callback_errors,
                      backend=self)

    # ------------------------------------------------------------ settings (control.py)
    def set_function_attribute(self, loaded, name, value):
        from .control import set_function_attribute
        set_function_attribute(self, loaded, name, value)

    def set_cache_config(self, config):
        from .control import set_cache_config
        set_cache_config(self, config)

    def get_cache_config(self):
        from .control import get_cache_config
        return get_cache_config(self)

    def set_access_policy(self, stream, policy):
        from .control import set_access_policy
        set_access_policy(self, _handle(stream), policy)

    def reset(self):
        from .control import reset
        reset(self)

    def stream_priority_range(self):
        self.make_current()
        least, greatest = call(api().cuCtxGetStreamPriorityRange)
        return int(least), int(greatest)

    def default_stream(self):
        """The legacy default stream of this device."""
        from .streams import DefaultStream
        if "_default_stream" not in vars(self):
            self._default_stream = DefaultStream(errors=self.callback_errors)
        return self._default_stream

    # ------------------------------------------------------------ kernels
    def arch(self):
        """The LLVM/PTX target of this GPU, e.g. 'sm_90'."""
        major, minor = self.properties().compute_capability
        return f"sm_{major}{minor}"

    def target_id(self):
        from .binary import target_id
        return target_id(self.arch())

    def compile(self, fn, options):
        return self.compile_for(fn, options, self.target_arch(options, fn.name))

    def target_arch(self, options, name):
        """The kernel's arch= (PTX the driver compiles for this GPU), else this GPU's; a
        newer one than this GPU is a NotSupportedError (its PTX would not load)."""
        if options.arch is None:
            return self.arch()
        wanted, have = capability(options.arch), self.properties().compute_capability
        if wanted > tuple(have) or (options.arch.endswith("a") and wanted != tuple(have)):
            raise NotSupportedError(
                f"kernel '{name}' is compiled for arch={options.arch!r}, which this GPU of "
                f"compute capability {have[0]}.{have[1]} cannot run; give an arch at most "
                f"{self.arch()!r}, or leave arch= out")
        return options.arch

    def warp_for(self, options):
        return self.warp_at(options.arch or self.arch())

    @classmethod
    def warp_at(cls, arch):
        """The warp facts of kernels compiled for ``arch`` ('sm_80'): simt.arch() is (8, 0)."""
        return dataclasses.replace(cls.warp, arch=capability(arch))

    def load_binary(self, binary):
        from .kernels import CudaKernel, refuse_recursion
        refuse_recursion(binary, binary.name)
        self.make_current()
        with capture.relaxed():        # a first launch inside a capture block loads it
            return CudaKernel(self, binary)

    def resources(self, kernel):
        return kernel.function.resources()

    def run_clustered(self, kernel, loaded, grid, block, shared_bytes, stream, args, cluster):
        """cuLaunchKernelEx with the cluster dimension (compute capability 9.0)."""
        from .kernels import run_launch
        run_launch(self, kernel, loaded, grid, block, shared_bytes, stream, args,
                   cluster=cluster)

    def run_programmatic(self, kernel, loaded, grid, block, shared_bytes, stream, args,
                         cluster=None):
        """cuLaunchKernelEx with PROGRAMMATIC_STREAM_SERIALIZATION (compute capability 9.0)."""
        from .kernels import require_programmatic, run_launch
        require_programmatic(self, kernel)
        run_launch(self, kernel, loaded, grid, block, shared_bytes, stream, args,
                   cluster=cluster, programmatic=True)

    def max_active_clusters(self, loaded, grid, block, cluster, shared_bytes):
        from .kernels import max_active_clusters
        return max_active_clusters(self, loaded, grid, block, cluster, shared_bytes)

    def run_cooperative(self, kernel, loaded, grid, block, shared_bytes, stream, args):
        """cuLaunchCooperativeKernel, after checking that the grid can be co-resident."""
        from .kernels import run_launch
        from simt.errors import InvalidConfiguration
        self.make_current()
        threads = block[0] * block[1] * block[2]
        if shared_bytes:
            loaded.function.ensure_dynamic_shared(shared_bytes)
        per_sm = call(api().cuOccupancyMaxActiveBlocksPerMultiprocessor,
                      loaded.function.handle, threads, shared_bytes)
        limit = per_sm * self.properties().multiprocessor_count
        blocks = grid[0] * grid[1] * grid[2]
        if blocks > limit:
            raise InvalidConfiguration(
                f"cooperative launch of '{kernel.__name__}': {blocks} blocks of {threads} "
                f"threads cannot all be resident on cuda:{self.index} (at most {limit}: "
                f"{per_sm} per multiprocessor); CUDA fails this launch with "
                "cudaErrorCooperativeLaunchTooLarge. Launch fewer blocks and loop over the "
                "data (a grid-stride loop); size the grid with "
                f"{kernel.__name__}.max_active_blocks_per_multiprocessor(block, shared_bytes, "
                "args=args), which answers for the compile this launch runs")
        run_launch(self, kernel, loaded, grid, block, shared_bytes, stream, args,
                   cooperative=True)

    def set_flags(self, flags):
        """cuDevicePrimaryCtxSetFlags on this device's primary context. 'map_host' sets no
        driver flag: with unified addressing mapped host memory is always on (the CUDA
        runtime's cudaDeviceMapHost is accepted and changes nothing), and the driver refuses
        CU_CTX_MAP_HOST for a primary context (CUDA_ERROR_INVALID_VALUE, H100, CUDA 13)."""
        d = api()
        names = {"schedule_auto": "CU_CTX_SCHED_AUTO", "schedule_spin": "CU_CTX_SCHED_SPIN",
                 "schedule_yield": "CU_CTX_SCHED_YIELD",
                 "schedule_blocking_sync": "CU_CTX_SCHED_BLOCKING_SYNC"}
        value = 0
        for flag in flags:
            if flag != "map_host":
                value |= int(getattr(d.CUctx_flags, names[flag]))
        call(d.cuDevicePrimaryCtxSetFlags, self.device, value)

    def occupancy(self, loaded, threads, shared_bytes):
        self.make_current()
        if shared_bytes:
            loaded.function.ensure_dynamic_shared(shared_bytes)
        return int(call(api().cuOccupancyMaxActiveBlocksPerMultiprocessor,
                        loaded.function.handle, threads, shared_bytes))

    def potential_block_size(self, loaded, shared_bytes, max_threads=0):
        self.make_current()
        if shared_bytes:
            loaded.function.ensure_dynamic_shared(shared_bytes)
        min_grid, block = call(api().cuOccupancyMaxPotentialBlockSize, loaded.function.handle,
                               None, shared_bytes, max_threads)
        return int(min_grid), int(block)

    def run_launch(self, kernel, loaded, grid, block, shared_bytes, stream, args):
        from .kernels import run_launch
        run_launch(self, kernel, loaded, grid, block, shared_bytes, stream, args)

    @classmethod
    def compile_for(cls, fn, options, arch, link=True):
        """PTX for ``arch`` needs no GPU: LLVM's NVPTX back end makes it anywhere (and
        nvJitLink links device code, unless ``link`` is False: PTX to read only)."""
        _refuse_packed_records(fn)
        from .archspecific import target_for
        from .compile import compile_kernel
        from ...compiler.localmem import check_local_memory
        check_local_memory(fn)
        return compile_kernel(fn, options, target_for(fn, arch), link=link)

    def sass(self, binary):
        from .compile import sass
        return sass(binary)

    def native_launch(self, kernel, loaded, types, grid, block, shared_bytes, stream,
                      classes=None):
        from .kernels import native_launch
        return native_launch(self, kernel, loaded, types, grid, block, shared_bytes, stream,
                             classes)

    def wrap_stream(self, handle):
        """Another library's CUstream (an address) as a stream object of this device."""
        from .streams import ForeignStream
        self.make_current()
        if not handle:
            return self.default_stream()
        return ForeignStream(handle, errors=self.callback_errors)

    def create_event(self, timing=True):
        """A new streams.Event on this device."""
        from .streams import Event
        self.make_current()
        return Event(timing=timing)

    # ------------------------------------------------------------ textures (see textures.py)
    def texture_array(self, array):
        from .textures import GpuArray
        return GpuArray(self, array)

    def mipmapped_array(self, mipmap):
        from .textures import GpuMipmap
        return GpuMipmap(self, mipmap)

    def texture_object(self, texture):
        from .textures import TextureObject
        return TextureObject(self, texture)

    def surface_object(self, surface):
        from .textures import SurfaceObject
        return SurfaceObject(self, surface)

    def tensor_map(self, tmap):
        from .tensormaps import encode
        self.make_current()
        return encode(tmap)

    # ------------------------------------------------------------ modules made elsewhere
    def load_module(self, image):
        from .module import Module
        return Module(image, backend=self)

    def compile_cuda_c(self, source, name, options, name_expressions):
        from .nvrtc import compile_source
        return compile_source(source, name, options, name_expressions, self.arch())

    def launch_raw(self, function, grid, block, shared_bytes, stream, kinds, values):
        from .rawkernels import launch_raw
        launch_raw(self, function, grid, block, shared_bytes, stream, kinds, values)

    # ------------------------------------------------------------ several GPUs, IPC
    def can_access_peer(self, other):
        from .peer import can_access_peer
        return can_access_peer(self, other)

    def enable_peer_access(self, other):
        from .peer import enable_peer_access
        enable_peer_access(self, other)

    def copy_peer(self, dst_ptr, dst_backend, src_ptr, nbytes, stream=None):
        from .peer import copy_peer
        copy_peer(self, dst_ptr, dst_backend, src_ptr, nbytes, _handle(stream))

    def ipc_handle(self, ptr):
        from .ipc import mem_handle
        return mem_handle(self, ptr)

    def open_ipc_handle(self, handle, nbytes):
        from .ipc import open_mem_handle
        return open_mem_handle(self, handle, nbytes)

    def create_ipc_event(self):
        from .ipc import create_event
        return create_event(self)

    def open_ipc_event(self, handle):
        from .ipc import open_event
        return open_event(self, handle)

    # ------------------------------------------------------------ graphics interop
    def register_gl_buffer(self, buffer_id, flags):
        from .graphics import RegisteredBuffer
        return RegisteredBuffer(self, buffer_id, flags)

    # ------------------------------------------------------------ unified memory, VMM
    def prefetch(self, ptr, nbytes, target, stream=None):
        from .managed import prefetch
        prefetch(self, ptr, nbytes, target, _handle(stream))

    def advise(self, ptr, nbytes, advice, target, unset=False):
        from .managed import advise
        advise(self, ptr, nbytes, advice, target, unset)

    def attach_mem(self, stream, ptr, nbytes, flags):
        from .managed import attach_mem
        attach_mem(self, _handle(stream), ptr, nbytes, flags)

    def pointer_attributes(self, ptr):
        from .managed import pointer_attributes
        return pointer_attributes(self, ptr)

    def symbol_storage(self, symbol):
        from .kernels import symbol_storage
        return symbol_storage(self, symbol)

    def virtual_memory(self, reserve_bytes):
        from .vmm import VirtualRange
        return VirtualRange(self, reserve_bytes)


def _refuse_packed_records(fn):
    """Packed record dtypes (fields off their C alignment) gave wrong values and misaligned
    accesses on the H100 (2026-11-23): refused on GPUs until that is fixed."""
    from simt.ir import types as T
    from simt.ir.records import natural_alignment
    for name, t in fn.params:               # arrays of them (a record scalar is a value)
        element = getattr(t, "element", None) if isinstance(t, T.Array) else None
        if isinstance(element, T.Record) and natural_alignment(element.dtype) is None:
            raise NotSupportedError(
                f"kernel '{fn.name}', parameter '{name}': the packed record dtype "
                f"{element.dtype} (fields off their C alignment) is not supported on GPUs "
                "yet; make it with align=True (np.dtype([...], align=True)), or run on the "
                "'cpu' device")
