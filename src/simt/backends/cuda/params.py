"""Kernel parameters on the GPU: each argument flattened into scalar PTX params.

An array is (data pointer, extents[ndim]) plus strides[ndim] (elements) when
its layout is neither C nor F; a bool is a byte, a half its 16 bits, a complex
its two parts, a tuple its items and a vector type its components in order, a
record its scalars in address order (ir/records.leaves; the padding does not travel).
The same flattening gives the LLVM parameter types (``llvm_types``), the rebuild
inside the kernel (``unflatten``), the ctypes kinds of the driver's parameter buffer
(``kinds``) and the values of one launch (``values``).
"""
import ctypes
import functools

import numpy as np

from ...ir import types as T
from ...ir import records
from ...lazy import lazy_module

# what only compiling needs (llvm_types, unflatten, flatten), loaded at the first compile:
# a kernel from the disk cache needs only the parameters' kinds and values
ll = lazy_module("llvmlite.ir")
lt = lazy_module("simt.compiler.lltypes")

_CTYPES = {"i": {1: ctypes.c_int8, 2: ctypes.c_int16, 4: ctypes.c_int32, 8: ctypes.c_int64},
           "u": {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64},
           "f": {2: ctypes.c_uint16, 4: ctypes.c_float, 8: ctypes.c_double}}


def _strided(t):
    return t.layout not in ("C", "F") and t.ndim > 0


def _is_handle(t):
    """Textures and surfaces travel as their 64-bit driver object."""
    return isinstance(t, (T.Texture, T.Surface))


class RawBytes(int):
    """The kind of a parameter passed as raw bytes with an alignment (a tensor map: 128
    bytes aligned to 64, as CUDA's ``CUtensorMap``)."""

    def __new__(cls, size, align):
        obj = super().__new__(cls, size)
        obj.align = align
        return obj


TENSOR_MAP = RawBytes(128, 64)


def llvm_types(t):
    if isinstance(t, T.TensorMap):
        # by value, as a grid constant (emit.py marks it): the kernel uses its address
        return [ll.PointerType(ll.ArrayType(lt.I8, TENSOR_MAP))]
    if _is_handle(t):
        return [ll.IntType(64)]
    if isinstance(t, T.Array):
        return [lt.ptr(1)] + [ll.IntType(64)] * (t.ndim * (2 if _strided(t) else 1))
    if isinstance(t, T.Tuple):
        return [x for item in t.items for x in llvm_types(item)]
    if isinstance(t, T.Vector):
        return llvm_types(t.element) * t.n
    if isinstance(t, T.Record):
        return [x for _, leaf in records.leaves(t.dtype) for x in llvm_types(T.Scalar(leaf))]
    if t.kind == "b":
        return [lt.I8]
    if t.kind == "c":
        part = lt.scalar(T.FLOAT32 if t.dtype.itemsize == 8 else T.FLOAT64)
        return [part, part]
    if t.kind == "f" and t.dtype.itemsize == 2:
        return [ll.IntType(16)]
    return [lt.scalar(t)]


def kinds(t):
    if isinstance(t, T.TensorMap):
        return [TENSOR_MAP]
    if _is_handle(t):
        return [ctypes.c_uint64]
    if isinstance(t, T.Array):
        return [ctypes.c_void_p] + [ctypes.c_int64] * (t.ndim * (2 if _strided(t) else 1))
    if isinstance(t, T.Tuple):
        return [x for item in t.items for x in kinds(item)]
    if isinstance(t, T.Vector):
        return kinds(t.element) * t.n
    if isinstance(t, T.Record):
        return [x for _, leaf in records.leaves(t.dtype) for x in kinds(T.Scalar(leaf))]
    if t.kind == "b":
        return [ctypes.c_uint8]
    if t.kind == "c":
        part = ctypes.c_float if t.dtype.itemsize == 8 else ctypes.c_double
        return [part, part]
    return [_CTYPES[t.kind][t.dtype.itemsize]]


def values(t, value, pointer_of):
    """The flat parameter values of one argument; ``pointer_of(array)`` gives a device address."""
    if isinstance(t, T.TensorMap):
        return [_descriptor(value)]
    if _is_handle(t):
        handle = getattr(value._handle, "value", None)       # a CUtexObject or CUsurfObject
        if handle is None:
            raise ValueError(f"{type(value).__name__} was created on {value.device.name}; "
                             "create it on the GPU that runs the kernel")
        return [handle]
    if isinstance(t, T.Array):
        out = [pointer_of(value)] + [int(n) for n in value.shape]
        if _strided(t):
            out += [int(s) // t.dtype.itemsize for s in value.strides]
        return out
    if isinstance(t, T.Tuple):
        return [x for it, v in zip(t.items, value) for x in values(it, v, pointer_of)]
    if isinstance(t, T.Vector):
        return [x for v in value for x in values(t.element, v, pointer_of)]
    if isinstance(t, T.Record):
        return _record_values(t, value)
    if t.kind == "b":
        return [int(bool(value))]
    if t.kind == "c":
        value = complex(value)
        return [value.real, value.imag]
    if t.kind == "f":
        if t.is_bfloat16:
            return [_bf16(value)]
        if t.dtype.itemsize == 2:
            return [int(np.float16(value).view(np.uint16))]
        return [float(value)]
    return [int(value) & ((1 << (8 * t.dtype.itemsize)) - 1) if t.kind == "u" else int(value)]


def plan(types):
    """(plan, helpers) for runtime/binder.py: per parameter (arrays and scalars), None
    for an array (its DeviceArray ``_flat`` tuple holds its values) or the expressions
    of its flat values as ``values`` computes them, ``{a}`` standing for the argument."""
    out, helpers = [], {"_half": _half, "_bf16": _bf16, "_tensor_map": _descriptor}
    for t in types:
        if isinstance(t, T.Array):
            out.append(None)
        elif isinstance(t, T.TensorMap):
            out.append(["_tensor_map({a})"])
        elif _is_handle(t):                       # its device: launch_guards checked it
            out.append(["{a}._handle.value"])
        elif isinstance(t, T.Record):
            name = f"_record{len(helpers)}"
            helpers[name] = _record_reader(t)
            out.append([f"*{name}({{a}})"])
        elif isinstance(t, T.Vector):
            one = plan([t.element])[0][0]
            out.append([e.replace("{a}", f"{{a}}[{i}]") for i in range(t.n) for e in one])
        elif t.kind == "b":
            out.append(["1 if {a} else 0"])
        elif t.kind == "u":
            out.append([f"int({{a}}) & {(1 << (8 * t.dtype.itemsize)) - 1}"])
        elif t.kind == "c":
            out.append(["{a}.real", "{a}.imag"])
        elif t.kind == "f" and t.is_bfloat16:
            out.append(["_bf16({a})"])
        elif t.kind == "f" and t.dtype.itemsize == 2:
            out.append(["_half({a})"])
        else:
            out.append(["{a}"])
    return out, helpers


_LEAF_CODES = {("b", 1): "?", ("i", 1): "b", ("i", 2): "h", ("i", 4): "i", ("i", 8): "q",
               ("u", 1): "B", ("u", 2): "H", ("u", 4): "I", ("u", 8): "Q", ("f", 2): "H",
               ("f", 4): "f", ("f", 8): "d", ("c", 8): "ff", ("c", 16): "dd"}


def _record_reader(t):
    """A function from a record (np.void of t's dtype) to its flat parameter values, as
    ``_record_values`` gives them: one struct unpack of its bytes, the padding skipped."""
    import struct
    layout, at = [], 0
    for path, leaf in sorted(records.leaves(t.dtype), key=lambda p: leaf_offset(t.dtype, p[0])):
        offset = leaf_offset(t.dtype, path)
        code = "H" if leaf.names is not None else \
            _LEAF_CODES.get((leaf.kind, leaf.itemsize))            # bfloat16: its 16 bits
        if code is None or leaf.byteorder == ">" or offset < at:
            return functools.partial(_record_values, t)
        layout.append("x" * (offset - at) + code)
        at = offset + leaf.itemsize
    reader = struct.Struct("<" + "".join(layout))
    return lambda value: reader.unpack_from(value.tobytes())


def leaf_offset(dtype, path):
    """The byte offset of a record leaf's path (field names, flat element indices)."""
    offset = 0
    for step in path:
        if isinstance(step, str):
            field, where = dtype.fields[step][:2]
            offset += where
            dtype = field.subdtype[0] if field.subdtype is not None else field
        else:
            offset += step * dtype.itemsize
    return offset


def _record_values(t, value):
    """The flat values of a record argument (an np.void / np.record of its dtype)."""
    record = np.asarray(value, dtype=t.dtype)
    out = []
    for path, leaf in records.leaves(t.dtype):
        v = record
        for step in path:
            v = v[step] if isinstance(step, str) else v.reshape(-1)[step]
        out += values(T.Scalar(leaf), v[()], None)
    return out


def _bf16(value):
    from ...lang import bfloat16          # the kernel language: loaded for bfloat16 only
    return bfloat16.bits(value)


def _descriptor(value):
    """A tensor map's CUtensorMap bytes (runtime/tensormaps.py)."""
    data = getattr(value, "_descriptor", None)
    if data is None:
        raise ValueError(f"{value!r} was made on {value.device.name}; make the tensor map "
                         "on the GPU that runs the kernel")
    return data


def _half(value):
    return int(np.float16(value).view(np.uint16))


def unflatten(b, t, args, target):
    """Rebuild the value of one parameter of type t from the iterator of LLVM args
    (``target``: the CudaTarget, whose address spaces a tuple's arrays are in)."""
    if isinstance(t, T.TensorMap):                # its generic address (cvta.param)
        return b.ptrtoint(next(args), lt.I64)
    if _is_handle(t):
        return next(args)
    if isinstance(t, T.Array):
        data = next(args)
        shape = [next(args) for _ in range(t.ndim)]
        if _strided(t):
            strides = [next(args) for _ in range(t.ndim)]
        else:
            strides = [None] * t.ndim
            step = lt.i64(1)
            order = range(t.ndim - 1, -1, -1) if t.layout == "C" else range(t.ndim)
            for d in order:
                strides[d] = step
                step = b.mul(step, shape[d])
        return lt.ArrayValue(t, data, shape, strides)
    if isinstance(t, T.Record):
        struct = ll.Constant(lt.memory(t), ll.Undefined)
        for path, leaf in records.leaves(t.dtype):
            v = unflatten(b, T.Scalar(leaf), args, target)
            if leaf.kind == "b":
                v = b.zext(v, lt.I8)               # a record holds a bool as its byte
            struct = b.insert_value(struct, v, _member_indices(t.dtype, path))
        return struct
    if isinstance(t, T.Tuple):
        from ...compiler.lltypes import value_type
        struct = ll.Constant(value_type(t, target), ll.Undefined)
        for i, item in enumerate(t.items):
            v = unflatten(b, item, args, target)
            if isinstance(v, lt.ArrayValue):
                v = v.pack(b, target)
            struct = b.insert_value(struct, v, i)
        return struct
    if isinstance(t, T.Vector):
        return lt.vector_of(b, lt.scalar(t),
                            [unflatten(b, t.element, args, target) for _ in range(t.n)])
    if t.kind == "b":
        return lt.bool_of_byte(b, next(args))   # a record's bool field passes its raw byte
    if t.kind == "c":
        re, im = next(args), next(args)
        value = ll.Constant(lt.scalar(t), ll.Undefined)
        return b.insert_value(b.insert_value(value, re, 0), im, 1)
    if t.kind == "f" and t.dtype.itemsize == 2:
        return b.bitcast(next(args), lt.scalar(t))
    return next(args)


def flatten(b, t, value):
    """The flat parameter values of a value of type t inside a kernel: ``unflatten``
    undone, for a launch from a kernel (devlaunch.py)."""
    if _is_handle(t):
        return [value]
    if isinstance(t, T.Array):
        data = value.data
        if data.type != lt.ptr(1):
            data = b.addrspacecast(data, lt.ptr(1))
        return [data] + list(value.shape) + (list(value.strides) if _strided(t) else [])
    if isinstance(t, T.Tuple):
        return [x for i, item in enumerate(t.items)
                for x in flatten(b, item, b.extract_value(value, i))]
    if t.kind == "b":
        return [b.zext(value, lt.I8)]
    if t.kind == "c":
        return [b.extract_value(value, 0), b.extract_value(value, 1)]
    if t.kind == "f" and t.dtype.itemsize == 2:
        return [b.bitcast(value, ll.IntType(16))]
    return [value]


def _member_indices(dtype, path):
    """The insertvalue indices of a record leaf's path (field names, element indices)."""
    out = []
    for step in path:
        if isinstance(step, str):
            fdt = dtype.fields[step][0]
            out.append(lt.record_layout(dtype)[1][step])
            dtype = fdt.subdtype[0] if fdt.subdtype is not None else fdt
        else:
            out.append(step)
    return out


# ---------------------------------------------------------------- parameter buffers

# ctypes type code -> struct code with standard sizes ('<' mode: no implicit padding)
_STRUCT_CODE = {"P": "Q", "z": "Q", "Z": "Q", "?": "?", "c": "c", "b": "b", "B": "B",
                "h": "h", "H": "H", "i": "i", "I": "I", "q": "q", "Q": "Q",
                "f": "f", "d": "d", "e": "e"}
_RAW_ALIGN = 16   # raw byte blobs (structs passed by value) get the largest alignment


def field(kind):
    """(struct code, size, alignment) of one parameter kind."""
    if isinstance(kind, int):
        return f"{kind}s", kind, getattr(kind, "align", _RAW_ALIGN)
    size = ctypes.sizeof(kind)
    code = kind._type_
    if code in "lL":
        code = {("l", 8): "q", ("L", 8): "Q", ("l", 4): "i", ("L", 4): "I"}[code, size]
    return _STRUCT_CODE[code], size, size


def layout(kinds):
    """(struct format, offsets, total size) placing each parameter at its alignment."""
    fmt, offsets, end = ["<"], [], 0
    for kind in kinds:
        code, size, align = field(kind)
        start = -(-end // align) * align
        if start > end:
            fmt.append(f"{start - end}x")
        fmt.append(code)
        offsets.append(start)
        end = start + size
    return "".join(fmt), offsets, max(end, 1)
