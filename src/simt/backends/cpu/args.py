"""Packing kernel arguments into the struct the CPU kernel reads."""
import ctypes
import functools
import struct

import numpy as np

from ...ir import types as T

_SCALARS = {"b": {1: ctypes.c_uint8}, "i": {1: ctypes.c_int8, 2: ctypes.c_int16, 4: ctypes.c_int32,
                                          8: ctypes.c_int64},
            "u": {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64},
            "f": {2: ctypes.c_uint16, 4: ctypes.c_float, 8: ctypes.c_double}}


@functools.lru_cache(maxsize=None)
def ctype_of(t):
    if isinstance(t, T.Scalar):
        if t.kind == "c":
            part = ctypes.c_float if t.dtype.itemsize == 8 else ctypes.c_double
            return type("Complex", (ctypes.Structure,), {"_fields_": [("re", part), ("im", part)]})
        return _SCALARS[t.kind][t.dtype.itemsize]
    if isinstance(t, T.Array):
        return type("Array", (ctypes.Structure,), {"_fields_": [
            ("data", ctypes.c_void_p), ("shape", ctypes.c_int64 * t.ndim),
            ("strides", ctypes.c_int64 * t.ndim)]})
    if isinstance(t, T.Vector):                 # [n x T] in the argument struct (target.py)
        return ctype_of(t.element) * t.n
    if isinstance(t, (T.Texture, T.Surface)):
        return TextureDescriptor
    if isinstance(t, T.TensorMap):
        return TensorMapDescriptor
    if isinstance(t, T.Record):             # its bytes, as the kernel's packed struct has them
        return ctypes.c_uint8 * t.dtype.itemsize
    if isinstance(t, T.Tuple):
        return type("Tuple", (ctypes.Structure,), {"_fields_": [
            (f"f{i}", ctype_of(item)) for i, item in enumerate(t.items)]})
    raise TypeError(f"cannot pass {t}")


class ArgPacker:
    """Builds the argument struct for one signature; ``pack`` fills a new one, ``fill``
    an existing one (launches reuse theirs: frames.py)."""

    def __init__(self, params, nsymbols):
        self.params = params
        fields = [(f"a{i}", ctype_of(t)) for i, t in enumerate(params)]
        fields += [(f"s{i}", ctypes.c_void_p) for i in range(nsymbols)]
        self.struct = type("Args", (ctypes.Structure,), {"_fields_": fields})
        self.flat = _flat_layout(self.struct, params)
        self.steps = [(t.dtype.itemsize if isinstance(t, T.Array) else None, t)
                      for t in params]

    def pack(self, args, symbols):
        packed = self.struct()
        return packed, self.fill(packed, args, symbols)

    def fill(self, packed, args, symbols):
        """Write one launch's arguments into ``packed``; returns what must outlive the
        launch. Scalars and arrays go in with one ``struct.pack_into`` of their flat
        values (a field at a time costs microseconds each)."""
        if self.flat is not None:
            values = []
            for (itemsize, t), value in zip(self.steps, args):
                if itemsize is None:
                    values.append(to_c(t, value, None))
                else:
                    ptr, shape, strides = array_parts(value)
                    values.append(ptr)
                    values += shape
                    values += [s // itemsize for s in strides]
            values += [sym.host.ctypes.data for sym in symbols]
            try:
                self.flat.pack_into(packed, 0, *values)
                return ()
            except (struct.error, OverflowError):
                pass          # out of a field's range: ctypes wraps and rounds as C would
        keep = []
        for i, (t, value) in enumerate(zip(self.params, args)):
            setattr(packed, f"a{i}", to_c(t, value, keep))
        for i, sym in enumerate(symbols):
            setattr(packed, f"s{i}", sym.host.ctypes.data)
        return keep


_CODES = {ctypes.c_int8: "b", ctypes.c_uint8: "B", ctypes.c_int16: "h", ctypes.c_uint16: "H",
          ctypes.c_int32: "i", ctypes.c_uint32: "I", ctypes.c_int64: "q", ctypes.c_uint64: "Q",
          ctypes.c_float: "f", ctypes.c_double: "d", ctypes.c_void_p: "Q"}


def _flat_layout(struct_type, params):
    """A struct.Struct writing the flat values of ``params`` (scalars and arrays) and the
    symbol addresses at the offsets ctypes gives them; None where another kind is there."""
    fmt, pos = "=", 0
    kinds = list(params) + [None] * (len(struct_type._fields_) - len(params))
    for (name, ctype), t in zip(struct_type._fields_, kinds):
        offset = getattr(struct_type, name).offset
        if ctype in _CODES:              # a scalar, or a symbol's address
            codes = _CODES[ctype]
        elif isinstance(t, T.Array):
            codes = "Q" + "q" * (2 * t.ndim)
        else:
            return None
        fmt += "x" * (offset - pos) + codes
        pos = offset + struct.calcsize("=" + codes)
    return struct.Struct(fmt)


class TextureDescriptor(ctypes.Structure):
    """A texture or surface on the CPU device (backends/cpu/textures.py reads it)."""
    _fields_ = [("data", ctypes.c_void_p), ("extent", ctypes.c_int64 * 4),
                ("strides", ctypes.c_int64 * 4)]


class TensorMapDescriptor(ctypes.Structure):
    """A tensor map on the CPU device (cpu/target.py TENSOR_MAP_STRUCT; cpu/lower/tma.py)."""
    _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.c_int64 * 5),
                ("strides", ctypes.c_int64 * 5)]


def _tensor_map(value, keep):
    if getattr(value, "_descriptor", 0) is not None:
        raise ValueError(f"{value!r} was made on {value.device.name}; make the tensor map "
                         "on the device that runs the kernel")
    c = TensorMapDescriptor()
    c.data = value.ptr
    c.shape[:len(value.shape)] = value.shape
    c.strides[:len(value.strides)] = value.strides
    keep.append(value)
    return c


def to_c(t, value, keep):
    if isinstance(t, T.TensorMap):
        return _tensor_map(value, keep)
    if isinstance(t, (T.Texture, T.Surface)):
        data, extent, strides = value._handle.descriptor()
        c = TextureDescriptor()
        c.data, c.extent[:], c.strides[:] = data, extent, strides
        keep.append(value)
        return c
    if isinstance(t, T.Array):
        ptr, shape, strides = array_parts(value)
        c = ctype_of(t)()
        c.data = ptr
        c.shape[:] = shape
        c.strides[:] = [s // t.dtype.itemsize for s in strides]
        keep.append(value)
        return c
    if isinstance(t, T.Record):
        return ctype_of(t).from_buffer_copy(np.asarray(value, dtype=t.dtype).tobytes())
    if isinstance(t, T.Tuple):
        c = ctype_of(t)()
        for i, (it, v) in enumerate(zip(t.items, value)):
            setattr(c, f"f{i}", to_c(it, v, keep))
        return c
    if isinstance(t, T.Vector):
        return ctype_of(t)(*[to_c(t.element, v, keep) for v in value])
    if t.kind == "c":
        c = ctype_of(t)()
        c.re, c.im = complex(value).real, complex(value).imag
        return c
    if t.dtype == np.float16:
        return int(np.float16(value).view(np.uint16))
    if t.is_bfloat16:
        from ...lang import bfloat16      # the kernel language: loaded for bfloat16 only
        return bfloat16.bits(value)
    if t.kind == "f":
        return float(value)
    return int(value)


def array_parts(value):
    if isinstance(value, np.ndarray):
        return value.ctypes.data, value.shape, value.strides
    return value.ptr, value.shape, value.strides
