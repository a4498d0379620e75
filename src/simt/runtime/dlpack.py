"""DLPack both ways, with no copy: the C ABI of DLPack 1.0 (``dltensor_versioned``
capsules, with flags such as read-only) and of the versions before it (``dltensor``),
through ctypes.

NumPy speaks DLPack for host memory but cannot describe GPU memory, so simt makes its
capsules itself, for every device alike: ``export`` describes a simt array (its deleter
keeps the array alive until the consumer is done), and ``Imported`` reads a capsule made
by another library (PyTorch, CuPy, JAX, NumPy): the memory stays the producer's, kept
alive by the capsule's deleter, which runs when the last simt view of it goes away.
"""
import ctypes
import itertools
import operator
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
    """The tensor of a legacy (pre-1.0) ``dltensor`` capsule."""


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    """The tensor of a DLPack 1.0 ``dltensor_versioned`` capsule."""


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _DELETER)]
_VERSIONED_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", _VERSIONED_DELETER), ("flags", ctypes.c_uint64),
                                     ("dl_tensor", DLTensor)]

VERSION = (1, 0)                          # the DLPack version of the capsules simt makes
FLAG_READ_ONLY, FLAG_IS_COPIED = 1, 2     # DLPACK_FLAG_BITMASK_READ_ONLY, _IS_COPIED
# capsule name -> the struct it holds, and the name a consumed one takes. A capsule keeps
# the pointer of its name, not a copy: these bytes objects must live as long as simt does.
_KINDS_OF_CAPSULE = {b"dltensor": DLManagedTensor, b"dltensor_versioned": DLManagedTensorVersioned}
_USED_NAMES = {b"dltensor": b"used_dltensor", b"dltensor_versioned": b"used_dltensor_versioned"}
_NAMES = {False: b"dltensor", True: b"dltensor_versioned"}

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
# shape/strides arrays, the array). The key travels as manager_ctx.
_exported = {}
_keys = itertools.count(1)
_lock = threading.Lock()


def _delete_exported(managed):
    with _lock:
        _exported.pop(managed.contents.manager_ctx, None)


_deleter = _DELETER(_delete_exported)
_versioned_deleter = _VERSIONED_DELETER(_delete_exported)


def _destroy_unused(capsule):
    """The capsule's destructor: a capsule nobody consumed still owns its tensor."""
    for name, struct in _KINDS_OF_CAPSULE.items():
        if _raw_is_valid(capsule, name):
            address = _raw_get_pointer(capsule, name)
            _delete_exported(ctypes.cast(address, ctypes.POINTER(struct)))


_capsule_destructor = _CAPSULE_DESTRUCTOR(_destroy_unused)


def dtype_code(dtype):
    """The DLDataType of a NumPy dtype (TypeError for those DLPack cannot say)."""
    dtype = np.dtype(dtype)
    if is_bfloat16_dtype(dtype):
        return DLDataType(_BFLOAT, 16, 1)
    if dtype.kind not in _CODES or dtype.byteorder == ">":
        raise TypeError(f"DLPack cannot describe dtype {dtype}")
    return DLDataType(_CODES[dtype.kind], dtype.itemsize * 8, 1)


def reads_versioned(max_version):
    """Whether a consumer that passes ``max_version`` to ``__dlpack__`` reads DLPack 1.0
    capsules (None: a consumer from before 1.0)."""
    if max_version is None:
        return False
    try:
        major, minor = max_version
        return (operator.index(major), operator.index(minor)) >= VERSION
    except (TypeError, ValueError):
        raise BufferError(f"max_version must be a (major, minor) tuple of ints, such as "
                          f"(1, 0), or None; got {max_version!r}") from None


def export(array, device_type, device_id, versioned=False, flags=0, ptr=None):
    """A capsule describing ``array`` in place: a simt DeviceArray, or a NumPy array with
    its address as ``ptr``. ``versioned``: a DLPack 1.0 ``dltensor_versioned`` capsule
    carrying ``flags`` (FLAG_READ_ONLY, FLAG_IS_COPIED); else a legacy ``dltensor`` one,
    which has no flags."""
    ndim = array.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*array.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*[s // array.itemsize for s in array.strides])
    tensor = DLTensor(array.ptr if ptr is None else ptr, DLDevice(device_type, device_id),
                      ndim, dtype_code(array.dtype), shape, strides, 0)
    if versioned:
        managed = DLManagedTensorVersioned(version=DLPackVersion(*VERSION), flags=flags,
                                           dl_tensor=tensor, deleter=_versioned_deleter)
    else:
        managed = DLManagedTensor(dl_tensor=tensor, deleter=_deleter)
    with _lock:
        key = next(_keys)
        _exported[key] = (managed, shape, strides, array)
    managed.manager_ctx = key
    return _api.PyCapsule_New(ctypes.addressof(managed), _NAMES[versioned], _capsule_destructor)


class Imported:
    """A consumed capsule's tensor: its fields, and the producer's deleter, run when this
    object (the keepalive of the simt arrays over the memory) goes away.

    ``versioned``: the capsule was a DLPack 1.0 one, whose producer understood the
    ``copy`` request; ``readonly`` and ``copied``: its flags (always False for a legacy
    capsule, which cannot say)."""

    def __init__(self, capsule):
        name, struct = _capsule_kind(capsule)
        address = _api.PyCapsule_GetPointer(capsule, name)
        managed = ctypes.cast(address, ctypes.POINTER(struct))
        self.versioned = struct is DLManagedTensorVersioned
        if self.versioned:
            _check_version(managed.contents.version)
        _api.PyCapsule_SetName(capsule, _USED_NAMES[name])   # ours now: its destructor skips it
        self.managed = managed
        flags = managed.contents.flags if self.versioned else 0
        self.readonly = bool(flags & FLAG_READ_ONLY)
        self.copied = bool(flags & FLAG_IS_COPIED)
        tensor = managed.contents.dl_tensor
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


def _capsule_kind(capsule):
    """(name, struct) of an unconsumed DLPack capsule of either kind."""
    for name, struct in _KINDS_OF_CAPSULE.items():
        if _api.PyCapsule_IsValid(capsule, name):
            return name, struct
    raise ValueError("not an unconsumed DLPack capsule (a capsule can be used once)")


def _check_version(version):
    """A capsule of a later major version has another layout: refused before it is used
    (the producer's destructor then frees it)."""
    if version.major != VERSION[0]:
        raise BufferError(f"the DLPack capsule is of version {version.major}."
                          f"{version.minor}, and simt reads version {VERSION[0]}.x; the "
                          f"producer was asked for max_version={VERSION}")


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
