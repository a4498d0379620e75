"""Code generation for records (compiler/records.py types them): a field of a record in
memory is loaded or stored alone, at its offset, with the alignment its address is known
to have (a packed record's unaligned fields become byte accesses on the GPU, where LLVM
splits them); a record held in a register is an LLVM packed struct of exactly its
dtype's bytes (lltypes.record_layout), read with extractvalue and updated with
insertvalue."""
from llvmlite import ir as ll

from ..ir import nodes as ir
from ..ir import records
from ..ir import types as T
from .lltypes import (I8, ArrayValue, bool_of_byte, i32, i64, memory, record_layout, scalar,
                      vector_align)
from .records import in_memory, place_align


def element_align(array_type):
    """The alignment an element access of an array may assume (None: its type's own):
    a record's C alignment, a vector's CUDA alignment (lltypes.vector_align), less in an
    array field of a packed record."""
    t = array_type.element
    natural = None
    if isinstance(t, T.Vector):
        natural = vector_align(t, array_type)
    elif isinstance(t, T.Record):
        natural = t.align
    if array_type.align is None:
        return natural
    return array_type.align if natural is None else min(natural, array_type.align)


def address(em, e):
    """(pointer, alignment) of a record (or vector) in memory: a Load, or a Field of one."""
    if not isinstance(e, ir.Field):
        array = em.expr(e.array)
        ptr = em.element_address(array, [em.expr(i) for i in e.indices], e.label, e.loc)
        if isinstance(e.type, T.Vector):       # CUDA's alignment, less in local memory
            return ptr, element_align(e.array.type)
        return ptr, place_align(e)
    ptr, _ = address(em, e.record)
    return _offset(em, ptr, e.record.type, e.name), place_align(e)


def load_field(em, e):
    t, rec = e.type, e.record.type
    offset = rec.dtype.fields[e.name][1]
    if in_memory(e.record):
        ptr, align = address(em, e.record)
        fptr = _offset(em, ptr, rec, e.name)
        align = records.access_align(align, offset)
    else:
        value = em.expr(e.record)
        if not isinstance(t, T.Array):
            return _to_register(em, em.builder.extract_value(value, _member(rec, e.name)), t)
        fptr = _offset(em, spill(em, value, rec), rec, e.name)
    if isinstance(t, T.Array):
        return _view(t, fptr, rec.dtype.fields[e.name][0])
    return _to_register(em, em.builder.load(fptr, typ=memory(t), align=align), t)


def store_field(em, s):
    """``place.name = value`` in memory: a record's field, or a vector's component (its
    struct's field: only those bytes are written)."""
    rec = s.place.type
    dtype = rec.struct if isinstance(rec, T.Vector) else rec.dtype
    offset = dtype.fields[s.name][1]
    ptr, align = address(em, s.place)
    align = records.access_align(align, offset)
    value = _to_memory(em, em.expr(s.value), s.value.type)
    em.builder.store(value, _at(em, ptr, offset), align=align)


def replace(em, e):
    rec = e.record.type
    record = em.expr(e.record)
    value = _to_memory(em, em.expr(e.value), e.value.type)
    if not e.index:
        return em.builder.insert_value(record, value, _member(rec, e.name))
    # an element of an array field: through a stack copy, so that the index may vary
    slot = spill(em, record, rec)
    fdt = rec.dtype.fields[e.name][0]
    view_type = T.Array(fdt.subdtype[0], len(fdt.subdtype[1]), "C", "copy")
    view = _view(view_type, _offset(em, slot, rec, e.name), fdt)
    target = em.element_address(view, [em.expr(i) for i in e.index], e.name, e.loc)
    em.builder.store(value, target, align=element_align(view_type))
    return em.builder.load(slot, typ=memory(rec), align=rec.align)


def make(em, e):
    rec = e.type
    value = ll.Constant(memory(rec), None)          # zero padding
    for (name, k, _), item in zip(records.slots(rec.dtype), e.items):
        where = [_member(rec, name)] + ([k] if k is not None else [])
        value = em.builder.insert_value(value, _to_memory(em, em.expr(item), item.type), where)
    return value


def spill(em, value, t):
    """A stack copy of a record value (aligned as C aligns the struct)."""
    slot = em.alloca(memory(t))
    slot.align = 16
    em.builder.store(value, slot, align=t.align)
    return slot


def _view(t, data, fdt):
    shape = [int(n) for n in fdt.subdtype[1]]
    strides, step = [], 1
    for n in reversed(shape):
        strides.insert(0, i64(step))
        step *= n
    return ArrayValue(t, data, [i64(n) for n in shape], strides)


def _offset(em, ptr, rec, name):
    return _at(em, ptr, rec.dtype.fields[name][1])


def _at(em, ptr, offset):
    return ptr if offset == 0 else em.builder.gep(ptr, [i64(offset)], source_etype=I8)


def _member(rec, name):
    return record_layout(rec.dtype)[1][name]


def _to_register(em, value, t):
    """A field's value as a register holds it: a bool as i1, a vector type's components
    (an array in memory) as an LLVM vector."""
    b = em.builder
    if isinstance(t, T.Vector):
        vector = ll.Constant(scalar(t), ll.Undefined)
        for k in range(t.n):
            vector = b.insert_element(vector, b.extract_value(value, k), i32(k))
        return vector
    return bool_of_byte(b, value) if isinstance(t, T.Scalar) and t.kind == "b" else value


def _to_memory(em, value, t):
    b = em.builder
    if isinstance(t, T.Vector):
        array = ll.Constant(memory(t), ll.Undefined)
        for k in range(t.n):
            array = b.insert_value(array, b.extract_element(value, i32(k)), k)
        return array
    return b.zext(value, I8) if isinstance(t, T.Scalar) and t.kind == "b" else value
