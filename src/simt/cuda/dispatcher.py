"""numba-cuda's ``cuda.jit``: kernels launched in numba's order
(``k[grid, block, stream, shared]``), ``forall``, numba's options mapped onto simt's,
signatures in numba's forms, the ``overloads`` and ``inspect_*`` numba code reads."""
from typing import Any, Callable, Literal, Protocol, Sequence, Union, overload

import numpy as np

from ..errors import NotSupportedError
from ..runtime import devices as _devices
from ..runtime.kernel import DeviceDecorator, DeviceFunction, Kernel, P, R, accepts
from ..runtime.launch import adopt_foreign_arrays, arg_types
from .device_code import wrapper_kernel
from .host import numba_stream

_OPTIONS = {"fastmath": "fastmath", "lineinfo": "lineinfo", "max_registers": "maxnreg",
            "boundscheck": "boundscheck"}
# Values that ask for what simt does anyway: device functions are always inlined
# (backends' emit.py marks them alwaysinline), so every ``inline`` value is honoured.
_DEFAULTS = {"debug": (False, None), "opt": (True, None),
             "inline": ("never", "always", False, True, None), "forceinline": (False, True),
             "link": ((), [], None), "lto": (False, None), "extensions": ((), [], None)}


# cuda.jit's signatures: a string, a tuple of (numba) types, or a list of them
Signatures = Union[str, Sequence[Any], None]


class DispatcherDecorator(Protocol):
    """What ``cuda.jit(signature or options)`` returns: the decorator proper."""

    def __call__(self, fn: Callable[P, Any]) -> "Dispatcher[P]": ...


@overload
def jit(func_or_sig: Callable[P, Any], device: Literal[False] = False, cache: bool = False,
        **options: Any) -> "Dispatcher[P]": ...
@overload
def jit(func_or_sig: Callable[P, R], device: Literal[True], cache: bool = False,
        **options: Any) -> DeviceFunction[P, R]: ...
@overload
def jit(func_or_sig: Signatures = None, device: Literal[False] = False, cache: bool = False,
        **options: Any) -> DispatcherDecorator: ...
@overload
def jit(func_or_sig: Signatures = None, *, device: Literal[True], cache: bool = False,
        **options: Any) -> DeviceDecorator: ...


def jit(func_or_sig: Any = None, device: bool = False, cache: bool = False,
        **options: Any) -> Any:
    """numba's ``cuda.jit``: a kernel (``Dispatcher``), or with ``device=True`` a device
    function; with a signature string, a numba signature or a list of them, compiled at
    once. Options simt has are mapped (fastmath, lineinfo, max_registers → maxnreg,
    boundscheck, debug=True → boundscheck=True); the others raise NotSupportedError."""
    inline = _inline(options)
    simt_options = _simt_options(options)

    def decorate(fn, signature=None):
        if device:
            return NumbaDeviceFunction(fn, inline=inline, options=simt_options,
                                       signatures=signature)
        kernel = Dispatcher(fn, signature, cache=bool(cache), **simt_options)
        kernel.inline = inline
        return kernel

    if func_or_sig is None:
        return decorate
    if callable(func_or_sig) and not isinstance(func_or_sig, type):
        return decorate(func_or_sig)
    signature = _signatures(func_or_sig)
    return lambda fn: decorate(fn, signature)


def _inline(options):
    """simt's inline choice for numba's ``inline=`` / ``forceinline=``: 'always' for
    "always", True or forceinline=True, 'never' for "never" or False; None (simt's default,
    inlined) when neither is given."""
    if options.get("forceinline") is True:
        return "always"
    value = options.get("inline")
    if value == "always" or value is True:
        return "always"
    if value == "never" or value is False:
        return "never"
    return None


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
    from ..ir import types as T
    if isinstance(sig, str):
        return tuple(T.parse_signature(sig))
    if hasattr(sig, "args") and hasattr(sig, "return_type"):
        sig = sig.args
    return tuple(_type(t) for t in sig)


def _type(t):
    """A simt type from a numba type (by its dtype, ndim, layout and name), a NumPy
    dtype or scalar type, or a simt type."""
    from ..ir import types as T
    if isinstance(t, T.Type):
        return t
    if all(hasattr(t, a) for a in ("dtype", "ndim", "layout")):
        return T.Array(_dtype(t.dtype), t.ndim, t.layout)
    if type(t).__name__ == "CPointer":   # simt has no pointers: a 1-d array of any layout
        return T.Array(_dtype(t.dtype), 1, "A")
    return T.Scalar(_dtype(t))


def _dtype(t):
    try:
        return np.dtype(t)
    except TypeError:
        return np.dtype(str(t))          # a numba scalar type: float32, int64, bool, ...


class Dispatcher(Kernel[P]):
    """A numba kernel: ``k[grid, block]``, ``k[grid, block, stream]``,
    ``k[grid, block, stream, shared_bytes]`` (numba's order; simt's puts shared first),
    ``k.forall(n)``; a stream of 0 is the default stream. Indices follow numba's rule:
    a negative one counts from the end of its dimension (simt.kernel keeps CUDA's)."""

    _cooperative = None      # whether the kernel syncs its grid: found at its first launch
    wraparound = True        # numba's index rule: a negative index counts from the end

    def __getitem__(self, config: Any) -> Callable[P, None]:
        if isinstance(config, tuple) and len(config) in (3, 4):
            grid, block, stream, *rest = config
            config = (grid, block, rest[0] if rest else 0, numba_stream(stream))
        if self._cooperative is False:
            return super().__getitem__(config)
        return lambda *args: self._first_or_cooperative(config, args)

    def _first_or_cooperative(self, config, args):
        """numba launches a kernel that calls grid.sync() cooperatively, unasked; simt
        asks for kernel.launch_cooperative. Whether it does is read from the typed IR
        of its first launch (device functions included)."""
        from ..ir import nodes as ir, walk
        if self._cooperative is None:
            types = arg_types(self, adopt_foreign_arrays(args, _devices.get_device()))
            fn = self.typed_ir(self.served(types))
            self._cooperative = any(isinstance(node, ir.GridSync) and node.scope == "grid"
                                    for f in walk.all_functions(fn) for node in walk.walk(f))
        if not self._cooperative:
            return super().__getitem__(config)(*args)
        grid, block, shared_bytes, stream = (tuple(config) + (0, None))[:4]
        self.launch_cooperative(grid, block, args, shared_bytes, stream)

    def served(self, arg_types):
        """numba's rule for eager signatures: an integer argument converts to any declared
        integer type (a Python int, int64 to simt, serves a ``uint32`` parameter), where
        simt.kernel asks NumPy's same-kind cast."""
        arg_types = tuple(arg_types)
        served = super().served(arg_types)
        if served is not arg_types or not self.eager:
            return served
        return next((e for e in self.eager if accepts(e, _as_declared(e, arg_types))),
                    arg_types)

    def compile(self, signature, device=None):
        """Compile eagerly for a signature in any of numba's forms (a string, a tuple of
        numba types, a numba Signature)."""
        if not isinstance(signature, str):
            signature = _signature(signature)
        return super().compile(signature, device)

    inline = None            # numba's inline= option, for calls of it from kernels

    def device_function(self):
        """This kernel as a device function: numba lets a kernel call a ``cuda.jit``
        kernel as a function (calls.call, cuda.jit code only)."""
        function = self.__dict__.get("_device_function")
        if function is None:
            function = self._device_function = DeviceFunction(self.pyfunc, inline=self.inline)
        return function

    def forall(self, ntasks: int, tpb: int = 0, stream: Any = 0,
               sharedmem: int = 0) -> Callable[P, None]:
        """A launch of at least ``ntasks`` threads in blocks of ``tpb`` (128 when 0);
        no launch at all for 0 tasks."""
        if ntasks < 0:
            raise ValueError(f"Can't create ForAll with negative task count: {ntasks}")
        if ntasks == 0:
            return lambda *args: None
        tpb = tpb or 128
        return self[-(-int(ntasks) // tpb), tpb, stream, sharedmem]

    def configure(self, griddim: Any, blockdim: Any, stream: Any = 0,   # type: ignore[override]
                  sharedmem: Any = 0) -> Callable[P, None]:
        return self[griddim, blockdim, stream, sharedmem]

    @property
    def overloads(self):
        """{argument types: compiled kernel} on the current device (numba's overloads);
        launches an eager signature served are not listed apart."""
        return _Overloads({types: _Overload(self, types)
                           for types in self._compiled_types(_devices.get_device())
                           if self.served(types) == types})

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
        return _Overloads({types: inspect(types) for types in self.signatures})


def _as_declared(declared, actual):
    """``actual`` with each integer scalar replaced by the declared integer type there."""
    from ..ir import types as T
    return tuple(d if isinstance(d, T.Scalar) and isinstance(a, T.Scalar) and
                 d.kind in "iu" and a.kind in "iub" else a for d, a in zip(declared, actual))


def compile_ptx(pyfunc, sig, debug=False, lineinfo=False, device=False, fastmath=False,
                cc=None, opt=None, abi="c", abi_info=None, output="ptx"):
    """numba's compile_ptx: (the PTX of a kernel for ``sig`` and ``cc``, default (9, 0),
    its return type None); made without a GPU. With ``device=True``, the PTX of a wrapper
    kernel that calls the device function (device_code.py) and its return dtype."""
    if output != "ptx":
        raise NotSupportedError(f"compile_ptx(output={output!r}): simt makes PTX only")
    options = _simt_options({"debug": debug, "lineinfo": lineinfo, "fastmath": fastmath,
                             "opt": opt})
    options = {k: v for k, v in options.items() if v}
    arch = f"sm_{cc[0]}{cc[1]}" if cc else None
    if device:           # a wrapper kernel calling it (device_code.py)
        function = pyfunc if isinstance(pyfunc, DeviceFunction) else DeviceFunction(pyfunc)
        kernel, types, returns = wrapper_kernel(Dispatcher, function, _signatures(sig)[0],
                                                 options)
        return kernel.ptx(types, arch=arch), returns
    kernel = Dispatcher(pyfunc, cache=False, **options)
    return kernel.ptx(_signatures(sig)[0], arch=arch), None


class NumbaDeviceFunction(DeviceFunction):
    """``cuda.jit(device=True)``: a device function, with numba's ``inspect_asm`` and
    ``inspect_llvm`` of its code alone for a signature (device_code.py), compiled with the
    options it was given (fastmath and the like)."""

    def __init__(self, pyfunc, inline=None, options=None, signatures=None):
        super().__init__(pyfunc, inline=inline)
        self.options = dict(options or {})
        self.declared = list(signatures or [])

    def _code(self, signature, what):
        types = _signature(signature) if signature is not None else self.declared[0]
        kernel, types, _ = wrapper_kernel(Dispatcher, self, types, self.options)
        return kernel.ptx(types) if what == "ptx" else kernel.llvm_ir(types)

    def inspect_asm(self, signature=None):
        return self._code(signature, "ptx")

    def inspect_llvm(self, signature=None):
        return self._code(signature, "llvm")


def compile_ptx_for_current_device(pyfunc, sig, **options):
    current = _devices.get_device()
    cc = tuple(current.properties.compute_capability) if current.kind == "cuda" else None
    return compile_ptx(pyfunc, sig, cc=cc, **options)


class _Overload:
    """One compiled signature of a kernel, as numba's overloads hold it."""

    def __init__(self, kernel, types):
        self.kernel, self.signature = kernel, types

    def inspect_llvm(self):
        return Kernel.inspect_llvm(self.kernel, self.signature)

    def inspect_asm(self, cc=None):
        arch = f"sm_{cc[0]}{cc[1]}" if cc else None
        return Kernel.inspect_ptx(self.kernel, self.signature, arch=arch)

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0):
        """The most blocks a cooperative launch of this kernel may have."""
        per_sm = self.kernel.max_active_blocks_per_multiprocessor(blockdim, dynsmemsize,
                                                                  signature=self.signature)
        return per_sm * _devices.get_device().properties.multiprocessor_count


class _Overloads(dict):
    """A kernel's overloads (or what inspect_* gives for each), looked up by simt types
    or by numba's (``sig.args``)."""

    def __getitem__(self, key):
        return dict.__getitem__(self, _signature(key))

    def __contains__(self, key):
        return dict.__contains__(self, _signature(key))
