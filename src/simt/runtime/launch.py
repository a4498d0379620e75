"""Kernels and device functions as users declare them, and the launch path:
``kernel[grid, block, shared_bytes, stream](*args)``."""
import logging
import time

import numpy as np

from ..ir import types as T
from . import cache
from .devices import _local, get_device
from ..config import config
from ..errors import CompileError, InvalidConfiguration, NotSupportedError
from .streams import stream_handle

log = logging.getLogger("simt")


class DeviceFunction:
    """A ``@simt.device`` function: callable from kernels and device functions."""

    _simt_device = True

    def __init__(self, pyfunc):
        self.pyfunc = pyfunc
        self.ir_cache = {}
        self.__name__ = pyfunc.__name__
        self.__doc__ = pyfunc.__doc__

    def __call__(self, *args):
        raise RuntimeError(f"device function '{self.__name__}' can only be called from kernels "
                           "(or run the kernel on the 'sim' device to step through it)")


def device(fn=None, **options):
    """Decorator: ``@simt.device`` marks a __device__ function."""
    if fn is None:
        return lambda f: DeviceFunction(f)
    if isinstance(fn, str):
        return lambda f: DeviceFunction(f)
    return DeviceFunction(fn)


def dim3_tuple(value, what):
    """(x, y, z) from an int, a tuple of 1-3 ints or a dim3."""
    if isinstance(value, (int, np.integer)):
        dims = (int(value), 1, 1)
    elif hasattr(value, "x") and hasattr(value, "y"):
        dims = (int(value.x), int(value.y), int(getattr(value, "z", 1)))
    else:
        try:
            items = tuple(int(v) for v in value)
        except TypeError:
            raise InvalidConfiguration(f"the {what} must be an int, a tuple of 1 to 3 ints or a "
                                       f"simt.dim3, got {value!r}") from None
        if not 1 <= len(items) <= 3:
            raise InvalidConfiguration(f"the {what} has {len(items)} dimensions; CUDA allows 1 to 3")
        dims = items + (1,) * (3 - len(items))
    if min(dims) < 1:
        raise InvalidConfiguration(f"the {what} {dims} has a dimension below 1; every "
                                   "dimension must be at least 1")
    return dims


class dim3:
    """CUDA's dim3: ``simt.dim3(x, y=1, z=1)``."""

    def __init__(self, x=1, y=1, z=1):
        self.x, self.y, self.z = int(x), int(y), int(z)

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self):
        return f"dim3({self.x}, {self.y}, {self.z})"


def check_config(kernel_name, device, grid, block, shared_bytes, static_shared=0):
    p = device.properties
    threads = block[0] * block[1] * block[2]
    where = f"launching '{kernel_name}' on {device.name}"
    if threads > p.max_threads_per_block:
        raise InvalidConfiguration(f"{where}: a block of {block} has {threads} threads; the "
                                   f"device allows {p.max_threads_per_block} per block. Use "
                                   "smaller blocks and more of them")
    for axis, (n, limit) in enumerate(zip(block, p.max_block_dim)):
        if n > limit:
            raise InvalidConfiguration(f"{where}: block dimension {'xyz'[axis]} is {n}, over the "
                                       f"device's limit of {limit}")
    for axis, (n, limit) in enumerate(zip(grid, p.max_grid_dim)):
        if n > limit:
            raise InvalidConfiguration(f"{where}: grid dimension {'xyz'[axis]} is {n}, over the "
                                       f"device's limit of {limit}")
    limit = getattr(p, "shared_memory_per_block_optin", 0) or p.shared_memory_per_block
    total = shared_bytes + static_shared
    if shared_bytes < 0 or total > limit:
        raise InvalidConfiguration(f"{where}: {total} bytes of shared memory per block "
                                   f"({static_shared} static + {shared_bytes} dynamic); the device "
                                   f"allows {limit}")


def arg_type(value):
    simt_type = getattr(value, "simt_type", None)
    if simt_type is not None:
        return simt_type()
    if isinstance(value, (np.ndarray,)) or hasattr(value, "__cuda_array_interface__") or \
            (hasattr(value, "ptr") and hasattr(value, "shape")):
        return T.Array(value.dtype, value.ndim, T.layout_of(value))
    return T.typeof(value)


class Kernel:
    """A ``@simt.kernel``: launched as ``kernel[grid, block, shared, stream](*args)``."""

    _simt_kernel = True

    def __init__(self, pyfunc, signature=None, cache=True, **options):
        self.pyfunc = pyfunc
        self.__name__ = pyfunc.__name__
        self.__doc__ = pyfunc.__doc__
        self.use_disk_cache = cache
        self.options = options
        self.compiled = {}
        self.ir_cache = {}
        self.launches = {}        # launch configuration -> its Launch (fast paths live there)
        if signature is not None:
            self.compile(signature)

    def __getitem__(self, config):
        try:
            return self.launches[config].call
        except (KeyError, TypeError):     # new, or an unhashable part (a list): no reuse
            launches = self.launches
            if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
                raise InvalidConfiguration(f"launch '{self.__name__}' as kernel[grid, block], "
                                           "kernel[grid, block, shared_bytes] or "
                                           "kernel[grid, block, shared_bytes, stream]")
            launch = Launch(self, *config)
            if len(launches) >= 64:
                launches.clear()
            try:
                launches[config] = launch
            except TypeError:
                pass
        return launch.call

    def __call__(self, *args):
        raise InvalidConfiguration(f"kernel '{self.__name__}' needs a launch configuration: "
                                   f"{self.__name__}[blocks, threads](...)")

    def launch_cooperative(self, grid, block, args, shared_bytes=0, stream=None):
        """cudaLaunchCooperativeKernel: every block resident at once, so that
        ``cg.this_grid().sync()`` works; a grid too large for that raises
        InvalidConfiguration (CUDA's cudaErrorCooperativeLaunchTooLarge)."""
        device = get_device()
        grid, block = dim3_tuple(grid, "grid"), dim3_tuple(block, "block")
        args = tuple(args)
        loaded = self.binary_for([arg_type(a) for a in args], device)
        check_config(self.__name__, device, grid, block, int(shared_bytes),
                     loaded.binary.shared_static_bytes)
        device.backend.run_cooperative(self, loaded, grid, block, int(shared_bytes), stream,
                                       args)

    # ------------------------------------------------------------ compiling
    def typed_ir(self, arg_types):
        key = tuple(arg_types)
        fn = self.ir_cache.get(key)
        if fn is None:
            try:
                from ..compiler.frontend import FrontEnd     # imported at first compile
                fn = FrontEnd(self.pyfunc, key, is_kernel=True).build()
            except CompileError as exc:
                if config.debug:
                    raise
                raise exc.with_traceback(None) from None     # the message says where
            self.ir_cache[key] = fn
        return fn

    def _target_options(self, device):
        options = dict(self.options)
        options.setdefault("boundscheck", device.options.get("boundscheck", False))
        return options

    def binary_for(self, arg_types, device):
        """The loaded kernel for these argument types on this device (compiled once)."""
        options = self._target_options(device)
        key = (device.name, tuple(arg_types), tuple(sorted(options.items())))
        loaded = self.compiled.get(key)
        if loaded is None:
            loaded = self._load(arg_types, device, options)
            self.compiled[key] = loaded
        return loaded

    def _load(self, arg_types, device, options):
        backend = device.backend
        target_id = backend.target_id()
        disk = None
        if self.use_disk_cache:
            disk = cache.disk_key(self.pyfunc, tuple(arg_types), options, target_id)
            started = time.perf_counter()
            binary = cache.load(self.__name__, disk)
            if binary is not None:
                kernel = backend.load_binary(binary)
                log.debug("%s: loaded from the disk cache in %.1f ms", self.__name__,
                          (time.perf_counter() - started) * 1e3)
                return kernel
        fn = self.typed_ir(arg_types)
        binary = backend.compile(fn, options)
        log.debug("%s: compiled in %.1f ms", self.__name__, binary.compile_seconds * 1e3)
        if disk is not None:
            cache.store(self.__name__, disk, binary)
        return backend.load_binary(binary)

    def compile(self, signature, device=None):
        """Compile eagerly for a signature string ("void(float32[:], int32)") or types."""
        device = device or get_device()
        types = T.parse_signature(signature) if isinstance(signature, str) else list(signature)
        return self.binary_for(types, device)

    def _binary_of(self, signature):
        device = get_device()
        types = T.parse_signature(signature) if isinstance(signature, str) else list(signature)
        options = self._target_options(device)
        return device.backend.compile(self.typed_ir(types), dict(options, keep_ir=True))

    def llvm_ir(self, signature):
        """The LLVM IR simt generated for a signature."""
        return self._binary_of(signature).llvm_ir

    def ptx(self, signature):
        """The PTX for a signature (GPU devices)."""
        binary = self._binary_of(signature)
        if not hasattr(binary, "ptx"):
            raise NotSupportedError("PTX exists only for GPU devices ('cuda:N'); "
                                    "select one with simt.set_device('cuda:0')")
        return binary.ptx

    def resources(self, signature):
        """Registers, shared and local memory per thread of the compiled kernel."""
        return get_device().backend.resources(self.compile(signature))

    def symbols_for(self, names):
        return [self._resolve(name) for name in names]

    def _resolve(self, name):
        found, value = _lookup(self.pyfunc, name)
        if found:
            return value
        for fn in self._device_functions():
            found, value = _lookup(fn, name)
            if found:
                return value
        raise NotSupportedError(f"cannot find the module-level array '{name}' used by "
                                f"kernel '{self.__name__}'")

    def _device_functions(self):
        out, todo = [], [self.pyfunc]
        while todo:
            fn = todo.pop()
            for name in fn.__code__.co_names:
                value = fn.__globals__.get(name)
                if hasattr(value, "_simt_device") and value.pyfunc not in out:
                    out.append(value.pyfunc)
                    todo.append(value.pyfunc)
        return out


def _lookup(pyfunc, name):
    if pyfunc.__closure__:
        for free, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__):
            if free == name:
                return True, cell.cell_contents
    if name in pyfunc.__globals__:
        return True, pyfunc.__globals__[name]
    return False, None


class Launch:
    """A kernel with its launch configuration, called with the arguments.

    A call with new argument types on a device goes the full way (types, compile,
    configuration checks); from the second call of a configuration on, that also asks
    the backend for a launch function generated for the signature (``LaunchSource``); ``kernel[...]`` then hands out that
    function, which checks its arguments' classes (a DeviceArray's class records its
    dtype, ndim and layout) and the current device, and falls back to this object's
    full path when they differ."""

    def __init__(self, kernel, grid, block, shared_bytes=0, stream=None):
        self.kernel = kernel
        self.grid = dim3_tuple(grid, "grid")
        self.block = dim3_tuple(block, "block")
        self.shared_bytes = int(shared_bytes or 0)
        self.stream = stream
        self.prepared = {}      # argument classes -> (device, launch function)
        self.call = self        # what kernel[...] returns: the latest prepared launch
        self.used = False       # launched before: a configuration met once is not prepared

    def __call__(self, *args):
        entry = self.prepared.get(tuple(map(type, args)))
        if entry is not None and entry[0] is getattr(_local, "device", None):
            self.call = entry[1]
            entry[1](*args)
        else:
            self._launch(get_device(), args)

    def _launch(self, device, args):
        kernel = self.kernel
        nparams = kernel.pyfunc.__code__.co_argcount
        if len(args) != nparams:
            raise TypeError(f"kernel '{kernel.__name__}' takes {nparams} arguments, got {len(args)}")
        try:
            types = [arg_type(a) for a in args]
        except TypeError as exc:
            raise TypeError(f"kernel '{kernel.__name__}': {exc}") from None
        loaded = kernel.binary_for(types, device)
        check_config(kernel.__name__, device, self.grid, self.block, self.shared_bytes,
                     loaded.binary.shared_static_bytes)
        stream = self.stream
        if stream is not None:
            stream = stream_handle(stream, device, f"launching '{kernel.__name__}'")
        backend = device.backend
        backend.run_launch(kernel, loaded, self.grid, self.block, self.shared_bytes,
                           stream, args)
        used, self.used = self.used, True
        if used and types_fixed_by_class(types, args):
            classes = tuple(map(type, args))
            fast = backend.prepare_launch(kernel, loaded, types, self.grid, self.block, self.shared_bytes,
                           stream, LaunchSource(classes, device, self.__call__))
            if fast is not None:
                if len(self.prepared) >= 16:
                    self.prepared.clear()
                self.prepared[classes] = (device, fast)
                self.call = fast


def types_fixed_by_class(types, args):
    """Whether each argument's Python type alone fixes its kernel type: scalars, and
    DeviceArrays (one class per dtype, ndim and layout). A NumPy or foreign array, a
    tuple or a texture always takes the full path."""
    for t, a in zip(types, args):
        if isinstance(t, T.Array):
            if getattr(type(a), "_sig", None) is not t:
                return False
        elif not isinstance(t, T.Scalar):
            return False
    return True


class LaunchSource:
    """Pieces of a generated launch function (backends put them together, see
    ``head``): it takes the arguments as a0, a1, ... (``params``: each with a default,
    and ``*more``), and ``mismatch`` is true unless there are as many as ``classes``,
    of exactly those classes, and ``device`` is current; then ``fallback`` hands them
    to the full path. ``scope`` holds the names these lines use. (Defaults and one
    tuple compare of the classes are the cheapest checks Python has.)"""

    def __init__(self, classes, device, slow):
        self.names = [f"a{i}" for i in range(len(classes))]
        self.params = ", ".join([f"{a}=_" for a in self.names] + ["*more"])
        checks = ["more", "rt.device is not device"]
        if self.names:
            checks.insert(1, f"{self.names[-1]} is _")
            checks.append(f"({''.join(a + '.__class__, ' for a in self.names)}) != classes")
        self.mismatch = " or ".join(checks)
        given = "".join(a + ", " for a in self.names)
        self.fallback = f"return slow(*[a for a in ({given}*more,) if a is not _])"
        self.scope = {"rt": _local, "device": device, "slow": slow, "classes": tuple(classes),
                      "_": _MISSING}

    def head(self):
        """The first lines: the signature and the fallback on a mismatch."""
        return [f"def fast({self.params}):", f"    if {self.mismatch}:",
                f"        {self.fallback}"]


_MISSING = object()      # the default of a generated launch function's parameters


def kernel(fn=None, *, cache=True, **options):
    """Decorator: ``@simt.kernel`` or ``@simt.kernel("void(float32[:], ...)")``."""
    if fn is None:
        return lambda f: Kernel(f, cache=cache, **options)
    if isinstance(fn, str):
        return lambda f: Kernel(f, signature=fn, cache=cache, **options)
    return Kernel(fn, cache=cache, **options)
