"""Other libraries' arrays as DeviceArrays over their own memory: DLPack exporters (PyTorch,
CuPy, JAX, NumPy...), objects with ``__cuda_array_interface__``, and the ordering of simt's
work with the streams their producers name.

``asarray`` and ``from_dlpack`` are the public ways in, and ``to_device`` copies in (it
lives here as it asks each argument whether it is another library's GPU array); a launch
wraps a foreign argument through the same functions (runtime/launch.py). Exporting
simt's own arrays is DeviceArray's part (runtime/arrays.py).
"""

import operator
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from simt.runtime import devices, dlpack
from simt.runtime.arrays import (DeviceArray, DeviceSpec, _c_strides, _cuda_pointers,
                                 _host_array, _order, _span, host_to_device)
from simt.runtime.backend import Allocation
from simt.errors import NotSupportedError
from simt.ir.types import float8_storage, is_bfloat16_dtype


# What to_device copies without asking whether it is another library's GPU array
_OWN_VALUES = (DeviceArray, np.ndarray, np.generic, list, tuple, int, float, complex, bool)


def to_device(host_array: ArrayLike, stream: Any = None,
              device: DeviceSpec = None) -> "DeviceArray":
    """A new device array holding a copy of ``host_array`` (cudaMalloc + cudaMemcpy H2D).

    A Fortran-ordered array keeps its order; any other layout arrives C-contiguous.
    Another library's GPU array (``__cuda_array_interface__``, or DLPack on a CUDA
    device: PyTorch, CuPy, JAX...) is copied from its memory, device to device.
    """
    if not isinstance(host_array, _OWN_VALUES):
        foreign = foreign_gpu_array(host_array, devices.lookup(device))
        if foreign is not None:
            host_array = foreign
    return host_to_device(host_array, stream, device)


def asarray(obj, device: DeviceSpec = None, copy: Optional[bool] = None) -> "DeviceArray":
    """A DeviceArray over ``obj``'s memory, without copying where the memory is reachable.

    Wraps DeviceArrays (returned as they are), other libraries' GPU arrays
    (``__cuda_array_interface__`` or DLPack; on the GPU holding them when ``device`` is
    not a GPU), and on the CPU device NumPy arrays and host DLPack exporters (as
    ``from_dlpack``). Anything else (lists, host arrays for a GPU) is copied with
    ``to_device``. ``copy`` as the array API's asarray: True always makes a new array
    (``to_device``), False never copies (ValueError where it would have to), None copies
    only what cannot be used in place.
    """
    if copy:
        return to_device(obj, device=device)
    if isinstance(obj, DeviceArray):
        return obj
    target = devices.lookup(device)
    foreign = foreign_gpu_array(obj, target)
    if foreign is not None:
        return foreign
    if target.backend.host_accessible:
        if isinstance(obj, np.ndarray):
            _check_values(obj, obj)
            return _wrap_host(obj, target)
        if hasattr(obj, "__dlpack__"):
            return from_dlpack(obj, target, copy=copy)
    if copy is False:
        raise ValueError(f"simt.asarray({_short(obj)}, copy=False): {target.name} cannot use "
                         "this memory in place, and copy=False forbids a copy; pass "
                         "copy=None to copy it, or wrap it on the cpu device")
    host = np.asarray(obj)
    _check_values(host, obj)
    return to_device(host, device=target)


def foreign_gpu_array(obj, device):
    """A DeviceArray over another library's GPU array (``__cuda_array_interface__``, or a
    DLPack exporter on a CUDA device), with no copy: on ``device`` where that is a GPU,
    else on the GPU holding it; None for anything else. ``to_device`` copies from it
    device to device (never through np.asarray, which cannot read GPU memory)."""
    if isinstance(obj, np.ndarray):
        return None
    face = _cuda_interface(obj)
    if face is not None:
        return _wrap_cuda_interface(obj, device, face)
    if _gpu_dlpack(obj):
        return from_dlpack(obj, device if _cuda_pointers(device) else None)
    return None


def _cuda_interface(obj):
    """obj's __cuda_array_interface__ where that describes it best, else None. The interface
    has no bfloat16: PyTorch's bfloat16 tensors say "<V2" there (or raise TypeError), and
    DLPack says what they hold, so an exporter of both goes by DLPack for such dtypes."""
    if isinstance(obj, np.ndarray):
        return None
    try:
        face = getattr(obj, "__cuda_array_interface__", None)
    except TypeError:
        if hasattr(obj, "__dlpack__"):
            return None
        raise
    if face is None:
        return None
    untyped = face.get("typestr", "")[1:2] == "V" and not any(
        name for name, *_ in face.get("descr") or ())
    return None if untyped and hasattr(obj, "__dlpack__") else face


def _check_values(host, obj):
    """Device arrays hold numbers: not strings, objects or dates (which NumPy accepts)."""
    if host.dtype.kind not in "biufc" and not is_bfloat16_dtype(host.dtype) and \
            float8_storage(host.dtype) is None:
        raise TypeError(f"simt.asarray({_short(obj)}): NumPy makes it an array of dtype "
                        f"{host.dtype}, which kernels cannot use; device arrays hold bool, "
                        "integer, floating (bfloat16 and FP8 too) or complex values")


def _short(obj):
    text = repr(obj)
    return text if len(text) <= 40 else text[:37] + "..."


def _dlpack_device(obj):
    """(device type, device id) that ``obj.__dlpack_device__()`` returns, checked to be
    two ints as the DLPack protocol says; (1, 0), host memory, where there is no such method."""
    if not hasattr(obj, "__dlpack_device__"):
        return dlpack.KDL_CPU, 0
    answer = obj.__dlpack_device__()
    try:
        kind, index = answer
        return operator.index(kind), operator.index(index)
    except (TypeError, ValueError):
        raise TypeError(f"{type(obj).__name__}.__dlpack_device__() returned {_short(answer)}; "
                        "the DLPack protocol asks for a tuple of two ints, (device type, "
                        "device id): (1, 0) for host memory, (2, n) for CUDA GPU n") from None


def _host_from_dlpack(obj):
    """A writeable NumPy array over a host DLPack tensor, to copy from."""
    tensor = dlpack.Imported(_capsule(obj))
    strides = tensor.strides or _c_strides(tensor.shape, tensor.dtype.itemsize)
    return _host_array(tensor.ptr, tensor.shape, strides, tensor.dtype, tensor)


def from_dlpack(obj, device: DeviceSpec = None, copy: Optional[bool] = None) -> "DeviceArray":
    """A DeviceArray over the memory of any DLPack exporter (PyTorch, CuPy, JAX, NumPy...):
    GPU memory on a GPU device (the one the tensor lives on when ``device`` is not given),
    host memory on the CPU device; the exporter keeps the memory alive.

    The exporter is asked for a DLPack 1.0 capsule (``max_version=(1, 0)``) and, where it
    predates 1.0, the legacy way. A tensor exported read-only becomes a read-only array:
    a kernel that writes it is refused at launch. ``copy`` as the array API's from_dlpack:
    None (default) shares the memory where ``device`` can use it in place and copies it
    where it cannot (host memory for a GPU device, GPU memory for the CPU device); False
    never copies (BufferError where it would have to); True always copies."""
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"{type(obj).__name__} does not export DLPack (no __dlpack__)")
    if copy not in (None, True, False):
        raise TypeError(f"copy must be True, False or None, not {copy!r}")
    kind, index = _dlpack_device(obj)
    if kind in (dlpack.KDL_CPU, dlpack.KDL_CUDA_HOST):
        return _from_host_dlpack(obj, devices.lookup(device), copy)
    if kind not in (dlpack.KDL_CUDA, dlpack.KDL_CUDA_MANAGED):
        raise NotSupportedError(f"DLPack device type {kind} is neither host nor CUDA memory")
    target = devices.lookup(device) if device is not None else _gpu(index)
    if _cuda_pointers(target):
        # the consumer's stream: simt's work runs in the legacy default stream (1)
        return _wrap_dlpack(obj, target, copy, stream=1)
    if copy is False:
        raise BufferError(f"{type(obj).__name__} lives on GPU {index}; {target.name} cannot "
                          "use GPU memory in place, and copy=False forbids the copy to host "
                          "memory. Pass copy=None, or use it on a cuda device")
    return to_device(_wrap_dlpack(obj, _gpu(index), None, stream=1), device=target)


def _from_host_dlpack(obj, target, copy):
    """A host DLPack tensor on ``target``: in place on the CPU device, else copied there."""
    if target.backend.host_accessible:
        return _wrap_dlpack(obj, target, copy)
    if copy is False:
        raise BufferError(f"{type(obj).__name__} holds host memory, which {target.name} cannot "
                          "use in place, and copy=False forbids a copy. Pass copy=None to "
                          "copy it, or wrap it on the cpu device")
    return to_device(_host_from_dlpack(obj), device=target)


def _wrap_dlpack(obj, target, copy, stream=None):
    """A DeviceArray on ``target`` over obj's DLPack tensor; where ``copy`` asks for a copy
    and the capsule is not flagged as one (a legacy exporter cannot copy on request), simt
    copies it on the device."""
    tensor = dlpack.Imported(_capsule(obj, stream, copy))
    shape = tensor.shape
    strides = tensor.strides or _c_strides(shape, tensor.dtype.itemsize)
    low, high = _span(shape, strides, tensor.dtype.itemsize)
    alloc = Allocation(tensor.ptr + low, high - low, target.backend, keepalive=tensor)
    array = DeviceArray(shape, tensor.dtype, strides, alloc=alloc, offset=-low, device=target)
    if copy and not tensor.copied:
        return array.copy()
    if tensor.readonly:
        array.readonly = True
    return array


def _capsule(obj, stream=None, copy=None):
    """obj's DLPack capsule, asked for as DLPack 1.0 (``max_version``, and ``copy`` where
    given); an exporter from before 1.0 refuses those keywords (TypeError) and is asked
    the legacy way."""
    given = {} if stream is None else {"stream": stream}
    wanted = dict(given, max_version=dlpack.VERSION)
    if copy is not None:
        wanted["copy"] = copy
    try:
        return obj.__dlpack__(**wanted)
    except TypeError:
        pass
    except BufferError:
        if copy is not True:
            raise
        wanted.pop("copy")          # CuPy makes copies only to the host: simt copies it
        return obj.__dlpack__(**wanted)
    if given:
        try:
            return obj.__dlpack__(**given)
        except TypeError:
            pass
    return obj.__dlpack__()


def _gpu_dlpack(obj):
    """Whether obj exports GPU memory through DLPack only (JAX, PyTorch CUDA tensors...)."""
    if isinstance(obj, np.ndarray) or not hasattr(obj, "__dlpack_device__"):
        return False
    return _dlpack_device(obj)[0] in (dlpack.KDL_CUDA, dlpack.KDL_CUDA_MANAGED)


def _gpu(index):
    gpus = [d for d in devices.devices() if _cuda_pointers(d)]
    if index >= len(gpus):
        raise NotSupportedError(f"this object holds memory of GPU {index}, and simt sees "
                                f"{len(gpus)} GPU(s)")
    return gpus[index]


def _wrap_host(host, device):
    """A DeviceArray over a NumPy array's memory (on a device whose memory is host memory)."""
    if not host.flags.writeable:
        raise ValueError("cannot wrap a read-only NumPy array as a device array; pass np.array(x)")
    low, high = _span(host.shape, host.strides, host.itemsize)
    start = host.__array_interface__["data"][0]
    alloc = Allocation(start + low, high - low, device.backend, keepalive=host)
    return DeviceArray(host.shape, host.dtype, host.strides, alloc=alloc, offset=-low, device=device)


def _wrap_cuda_interface(obj, device, face=None, owner=None):
    """A DeviceArray over memory described by __cuda_array_interface__ (``face``, when the
    caller read it already), kept alive by ``owner`` (default ``obj``; a launch's cache of
    adopted arrays passes a weak reference, so that it never keeps a tensor alive)."""
    if not _cuda_pointers(device):
        gpus = [d for d in devices.devices() if _cuda_pointers(d)]
        if not gpus:
            raise NotSupportedError("this object holds GPU memory, and no GPU is available")
        device = gpus[0]
    face = obj.__cuda_array_interface__ if face is None else face
    dtype = np.dtype(face.get("descr") and [tuple(f) for f in face["descr"]]
                     if face["typestr"].startswith("|V") else face["typestr"])
    shape = tuple(face["shape"])
    strides = face.get("strides") or _c_strides(shape, dtype.itemsize)
    low, high = _span(shape, strides, dtype.itemsize)
    ptr, readonly = face["data"]
    producer = face.get("stream")
    if producer not in (None, 0, 1):       # ready on the producer's stream: simt's waits
        _make_default_stream_wait(device, producer)
    alloc = Allocation(ptr + low, high - low, device.backend,
                       keepalive=obj if owner is None else owner)
    array = DeviceArray(shape, dtype, strides, alloc=alloc, offset=-low, device=device)
    if readonly:
        array.readonly = True
    return array


def _make_default_stream_wait(device, producer):
    """simt's legacy default stream waits for the work queued so far in ``producer``."""
    backend = device.backend
    _order(backend, waiter=backend.default_stream(), producer=backend.wrap_stream(producer))
