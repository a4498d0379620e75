"""numba-cuda's device arrays: simt's DeviceArray with numba's methods. UNLIKE simt's
own arrays, ``d.copy_to_device(src)`` copies src INTO d (numba's meaning)."""
import contextlib
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ..lang.registry import Namespace
from ..lazy import lazy_module
from ..runtime import arrays as _arrays
from ..runtime import interop as _interop
from .host import numba_stream

_hostarrays = lazy_module("simt.runtime.hostarrays")   # loaded at a first host array
_interop = lazy_module("simt.runtime.interop")         # loaded at a first foreign array


class DeviceNDArray:
    """numba's DeviceNDArray methods, on simt's DeviceArray. UNLIKE simt's DeviceArray,
    ``d.copy_to_device(src)`` copies ``src`` (host or device) INTO ``d``."""

    def copy_to_device(self, ary, stream: Any = 0):
        """numba: copy ``ary`` into this array (simt: ``self.copy_from(ary)``)."""
        if isinstance(ary, _arrays.DeviceArray):
            _arrays.DeviceArray.copy_to_device(ary, self, stream=numba_stream(stream))
        else:
            _arrays.DeviceArray.copy_from(self, ary, stream=numba_stream(stream))

    def copy_to_host(self, ary=None, stream: Any = 0):
        return _arrays.DeviceArray.copy_to_host(self, ary, stream=numba_stream(stream))

    def split(self, section, stream: Any = 0):
        """Views of ``section`` elements each (the last one shorter) of a 1-d array."""
        if self.ndim != 1:
            raise ValueError("only 1-d arrays can be split")
        return [self[i:i + section] for i in range(0, self.shape[0], section)]

    def getitem(self, idx, stream: Any = 0):
        return self[idx]

    def bind(self, stream: Any = 0):
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


def numba_array(array: Any) -> Any:     # Any: a DeviceArray with some methods numba's
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


def to_device(obj, stream: Any = 0, copy=True, to=None):
    """numba's cuda.to_device: a new device array holding ``obj`` (uninitialized with
    copy=False), or ``obj`` copied into ``to``."""
    if to is not None:
        numba_array(to).copy_to_device(obj, stream=stream)
        return to
    if not copy:
        return device_array_like(obj)
    return numba_array(_interop.to_device(obj, stream=numba_stream(stream)))


def device_array(shape, dtype: DTypeLike = np.float64, strides=None, order="C", stream: Any = 0):
    if strides is not None:
        return numba_array(_arrays.DeviceArray(shape, dtype, strides))
    return numba_array(_arrays.device_array(shape, dtype, order))


def device_array_like(ary, stream: Any = 0):
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


def pinned_array(shape, dtype: DTypeLike = np.float64, strides=None, order="C"):
    return _hostarrays.pinned_array(shape, dtype, order)


def mapped_array(shape, dtype: DTypeLike = np.float64, strides=None, order="C", stream: Any = 0,
                 portable=False, wc=False):
    return _hostarrays.mapped_array(shape, dtype, order)


def managed_array(shape, dtype: DTypeLike = np.float64, strides=None, order="C", stream: Any = 0,
                  attach_global=True):
    return _hostarrays.managed_array(shape, dtype, order)


def _order(ary):
    """NumPy's zeros_like order: 'F' for an array that is F- and not C-contiguous."""
    flags = ary.flags
    return "F" if flags["F_CONTIGUOUS"] and not flags["C_CONTIGUOUS"] else "C"


def pinned_array_like(ary):
    return pinned_array(ary.shape, ary.dtype, order=_order(ary))


def mapped_array_like(ary, stream: Any = 0, portable=False, wc=False):
    return mapped_array(ary.shape, ary.dtype, order=_order(ary))


def managed_array_like(ary, stream: Any = 0, attach_global=True):
    return managed_array(ary.shape, ary.dtype, order=_order(ary))


@contextlib.contextmanager
def pinned(*arrays):
    """numba pins existing host memory for the block; simt copies from any host memory
    (on the GPU, pageable copies are staged by the driver), so this only yields."""
    yield


@contextlib.contextmanager
def mapped(*arrays, stream: Any = 0, portable=False, wc=False):
    """Device views of host arrays for the block: simt.asarray maps them (CPU device) or
    they must be mapped_array memory (GPU)."""
    views = [numba_array(_interop.asarray(a)) for a in arrays]
    yield views[0] if len(views) == 1 else views


def as_cuda_array(obj, sync=True):
    """A device array over an object's ``__cuda_array_interface__`` (or DLPack), no copy."""
    return numba_array(_interop.asarray(obj))


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A device array over a ``__cuda_array_interface__`` dict, no copy."""
    return as_cuda_array(_Interfaced(desc, owner))


class _Interfaced:
    def __init__(self, desc, owner):
        self.__cuda_array_interface__ = desc
        self.owner = owner


def _auto_device(obj, stream: Any = 0, copy=True, user_explicit=False):
    """numba's devicearray.auto_device: (a device array for obj, whether it was copied)."""
    if isinstance(obj, _arrays.DeviceArray):
        return numba_array(obj), False
    return to_device(np.asarray(obj), stream=stream, copy=copy), True


devicearray = Namespace("cuda.devicearray", "numba's devicearray module: the array class",
                        DeviceNDArray=DeviceNDArray, auto_device=_auto_device)


def is_cuda_array(obj):
    return hasattr(obj, "__cuda_array_interface__")
