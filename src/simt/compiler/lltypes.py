"""How simt types are laid out in LLVM IR (shared by every target)."""
import functools

import numpy as np
from llvmlite import ir as ll

from ..ir import records
from ..ir import types as T

I1, I8, I32, I64 = ll.IntType(1), ll.IntType(8), ll.IntType(32), ll.IntType(64)
F16, F32, F64 = ll.HalfType(), ll.FloatType(), ll.DoubleType()
VOID = ll.VoidType()


def bool_of_byte(builder, byte):
    """A bool read from memory (its byte) as i1: any nonzero byte is True, as NumPy reads
    it (a trunc would read 2 as False); stores write 0 or 1."""
    return builder.icmp_unsigned("!=", byte, ll.Constant(byte.type, 0))


def ptr(addrspace=0):
    return ll.PointerType(addrspace=addrspace)


def function(module, name, fnty):
    """The module's declaration of function ``name``, added on first use."""
    fn = module.globals.get(name)
    return fn if fn is not None else ll.Function(module, fnty, name)


def const(t, value):
    return ll.Constant(t, value)


def i64(value):
    return ll.Constant(I64, value)


def i32(value):
    return ll.Constant(I32, value)


def scalar(t):
    """LLVM type of a scalar value held in a register (bool is i1); a vector type's is
    an LLVM vector."""
    if isinstance(t, T.Vector):
        return ll.VectorType(scalar(t.element), t.n)
    if t.is_bfloat16:
        return ll.IntType(16)           # its bits (lang/bfloat16.py)
    if t.float8:
        return ll.IntType(8)            # its bits (lang/float8.py)
    kind, bits = t.dtype.kind, t.dtype.itemsize * 8
    if kind == "b":
        return I1
    if kind in "iu":
        return ll.IntType(bits)
    if kind == "f":
        return {16: F16, 32: F32, 64: F64}[bits]
    if kind == "c":
        part = F32 if bits == 64 else F64
        return ll.LiteralStructType([part, part])
    raise TypeError(f"no LLVM type for {t}")


def memory(t):
    """LLVM type of a scalar or record stored in an array (bool is a byte); a vector
    type's is an array of its components (its size, where an LLVM vector of 3 would take 4)."""
    if isinstance(t, T.Vector):
        return ll.ArrayType(scalar(t.element), t.n)
    if isinstance(t, T.Record):
        return record_layout(t.dtype)[0]
    return I8 if t.dtype.kind == "b" else scalar(t)


@functools.lru_cache(maxsize=None)
def record_layout(dtype):
    """(LLVM type, {field name: member index}) of a record: a packed struct of its
    fields as stored in memory and explicit padding, exactly the dtype's bytes."""
    members, index, at = [], {}, 0
    for name, fdt, offset in records.fields(dtype):
        if offset > at:
            members.append(ll.ArrayType(I8, offset - at))
        index[name] = len(members)
        members.append(_member(fdt))
        at = offset + fdt.itemsize
    if dtype.itemsize > at:
        members.append(ll.ArrayType(I8, dtype.itemsize - at))
    return ll.LiteralStructType(members, packed=True), index


def _member(dtype):
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        return ll.ArrayType(_member(base), int(np.prod(shape, dtype=np.int64)))
    return memory(T.element_type(dtype))


def array_struct(t, addrspace):
    """{data pointer, [ndim x i64] shape, [ndim x i64] strides (in elements)}."""
    return ll.LiteralStructType([ptr(addrspace), ll.ArrayType(I64, t.ndim), ll.ArrayType(I64, t.ndim)])


def value_type(t, target):
    """LLVM type of a value of simt type t (what a variable of that type holds)."""
    if isinstance(t, (T.Scalar, T.Vector)):
        return scalar(t)
    if isinstance(t, T.Record):
        return memory(t)
    if isinstance(t, T.Array):
        return array_struct(t, target.addrspace(t.space))
    if isinstance(t, T.Tuple):
        return ll.LiteralStructType([value_type(i, target) for i in t.items])
    if isinstance(t, T.Void):
        return VOID
    if isinstance(t, T.TensorMap):
        return target.tensor_map_lltype
    if isinstance(t, (T.Texture, T.Surface)):
        # the GPU passes the 64-bit texture/surface object; the CPU a descriptor struct
        return target.texture_lltype
    raise TypeError(f"no LLVM type for {t}")


class ArrayValue:
    """An array during code generation: its data pointer and per-dimension
    extents and strides (elements), as LLVM values. ``scope``: the position of the
    noalias kernel parameter it is (or is a view of), whose alias scope its accesses
    carry where a target says so (FunctionEmitter.alias); None for any other array."""

    scope = None

    def __init__(self, type, data, shape, strides):
        self.type = type
        self.data = data
        self.shape = list(shape)
        self.strides = list(strides)

    def pack(self, builder, target):
        struct = array_struct(self.type, target.addrspace(self.type.space))
        value = ll.Constant(struct, ll.Undefined)
        value = builder.insert_value(value, self.data, 0)
        for d in range(self.type.ndim):
            value = builder.insert_value(value, self.shape[d], [1, d])
            value = builder.insert_value(value, self.strides[d], [2, d])
        return value

    @classmethod
    def unpack(cls, builder, t, value):
        data = builder.extract_value(value, 0)
        shape = [builder.extract_value(value, [1, d]) for d in range(t.ndim)]
        strides = [builder.extract_value(value, [2, d]) for d in range(t.ndim)]
        return cls(t, data, shape, strides)


def static_array(decl, data):
    """The ArrayValue of a fixed-shape C-ordered declaration (shared, local, const)."""
    if isinstance(data, ll.GlobalVariable):      # a typed pointer in llvmlite: make it opaque
        data = ll.FormattedConstant(ptr(data.type.addrspace), data.get_reference())
    shape = [i64(n) for n in decl.shape]
    strides, step = [], 1
    for n in reversed(decl.shape):
        strides.insert(0, i64(step))
        step *= n
    return ArrayValue(decl.type, data, shape, strides)


def byte_global(module, name, data, addrspace=0):
    """An internal constant global holding ``data`` (bytes), created once per module."""
    if name not in module.globals:
        array = ll.ArrayType(I8, len(data))
        gv = ll.GlobalVariable(module, array, name, addrspace=addrspace)
        gv.initializer = ll.Constant(array, bytearray(data))
        gv.global_constant = True
        gv.linkage = "internal"
        gv.align = 16
    return module.globals[name]


def const_global(module, decl, addrspace=0):
    """The baked values of a ``simt.const.array_like`` declaration."""
    import numpy as np
    raw = np.ascontiguousarray(decl.data).view(np.uint8).tobytes()
    return byte_global(module, f"simt_const_array_{symbol_part(decl.name)}_{_digest(raw)}", raw, addrspace)


def cstring(module, text, addrspace=0):
    """A NUL-terminated string constant (printf formats)."""
    data = text.encode("utf8") + b"\0"
    return byte_global(module, f"simt_str_{_digest(data)}", data, addrspace)


def _digest(data):
    """A global's name part from its contents: the same in every process (an address or
    Python's salted str hash would make each compile's PTX differ)."""
    import hashlib
    return hashlib.sha256(data).hexdigest()[:16]


def symbol_part(name):
    """A Python name as part of a symbol: itself if ASCII, else each non-ASCII letter as
    ``u`` and its code point, and a digest of the name (so κ and u03ba differ). llvmlite's
    JIT and the NVPTX back end take ASCII symbols only (LLVM stops the process on others)."""
    if name.isascii():
        return name
    spelled = "".join(c if c.isascii() else f"u{ord(c):04x}" for c in name)
    return f"{spelled}_{_digest(name.encode('utf8'))[:8]}"


def result_of(builder, result_type, values):
    """The value of a fetch or read that gives ``values``: the one value, or for a tuple
    result type (several channels) a literal struct of them."""
    if isinstance(result_type, T.Vector):
        return vector_of(builder, scalar(result_type), values)
    if not isinstance(result_type, T.Tuple):
        return values[0]
    struct = ll.Constant(ll.LiteralStructType([v.type for v in values]), ll.Undefined)
    for i, v in enumerate(values):
        struct = builder.insert_value(struct, v, i)
    return struct


def vector_of(builder, lltype, values):
    """An LLVM vector of type ``lltype`` holding ``values``."""
    vector = ll.Constant(lltype, ll.Undefined)
    for i, v in enumerate(values):
        vector = builder.insert_element(vector, v, i32(i))
    return vector


def vector_align(t, array_type):
    """The alignment a vector element access may promise: CUDA's for the vector in global,
    shared and constant memory (allocations and static layouts are 16-byte aligned), the
    component's in local arrays (whose stack slots promise no more)."""
    return t.align if array_type.space != "local" else t.dtype.itemsize
