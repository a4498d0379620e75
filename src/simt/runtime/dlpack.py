"""DLPack for device memory, both ways, with no copy (the DLPack 0.8 C ABI through ctypes).

NumPy already speaks DLPack for host memory; what it cannot do is describe GPU memory. So
``export`` makes the ``dltensor`` capsule of a GPU array (its deleter keeps the simt array
alive until the consumer is done), and ``import_capsule`` reads one made by another
library (PyTorch, CuPy, JAX): the memory stays the producer's, kept alive by the capsule's
deleter, which runs when the last simt view of it goes away.
"""
import ctypes
import itertools
import threading

import numpy as np

from ..ir.types import is_bfloat16_dtype

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_KINDS = {code: kind for kind, code in _CODES.items()}
_BFLOAT = 4


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _DELETER)]

_api = ctypes.pythonapi
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)   # a dying capsule: raw pointer
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
# The same two calls on a capsule being destroyed, which must not be made a Python object
# again (its reference count is already zero).
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))

# What an exported tensor keeps alive until its deleter runs: key -> (the struct and its
# shape/strides arrays, the simt array). The key travels as manager_ctx.
_exported = {}
_keys = itertools.count(1)
_lock = threading.Lock()


def _delete_exported(managed):
    with _lock:
        _exported.pop(managed.contents.manager_ctx, None)


_deleter = _DELETER(_delete_exported)


def _destroy_unused(capsule):
    """The capsule's destructor: a capsule nobody consumed still owns its tensor."""
    if _raw_is_valid(capsule, b"dltensor"):
        address = _raw_get_pointer(capsule, b"dltensor")
        _delete_exported(ctypes.cast(address, ctypes.POINTER(DLManagedTensor)))


_capsule_destructor = _CAPSULE_DESTRUCTOR(_destroy_unused)


def dtype_code(dtype):
    """The DLDataType of a NumPy dtype (TypeError for those DLPack cannot say)."""
    dtype = np.dtype(dtype)
    if is_bfloat16_dtype(dtype):
        return DLDataType(_BFLOAT, 16, 1)
    if dtype.kind not in _CODES or dtype.byteorder == ">":
        raise TypeError(f"DLPack cannot describe dtype {dtype}")
    return DLDataType(_CODES[dtype.kind], dtype.itemsize * 8, 1)


def export(array, device_type, device_id):
    """A ``dltensor`` capsule describing ``array`` (a simt DeviceArray) in place."""
    ndim = array.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*array.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*[s // array.itemsize for s in array.strides])
    managed = DLManagedTensor()
    managed.dl_tensor = DLTensor(array.ptr, DLDevice(device_type, device_id), ndim,
                                 dtype_code(array.dtype), shape, strides, 0)
    with _lock:
        key = next(_keys)
        _exported[key] = (managed, shape, strides, array)
    managed.manager_ctx = key
    managed.deleter = _deleter
    return _api.PyCapsule_New(ctypes.addressof(managed), b"dltensor", _capsule_destructor)


class Imported:
    """A consumed capsule's tensor: its fields, and the producer's deleter, run when this
    object (the keepalive of the simt arrays over the memory) goes away."""

    def __init__(self, capsule):
        if not _api.PyCapsule_IsValid(capsule, b"dltensor"):
            raise ValueError("not an unconsumed DLPack capsule (a capsule can be used once)")
        address = _api.PyCapsule_GetPointer(capsule, b"dltensor")
        _api.PyCapsule_SetName(capsule, b"used_dltensor")   # ours now: its destructor skips it
        self.managed = ctypes.cast(address, ctypes.POINTER(DLManagedTensor))
        tensor = self.managed.contents.dl_tensor
        self.device = (tensor.device.device_type, tensor.device.device_id)
        self.dtype = _numpy_dtype(tensor.dtype)
        self.shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
        itemsize = self.dtype.itemsize
        if tensor.strides:
            self.strides = tuple(tensor.strides[i] * itemsize for i in range(tensor.ndim))
        else:
            self.strides = None                          # C-contiguous
        self.ptr = (tensor.data or 0) + tensor.byte_offset

    def __del__(self):
        managed = getattr(self, "managed", None)
        if managed and managed.contents.deleter:
            managed.contents.deleter(managed)


def _numpy_dtype(dl):
    if dl.lanes != 1:
        raise TypeError(f"DLPack vector types (lanes={dl.lanes}) cannot be simt array elements")
    if dl.code == _BFLOAT and dl.bits == 16:
        from ..lang.half import HOST_BF16     # ml_dtypes' bfloat16, or simt's storage struct
        return HOST_BF16
    kind = _KINDS.get(dl.code)
    if kind is None:
        raise TypeError(f"DLPack type code {dl.code} has no NumPy dtype")
    return np.dtype(bool) if kind == "b" else np.dtype(f"{kind}{dl.bits // 8}")
