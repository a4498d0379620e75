"""Other libraries' arrays as DeviceArrays over their own memory: DLPack exporters (PyTorch,
CuPy, JAX, NumPy...), objects with ``__cuda_array_interface__``, and the ordering of simt's
work with the streams their producers name.

``asarray`` and ``from_dlpack`` are the public ways in; a launch wraps a foreign argument
through the same functions (runtime/launch.py). Exporting simt's own arrays is
DeviceArray's part (runtime/arrays.py).
"""

import operator

import numpy as np

from simt.runtime import devices, dlpack
from simt.runtime.arrays import (DeviceArray, DeviceSpec, _c_strides, _cuda_pointers,
                                 _host_array, _order, _span, to_device)
from simt.runtime.backend import Allocation
from simt.errors import NotSupportedError
from simt.ir.types import float8_storage, is_bfloat16_dtype


def asarray(obj, device: DeviceSpec = None) -> "DeviceArray":
    """A DeviceArray over ``obj``'s memory, without copying where the memory is reachable.

    Wraps DeviceArrays (returned as they are), objects with
    ``__cuda_array_interface__`` (GPU memory), and on the CPU device NumPy arrays
    and DLPack exporters. Anything else (lists, host arrays for a GPU) is copied
    with ``to_device``.
    """
    if isinstance(obj, DeviceArray):
        return obj
    target = devices.lookup(device)
    face = _cuda_interface(obj)
    if face is not None:
        return _wrap_cuda_interface(obj, target, face)
    if _gpu_dlpack(obj):
        return from_dlpack(obj, target)
    if target.backend.host_accessible:
        host = obj if isinstance(obj, np.ndarray) else _from_dlpack(obj)
        if host is not None:
            _check_values(host, obj)
            return _wrap_host(host, target)
    host = np.asarray(obj)
    _check_values(host, obj)
    return to_device(host, device=target)


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


def _from_dlpack(obj):
    """A NumPy array sharing a CPU DLPack exporter's memory, or None."""
    if not hasattr(obj, "__dlpack__"):
        return None
    if _dlpack_device(obj)[0] not in (dlpack.KDL_CPU, dlpack.KDL_CUDA_HOST):
        raise NotSupportedError(f"{type(obj).__name__} lives on a GPU; wrap it on a cuda device")
    return _host_from_dlpack(obj)


def _host_from_dlpack(obj):
    """A writeable NumPy array over a host DLPack tensor (np.from_dlpack makes tensors of
    pre-1.0 exporters read-only, as their format cannot say; a kernel may write them,
    as the exporter's own code may)."""
    tensor = dlpack.Imported(obj.__dlpack__())
    strides = tensor.strides or _c_strides(tensor.shape, tensor.dtype.itemsize)
    return _host_array(tensor.ptr, tensor.shape, strides, tensor.dtype, tensor)


def from_dlpack(obj, device: DeviceSpec = None) -> "DeviceArray":
    """A DeviceArray over the memory of any DLPack exporter (PyTorch, CuPy, JAX, NumPy...),
    with no copy: GPU memory on a GPU device (the one the tensor lives on when ``device``
    is not given), host memory on the CPU device. The exporter keeps the memory alive."""
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"{type(obj).__name__} does not export DLPack (no __dlpack__)")
    kind, index = _dlpack_device(obj)
    if kind in (dlpack.KDL_CPU, dlpack.KDL_CUDA_HOST):
        target = devices.lookup(device)
        if not target.backend.host_accessible:
            raise NotSupportedError(f"{type(obj).__name__} holds host memory, which "
                                    f"{target.name} cannot use in place; copy it with "
                                    "simt.to_device(np.asarray(x)), or wrap it on the cpu device")
        host = _host_from_dlpack(obj)
        _check_values(host, obj)
        return _wrap_host(host, target)
    if kind not in (dlpack.KDL_CUDA, dlpack.KDL_CUDA_MANAGED):
        raise NotSupportedError(f"DLPack device type {kind} is neither host nor CUDA memory")
    target = devices.lookup(device) if device is not None else _gpu(index)
    if not _cuda_pointers(target):
        raise NotSupportedError(f"{type(obj).__name__} lives on GPU {index}; {target.name} "
                                "cannot use GPU memory in place (copy it to the host first)")
    try:      # the consumer's stream: simt's work runs in the legacy default stream (1)
        capsule = obj.__dlpack__(stream=1)
    except TypeError:
        capsule = obj.__dlpack__()
    tensor = dlpack.Imported(capsule)
    shape = tensor.shape
    strides = tensor.strides or _c_strides(shape, tensor.dtype.itemsize)
    low, high = _span(shape, strides, tensor.dtype.itemsize)
    alloc = Allocation(tensor.ptr + low, high - low, target.backend, keepalive=tensor)
    return DeviceArray(shape, tensor.dtype, strides, alloc=alloc, offset=-low, device=target)


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
