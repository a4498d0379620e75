"""numba-cuda's names over simt: ``from simt import cuda``, and a numba-cuda program runs
on simt's devices, the CPU included. Kernel-side names are simt's own objects (the
front end resolves them by value); the host side differs where numba's does: launches
are ``kernel[grid, block, stream, shared]``, and the arrays handed out here copy as
numba's do (``d.copy_to_device(src)`` copies src INTO d). docs/coming-from-numba.md."""
import contextlib

import numpy as np

from .errors import CudaError, NotSupportedError
from .lang import atomic as _atomic, math as _math, warp as _warp
from .lang.half import ENTRIES as _HALF
from .lang.indices import (threadIdx, blockIdx, blockDim, gridDim, warpSize, grid,  # noqa: F401
                           gridsize)
from .lang import (shared, local, const, syncthreads, syncthreads_count,  # noqa: F401
                   syncthreads_and, syncthreads_or, threadfence, threadfence_block,
                   threadfence_system)
from .lang import cg  # noqa: F401
from .lang.cachehints import ldcg, ldca, ldcs, ldlu, ldcv, stwb, stcg, stcs, stwt  # noqa: F401
from .lang.registry import Namespace
from .lang.timers import nanosleep  # noqa: F401
from .lang.warp import (all_sync, any_sync, ballot_sync, activemask, match_any_sync,  # noqa: F401
                        match_all_sync, shfl_sync, shfl_up_sync, shfl_down_sync,
                        shfl_xor_sync, syncwarp)
from .runtime import arrays as _arrays, devices as _devices, streams as _streams
from .runtime.kernel import DeviceFunction, Kernel, device as _device
from .runtime.launch import adopt_foreign_arrays, arg_types

# -- the kernel language ----------------------------------------------------------------

warpsize = warpSize
fma, cbrt, brev, clz, ffs, popc = _math.fma, _math.cbrt, _math.brev, _math.clz, \
    _math.ffs, _math.popc
float16, float32, float64 = np.float16, np.float32, np.float64
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
complex64, complex128, boolean = np.complex64, np.complex128, np.bool_


class _ReadAsValue:
    """A simt intrinsic numba reads without a call (``cuda.laneid``, not laneid())."""

    value = True

    def __init__(self, entry):
        self.entry = entry

    def build(self, fc, args, kwargs, loc):
        return self.entry.build(fc, [], {}, loc)

    def __repr__(self):
        return f"<numba name for simt.{self.entry.op}()>"


laneid = _ReadAsValue(_warp.laneid)


@_device
def selp(cond, a, b):
    """numba's cuda.selp: ``a if cond else b``."""
    return a if cond else b


@_device
def _compare_and_swap(ary, old, val):
    return _atomic.cas(ary, 0, old, val)


@_device
def _nanmax(ary, idx, val):
    old = ary[idx]
    while not (val <= old or val != val):    # NaNs in val are missing; in ary replaced
        seen = _atomic.cas(ary, idx, old, val)
        if seen == old or (seen != seen and old != old):
            return old
        old = seen
    return old


@_device
def _nanmin(ary, idx, val):
    old = ary[idx]
    while not (val >= old or val != val):
        seen = _atomic.cas(ary, idx, old, val)
        if seen == old or (seen != seen and old != old):
            return old
        old = seen
    return old


atomic = Namespace("cuda.atomic", "numba's atomics: simt.atomic's, plus "
                   "compare_and_swap(ary, old, val) (index 0), nanmax and nanmin",
                   **{n: getattr(_atomic, n) for n in ("add", "sub", "and_", "or_", "xor",
                                                       "exch", "inc", "dec", "max", "min",
                                                       "cas")},
                   compare_and_swap=_compare_and_swap, nanmax=_nanmax, nanmin=_nanmin)
@_device
def _heq(a, b):
    return a == b


@_device
def _hne(a, b):
    return a != b


@_device
def _hge(a, b):
    return a >= b


@_device
def _hgt(a, b):
    return a > b


@_device
def _hle(a, b):
    return a <= b


@_device
def _hlt(a, b):
    return a < b


fp16 = Namespace("cuda.fp16", "numba's half-precision functions: simt's cuda_fp16 names, "
                 "and the comparisons heq, hne, hge, hgt, hle, hlt",
                 **{n: e for n, e in _HALF.items() if n.startswith("h")},
                 heq=_heq, hne=_hne, hge=_hge, hgt=_hgt, hle=_hle, hlt=_hlt)
libdevice = Namespace("cuda.libdevice", "numba's libdevice functions that simt.math has",
                      **{n: v for n, v in vars(_math).items() if not n.startswith("_")})


# -- kernels and device functions -------------------------------------------------------

_OPTIONS = {"fastmath": "fastmath", "lineinfo": "lineinfo", "max_registers": "maxnreg",
            "boundscheck": "boundscheck"}
# Values that ask for what simt does anyway: device functions are always inlined
# (backends' emit.py marks them alwaysinline), so every ``inline`` value is honoured.
_DEFAULTS = {"debug": (False, None), "opt": (True, None),
             "inline": ("never", "always", False, True, None), "forceinline": (False, True),
             "link": ((), [], None), "lto": (False, None), "extensions": ((), [], None)}


def jit(func_or_sig=None, device=False, cache=False, **options):
    """numba's ``cuda.jit``: a kernel (``Dispatcher``), or with ``device=True`` a device
    function; with a signature string, a numba signature or a list of them, compiled at
    once. Options simt has are mapped (fastmath, lineinfo, max_registers → maxnreg,
    boundscheck, debug=True → boundscheck=True); the others raise NotSupportedError."""
    simt_options = _simt_options(options)

    def decorate(fn, signature=None):
        if device:
            return DeviceFunction(fn)
        return Dispatcher(fn, signature, cache=bool(cache), **simt_options)

    if func_or_sig is None:
        return decorate
    if callable(func_or_sig) and not isinstance(func_or_sig, type):
        return decorate(func_or_sig)
    signature = _signatures(func_or_sig)
    return lambda fn: decorate(fn, signature)


def _simt_options(options):
    out = {}
    for name, value in options.items():
        if name == "fastmath" and not value:
            continue                      # numba's default: simt's exact math
        if name in _OPTIONS:
            out[_OPTIONS[name]] = value
        elif name == "debug" and value:
            out["boundscheck"] = True
        elif name in _DEFAULTS and any(value is d or value == d for d in _DEFAULTS[name]):
            continue
        else:
            raise NotSupportedError(f"cuda.jit({name}={value!r}): simt has no equivalent of "
                                    f"this numba option; drop it (simt maps fastmath, "
                                    f"lineinfo, max_registers, boundscheck and debug)")
    return out


def _signatures(sig):
    """simt signatures from numba's forms: a string, a numba Signature, a tuple of types,
    or a list of any of these."""
    if isinstance(sig, list):
        return [_signature(s) for s in sig]
    return [_signature(sig)]


def _signature(sig):
    from .ir import types as T
    if isinstance(sig, str):
        return tuple(T.parse_signature(sig))
    if hasattr(sig, "args") and hasattr(sig, "return_type"):
        sig = sig.args
    return tuple(_type(t) for t in sig)


def _type(t):
    """A simt type from a numba type (by its dtype, ndim, layout and name), a NumPy
    dtype or scalar type, or a simt type."""
    from .ir import types as T
    if isinstance(t, T.Type):
        return t
    if all(hasattr(t, a) for a in ("dtype", "ndim", "layout")):
        return T.Array(_dtype(t.dtype), t.ndim, t.layout)
    return T.Scalar(_dtype(t))


def _dtype(t):
    try:
        return np.dtype(t)
    except TypeError:
        return np.dtype(str(t))          # a numba scalar type: float32, int64, bool, ...


class Dispatcher(Kernel):
    """A numba kernel: ``k[grid, block]``, ``k[grid, block, stream]``,
    ``k[grid, block, stream, shared_bytes]`` (numba's order; simt's puts shared first),
    ``k.forall(n)``; a stream of 0 is the default stream."""

    _cooperative = None      # whether the kernel syncs its grid: found at its first launch

    def __getitem__(self, config):
        if isinstance(config, tuple) and len(config) in (3, 4):
            grid, block, stream, *rest = config
            config = (grid, block, rest[0] if rest else 0, _stream(stream))
        if self._cooperative is False:
            return super().__getitem__(config)
        return lambda *args: self._first_or_cooperative(config, args)

    def _first_or_cooperative(self, config, args):
        """numba launches a kernel that calls grid.sync() cooperatively, unasked; simt
        asks for kernel.launch_cooperative. Whether it does is read from the typed IR
        of its first launch (device functions included)."""
        from .ir import nodes as ir, walk
        if self._cooperative is None:
            types = arg_types(self, adopt_foreign_arrays(args, _devices.get_device()))
            fn = self.typed_ir(self.served(types))
            self._cooperative = any(isinstance(node, ir.GridSync)
                                    for f in walk.all_functions(fn) for node in walk.walk(f))
        if not self._cooperative:
            return super().__getitem__(config)(*args)
        grid, block, shared_bytes, stream = (tuple(config) + (0, None))[:4]
        self.launch_cooperative(grid, block, args, shared_bytes, stream)

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """A launch of at least ``ntasks`` threads in blocks of ``tpb`` (128 when 0);
        no launch at all for 0 tasks."""
        if ntasks < 0:
            raise ValueError(f"Can't create ForAll with negative task count: {ntasks}")
        if ntasks == 0:
            return lambda *args: None
        tpb = tpb or 128
        return self[-(-int(ntasks) // tpb), tpb, stream, sharedmem]

    def configure(self, griddim, blockdim, stream=0, sharedmem=0):
        return self[griddim, blockdim, stream, sharedmem]

    @property
    def overloads(self):
        """{argument types: compiled kernel} on the current device (numba's overloads);
        launches an eager signature served are not listed apart."""
        name = _devices.get_device().name
        return _Overloads({types: _Overload(self, types)
                           for (dev, types, _) in self.compiled
                           if dev == name and self.served(types) == types})

    @property
    def signatures(self):
        return list(self.overloads)

    # numba's inspect_* take numba signatures (tuples of numba types) and, without one,
    # give a dict of every compiled signature; inspect_asm is numba's name for the PTX.
    def inspect_llvm(self, signature=None):
        return self._numba_each(signature, super().inspect_llvm)

    def inspect_asm(self, signature=None):
        return self._numba_each(signature, super().inspect_ptx)

    def inspect_sass(self, signature=None):
        return self._numba_each(signature, super().inspect_sass)

    def inspect_types(self, signature=None, **kwargs):
        return self._numba_each(signature, super().inspect_types)

    def _numba_each(self, signature, inspect):
        if signature is not None:
            return inspect(_signature(signature))
        return {types: inspect(types) for types in self.signatures}


def compile_ptx(pyfunc, sig, debug=False, lineinfo=False, device=False, fastmath=False,
                cc=None, opt=None, abi="c", abi_info=None, output="ptx"):
    """numba's compile_ptx: (the PTX of a kernel for ``sig`` and ``cc``, default (9, 0),
    its return type None); made without a GPU. Device functions alone are not compiled
    by simt: NotSupportedError."""
    if device:
        raise NotSupportedError("compile_ptx(device=True): simt compiles device functions "
                                "only inside the kernels that call them")
    if output != "ptx":
        raise NotSupportedError(f"compile_ptx(output={output!r}): simt makes PTX only")
    options = _simt_options({"debug": debug, "lineinfo": lineinfo, "fastmath": fastmath,
                             "opt": opt})
    kernel = Dispatcher(pyfunc, cache=False, **{k: v for k, v in options.items() if v})
    arch = f"sm_{cc[0]}{cc[1]}" if cc else None
    return kernel.ptx(_signatures(sig)[0], arch=arch), None


def compile_ptx_for_current_device(pyfunc, sig, **options):
    from .runtime.devices import get_device
    props = get_device().properties
    cc = tuple(props.compute_capability) if get_device().kind == "cuda" else None
    return compile_ptx(pyfunc, sig, cc=cc, **options)


def external_stream(ptr):
    """A stream over another library's CUstream address (simt.Stream.from_handle)."""
    return Stream.from_handle(ptr)


class _Overload:
    """One compiled signature of a kernel, as numba's overloads hold it."""

    def __init__(self, kernel, types):
        self.kernel, self.signature = kernel, types

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0):
        """The most blocks a cooperative launch of this kernel may have."""
        per_sm = self.kernel.max_active_blocks_per_multiprocessor(blockdim, dynsmemsize,
                                                                  signature=self.signature)
        return per_sm * _devices.get_device().properties.multiprocessor_count


class _Overloads(dict):
    """A kernel's overloads, looked up by simt types or by numba's (``sig.args``)."""

    def __getitem__(self, key):
        return dict.__getitem__(self, _signature(key))

    def __contains__(self, key):
        return dict.__contains__(self, _signature(key))


def _stream(stream):
    return None if stream is None or (isinstance(stream, int) and stream == 0) else stream


# -- arrays -----------------------------------------------------------------------------

class DeviceNDArray:
    """numba's DeviceNDArray methods, on simt's DeviceArray. UNLIKE simt's DeviceArray,
    ``d.copy_to_device(src)`` copies ``src`` (host or device) INTO ``d``."""

    def copy_to_device(self, ary, stream=0):
        """numba: copy ``ary`` into this array (simt: ``self.copy_from(ary)``)."""
        if isinstance(ary, _arrays.DeviceArray):
            _arrays.DeviceArray.copy_to_device(ary, self, stream=_stream(stream))
        else:
            _arrays.DeviceArray.copy_from(self, ary, stream=_stream(stream))

    def copy_to_host(self, ary=None, stream=0):
        return _arrays.DeviceArray.copy_to_host(self, ary, stream=_stream(stream))

    def split(self, section, stream=0):
        """Views of ``section`` elements each (the last one shorter) of a 1-d array."""
        if self.ndim != 1:
            raise ValueError("only 1-d arrays can be split")
        return [self[i:i + section] for i in range(0, self.shape[0], section)]

    def getitem(self, idx, stream=0):
        return self[idx]

    def bind(self, stream=0):
        return self

    def as_cuda_arg(self):
        return self

    def is_c_contiguous(self):
        return bool(self.flags["C_CONTIGUOUS"])

    def is_f_contiguous(self):
        return bool(self.flags["F_CONTIGUOUS"])


def _flavoured(method):
    def call(self, *args, **kwargs):
        return numba_array(method(self, *args, **kwargs))
    call.__name__, call.__doc__ = method.__name__, method.__doc__
    return call


for _name in ("_view", "retyped", "reshape", "ravel", "transpose", "__getitem__", "copy",
              "astype", "view"):
    setattr(DeviceNDArray, _name, _flavoured(getattr(_arrays.DeviceArray, _name)))
DeviceNDArray.T = property(lambda self: self.transpose())

_CLASSES = {}   # a DeviceArray signature class -> its numba-flavoured subclass


def numba_array(array):
    """A simt DeviceArray as one with numba's methods (the same object); others as they are.

    DeviceArray picks its class per dtype, ndim and layout (runtime/arrays.py); the
    numba class of each is a subclass of it, so launches still find it by class."""
    if not isinstance(array, _arrays.DeviceArray) or isinstance(array, DeviceNDArray):
        return array
    base = type(array)
    cls = _CLASSES.get(base)
    if cls is None:
        cls = _CLASSES.setdefault(base, type("DeviceNDArray", (DeviceNDArray, base),
                                             {"__module__": __name__}))
    array.__class__ = cls
    return array


def to_device(obj, stream=0, copy=True, to=None):
    """numba's cuda.to_device: a new device array holding ``obj`` (uninitialized with
    copy=False), or ``obj`` copied into ``to``."""
    if to is not None:
        numba_array(to).copy_to_device(obj, stream=stream)
        return to
    if not copy:
        return device_array_like(obj)
    return numba_array(_arrays.to_device(obj, stream=_stream(stream)))


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    if strides is not None:
        return numba_array(_arrays.DeviceArray(shape, dtype, strides))
    return numba_array(_arrays.device_array(shape, dtype, order))


def device_array_like(ary, stream=0):
    """A new array of ary's shape and dtype, laid out as NumPy's empty_like lays it out
    (the axes in the order of ary's strides, contiguous)."""
    return numba_array(_arrays.DeviceArray(ary.shape, ary.dtype,
                                           _like_strides(ary.shape, ary.strides,
                                                         np.dtype(ary.dtype).itemsize)))


def _like_strides(shape, strides, itemsize):
    stride, out = itemsize, [0] * len(shape)
    for axis in sorted(range(len(shape)), key=lambda a: (abs(strides[a]), -a)):   # inner first
        out[axis] = stride
        stride *= max(shape[axis], 1)
    return tuple(out)


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    return _arrays.pinned_array(shape, dtype, order)


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0, portable=False,
                 wc=False):
    return _arrays.mapped_array(shape, dtype, order)


def managed_array(shape, dtype=np.float64, strides=None, order="C", stream=0,
                  attach_global=True):
    return _arrays.managed_array(shape, dtype, order)


def _order(ary):
    """NumPy's zeros_like order: 'F' for an array that is F- and not C-contiguous."""
    flags = ary.flags
    return "F" if flags["F_CONTIGUOUS"] and not flags["C_CONTIGUOUS"] else "C"


def pinned_array_like(ary):
    return pinned_array(ary.shape, ary.dtype, order=_order(ary))


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    return mapped_array(ary.shape, ary.dtype, order=_order(ary))


def managed_array_like(ary, stream=0, attach_global=True):
    return managed_array(ary.shape, ary.dtype, order=_order(ary))


@contextlib.contextmanager
def pinned(*arrays):
    """numba pins existing host memory for the block; simt copies from any host memory
    (on the GPU, pageable copies are staged by the driver), so this only yields."""
    yield


@contextlib.contextmanager
def mapped(*arrays, stream=0, portable=False, wc=False):
    """Device views of host arrays for the block: simt.asarray maps them (CPU device) or
    they must be mapped_array memory (GPU)."""
    views = [numba_array(_arrays.asarray(a)) for a in arrays]
    yield views[0] if len(views) == 1 else views


def as_cuda_array(obj, sync=True):
    """A device array over an object's ``__cuda_array_interface__`` (or DLPack), no copy."""
    return numba_array(_arrays.asarray(obj))


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A device array over a ``__cuda_array_interface__`` dict, no copy."""
    return as_cuda_array(_Interfaced(desc, owner))


class _Interfaced:
    def __init__(self, desc, owner):
        self.__cuda_array_interface__ = desc
        self.owner = owner


def _auto_device(obj, stream=0, copy=True, user_explicit=False):
    """numba's devicearray.auto_device: (a device array for obj, whether it was copied)."""
    if isinstance(obj, _arrays.DeviceArray):
        return numba_array(obj), False
    return to_device(np.asarray(obj), stream=stream, copy=copy), True


devicearray = Namespace("cuda.devicearray", "numba's devicearray module: the array class",
                        DeviceNDArray=DeviceNDArray, auto_device=_auto_device)


def is_cuda_array(obj):
    return hasattr(obj, "__cuda_array_interface__")


# -- streams, events, devices ------------------------------------------------------------

class Stream(_streams.Stream):
    """numba's Stream: simt's, with ``auto_synchronize()``."""

    @contextlib.contextmanager
    def auto_synchronize(self):
        yield self
        self.synchronize()


def stream():
    return Stream()


def default_stream():
    return _streams.default_stream()


legacy_default_stream = per_thread_default_stream = default_stream


class Event(_streams.Event):
    """numba's Event: simt's, with ``wait(stream)`` and ``elapsed_time``."""

    def record(self, stream=0):
        return super().record(stream=_stream(stream))

    def wait(self, stream=0):
        (_stream(stream) or default_stream()).wait_event(self)


def event(timing=True):
    return Event(timing=timing)


def event_elapsed_time(evtstart, evtend):
    return evtstart.elapsed_time(evtend)


def synchronize():
    _devices.synchronize()


def _same_kind():
    """numba numbers the GPUs; over simt, the devices of the current one's kind."""
    kind = _devices.get_device().kind
    return [d for d in _devices.devices() if d.kind == kind]


class _DeviceView:
    """numba's Device: ``id``, ``name``, ``compute_capability`` and CUDA's attribute
    names (``MAX_THREADS_PER_BLOCK``, ``WARP_SIZE``, ...) over a simt Device."""

    def __init__(self, index, dev):
        self.id, self.simt_device = index, dev
        p = dev.properties
        self.name = p.name.encode() if isinstance(p.name, str) else p.name
        self.compute_capability = tuple(p.compute_capability)

    def __getattr__(self, name):
        props = self.__dict__["simt_device"].properties
        if name.isupper() and hasattr(props, name.lower()):
            return getattr(props, name.lower())
        raise AttributeError(name)

    def __enter__(self):
        self._used = _devices.use_device(self.simt_device)
        self._used.__enter__()
        return self

    def __exit__(self, *exc):
        return self._used.__exit__(*exc)

    def reset(self):
        self.simt_device.synchronize()


class _Context:
    """numba's Context: ``device``, ``get_memory_info()``, ``synchronize()``."""

    def __init__(self, view):
        self.device = view

    def get_memory_info(self):
        with _devices.use_device(self.device.simt_device):
            return _arrays.mem_get_info()

    def synchronize(self):
        self.device.simt_device.synchronize()


def list_devices():
    return [_DeviceView(i, d) for i, d in enumerate(_same_kind())]


gpus = type("GPUs", (), {"__getitem__": lambda self, i: list_devices()[i],
                         "__len__": lambda self: len(_same_kind()),
                         "__iter__": lambda self: iter(list_devices()),
                         "current": property(lambda self: get_current_device())})()


def get_current_device():
    current = _devices.get_device()
    return _DeviceView(_same_kind().index(current), current)


def current_context(devnum=None):
    return _Context(get_current_device() if devnum is None else list_devices()[devnum])


def select_device(device_id):
    dev = _same_kind()[device_id]
    _devices.set_device(dev)
    return _DeviceView(device_id, dev)


def close():
    _devices.synchronize()


def is_available():
    return bool(_devices.devices())


def detect():
    """Print the devices simt can use (numba prints the GPUs); True when there are any."""
    found = _devices.devices()
    print(f"Found {len(found)} simt devices")
    for i, d in enumerate(found):
        print(f"id {i} {d.properties.name} [{d.name}]")
    return bool(found)


class CudaSupportError(CudaError):
    """numba's error for a missing CUDA driver (simt falls back to the CPU device)."""
