"""Kernels and device functions as users declare them, and how a kernel gets compiled:
per argument types, device and options, in memory and on disk (cache.py), through
the stages of compiler/pipeline.py, whose outputs the ``inspect_*`` methods read."""
from typing import (Any, Callable, Dict, Generic, NoReturn, Optional, ParamSpec, Protocol,
                    Sequence, SupportsIndex, Tuple, TypeVar, Union, overload)
import inspect
import math
import os
import threading
import time

import numpy as np

from ..compiler import options as compile_options
from ..config import config
from ..errors import CompileError, InvalidConfiguration, NotSupportedError
from ..ir import types as T
from ..lazy import lazy_module
from ..logs import log
from .backend import deep_recursion
from .devices import backend_class, get_device
from . import control, nvtx, peer
from .launch import (Launch, access, arg_types, by_value, check_cluster, check_config,
                     check_dimensions, dim3_tuple, exact_guard, launch_cluster, shared_size)
from .function_args import runtime_args

pipeline = lazy_module("simt.compiler.pipeline")     # loaded at the first compile
cache = lazy_module("simt.runtime.cache")
family = lazy_module("simt.compiler.family")         # kernels launched from kernels
inline = lazy_module("simt.ir.inline")               # which kernels hold barriers


class _Compiling:
    """The lock compiles take turns on, process-wide: Kernel.typed_ir's front end and
    Kernel._compile's back-end stages hold it. Compiles share state that is not made for
    threads: the cached typed IR of a kernel and of the device functions kernels share
    (two threads' first launches of one kernel compiled the same IR at once), the front
    end's caches, module-level llvmlite types and constants. tools/stress.py's warm-up,
    first launches in three threads at once, once raised an internal KeyError from
    llvmlite's IR objects (issue 33 item 23). Compiling is Python under the GIL, so the
    turns cost nothing measurable (24 compiles, one thread: 97.4 ms each with it, 98.0
    without, best of 5); launches of compiled kernels never take it. Reentrant: a compile
    may start another. A child forked while a thread compiled gets a fresh one."""

    def __init__(self):
        self.lock = threading.RLock()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._renew)

    def _renew(self):
        self.lock = threading.RLock()


_compiling = _Compiling()

SHAPES = 4      # block shapes a kernel with barriers is made for, per signature, on the CPU

# For type checkers: a decorated function keeps its parameters (P) and, for a device
# function, its result (R), so ``kernel[grid, block](...)`` and calls of device functions
# are checked against the function's own signature.
P = ParamSpec("P")
R = TypeVar("R")
# kernel[grid, block], [grid, block, shared_bytes], [..., stream], [..., stream, cluster]:
# a dimension is an int, a tuple of 1 to 3 ints or a simt.dim3 (launch.dim3_tuple); a
# stream a simt.Stream, another library's stream or None
Dims = Union[SupportsIndex, Sequence[SupportsIndex]]
Bytes = Optional[SupportsIndex]
# inspect_*: one signature's text, or {argument types: text} for several
Inspected = Union[str, Dict[Any, str]]
LaunchConfiguration = Union[Tuple[Dims, Dims], Tuple[Dims, Dims, Bytes],
                            Tuple[Dims, Dims, Bytes, Any],
                            Tuple[Dims, Dims, Bytes, Any, Optional[Dims]]]


INLINE = ("always", "never")      # @simt.device(inline=...): __forceinline__, __noinline__


class DeviceFunction(Generic[P, R]):
    """A ``@simt.device`` function: callable from kernels and device functions.
    ``inline``: 'always' (CUDA's ``__forceinline__``), 'never' (``__noinline__``) or None
    (the default: inlined, as nvcc inlines small device functions); docs/kernel-options.md."""

    _simt_device = True
    # a value known at compile time: passed to a device function (or held in a tuple), it
    # specialises the callee for it, as a C++ template parameter would (compiler/group_args.py)
    compile_time = True

    def signature(self) -> Any:
        """What a device function specialised for this function value depends on."""
        return ("device function", id(self))

    def __init__(self, pyfunc: Callable[P, R], inline: Optional[str] = None):
        check_function(pyfunc, "@simt.device")
        if inline is not None and (not isinstance(inline, str) or inline not in INLINE):
            raise ValueError(f"@simt.device '{pyfunc.__name__}': inline is 'always' or "
                             f"'never' (or leave it out); got {inline!r}")
        self.inline = inline
        self.pyfunc = pyfunc
        self.ir_cache = {}
        self.__name__ = pyfunc.__name__
        self.__doc__ = pyfunc.__doc__

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:   # R: what kernels get
        """A call from host Python (``__host__ __device__``): the function compiled for
        the CPU device and run there in one thread, so it computes what a kernel's call
        computes (runtime/hostcall.py); returns a NumPy scalar, or None. Arguments are
        typed as a kernel's: NumPy scalars keep their dtype, a Python int is int64 and a
        float float64; arrays are NumPy arrays or CPU-device arrays, which it may write."""
        if kwargs:
            raise TypeError(f"device function '{self.__name__}' takes positional arguments "
                            f"only, got {', '.join(kwargs)}=")
        from .hostcall import call
        return call(self, args, Kernel)


def check_function(pyfunc, what):
    """Kernels and device functions are functions written with ``def`` (simt compiles
    their source) taking plain positional parameters (a launch passes every one)."""
    if not inspect.isfunction(pyfunc):
        raise TypeError(f"{what} needs a Python function written with def; got "
                        f"{pyfunc!r} ({type(pyfunc).__name__}), which has no source to compile")
    if pyfunc.__name__ == "<lambda>":
        raise NotSupportedError(f"{what} cannot compile a lambda: write the function with "
                                "def (simt compiles a function's source)")
    code = pyfunc.__code__
    extras = [what for what, present in (
        ("*args", code.co_flags & inspect.CO_VARARGS),
        ("**kwargs", code.co_flags & inspect.CO_VARKEYWORDS),
        ("keyword-only parameters", code.co_kwonlyargcount),
        ("positional-only parameters", code.co_posonlyargcount),
        ("default values", pyfunc.__defaults__)) if present]
    if extras:
        raise CompileError(f"{what} '{pyfunc.__name__}' has {' and '.join(extras)}; kernels "
                           "and device functions take plain positional parameters and a "
                           "launch passes every one: remove them")


class DeviceDecorator(Protocol):
    """What ``simt.device(...)`` with options returns: the decorator proper."""

    def __call__(self, fn: Callable[P, R]) -> DeviceFunction[P, R]: ...


@overload
def device(fn: Callable[P, R]) -> DeviceFunction[P, R]: ...
@overload
def device(fn: Optional[str] = None, **options: Any) -> DeviceDecorator: ...


def device(fn: Any = None, **options: Any) -> Any:
    """Decorator: ``@simt.device`` marks a __device__ function;
    ``@simt.device(inline='always' | 'never')`` asks for it to be inlined into its callers
    always (``__forceinline__``) or never (``__noinline__``: a call on GPUs and the CPU)."""
    unknown = sorted(set(options) - {"inline"})
    if unknown:
        raise TypeError(f"@simt.device has no option {', '.join(unknown)}; its options: inline")
    if fn is None or isinstance(fn, str):
        return lambda f: DeviceFunction(f, **options)
    return DeviceFunction(fn, **options)


class Kernel(Generic[P]):
    """A ``@simt.kernel``: launched as ``kernel[grid, block, shared, stream](*args)``.

    ``options`` are CompileOptions fields (``boundscheck``, ``launch_bounds``,
    ``maxnreg``, ``lineinfo``: docs/kernel-options.md); they override the device's
    settings and defaults for this kernel."""

    _simt_kernel = True
    wraparound = False       # CUDA's index rule; cuda.jit's Dispatcher: numba's (negative wrap)

    def __init__(self, pyfunc: Callable[P, Any], signature: Any = None, cache: bool = True,
                 **options: Any):
        check_function(pyfunc, "@simt.kernel")
        if "link" in options:          # device code to link: read now, keyed by contents
            from ..lang import linking
            options["link"] = linking.read_link_files(
                options["link"], f"@simt.kernel '{pyfunc.__name__}'",
                linking.source_folder(pyfunc.__code__.co_filename))
        options = compile_options.check_names(options, f"@simt.kernel '{pyfunc.__name__}'")
        if self.wraparound:
            options["wraparound"] = True
        self.pyfunc = pyfunc
        self.__name__ = pyfunc.__name__
        self.__doc__ = pyfunc.__doc__
        self.use_disk_cache = cache
        self.options = options
        self.compiled = {}        # (device name, argument types, options key) -> loaded kernel
        self.shaped = {}          # the same and a block shape -> the kernel for it (_shaped)
        self.foreign = {}         # (argument types, arch, options key) -> CudaBinary (inspect_ptx)
        self.ir_cache = {}
        self.chosen_options = {}  # (device kind, device settings) -> CompileOptions
        self.launches = {}        # launch configuration -> its Launch (fast paths live there)
        self.eager = []           # argument types of the signatures compiled at declaration
        self.attributes = {}      # set_attribute's: name -> value, applied at every load
        control.track(self)
        for one in signatures(signature):
            types = _types(one)
            self.eager.append(types)
            self.compile(types)

    def __getitem__(self, configuration: LaunchConfiguration) -> Callable[P, None]:
        try:                   # the hot path: one dict lookup and the key's exact classes
            launch = self.launches[configuration]
        except (KeyError, TypeError):      # (outside the handler: a user's bad configuration
            launch = None                  # raises its own error, not one chained to this)
        if launch is None:
            call = self._launch_function(configuration)
        else:                  # 32.0 finds the Launch of 32: check_dimensions refuses it
            call = launch.call if launch.exact(configuration) else \
                self._inexact_hit(launch, configuration)
        return nvtx.launch(self.__name__, configuration, call) if config.nvtx else call

    def _launch_function(self, config):
        try:
            launch = self.launches[config]
        except KeyError:
            launch = None
            if type(config) is tuple and len(config) == 4:
                table = getattr(config[3], "launches", None)      # a Stream's own table
                launch = table.get((self, config[:3])) if table is not None else None
        except TypeError:                 # an unhashable part (a list): no reuse
            return self._new_launch(config)
        if launch is None:
            return self._new_launch(config)
        return launch.call if launch.exact(config) else self._inexact_hit(launch, config)

    @staticmethod
    def _inexact_hit(launch, config):
        """A cached Launch found by a configuration whose classes differ from its key's
        (np.int64(2) for 2, or 2.0): the first launch's checks, then that Launch."""
        check_dimensions(config)
        return launch.call

    def _new_launch(self, config):
        """A Launch for a configuration met for the first time, kept for reuse where the
        configuration compares by value: in ``launches``, or, for a configuration with a
        stream, in that stream's table, so that a stream dropped by the user goes (with
        its CUDA stream or CPU thread) however many kernels it ran."""
        if not isinstance(config, tuple) or not 2 <= len(config) <= 5:
            raise InvalidConfiguration(f"launch '{self.__name__}' as kernel[grid, block], "
                                       "kernel[grid, block, shared_bytes], "
                                       "kernel[grid, block, shared_bytes, stream] or "
                                       "kernel[grid, block, shared_bytes, stream, cluster]")
        launch = Launch(self, *config)
        if by_value(config):
            launch.exact = exact_guard(config)
            table, key = self.launches, config
            if len(config) == 4 and hasattr(config[3], "launches"):
                table, key = config[3].launches, (self, config[:3])
            if len(table) >= 64:
                table.clear()
            try:
                table[key] = launch
            except TypeError:             # an unhashable stream: no reuse
                pass
        return launch.call

    def __call__(self, *args: Any) -> NoReturn:
        raise InvalidConfiguration(f"kernel '{self.__name__}' needs a launch configuration: "
                                   f"{self.__name__}[blocks, threads](...)")

    def launch_cooperative(self, grid: Dims, block: Dims, args: Sequence[Any],
                           shared_bytes: Bytes = 0, stream: Any = None) -> None:
        """cudaLaunchCooperativeKernel: every block resident at once, so that
        ``cg.this_grid().sync()`` works; a grid too large for that raises
        InvalidConfiguration (CUDA's cudaErrorCooperativeLaunchTooLarge)."""
        device = get_device()
        args = tuple(args)
        loaded, grid, block, shared_bytes = self.checked_launch(device, grid, block,
                                                                shared_bytes, args)
        device.backend.run_cooperative(self, loaded, grid, block, shared_bytes, stream,
                                       runtime_args(args))

    def checked_launch(self, device, grid, block, shared_bytes, args):
        """(loaded kernel, grid, block, shared bytes) of a launch on ``device``, with the
        checks ``kernel[...]`` makes (cooperative launches, graph kernel nodes)."""
        grid, block = dim3_tuple(grid, "grid"), dim3_tuple(block, "block")
        shared_bytes = shared_size(shared_bytes)
        if self.cluster_dims(device) is not None:
            raise NotSupportedError(
                f"kernel '{self.__name__}' has cluster_dims: cooperative launches and graph "
                f"kernel nodes of kernels in clusters are not offered yet; launch it with "
                f"{self.__name__}[grid, block](...)")
        peer.check_args(args, device, self.__name__)
        types = arg_types(self, args)
        loaded = self.binary_for(types, device, block)
        access.check_writes(self, types, runtime_args(args))
        check_config(self.__name__, device, grid, block, shared_bytes,
                     loaded.binary.shared_static_bytes, self.launch_bounds(device))
        if self.attributes:
            control.check_dynamic_shared(self.__name__, self.attributes, shared_bytes)
        return loaded, grid, block, shared_bytes

    def set_attribute(self, name: str, value: int) -> None:
        """cudaFuncSetAttribute: 'max_dynamic_shared_size' (bytes of dynamic shared memory a
        launch may ask; simt opts in by itself where none was set) or
        'preferred_shared_carveout' (percent of L1/shared memory made shared, -1: default).
        Applies to this kernel's compiles on every device, now and later; the cpu and sim
        devices record the carveout and enforce max_dynamic_shared_size (docs/device-control.md)."""
        device = get_device()
        value = control.check_kernel_attribute(self.__name__, name, value, device)
        self.attributes[name] = value
        for key, loaded in (*self.compiled.items(), *self.shaped.items()):
            if key[0] == device.name:
                device.backend.set_function_attribute(loaded, name, value)

    def _attributed(self, loaded, device):
        """A kernel just loaded on ``device``, with set_attribute's attributes applied."""
        for name, value in self.attributes.items():
            device.backend.set_function_attribute(loaded, name, value)
        return loaded

    def forget_device(self, name):
        """Drop what was loaded on device ``name`` (simt.reset_device): the next launch
        there loads the kernel again."""
        for table in (self.compiled, self.shaped):
            for key in [k for k in table if k[0] == name]:
                del table[key]
        self.launches.clear()

    # ------------------------------------------------------------ occupancy
    def max_active_blocks_per_multiprocessor(self, block: Dims, shared_bytes: Bytes = 0,
                                             signature: Any = None, args: Any = None) -> int:
        """How many blocks of ``block`` threads (and ``shared_bytes`` of dynamic shared
        memory each) can be resident on one multiprocessor of the current device
        (cudaOccupancyMaxActiveBlocksPerMultiprocessor); 0 when such a block cannot run.
        The answer is for the compile a launch with ``block`` runs: that of ``args`` (the
        launch's arguments, typed as the launch types them), or of ``signature`` (those
        types exactly: ``float32[:]`` is any layout, what a strided view launches with;
        whole device arrays launch as ``float32[::1]``), or else of the one compile made
        so far on this device. The launch then reuses that compile."""
        threads = math.prod(dim3_tuple(block, "block"))
        loaded, device = self._loaded_for(signature, args,
                                          "max_active_blocks_per_multiprocessor", block)
        bounds = self.launch_bounds(device)
        if bounds is not None and threads > bounds[0]:
            return 0                       # over launch_bounds: such a block cannot run
        return device.backend.occupancy(loaded, threads, shared_size(shared_bytes))

    def max_active_clusters(self, grid: Dims, block: Dims, cluster: Optional[Dims] = None,
                            shared_bytes: Bytes = 0, signature: Any = None,
                            args: Any = None) -> int:
        """How many clusters of ``cluster`` blocks (x, y, z; None: the kernel's cluster_dims)
        of this launch configuration can be resident on the current device at once
        (cudaOccupancyMaxActiveClusters); 0 when such a cluster cannot run. The CPU device
        runs one cluster at a time: 1, or 0. ``args`` or ``signature``: as in
        max_active_blocks_per_multiprocessor."""
        loaded, device = self._loaded_for(signature, args, "max_active_clusters")
        grid, block = dim3_tuple(grid, "grid"), dim3_tuple(block, "block")
        cluster = None if cluster is None else dim3_tuple(cluster, "cluster")
        cluster = launch_cluster(f"{self.__name__}.max_active_clusters", cluster,
                                 self.cluster_dims(device))
        if cluster is None:
            raise InvalidConfiguration(f"{self.__name__}.max_active_clusters: name the cluster "
                                       "shape, e.g. cluster=(2, 1, 1) (the kernel has no "
                                       "cluster_dims)")
        check_cluster(self.__name__, grid, cluster)
        bounds = self.launch_bounds(device)
        if bounds is not None and math.prod(block) > bounds[0]:
            return 0                       # over launch_bounds: such a block cannot run
        return device.backend.max_active_clusters(loaded, grid, block, cluster,
                                                  shared_size(shared_bytes))

    def max_potential_block_size(self, shared_bytes: Bytes = 0, signature: Any = None,
                                 args: Any = None) -> "tuple[int, int]":
        """(min_grid, block): the block size that gives the most resident threads per
        multiprocessor, the largest one if several do, and the fewest blocks that fill
        the whole device at that size (cudaOccupancyMaxPotentialBlockSize). ``args`` or
        ``signature``: the compile to ask about, as max_active_blocks_per_multiprocessor."""
        loaded, device = self._loaded_for(signature, args, "max_potential_block_size")
        bounds = self.launch_bounds(device)
        return device.backend.potential_block_size(loaded, shared_size(shared_bytes),
                                                   bounds[0] if bounds else 0)

    def _loaded_for(self, signature, args, what, block=None):
        """(loaded kernel, device) that a launch with ``block`` threads and these argument
        types (``args``' or ``signature``'s) runs, through the launch's own path (on the
        CPU, the compile made for that block shape), or the one compile on this device."""
        device = get_device()
        if signature is not None and args is not None:
            raise ValueError(f"{self.__name__}.{what}: pass signature= or args=, not both")
        if args is not None or signature is not None:
            types = arg_types(self, tuple(args)) if args is not None else _types(signature)
            shape = dim3_tuple(block, "block") if block is not None else None
            return self.binary_for(types, device, shape), device
        seen = self._compiled_types(device)
        if len(seen) != 1:
            raise ValueError(f"{self.__name__}.{what}: the kernel has {len(seen)} compiles on "
                             f"{device.name}; pass signature=, e.g. "
                             "\"void(float32[::1], int32)\", or args= (the launch's "
                             "arguments)")
        key = (device.name, seen[0], self.options_for(device.kind, device.options).key())
        loaded = self.compiled.get(key) or next(
            made for k, made in self.shaped.items() if k[:3] == key)   # same resources
        return loaded, device

    def _compiled_types(self, device):
        """The argument types this kernel was compiled for on ``device`` with its current
        settings, in order (a signature made for block shapes counts once)."""
        options = self.options_for(device.kind, device.options).key()
        seen = {key[1]: None for key in (*self.compiled, *self.shaped)
                if key[0] == device.name and key[2] == options}
        return list(seen)

    # ------------------------------------------------------------ compiling
    def typed_ir(self, arg_types, warp=T.WARP32):
        """The typed IR for these argument types and a device's warp facts (the
        32-wide ones where no device is at hand: inspecting, access checks)."""
        types = tuple(arg_types)
        key = (types, warp)
        fn = self.ir_cache.get(key)
        if fn is None:
            with _compiling.lock:
                fn = self.ir_cache.get(key)      # another thread's, made while this waited
                if fn is None:
                    fn = self.ir_cache[key] = self._build_typed_ir(types, warp)
        return fn

    def _build_typed_ir(self, types, warp):
        with deep_recursion():
            fn = pipeline.typed_ir(self.pyfunc, types, warp, self.wraparound,
                                   contract=self.options.get("fmad") is not False)
        if fn.launches or any(family.launch_nodes(fn)):
            family.check_options(fn, self.options, self.__name__)
        return fn

    def options_for(self, kind, device_options=None):
        """The CompileOptions of a compile for a device of ``kind`` (worked out once per
        kind and device settings: binary_for asks at every call)."""
        key = (kind, tuple(sorted((device_options or {}).items())))
        options = self.chosen_options.get(key)
        if options is None:
            options = self.chosen_options[key] = compile_options.choose(
                backend_class(kind).compile_options, device_options or {}, self.options)
        return options

    def launch_bounds(self, device):
        """(max_threads, min_blocks) of this kernel on ``device``, or None."""
        return self.options_for(device.kind, device.options).launch_bounds

    def cluster_dims(self, device):
        """The cluster shape (x, y, z) this kernel's code fixes on ``device``, or None."""
        return self.options_for(device.kind, device.options).cluster_dims

    def binary_for(self, arg_types, device, block=None):
        """The loaded kernel for these argument types on this device (compiled once; a
        launch an eager signature accepts runs that signature's compile). ``block``: the
        launch's block shape, where the device makes kernels with barriers per shape
        (``block_shaped``: the CPU's thread loops then have constant extents)."""
        options = self.options_for(device.kind, device.options)
        if block is not None and device.backend.block_shaped and not options.checks and \
                not self.eager:             # a declared signature is compiled once, ahead
            return self._shaped(tuple(arg_types), device, options, tuple(block))
        key = (device.name, tuple(arg_types), options.key())
        loaded = self.compiled.get(key)
        if loaded is None:
            served = self.served(arg_types)
            if served != tuple(arg_types):
                loaded = self.compiled[key] = self.binary_for(served, device)
            else:
                loaded = self.compiled[key] = self._load(arg_types, device, options)
        return loaded

    def _shaped(self, arg_types, device, options, block):
        """binary_for of a launch with this block shape (a kernel without declared
        signatures), kept in ``shaped`` under (device, types, options, shape): a launch
        that takes the full path finds it with one lookup."""
        key = (device.name, arg_types, options.key(), block)
        loaded = self.shaped.get(key)
        if loaded is None:
            loaded = self.shaped[key] = self._made_for(arg_types, device, options, block)
        return loaded

    def _made_for(self, arg_types, device, options, block):
        """The kernel made for this shape if it has barriers, else the one for any shape
        (and for every shape after SHAPES of them, as a kernel tried over many block sizes
        would compile at each). Which one, without compiling twice or, in a process with a
        warm disk cache, loading the compiler: the cache's entry made for the shape; else
        the kernel for any shape (loaded, or in the cache) if it has no barriers; else the
        typed IR says."""
        any_key = (device.name, arg_types, options.key())
        made = sum(1 for k, loaded in self.shaped.items()
                   if k[:3] == any_key and loaded.binary.block is not None)
        if made >= SHAPES:
            return self.binary_for(arg_types, device)
        shaped = options.replace(block=block)
        found = self.compiled.get(any_key)
        if found is None:
            found, _ = self._cached(arg_types, device, shaped)
        if found is None:
            found, _ = self._cached(arg_types, device, options,
                                    lambda binary: not getattr(binary, "barriers", False))
            if found is not None:
                self.compiled[any_key] = found
        if found is None:
            with deep_recursion():          # it walks the chain of device functions
                barriers = inline.holds_barriers(
                    self.typed_ir(arg_types, device.backend.warp_for(options)))
            if not barriers:
                found = self.binary_for(arg_types, device)
        if found is None or found.binary.block != block and found.binary.barriers:
            found = self._load(arg_types, device, shaped)
        return found

    def served(self, arg_types):
        """The eager signature that serves a launch with these argument types: the same
        types, else the first declared that accepts them (docs/coming-from-numba.md),
        else the types themselves (a new compile)."""
        arg_types = tuple(arg_types)
        if not self.eager or arg_types in self.eager:
            return arg_types
        return next((e for e in self.eager if accepts(e, arg_types)), arg_types)

    def _load(self, arg_types, device, options):
        with deep_recursion():
            return self._load_deep(arg_types, device, options)

    def _cached(self, arg_types, device, options, usable=None):
        """(the loaded kernel from the disk cache or None, its cache key or None where
        the disk cache is off). ``usable(binary)``: an entry it refuses is not loaded.
        A miss is not logged here: a launch may look for several entries (for its block
        shape, for any shape) before it compiles; _load_deep logs the one miss."""
        if not (self.use_disk_cache and config.cache) or \
                any(isinstance(t, T.FunctionArg) for t in arg_types):
            # a device function passed to the kernel is compiled into it, and its source
            # and what it reads are no part of the cache's keys: kept in memory only
            return None, None
        started = time.perf_counter()
        lookup = cache.lookup_key(self.pyfunc, arg_types, options, device.backend.target_id())
        found = cache.load(self.__name__, self.pyfunc, lookup)
        if found is None or usable is not None and not usable(found[0]):
            return None, lookup
        loaded = self._attributed(device.backend.load_binary(found[0]), device)
        log.debug("%s: loaded from the disk cache in %.1f ms", self.__name__,
                  (time.perf_counter() - started) * 1e3)
        return loaded, lookup

    def _load_deep(self, arg_types, device, options):
        backend = device.backend
        found, lookup = self._cached(arg_types, device, options)
        if found is not None:
            return found
        if lookup is not None:
            log.debug("%s: not in the disk cache for %s", self.__name__, _describe(arg_types))
        binary, deps = self._compile(arg_types, options, backend.compile,
                                     backend.warp_for(options))
        log.info("%s: compiled for %s on %s in %.1f ms", self.__name__, _describe(arg_types),
                 device.name, binary.compile_seconds * 1e3)
        if lookup is not None:
            cache.store(self.__name__, lookup, deps, binary)
        return self._attributed(backend.load_binary(binary), device)

    def _compile(self, arg_types, options, compile_fn, warp):
        """(binary, dependencies): the typed IR stage for the device's warp facts, then
        the back end's stages (``compile_fn(typed_ir, options)``); the binary keeps every
        stage."""
        with _compiling.lock, deep_recursion():
            fn = self.typed_ir(arg_types, warp)
            if config.dump:
                pipeline.dump(self.__name__, "typed_ir", fn)
            binary = compile_fn(fn, options)
        binary.stages = {"typed_ir": fn, **binary.stages}
        return binary, cache.dependencies(fn)

    def compile(self, signature, device=None):
        """Compile eagerly for a signature string ("void(float32[:], int32)") or types."""
        return self.binary_for(_types(signature), device or get_device())

    def llvm_ir(self, signature: Any) -> str:
        """The LLVM IR simt generated for a signature (kept from its compile)."""
        return _llvm_ir(self.compile(signature).binary)

    def ptx(self, signature: Any, arch: Optional[str] = None) -> str:
        """The PTX for a signature: the current GPU's, or, on another device, made for
        ``arch`` (default sm_90) by the CUDA back end, which needs no GPU."""
        return self._ptx_binary(_types(signature), arch).stages["ptx"]

    def resources(self, signature):
        """Registers, shared and local memory per thread of the compiled kernel."""
        return get_device().backend.resources(self.compile(signature))

    # ------------------------------------------------------------ inspecting the stages
    def configure(self, grid: Dims, block: Dims, shared_bytes: Bytes = 0, stream: Any = None,
                  cluster: Optional[Dims] = None, programmatic: bool = False) -> Callable[P, None]:
        """The launch function of a configuration, by name: the same as
        ``kernel[grid, block, shared_bytes, stream, cluster]`` (``cluster=(x, y, z)``: thread
        block clusters, compute capability 9.0 and the CPU device). ``programmatic=True``:
        programmatic dependent launch (cudaLaunchAttributeProgrammaticStreamSerialization):
        on a GPU of compute capability 9.0 the kernel may start before the kernel before it
        in ``stream`` ends, once that one's blocks have called
        ``simt.griddepcontrol.launch_dependents()`` or exited; its threads call
        ``simt.griddepcontrol.wait()`` before reading what that kernel wrote. The CPU and
        sim devices run it in stream order (docs/hopper.md)."""
        if not isinstance(programmatic, (bool, np.bool_)):
            raise TypeError(f"{self.__name__}.configure: programmatic is True or False; got "
                            f"{programmatic!r}")
        if programmatic:
            return Launch(self, grid, block, shared_bytes, stream, cluster, programmatic=True)
        if cluster is None:
            return self[grid, block, shared_bytes, stream]
        return self[grid, block, shared_bytes, stream, cluster]

    def inspect_types(self, sig: Any = None) -> Inspected:
        """The typed IR as text. With ``sig=None``, of every signature compiled so far
        on the current device: one gives its text, several a dict {argument types: text}."""
        return self._each(sig, lambda types: pipeline.format_typed(self.typed_ir(types)))

    def inspect_llvm(self, sig: Any = None) -> Inspected:
        """The LLVM IR simt generated (before optimization); ``sig`` as inspect_types."""
        return self._each(sig, lambda types: _llvm_ir(self.compile(types).binary))

    def inspect_ptx(self, sig: Any = None, arch: Optional[str] = None) -> Inspected:
        """The PTX; on a device other than a GPU of ``arch``, made for ``arch`` (default
        the kernel's arch= option, else sm_90) without a GPU. ``sig`` as inspect_types."""
        return self._each(sig, lambda types: self._ptx_binary(types, arch).stages["ptx"])

    def inspect_sass(self, sig: Any = None) -> Inspected:
        """The GPU's machine code (SASS), through CUDA's ptxas and nvdisasm or cuobjdump;
        NotSupportedError on devices other than GPUs."""
        backend = get_device().backend
        return self._each(sig, lambda types: backend.sass(self.compile(types).binary))

    def _ptx_binary(self, types, arch):
        device = get_device()
        if device.kind == "cuda":
            try:
                binary = self.compile(types, device).binary
            except NotSupportedError:            # made but refused at load (recursion)
                arch = arch or device.backend.arch()
            else:
                if arch in (None, binary.arch):
                    return binary
        options = self.options_for("cuda")
        arch = arch or options.arch or "sm_90"
        key = (tuple(types), arch, options.key())
        binary = self.foreign.get(key)
        if binary is None:
            cuda = backend_class("cuda")         # no GPU needed: see its compile_for
            binary = self.foreign[key] = self._compile(
                types, options, lambda fn, opts: cuda.compile_for(fn, opts, arch, link=False),
                cuda.warp_at(arch))[0]
        return binary

    def _each(self, sig, text_of):
        with deep_recursion():
            return self._each_deep(sig, text_of)

    def _each_deep(self, sig, text_of):
        if sig is not None:
            return text_of(_types(sig))
        device = get_device()
        seen = self._compiled_types(device)
        if not seen:
            raise ValueError(f"kernel '{self.__name__}' has not been compiled on "
                             f"{device.name} yet: pass a signature, e.g. "
                             f"\"void(float32[:], int32)\"")
        if len(seen) == 1:
            return text_of(seen[0])
        return {types: text_of(types) for types in seen}


def _describe(arg_types):
    return "(" + ", ".join(str(t) for t in arg_types) + ")"


def _types(signature):
    """A signature's argument types: a string, or a sequence of types in which a
    ``@simt.device`` function stands for itself (a kernel specialised on it)."""
    if isinstance(signature, str):
        return tuple(T.parse_signature(signature))
    return tuple(T.FunctionArg(t) if isinstance(t, DeviceFunction) else t for t in signature)


def signatures(signature):
    """The signatures a declaration names: None (none), one (a string or a sequence of
    types) or a list of them."""
    if signature is None:
        return []
    if isinstance(signature, str) or (isinstance(signature, (tuple, list)) and all(
            isinstance(t, (T.Type, DeviceFunction)) for t in signature)):
        return [signature]
    return list(signature)


def accepts(declared, actual):
    """Whether an eager signature serves a launch's argument types: arrays of the same
    dtype, ndim and memory, where a declared 'A' layout (``float32[:]``) takes any
    layout; scalars NumPy casts within their kind (an int for an int32 or a float32
    parameter, never a float for an int); everything else the same type."""
    if len(declared) != len(actual):
        return False
    for d, a in zip(declared, actual):
        if isinstance(d, T.Array) and isinstance(a, T.Array):
            if (d.dtype, d.ndim, d.space) != (a.dtype, a.ndim, a.space) or \
                    d.layout not in ("A", a.layout):
                return False
        elif isinstance(d, T.Scalar) and isinstance(a, T.Scalar):
            if not np.can_cast(a.dtype, d.dtype, "same_kind"):
                return False
        elif d != a:
            return False
    return True


class KernelDecorator(Protocol):
    """What ``simt.kernel(...)`` with a signature or options returns: the decorator proper."""

    def __call__(self, fn: Callable[P, Any]) -> Kernel[P]: ...


@overload
def kernel(fn: Callable[P, Any], *, cache: bool = True, **options: Any) -> Kernel[P]: ...
@overload
def kernel(fn: Union[str, Sequence[Any], None] = None, *, cache: bool = True,
           **options: Any) -> KernelDecorator: ...


def kernel(fn: Any = None, *, cache: bool = True, **options: Any) -> Any:
    """Decorator: ``@simt.kernel`` or ``@simt.kernel("void(float32[:], ...)")``.

    Options (docs/kernel-options.md): ``launch_bounds=(max_threads, min_blocks)`` (PTX
    ``.maxntid``/``.minnctapersm``; a launch of more than max_threads threads per block
    raises InvalidConfiguration on every device; min_blocks affects GPU code only),
    ``maxnreg=N`` (PTX ``.maxnreg``: GPU code only, no effect on the CPU device),
    ``lineinfo=True`` (PTX line tables naming the Python lines: GPU code only, no effect on
    the CPU device), ``cluster_dims=(x, y, z)`` (CUDA's ``__cluster_dims__``: launches run
    in clusters of that shape, docs/clusters.md), ``boundscheck``; others raise TypeError
    listing these."""
    if fn is None:
        return lambda f: Kernel(f, cache=cache, **options)
    if isinstance(fn, (str, list, tuple)):       # one signature or a list of them
        return lambda f: Kernel(f, signature=fn, cache=cache, **options)
    return Kernel(fn, cache=cache, **options)


def _llvm_ir(binary):
    if "llvm_ir" not in binary.stages:
        raise NotSupportedError(f"the {get_device().name!r} device makes no LLVM IR (it runs "
                                f"kernels as Python): select 'cpu' or a GPU to see it; "
                                f"inspect_types and inspect_ptx work on every device")
    return binary.stages["llvm_ir"]
