"""Modules made elsewhere (guide 3.1, appendix J): PTX, cubin and fatbin images, and CUDA
C++ compiled at run time through NVRTC, with their kernels launched by simt's own
``kernel[grid, block, shared, stream](args)`` syntax.

A raw kernel has no Python signature to type its arguments from, so the rule is the C
one: a DeviceArray (or any array another library exports) is a pointer to its element 0,
a NumPy scalar is passed as its dtype, and a Python int or float, whose C width simt
cannot guess, needs a ``signature`` (``get_function(name, signature=...)``) or a NumPy
scalar (``np.int32(n)``). GPU only: the CPU device raises NotSupportedError.
"""
import os
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numpy.typing import DTypeLike

from .devices import get_device
from .launch import check_config, dim3_tuple, shared_size
from .streams import stream_handle
from . import peer
from ..errors import CudaError, InvalidConfiguration

if TYPE_CHECKING:
    from .arrays import DeviceArray

POINTER = "pointer"
_POINTER_NAMES = ("pointer", "ptr", "void*")
_ELF, _FATBIN = b"\x7fELF", b"\x50\xed\x55\xba"


def image_kind(image):
    """'cubin', 'fatbin' or 'ptx' by the image's first bytes."""
    if image.startswith(_ELF):
        return "cubin"
    if image.startswith(_FATBIN):
        return "fatbin"
    return "ptx"


def _read_image(path_or_bytes):
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes)
    if not isinstance(path_or_bytes, (str, os.PathLike)):
        raise TypeError(f"Module.load takes a path or the image's bytes, not "
                        f"{type(path_or_bytes).__name__}")
    path = os.fspath(path_or_bytes)
    if not os.path.isfile(path):
        hint = (" (PTX text given as a str? pass it as bytes: Module.load(ptx.encode()))"
                if ".entry" in path or ".version" in path else "")
        raise FileNotFoundError(f"Module.load: no file {path[:80]!r}{hint}")
    with open(path, "rb") as f:
        return f.read()


class Module:
    """A PTX, cubin or fatbin image loaded on the current GPU (cuModuleLoadDataEx).

    ``device``: where it was loaded (its kernels run there); ``kind``: 'ptx', 'cubin'
    or 'fatbin'; ``info_log``: what the driver's JIT said while loading PTX.
    """

    def __init__(self, image, device=None):
        self.device = device or get_device()
        self.kind = image_kind(image)
        self.image = image
        self.impl = self.device.backend.load_module(image)
        self.info_log = getattr(self.impl, "info_log", "")
        self._lowered = {}

    @classmethod
    def load(cls, path_or_bytes: "str | bytes") -> "Module":
        """A module from a file (path) or from the image itself (bytes)."""
        return cls(_read_image(path_or_bytes))

    def get_function(self, name: str, signature: Any = None) -> "RawKernel":
        """The kernel ``name`` (its extern "C" name, a mangled name, or for a SourceModule
        a name expression given to it) as a RawKernel; ``signature``: one entry per
        parameter, a NumPy dtype or 'pointer', so Python ints and floats can be passed."""
        function = self._find("kernel", name, self.impl.get_function)
        return RawKernel(self, name, function, signature)

    def _find(self, what, name, lookup):
        """``lookup(symbol)`` of a name, with the driver's not-found said in words."""
        try:
            return lookup(self._lowered.get(name, name))
        except CudaError as exc:
            if "NOT_FOUND" not in str(exc):
                raise
            raise CudaError(f"the {self.kind} module has no {what} named {name!r}: a C++ name "
                            "is mangled, so declare it extern \"C\", pass its mangled name, "
                            "or (SourceModule) list it in name_expressions") from None

    def get_global(self, name: str, dtype: DTypeLike = np.uint8,
                   shape: Any = None) -> "DeviceArray":
        """The ``__device__`` or ``__constant__`` variable ``name`` as a DeviceArray of
        ``dtype`` (default: its bytes); ``shape`` default: as many elements as fit."""
        from .arrays import DeviceArray
        from .backend import Allocation
        ptr, size = self._find("global", name, self.impl.get_global)
        dtype = np.dtype(dtype)
        if shape is None:
            shape = (size // dtype.itemsize,)
        shape = tuple(np.atleast_1d(shape).astype(int).tolist())
        if int(np.prod(shape)) * dtype.itemsize > size:
            raise ValueError(f"global '{name}' has {size} bytes; {shape} of {dtype} needs "
                             f"{int(np.prod(shape)) * dtype.itemsize}")
        alloc = Allocation(ptr, size, self.device.backend, keepalive=self)
        return DeviceArray(shape, dtype, alloc=alloc, device=self.device)


class SourceModule(Module):
    """CUDA C++ compiled at run time by NVRTC for the current GPU, then loaded.

    ``options``: NVRTC's command-line options (``-std=c++17``, ``-DN=4``, ...; simt adds
    the GPU's ``--gpu-architecture``); ``name``: the source's file name in messages;
    ``name_expressions``: C++ names (``"scale<float>"``) NVRTC lowers, so that
    ``get_function`` and ``get_global`` find them by those names. A compile error is a
    CompileError whose ``why`` is NVRTC's log. ``log`` keeps the log of a success.
    """

    def __init__(self, source: str, options: Sequence[str] = (), name: str = "source.cu",
                 name_expressions: Sequence[str] = ()):
        if isinstance(options, str):
            raise TypeError("SourceModule options are a list of strings, e.g. "
                            "['-std=c++17', '-DN=4'], not one string")
        device = get_device()
        image, lowered, self.log = device.backend.compile_cuda_c(
            source, name, list(options), list(name_expressions))
        super().__init__(image, device)
        self.source = source
        self._lowered = dict(lowered)


class RawKernel:
    """A kernel of a Module: ``kernel[grid, block, shared_bytes, stream](*args)``."""

    def __init__(self, module, name, function, signature=None):
        self.module = module
        self.__name__ = name
        self.function = function
        self.signature = None if signature is None else [_param(s) for s in signature]

    def __getitem__(self, config: Any) -> Callable[..., None]:
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise InvalidConfiguration(f"launch '{self.__name__}' as kernel[grid, block], "
                                       "kernel[grid, block, shared_bytes] or "
                                       "kernel[grid, block, shared_bytes, stream]")
        grid, block = dim3_tuple(config[0], "grid"), dim3_tuple(config[1], "block")
        shared = shared_size(config[2] if len(config) > 2 else 0)
        stream = config[3] if len(config) > 3 else None
        return lambda *args: self._launch(grid, block, shared, stream, args)

    def __call__(self, *args):
        raise InvalidConfiguration(f"kernel '{self.__name__}' needs a launch configuration: "
                                   f"{self.__name__}[blocks, threads](...)")

    def _launch(self, grid, block, shared, stream, args):
        device = get_device()
        if device != self.module.device:
            raise InvalidConfiguration(
                f"kernel '{self.__name__}' was loaded on {self.module.device.name} and "
                f"{device.name} is current; load the module again while {device.name} is "
                "current, or launch under simt.use_device(module.device)")
        kinds, values = pack_args(self.__name__, self.signature, args, device)
        check_config(self.__name__, device, grid, block, shared)
        handle = stream_handle(stream, device, f"launching '{self.__name__}'")
        device.backend.launch_raw(self.function, grid, block, shared, handle, kinds, values)


def _param(entry):
    """A signature entry: 'pointer' or a NumPy dtype of a C scalar."""
    if isinstance(entry, str) and entry.strip().lower() in _POINTER_NAMES:
        return POINTER
    dtype = np.dtype(entry)
    _scalar_kind(dtype, f"signature entry {entry!r}")
    return dtype


def _scalar_kind(dtype, what):
    if dtype.kind not in "biuf" or (dtype.kind == "f" and dtype.itemsize not in (2, 4, 8)):
        raise TypeError(f"{what}: a raw kernel takes pointers and C scalars (bool, integers, "
                        f"float16/32/64), not {dtype}; pass a struct as a device array and "
                        "its pointer")
    return dtype


def pack_args(name, signature, args, device):
    """(kinds, values): each argument as a parameter kind (a NumPy dtype, or
    'pointer') and its value (an int address, or a NumPy scalar), checked against the
    kernel's signature when it has one. Errors name the kernel and the argument."""
    if signature is not None and len(signature) != len(args):
        raise TypeError(f"kernel '{name}' has a signature of {len(signature)} parameters, "
                        f"got {len(args)} arguments")
    kinds, values = [], []
    for i, value in enumerate(args):
        want = None if signature is None else signature[i]
        where = f"kernel '{name}', argument {i}"
        kind, packed = _pack_one(value, want, where, device)
        kinds.append(kind)
        values.append(packed)
    return kinds, values


def _pack_one(value, want, where, device):
    address = _array_address(value, where, device)
    if address is not None:
        if want not in (None, POINTER):
            raise TypeError(f"{where}: the signature says {want}, and an array (a pointer) "
                            "was given")
        return POINTER, address
    if want == POINTER:
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            return POINTER, int(value)           # a raw device address
        raise TypeError(f"{where}: the signature says pointer; pass a device array or an "
                        f"int address, not {type(value).__name__}")
    if isinstance(value, np.generic):
        dtype = _scalar_kind(value.dtype, where)
        if want is not None and want != dtype:
            raise TypeError(f"{where}: the signature says {want}, a {dtype} was given; pass "
                            f"np.{want}(x)")
        return dtype, value
    if isinstance(value, (bool, int, float)):
        if want is None:
            example = "np.int32(n)" if isinstance(value, int) else "np.float32(x)"
            raise TypeError(f"{where}: a Python {type(value).__name__} has no C width; pass "
                            f"a NumPy scalar ({example}) or give the kernel a signature "
                            "(module.get_function(name, signature=[...]))")
        if want.kind in "iu" and not isinstance(value, float):
            info = np.iinfo(want)
            if not info.min <= value <= info.max:
                raise OverflowError(f"{where}: {value!r} does not fit the signature's {want}")
        elif want.kind in "iu":
            raise TypeError(f"{where}: the signature says {want}, a float was given")
        return want, want.type(value)
    raise TypeError(f"{where}: cannot pass a {type(value).__name__} to a raw kernel; pass "
                    "device arrays, NumPy scalars, or Python numbers with a signature")


def _array_address(value, where, device):
    """The device address of an array argument (None when ``value`` is no array)."""
    if isinstance(value, np.ndarray):
        raise TypeError(f"{where}: a NumPy array is host memory; a raw kernel takes device "
                        "memory: pass simt.to_device(a) and copy the result back")
    if hasattr(value, "ptr") and hasattr(value, "device") and hasattr(value, "alloc"):
        peer.check_reachable(value, device, where)
        return int(value.ptr)
    if hasattr(value, "__cuda_array_interface__"):
        return int(value.__cuda_array_interface__["data"][0])
    return None
