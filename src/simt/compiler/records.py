"""Typing rules for records (C structs: NumPy structured dtypes) and named tuples: field
reads (``a[i].x``, ``a[i]['x']``, ``r.p.v[k]``, ``t.name``), field writes, and building a
named tuple by calling its class.

A field of a record in memory (an array element, or a field of one) is read and written
in place: only its bytes move. A record held in a variable is a value: ``r.x = v``
assigns ``r`` a copy with the field replaced (``ir.Replace``), as C does for a local
struct. An array field of a record value is a view of a stack copy, in memory space
"copy": it can be read, and written only as ``r.v[k] = x`` or ``r.v[k].y = x`` (which
assign ``r``). A vector type's components are its fields here (``a[i].x = v`` writes x
alone; ``a[i]['x']`` reads it).
"""
import ast

import numpy as np

from ..ir import nodes as ir
from ..ir import records
from ..ir import types as T
from ..lang import vectors
from ..lang.registry import Static


def has_fields(t):
    return isinstance(t, (T.Record, T.NamedTuple))


def in_memory(e):
    """Whether a record expression is a place in memory: a Load, or a Field of one."""
    while isinstance(e, ir.Field):
        e = e.record
    return isinstance(e, ir.Load)


def field(fc, value, name, node):
    """``value.name``: a named tuple's item or a record's field (ir.Field)."""
    t = value.type
    loc = fc.loc(node)
    if isinstance(t, T.NamedTuple):
        if name not in t.names:
            fc.fail(node, f"{t.cls.__name__} has no field '{name}'",
                    f"its fields: {', '.join(t.names)}")
        return _item(fc, value, t.names.index(name), loc)
    fdt = _field_dtype(fc, t, name, node)
    if fdt.subdtype is None:
        return ir.Field(T.element_type(fdt), loc, value, name)
    base, shape = fdt.subdtype
    align = records.access_align(place_align(value), t.dtype.fields[name][1])
    align = min(align, base.itemsize & -base.itemsize)
    # what an element access would otherwise promise: a vector type's CUDA alignment (NumPy
    # places a float4 field on a multiple of 4 only), a record's, a scalar's
    promised = getattr(T.element_type(base), "align", None) or base.alignment
    space = _space(value)
    view = T.Array(base, len(shape), "C", space, align=align if align < promised else None)
    return ir.Field(view, loc, value, name)


def by_name(fc, value, name, node):
    """``value['name']``: a field of a record or named tuple, or a component of a vector
    type (a record field of NumPy struct ``[('x', f4), ('y', f4)]`` is a float2, and NumPy
    names its components as fields)."""
    if isinstance(value.type, T.Vector):
        return vectors.attribute(fc, value, name, fc.loc(node))
    if not has_fields(value.type):
        fc.fail(node, f"a {value.type} has no fields to index by name ('{name}')",
                "index records (structured dtypes) and vector types by field name")
    return field(fc, value, name, node)


def has_parts(t):
    """Whether ``x.name`` may be assigned on a value of type t: a record's field, a
    vector's component (named tuples are refused by assign_field)."""
    return has_fields(t) or isinstance(t, T.Vector)


def assign_field(fc, place, name, value, node, index=None):
    """The statement of ``place.name = value`` (``index``: of ``place.name[index] =
    value``, an element of an array field of a record held in a variable)."""
    t = place.type
    loc = fc.loc(node)
    if isinstance(t, T.Vector):
        return _assign_component(fc, place, name, value, node)
    if isinstance(t, T.NamedTuple):
        fc.fail(node, f"cannot assign field '{name}' of a {t.cls.__name__}: named tuples "
                "are immutable, as in Python", "build a new one, or use a record dtype")
    if not isinstance(t, T.Record):
        fc.fail(node, f"cannot assign field '{name}' of a {t}")
    fdt = _field_dtype(fc, t, name, node)
    if fdt.subdtype is not None and index is None:
        fc.fail(node, f"field '{name}' is an array ({fdt.subdtype[0]}{list(fdt.subdtype[1])}): "
                "assign its elements", f"write .{name}[k] = value")
    target = T.element_type(fdt.subdtype[0] if index is not None else fdt)
    value = fc.cast(value, target, node)
    if in_place(place):
        _check_writable(fc, place, node)
        return ir.StoreField(loc, place, name, value)
    return _rebuild(fc, place, name, value, index or [], node)


def _assign_component(fc, place, name, value, node):
    """``place.x = value`` for a vector: in memory (an array element, a record's field)
    only the component's bytes are written, as CUDA's ``a[i].x = v`` writes them, so
    other threads' writes to the other components stay; a value is rebuilt."""
    loc = fc.loc(node)
    if in_place(place):
        vectors.index_of(fc, place.type, name, loc)
        _check_writable(fc, place, node)
        return ir.StoreField(loc, place, name, fc.cast(value, place.type.element, node))
    new = vectors.replace(fc, place, name, value, loc)
    return _rebuild_with(fc, place, new, node)


def in_place(place):
    """Whether a field of ``place`` is written in memory: an array element or a field of
    one, but not an element of an array field of a record value (a stack copy's, space
    "copy": ``r.v[k].x = 1`` assigns ``r``)."""
    return in_memory(place) and _space(place) != "copy"


def _check_writable(fc, place, node):
    if _space(place) == "const":
        fc.fail(node, "constant memory is read-only in kernels",
                "write it from the host with .copy_from(host_array)")


def _rebuild(fc, place, name, value, index, node):
    new = ir.Replace(place.type, fc.loc(node), place, name, value, index)
    return _rebuild_with(fc, place, new, node)


def _rebuild_with(fc, place, new, node):
    """The statement that gives ``place`` (a variable, a field of one, or an element of
    an array field of one) the value ``new``."""
    if isinstance(place, ir.Var):
        return fc.bind_name(place.name, new, node)[0]
    if isinstance(place, ir.Field):
        return _rebuild(fc, place.record, place.name, new, [], node)
    if isinstance(place, ir.Load) and isinstance(place.array, ir.Field):
        # r.v[k]: an element of an array field of a record value
        return _rebuild(fc, place.array.record, place.array.name, new, place.indices, node)
    if isinstance(place, ir.Load):          # w = r.v; w[k].x = 1
        fc.fail(node, "this array is a field of a copy of a record; writing it would change "
                "nothing", "write the field through the record: r.v[k].x = value")
    fc.fail(node, "cannot assign a field of this value: it is neither a variable nor "
            "an array element", "bind it to a variable first (r = f(...); r.x = v)")


def make_namedtuple(fc, cls, args, kwargs, loc):
    """``Point(x, y)``: a named tuple value (``typing.NamedTuple`` defaults included)."""
    names = cls._fields
    if len(args) > len(names):
        fc.fail(loc, f"{cls.__name__} takes {len(names)} values, got {len(args)}")
    given = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in given:
            fc.fail(loc, f"{cls.__name__}() got an unexpected or repeated field '{key}'")
        given[key] = value
    defaults = getattr(cls, "_field_defaults", {})
    items = []
    for name in names:
        if name in given:
            items.append(fc.expr(given[name], loc))
        elif name in defaults:
            items.append(fc.expr(Static(defaults[name]), loc))
        else:
            fc.fail(loc, f"{cls.__name__}() is missing field '{name}'")
    return ir.TupleExpr(T.NamedTuple([i.type for i in items], names, cls), loc, items)


def is_namedtuple_class(value):
    return isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")


def place_align(e):
    """The alignment the address of a record expression has: its array's records'
    alignment, narrowed by the offsets of the fields it goes through (a record nested at
    an odd offset of a packed one is unaligned); a value's copy is its type's."""
    steps = []
    while isinstance(e, ir.Field):
        steps.append(e)
        e = e.record
    align = e.type.align
    if isinstance(e, ir.Load) and e.array.type.align is not None:
        align = min(align, e.array.type.align)
    for f in reversed(steps):
        align = records.access_align(align, f.record.type.dtype.fields[f.name][1])
    return align


def _space(e):
    while isinstance(e, ir.Field):
        e = e.record
    return e.array.type.space if isinstance(e, ir.Load) else "copy"


def _field_dtype(fc, t, name, node):
    if name not in t.dtype.names and isinstance(t, T.Struct):
        fc.fail(node, f"struct {t.class_name} has no field '{name}'",
                f"its fields: {', '.join(t.dtype.names)}; declare a field in the class body "
                f"with its type: {name}: np.float32")
    if name not in t.dtype.names:
        fc.fail(node, f"the record has no field '{name}'", f"its fields: {', '.join(t.dtype.names)}")
    return t.dtype.fields[name][0]


def field_target(target):
    """Whether an assignment target is ``r.x`` or ``r['x']`` (a field)."""
    return isinstance(target, ast.Attribute) or (
        isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)
        and isinstance(target.slice.value, str))


def field_root(node):
    """The name ``r`` of an assigned ``r.x``, ``r['x']``, ``r.p.x`` or ``r.v[k]`` (a field
    written right on a name), else None."""
    if not isinstance(getattr(node, "ctx", None), ast.Store) or isinstance(node, ast.Name):
        return None
    steps = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        steps.append(node)
        node = node.value
    if not isinstance(node, ast.Name) or not steps:
        return None
    first = steps[-1]        # the step right after the name
    return node.id if field_target(first) else None


def from_tuple(fc, value, t, loc):
    """A tuple converted to a record, as NumPy assigns one to a structured element: its
    items are the fields in order, an array field's item a tuple of its elements."""
    names = t.dtype.names
    if len(value.type.items) != len(names):
        fc.fail(loc, f"cannot convert a tuple of {len(value.type.items)} values to a record "
                f"of {len(names)} fields ({', '.join(names)})")
    items = []
    for i, name in enumerate(names):
        item = _item(fc, value, i, loc)
        fdt = t.dtype.fields[name][0]
        if fdt.subdtype is None:
            items.append(fc.cast(item, T.element_type(fdt), loc))
            continue
        base, shape = fdt.subdtype
        flat = _flatten(fc, item, len(shape), loc)
        if len(flat) != int(np.prod(shape)):
            fc.fail(loc, f"field '{name}' holds {fdt.subdtype[0]}{list(shape)}: give it a "
                    f"tuple of {list(shape)} values")
        items += [fc.cast(x, T.element_type(base), loc) for x in flat]
    return ir.MakeRecord(t, loc, items)


def _flatten(fc, value, depth, loc):
    if depth == 0:
        return [value]
    if not isinstance(value.type, T.Tuple):
        fc.fail(loc, f"an array field needs a tuple of values, got a {value.type}")
    return [x for i in range(len(value.type.items))
            for x in _flatten(fc, _item(fc, value, i, loc), depth - 1, loc)]


def _item(fc, value, i, loc):
    return fc.subscript(value, ir.Const(T.INT64, loc, i), loc, "")
