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

import numpy as np
from llvmlite import ir as ll

from ...ir import types as T
from ...lang import bfloat16
from ...compiler.lltypes import I1, I8, ArrayValue, i64, memory, ptr, record_layout, scalar, vector_of
from ...ir import records

_CTYPES = {"i": {1: ctypes.c_int8, 2: ctypes.c_int16, 4: ctypes.c_int32, 8: ctypes.c_int64},
           "u": {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64},
           "f": {2: ctypes.c_uint16, 4: ctypes.c_float, 8: ctypes.c_double}}


def _strided(t):
    return t.layout not in ("C", "F") and t.ndim > 0


def _is_handle(t):
    """Textures and surfaces travel as their 64-bit driver object."""
    return isinstance(t, (T.Texture, T.Surface))


def llvm_types(t):
    if _is_handle(t):
        return [ll.IntType(64)]
    if isinstance(t, T.Array):
        return [ptr(1)] + [ll.IntType(64)] * (t.ndim * (2 if _strided(t) else 1))
    if isinstance(t, T.Tuple):
        return [x for item in t.items for x in llvm_types(item)]
    if isinstance(t, T.Vector):
        return llvm_types(t.element) * t.n
    if isinstance(t, T.Record):
        return [x for _, leaf in records.leaves(t.dtype) for x in llvm_types(T.Scalar(leaf))]
    if t.kind == "b":
        return [I8]
    if t.kind == "c":
        part = scalar(T.FLOAT32 if t.dtype.itemsize == 8 else T.FLOAT64)
        return [part, part]
    if t.kind == "f" and t.dtype.itemsize == 2:
        return [ll.IntType(16)]
    return [scalar(t)]


def kinds(t):
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
            return [bfloat16.bits(value)]
        if t.dtype.itemsize == 2:
            return [int(np.float16(value).view(np.uint16))]
        return [float(value)]
    return [int(value) & ((1 << (8 * t.dtype.itemsize)) - 1) if t.kind == "u" else int(value)]


def plan(types):
    """(plan, helpers) for runtime/binder.py: per parameter (arrays and scalars), None
    for an array (its DeviceArray ``_flat`` tuple holds its values) or the expressions
    of its flat values as ``values`` computes them, ``{a}`` standing for the argument."""
    out = []
    for t in types:
        if isinstance(t, T.Array):
            out.append(None)
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
    return out, {"_half": _half, "_bf16": bfloat16.bits}


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


def _half(value):
    return int(np.float16(value).view(np.uint16))


def unflatten(b, t, args, target):
    """Rebuild the value of one parameter of type t from the iterator of LLVM args
    (``target``: the CudaTarget, whose address spaces a tuple's arrays are in)."""
    if _is_handle(t):
        return next(args)
    if isinstance(t, T.Array):
        data = next(args)
        shape = [next(args) for _ in range(t.ndim)]
        if _strided(t):
            strides = [next(args) for _ in range(t.ndim)]
        else:
            strides = [None] * t.ndim
            step = i64(1)
            order = range(t.ndim - 1, -1, -1) if t.layout == "C" else range(t.ndim)
            for d in order:
                strides[d] = step
                step = b.mul(step, shape[d])
        return ArrayValue(t, data, shape, strides)
    if isinstance(t, T.Record):
        struct = ll.Constant(memory(t), ll.Undefined)
        for path, leaf in records.leaves(t.dtype):
            v = unflatten(b, T.Scalar(leaf), args, target)
            if leaf.kind == "b":
                v = b.zext(v, I8)               # a record holds a bool as its byte
            struct = b.insert_value(struct, v, _member_indices(t.dtype, path))
        return struct
    if isinstance(t, T.Tuple):
        from ...compiler.lltypes import value_type
        struct = ll.Constant(value_type(t, target), ll.Undefined)
        for i, item in enumerate(t.items):
            v = unflatten(b, item, args, target)
            if isinstance(v, ArrayValue):
                v = v.pack(b, target)
            struct = b.insert_value(struct, v, i)
        return struct
    if isinstance(t, T.Vector):
        return vector_of(b, scalar(t), [unflatten(b, t.element, args, target) for _ in range(t.n)])
    if t.kind == "b":
        return b.trunc(next(args), I1)
    if t.kind == "c":
        re, im = next(args), next(args)
        value = ll.Constant(scalar(t), ll.Undefined)
        return b.insert_value(b.insert_value(value, re, 0), im, 1)
    if t.kind == "f" and t.dtype.itemsize == 2:
        return b.bitcast(next(args), scalar(t))
    return next(args)


def flatten(b, t, value):
    """The flat parameter values of a value of type t inside a kernel: ``unflatten``
    undone, for a launch from a kernel (devlaunch.py)."""
    if _is_handle(t):
        return [value]
    if isinstance(t, T.Array):
        data = value.data
        if data.type != ptr(1):
            data = b.addrspacecast(data, ptr(1))
        return [data] + list(value.shape) + (list(value.strides) if _strided(t) else [])
    if isinstance(t, T.Tuple):
        return [x for i, item in enumerate(t.items)
                for x in flatten(b, item, b.extract_value(value, i))]
    if t.kind == "b":
        return [b.zext(value, I8)]
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
            out.append(record_layout(dtype)[1][step])
            dtype = fdt.subdtype[0] if fdt.subdtype is not None else fdt
        else:
            out.append(step)
    return out
