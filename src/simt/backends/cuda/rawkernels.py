"""Kernels of modules made elsewhere (simt.Module, simt.SourceModule): their parameters
as C lays them out, and their launches through the same Launcher simt's kernels use."""
import ctypes

import numpy as np

from .launch import launch

_INTS = {1: ctypes.c_int8, 2: ctypes.c_int16, 4: ctypes.c_int32, 8: ctypes.c_int64}
_UINTS = {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64}
_FLOATS = {2: ctypes.c_uint16, 4: ctypes.c_float, 8: ctypes.c_double}   # half: its bits


def ctype(kind):
    """The ctypes type of a parameter kind: 'pointer' or a NumPy dtype of a C scalar."""
    if isinstance(kind, str):
        return ctypes.c_void_p
    table = {"b": {1: ctypes.c_bool}, "i": _INTS, "u": _UINTS, "f": _FLOATS}[kind.kind]
    return table[kind.itemsize]


def value(kind, v):
    """A parameter value as struct.pack takes it."""
    if isinstance(kind, str):
        return int(v)
    if kind.kind == "f" and kind.itemsize == 2:
        return int(np.float16(v).view(np.uint16))
    return v.item()


def launch_raw(backend, function, grid, block, shared_bytes, stream, kinds, values):
    backend.make_current()
    if shared_bytes:
        function.ensure_dynamic_shared(shared_bytes)
    launch(function, grid, block, [value(k, v) for k, v in zip(kinds, values)],
           [ctype(k) for k in kinds], shared_bytes, stream, backend)
