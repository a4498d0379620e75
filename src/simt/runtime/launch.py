"""The launch path: ``kernel[grid, block, shared_bytes, stream](*args)``: the launch
configuration, its checks, the arguments' types, and the handing out of launch
functions (binder.py) from a configuration's second launch on."""
import sys
import threading
import weakref

import numpy as np

from ..ir import types as T
from .devices import _local, get_device
from ..errors import InvalidConfiguration
from ..compiler import kernel_options
from .function_args import is_function_arg, runtime_args
from .streams import Stream, stream_handle
from .control import check_dynamic_shared
from ..lazy import lazy_module
from simt.runtime import peer

binder = lazy_module("simt.runtime.binder")         # loaded after a first launch
interop = lazy_module("simt.runtime.interop")       # loaded at a first foreign array
access = lazy_module("simt.runtime.access")         # loaded at a first launch


def dim3_tuple(value, what):
    """(x, y, z) from an int, a tuple (or list) of 1-3 ints or a dim3. Floats, strings
    and other non-integers are InvalidConfiguration, never truncated or iterated."""
    if isinstance(value, (tuple, list)):
        items = tuple(_dimension(v, what) for v in value)
        if not 1 <= len(items) <= 3:
            raise InvalidConfiguration(f"the {what} has {len(items)} dimensions; CUDA allows 1 to 3")
        dims = items + (1,) * (3 - len(items))
    elif hasattr(value, "x") and hasattr(value, "y") and not isinstance(value, (str, bytes)):
        dims = tuple(_dimension(v, what) for v in (value.x, value.y, getattr(value, "z", 1)))
    else:
        dims = (_dimension(value, what), 1, 1)
    if min(dims) < 1:
        raise InvalidConfiguration(f"the {what} {dims} has a dimension below 1; every "
                                   "dimension must be at least 1")
    return dims


def _dimension(value, what):
    """One launch dimension as an int: Python and NumPy integers only."""
    return _integer(value, f"the {what} must be an int, a tuple of 1 to 3 ints or a simt.dim3")


def _integer(value, rule):
    """value as an int when it is a Python or NumPy integer (not a bool), else
    InvalidConfiguration stating ``rule`` and what came instead."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InvalidConfiguration(f"{rule}; got {value!r} ({type(value).__name__})")
    return int(value)


def by_value(config):
    """Whether a launch configuration compares by value, so that kernel[...] may reuse
    its Launch: ints, tuples of ints and dim3s (immutable), any stream. An object that
    compares by identity (a user's class with .x and .y) may change between launches."""
    for part in config[:3]:
        if type(part) is tuple:
            if not all(isinstance(v, (int, np.integer)) for v in part):
                return False
        elif not isinstance(part, (int, np.integer, dim3)):
            return False
    return True


# the classes a launch dimension may have (a float, bool or complex equal to an int finds
# that int's cached Launch: 32.0 == 32 and they hash alike)
DIMENSION_TYPES = frozenset({int} | {np.dtype(code).type for code in "bBhHiIlLqQnNpP"})
_guards = {}          # (guard source, classes) -> its function


def exact_guard(config):
    """A function telling whether a configuration equal to ``config`` (a dict hit) has, at
    each place where ``config`` holds an int (grid, block, shared bytes and cluster, one
    level into tuples), the very class ``config`` has there. Written once per shape and
    classes, so a hit pays a few ``type(..) is`` tests; a hit that fails them goes to
    ``check_dimensions``."""
    places = _int_places(config)
    tests = [f"type({path}) is T{k}" for k, (path, _) in enumerate(places)]
    source = "lambda c: " + (" and ".join(tests) or "True")
    classes = tuple(cls for _, cls in places)
    guard = _guards.get((source, classes))
    if guard is None:
        names = {f"T{k}": cls for k, cls in enumerate(classes)}
        guard = _guards[(source, classes)] = eval(source, names)
    return guard


def _int_places(config):
    """(index expression such as ``c[1][0]``, class) of each int in a configuration's
    dimensions."""
    places = []
    for k, part in enumerate(config):
        if k == 3:                               # the stream
            continue
        if isinstance(part, tuple):
            places += [(f"c[{k}][{j}]", type(v)) for j, v in enumerate(part)
                       if type(v) in DIMENSION_TYPES]
        elif type(part) in DIMENSION_TYPES:
            places.append((f"c[{k}]", type(part)))
    return places


def check_dimensions(config):
    """The first launch's checks of a configuration's dimensions (InvalidConfiguration for
    a float, bool or string), for a cached hit whose classes differ from its key's."""
    dim3_tuple(config[0], "grid")
    dim3_tuple(config[1], "block")
    if len(config) > 2:
        shared_size(config[2])
    if len(config) > 4 and config[4] is not None:
        dim3_tuple(config[4], "cluster")


class dim3(tuple):
    """CUDA's dim3: ``simt.dim3(x, y=1, z=1)``. Immutable (a tuple of three ints), so a
    launch configuration holding one is the same configuration at every launch: make a
    new dim3 for a new shape."""

    __slots__ = ()

    def __new__(cls, x=1, y=1, z=1):
        return tuple.__new__(cls, (_dimension(x, "dim3"), _dimension(y, "dim3"),
                                   _dimension(z, "dim3")))

    @property
    def x(self) -> int:
        return self[0]

    @property
    def y(self) -> int:
        return self[1]

    @property
    def z(self) -> int:
        return self[2]

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot set {name} of {self!r}: a simt.dim3 is immutable; "
                             "make a new one, simt.dim3(x, y, z), for a new shape")

    def __repr__(self):
        return f"dim3({self.x}, {self.y}, {self.z})"


def shared_size(value):
    """The dynamic shared memory bytes of a launch: an int (None or 0 for none)."""
    if value is None:
        return 0
    return _integer(value, "the dynamic shared memory size must be an int number of bytes")


def check_config(kernel_name, device, grid, block, shared_bytes, static_shared=0,
                 launch_bounds=None):
    """InvalidConfiguration for a launch the device cannot run, or one above the
    kernel's ``launch_bounds`` (max_threads, min_blocks), as CUDA refuses it."""
    p = device.properties
    threads = block[0] * block[1] * block[2]
    where = f"launching '{kernel_name}' on {device.name}"
    if launch_bounds is not None and threads > launch_bounds[0]:
        raise InvalidConfiguration(f"{where}: a block of {block} has {threads} threads, over "
                                   f"the kernel's launch_bounds max_threads of "
                                   f"{launch_bounds[0]}. Launch at most {launch_bounds[0]} "
                                   "threads per block, or raise launch_bounds")
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


def arg_types(kernel, args):
    """The kernel types of a launch's arguments, checked against the kernel's parameters:
    a Python int must fit int64 (OverflowError), a dtype must be one kernels compute
    with (TypeError); both name the argument."""
    code = kernel.pyfunc.__code__
    if len(args) != code.co_argcount:
        raise TypeError(f"kernel '{kernel.__name__}' takes {code.co_argcount} arguments, "
                        f"got {len(args)}")
    types = []
    for name, value in zip(code.co_varnames, args):
        try:
            types.append(arg_type(value))
        except (TypeError, OverflowError) as exc:
            raise type(exc)(f"kernel '{kernel.__name__}', argument '{name}': {exc}") from None
    return types


_INT64 = (-2 ** 63, 2 ** 63 - 1)


def arg_type(value):
    if is_function_arg(value):               # specialised on: compiler/group_args.py
        return T.FunctionArg(value)
    if callable(value) and getattr(value, "__code__", None) is not None:
        raise TypeError(f"the Python function {getattr(value, '__name__', value)!r} cannot be "
                        "passed to a kernel: decorate it with @simt.device (the kernel is "
                        "then compiled for that function)")
    simt_type = getattr(value, "simt_type", None)
    if simt_type is not None:
        t = simt_type()
        if isinstance(t, T.Array) and isinstance(t.element, T.Record):
            _check_records(value, t)
        return t
    if isinstance(value, (np.ndarray,)) or hasattr(value, "__cuda_array_interface__") or \
            (hasattr(value, "ptr") and hasattr(value, "shape")):
        _check_dtype(value.dtype, "an array")
        if isinstance(value, np.ndarray) and isinstance(T.element_type(value.dtype), T.Vector):
            _check_aligned(value)
        t = T.Array(value.dtype, value.ndim, T.layout_of(value))
        if isinstance(t.element, T.Record):
            _check_records(value, t)
        return t
    if type(value) is int and not _INT64[0] <= value <= _INT64[1]:
        raise OverflowError(f"{value} does not fit a kernel's int64 (the type of a Python "
                            f"int argument); pass a NumPy integer of the width you mean, or "
                            "split the value")
    if isinstance(value, tuple):
        for item in value:
            if is_function_arg(item):
                raise TypeError(f"a tuple holding the device function '{item.__name__}' "
                                "cannot be passed to a kernel: pass each device function "
                                "as an argument of its own")
            arg_type(item)
    elif isinstance(value, np.generic):
        _check_dtype(value.dtype, "a scalar")
    return T.typeof(value)


def _check_aligned(array):
    """A host array of a vector type is read with vector accesses: its data must be
    aligned as CUDA aligns the type (NumPy aligns only to the components)."""
    t = T.element_type(array.dtype)
    if array.ctypes.data % t.align:
        raise TypeError(f"an array of {t.name} must start at a multiple of {t.align} bytes, "
                        f"this one is at {array.ctypes.data:#x}; copy it (np.array(a)) or "
                        "allocate it with simt.empty / simt.to_device")


def _check_dtype(dtype, what):
    if T.is_bfloat16_dtype(dtype) or T.float8_storage(dtype) is not None:
        return
    if dtype.names is not None:
        T.element_type(dtype)                # a vector type's struct, else TypeError
        return
    if dtype.kind not in "biufc":
        raise TypeError(f"{what} of dtype {dtype} cannot be passed to a kernel: kernels take "
                        "bool, integer, floating and complex values (pass a datetime64 or "
                        "timedelta64 as .view(np.int64))")


def _check_records(array, t):
    """A record array's elements must sit where C would put them: each at a multiple of
    the record's size from the first (so a stride in elements is exact) and, for an
    aligned record, on an address of its alignment."""
    align = t.element.align
    data = array.ctypes.data if isinstance(array, np.ndarray) else array.ptr
    for stride in array.strides:
        if stride % t.dtype.itemsize:
            raise TypeError(f"a record array with a stride of {stride} bytes, not a multiple "
                            f"of its {t.dtype.itemsize}-byte records, cannot be passed to a "
                            "kernel; pass a copy (np.ascontiguousarray)")
    if data % align:
        raise TypeError(f"this record array's data is at an address that is not a multiple "
                        f"of its records' {align}-byte alignment (C's for this struct); pass an "
                        "aligned copy (np.ascontiguousarray), or use a packed dtype")


MAX_CLUSTER = kernel_options.MAX_CLUSTER      # blocks in a cluster: CUDA's portable limit


def launch_cluster(what, asked, fixed):
    """The cluster shape of a launch: the one it names (``asked``), else the kernel's
    compile-time ``cluster_dims`` (``fixed``), which a launch may repeat but not change
    (``what``: the launch or query, for the message)."""
    if fixed is None:
        return asked
    if asked is not None and tuple(asked) != tuple(fixed):
        raise InvalidConfiguration(
            f"{what}: it asks for clusters {tuple(asked)} but the "
            f"kernel was declared with cluster_dims={tuple(fixed)}, which its code fixes (as "
            f"CUDA's __cluster_dims__); leave the cluster shape out (the kernel runs in "
            f"clusters {tuple(fixed)}) or change cluster_dims")
    return fixed


def check_cluster(kernel_name, grid, cluster):
    """A grid of whole clusters of at most MAX_CLUSTER blocks, as CUDA requires."""
    size = cluster[0] * cluster[1] * cluster[2]
    if any(g % c for g, c in zip(grid, cluster)):
        raise InvalidConfiguration(
            f"launch of '{kernel_name}': the grid {tuple(grid)} is not a whole number of "
            f"clusters {tuple(cluster)} in every dimension (CUDA's cudaErrorInvalidClusterSize)")
    if size > MAX_CLUSTER:
        raise InvalidConfiguration(
            f"launch of '{kernel_name}': a cluster of {size} blocks is over the portable "
            f"limit of {MAX_CLUSTER}")


class Launch:
    """A kernel with its launch configuration, called with the arguments.

    A call with new argument types on a device goes the full way (types, compile,
    configuration checks); from the second call of a configuration on, that also asks
    the backend for its native launch and has binder.py write a launch function for the
    signature; ``kernel[...]`` then hands out that
    function, which checks its arguments' classes (a DeviceArray's class records its
    dtype, ndim, layout and device) and the current device, and falls back to this object's
    full path when they differ."""

    def __init__(self, kernel, grid, block, shared_bytes=0, stream=None, cluster=None,
                 programmatic=False):
        self.kernel = kernel
        self.grid = dim3_tuple(grid, "grid")
        self.block = dim3_tuple(block, "block")
        self.cluster = None if cluster is None else dim3_tuple(cluster, "cluster")
        self.programmatic = programmatic
        self.shared_bytes = shared_size(shared_bytes)
        self.stream_ref = self.stream_parts = None
        if isinstance(stream, Stream):      # held weakly: its table holds this Launch
            self.stream_ref = weakref.ref(stream)
            self.stream_parts = (stream.device, stream.impl)
        else:
            self.stream_value = stream
        self.prepared = {}      # argument classes -> (device, launch function)
        self.call = self        # what kernel[...] returns: the latest prepared launch
        self.used = False       # launched before: a configuration met once is not prepared

    @property
    def stream(self):
        """The launch's stream; one the user dropped while keeping this launch function is
        made again around the same backend stream, which this Launch keeps alive."""
        if self.stream_ref is None:
            return self.stream_value
        return self.stream_ref() or Stream._wrap(*self.stream_parts)

    def __call__(self, *args):
        call = self.call          # a launch function checks its arguments' classes and the
        if call is not self:      # device, and hands others to dispatch
            return call(*args)
        self.dispatch(*args)

    def dispatch(self, *args):
        """A launch with the launch function bound for these arguments' classes on this
        device, else the full path."""
        entry = self.prepared.get(tuple(map(type, args)))
        if entry is not None and entry[0] is getattr(_local, "device", None):
            self.call = entry[1]
            entry[1](*args)
        else:
            self._adopting(args)

    def _retry(self, caller, *args):
        """Arguments a launch function's type checks refused: the function bound for them,
        if another than ``caller``, else the full path (which binds one)."""
        entry = self.prepared.get(tuple(map(type, args)))
        if entry is not None and entry[1] is not caller and \
                entry[0] is getattr(_local, "device", None):
            return entry[1](*args)
        return self._adopting(args)

    def _adopting(self, args):
        """Other libraries' arrays wrapped, then the function bound for the wrappers'
        classes on this device, else the full path."""
        device = get_device()
        adopted = adopt_foreign_arrays(args, device)
        if adopted is not args:
            entry = self.prepared.get(tuple(map(type, adopted)))
            if entry is not None and entry[0] is device:
                return entry[1](*adopted)
        return self._run(device, adopted)

    def _launch(self, device, args):
        self._run(device, adopt_foreign_arrays(args, device))

    def _run(self, device, args):
        """The full path, with other libraries' arrays already wrapped (a launch function
        is bound for the wrappers' classes: __call__ looks them up after wrapping)."""
        kernel = self.kernel
        peer.check_args(args, device, kernel.__name__)
        types = arg_types(kernel, args)
        loaded = kernel.binary_for(types, device, self.block)
        given, args = args, runtime_args(args)       # the back end gets the run-time ones
        access.check_writes(kernel, types, args)
        check_config(kernel.__name__, device, self.grid, self.block, self.shared_bytes,
                     loaded.binary.shared_static_bytes, kernel.launch_bounds(device))
        if getattr(kernel, "attributes", None):
            check_dynamic_shared(kernel.__name__, kernel.attributes, self.shared_bytes)
        stream = self.stream
        if stream is not None:
            stream = stream_handle(stream, device, f"launching '{kernel.__name__}'")
        backend = device.backend
        cluster = launch_cluster(f"launch of '{kernel.__name__}'", self.cluster,
                                 kernel.cluster_dims(device))
        if cluster is not None:
            check_cluster(kernel.__name__, self.grid, cluster)
        if self.programmatic:                  # docs/hopper.md: no prepared fast path
            backend.run_programmatic(kernel, loaded, self.grid, self.block, self.shared_bytes,
                                     stream, args, cluster)
            return
        if cluster is not None:                # docs/clusters.md: no prepared fast path
            backend.run_clustered(kernel, loaded, self.grid, self.block, self.shared_bytes,
                                  stream, args, cluster)
            return
        backend.run_launch(kernel, loaded, self.grid, self.block, self.shared_bytes,
                           stream, args)
        used, self.used = self.used, True
        if not used and not _binder_loading:
            _load_binder_soon()
        guards = launch_guards(types, given) if used else None
        if guards is not None:
            self._bind(device, loaded, types, stream, tuple(map(type, given)), guards)

    def _bind(self, device, loaded, types, stream, classes, guards, replacing=None):
        """Bind the launch function for these classes (``replacing``: only if the one
        bound for them is still that one); returns it, or None where none was bound."""
        kernel = self.kernel
        native = device.backend.native_launch(kernel, loaded, kernel.served(types), self.grid,
                                              self.block, self.shared_bytes, stream, classes)
        if native is None or replacing is not None and (
                native.complete is None or self.prepared.get(classes, (0, 0))[1] is not replacing):
            return None
        # bound while its native code is still being made: the faster function bound then
        # takes its calls, also from a caller who kept this one (f = kernel[grid, block])
        forward = [] if native.later is not None else None
        fast = binder.bind(kernel.__name__, classes, device, self.dispatch, native,
                           lambda *args: self._launch(get_device(), args), guards, self._retry,
                           forward)
        if len(self.prepared) >= 16:
            self.prepared.clear()
        self.prepared[classes] = (device, fast)
        if replacing is None or self.call is replacing:
            self.call = fast
        if forward is not None:

            def again():
                try:
                    faster = self._bind(device, loaded, types, stream, classes, guards, fast)
                except Exception:        # noqa: BLE001 - the bound function keeps working
                    return
                if faster is not None:
                    forward.append(faster)
            native.later(again)
        return fast


_binder_loading = []


def _load_binder_soon():
    """Import binder.py on a thread of its own after a first launch, so that a second
    launch finds it loaded: where Python has no bytecode caches its import compiles its
    source, 3 ms of the H200 machine's 5.3 ms second launch of the histogram. (The import
    lock makes a launch that needs it first wait for the whole module.)

    Not a daemon: the interpreter's exit waits for the import (milliseconds). A daemon
    thread is frozen where it stands at exit, here holding the import system's locks,
    and a finalizer that then imports anything (the sim device's memory release went
    through numpy's ``ndarray.ctypes``, which imports) waited for ever (issue 33 item 7)."""
    _binder_loading.append(True)
    threading.Thread(target=lambda: binder.bind, name="simt-binder-import").start()


_PLAIN = (int, float, complex, bool, np.ndarray, np.generic, tuple)


def adopt_foreign_arrays(args, device):
    """Arrays of other libraries (PyTorch, CuPy, JAX, numba: anything with
    ``__cuda_array_interface__`` or ``__dlpack__``) as DeviceArrays over the same memory:
    no copy, and a kernel's writes land in the caller's tensor. A host instance of a
    ``@simt.struct`` class becomes its record (np.void), passed by value."""
    adopted = tuple(_adopt(a, device) for a in args)
    return args if all(a is b for a, b in zip(adopted, args)) else adopted


def _adopt(value, device):
    if isinstance(value, _PLAIN) or hasattr(value, "simt_type"):
        return value
    record = getattr(value, "_simt_value", None)   # a host @simt.struct instance: by value
    if record is not None and hasattr(type(value), "_simt_struct"):
        return record
    key = _fast_key(value)
    if key is not None:                      # PyTorch, CuPy: no interface dict to build
        entry = _adopted.get(id(value))
        key = (key, device)
        if entry is not None and entry[0] == key and entry[2]() is value:
            return entry[1]
    face = getattr(value, "__cuda_array_interface__", None)
    if face is not None:
        return _adopt_interface(value, face, device, key)
    if hasattr(value, "__dlpack__"):
        return interop.asarray(value, device)
    return value


# id(foreign array) -> (what its __cuda_array_interface__ said, the DeviceArray over it,
# a weak reference whose callback drops the entry when the array dies). A tensor passed
# again, unchanged, is the same DeviceArray: the launch function then finds its packed
# values as they were (binder.py) and the launch costs what one of simt's own arrays does.
_adopted = {}


def _adopt_interface(value, face, device, key=None):
    """``value`` (GPU memory described by ``face``) as a DeviceArray, made once per array
    while pointer, shape, strides, dtype and device stay the same (``key``: what
    ``_fast_key`` read, else the interface's own fields); the producer's stream (the
    interface's ``stream``) is waited for at every launch, as the protocol asks."""
    key = key or (face["data"], tuple(face["shape"]), face.get("strides"), face["typestr"],
                  face.get("descr"), device)
    entry = _adopted.get(id(value))
    if entry is not None and entry[0] == key and entry[2]() is value:
        producer = face.get("stream")
        if producer not in (None, 0, 1):
            interop._make_default_stream_wait(entry[1].device, producer)
        return entry[1]
    try:
        ref = weakref.ref(value, lambda _, k=id(value): _adopted.pop(k, None))
    except TypeError:                          # no weak references: wrap at every launch
        return interop._wrap_cuda_interface(value, device, face)
    array = interop._wrap_cuda_interface(value, device, face, owner=ref)
    if len(_adopted) >= 256:
        _adopted.clear()
    _adopted[id(value)] = (key, array, ref)
    return array


def _torch_key(t):
    """A CUDA tensor's pointer, shape, strides and dtype, read directly: its
    __cuda_array_interface__ (version 2, no stream) is a Python property that builds a dict
    at every access. None where that property must decide (it raises for these)."""
    if not t.is_cuda or t.requires_grad or t.is_sparse:
        return None
    return (t.data_ptr(), t.shape, t.stride(), t.dtype, t.device.index)


def _cupy_key(x):
    """A CuPy array's pointer, shape, strides and dtype; None while a CuPy stream other than
    the default is current (the interface then names it, and a launch must wait for it)."""
    if sys.modules["cupy"].cuda.get_current_stream().ptr:
        return None
    return (x.data.ptr, x.shape, x.strides, x.dtype, x.device.id)


def _no_key(value):
    return None


_KEYS = {}      # class -> the function reading its fast key (_torch_key, _cupy_key, _no_key)


def _fast_key(value):
    kind = type(value)
    read = _KEYS.get(kind)
    if read is None:
        module, name = kind.__module__, kind.__name__
        read = _KEYS[kind] = (_torch_key if (module, name) == ("torch", "Tensor") else
                              _cupy_key if module.startswith("cupy") and name == "ndarray"
                              else _no_key)
    return read(value)


def launch_guards(types, args):
    """What a launch function must check, beyond each argument's class, to know that its
    arguments have the kernel types it was written for: per argument None (the class
    fixes the type: scalars, simt's vector types, DeviceArrays, one class per dtype, ndim
    and layout) or the type an object of that class must carry (textures and surfaces,
    whose type is their format and modes, on this device; records, whose type is their
    dtype). None when some argument's type is known only by looking into it (NumPy and
    foreign arrays, tuples): those launches take the full path."""
    guards = []
    for t, a in zip(types, args):
        if isinstance(t, T.Array):
            if getattr(type(a), "_sig", None) is not t:
                return None
            guards.append(None)
        elif isinstance(t, (T.Scalar, T.Vector)) and not isinstance(a, (tuple, np.ndarray)):
            guards.append(None)
        elif isinstance(t, (T.Texture, T.Surface)):     # its class fixes type and device
            guards.append(None if getattr(type(a), "_sig", None) is t else ("texture", t))
        elif isinstance(t, T.Record) and isinstance(a, np.void):
            guards.append(("record", t))
        else:
            return None
    return guards
