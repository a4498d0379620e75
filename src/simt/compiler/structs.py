"""Typing rules for ``@simt.struct`` values (lang/structs.py): building one
(``Vec(1.0, 2.0)``, or the class's ``__init__``), methods (``v.dot(w)``), properties,
static methods, class constants, and operators dispatched to the class's special
methods (``a + b`` calls ``a.__add__(b)``, else ``b.__radd__(a)``; ``v[i]`` calls
``__getitem__``).

A method is a device function whose first argument is the receiver, by value. A method
that changes ``self`` (lang/structs.py finds them) is compiled to return ``self`` too
(``return_self``): the call then writes the receiver back where it came from, a
variable, a field of one, or an array element, so ``p.advance(dt)`` changes ``p`` (and
``a[i].advance(dt)`` the element), as a non-const C++ method changes ``*this``.
"""
import ast

from ..ir import nodes as ir
from ..ir import types as T
from ..ir import records as layout
from ..lang import structs as lang
from ..lang import vectors
from ..lang.registry import Static
from . import records

# the special method of each operator (calls.binop's names), and its reflected one
BINARY = {"add": "__add__", "sub": "__sub__", "mul": "__mul__", "truediv": "__truediv__",
          "floordiv": "__floordiv__", "mod": "__mod__", "pow": "__pow__",
          "lshift": "__lshift__", "rshift": "__rshift__", "and": "__and__", "or": "__or__",
          "xor": "__xor__", "matmul": "__matmul__"}
COMPARE = {"eq": ("__eq__", "__eq__"), "ne": ("__ne__", "__ne__"), "lt": ("__lt__", "__gt__"),
           "le": ("__le__", "__ge__"), "gt": ("__gt__", "__lt__"), "ge": ("__ge__", "__le__")}
UNARY = {"USub": "__neg__", "UAdd": "__pos__", "Invert": "__invert__"}
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
            "pow": "**", "lshift": "<<", "rshift": ">>", "and": "&", "or": "|", "xor": "^",
            "matmul": "@", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">",
            "ge": ">=", "USub": "-", "UAdd": "+", "Invert": "~"}


def is_struct(value):
    return isinstance(getattr(value, "type", None), T.Struct)


def info(fc, t, loc):
    """The StructInfo of Struct type ``t``; a CompileError when its class is gone (a
    dtype carrying the mark of a class this process never defined)."""
    found = lang.by_token(t.token)
    if found is None:
        fc.fail(loc, f"the struct class {t.token.partition('@')[0]} of this value is not "
                "defined in this process (or was changed since the data was made)",
                "import the module that defines the @simt.struct class")
    return found


# ----------------------------------------------------------------- building one
def construct(fc, cls, args, kwargs, loc):
    """``Vec(...)`` in a kernel: the class's ``__init__`` on a zeroed record, or, without
    one, the fields in order (keywords and the annotations' defaults work)."""
    found = lang.info_of(cls)
    t = T.element_type(found.dtype)
    init = found.methods.get("__init__")
    if init is not None:
        zero = _zero(fc, t, loc)
        if kwargs:
            fc.fail(loc, f"{cls.__name__}() passes keywords to __init__: simt calls device "
                    "functions with positional arguments", "pass them in order")
        return _call(fc, init, zero, [fc.expr(a, loc) for a in args], loc, result="self")
    names = list(found.fields)
    if len(args) > len(names):
        fc.fail(loc, f"{cls.__name__}() takes {len(names)} field values, got {len(args)}",
                f"its fields: {', '.join(names)}")
    given = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in given:
            fc.fail(loc, f"{cls.__name__}() got an unexpected or repeated field '{key}'",
                    f"its fields: {', '.join(names)}")
        given[key] = value
    items = []
    for name in names:
        if name in given:
            value = fc.expr(given[name], loc)
        elif name in found.defaults:
            value = fc.expr(Static(found.defaults[name]), loc)
        else:
            fc.fail(loc, f"{cls.__name__}() is missing field '{name}'",
                    f"give every field without a default: {', '.join(names)}")
        items.append(value)
    tuple_value = ir.TupleExpr(T.Tuple([i.type for i in items]), loc, items)
    return records.from_tuple(fc, tuple_value, t, loc)


def _zero(fc, t, loc):
    """A value of type ``t`` (a scalar, vector or record) with every field zero: what
    ``self`` holds when ``__init__`` starts."""
    if isinstance(t, T.Record):
        return ir.MakeRecord(t, loc, [_zero(fc, T.element_type(base), loc)
                                      for _, _, base in layout.slots(t.dtype)])
    if isinstance(t, T.Vector):
        return vectors.make(fc, t, [ir.Const(t.element, loc, 0)] * t.n, loc)
    return ir.Const(t, loc, 0)


# ----------------------------------------------------------------- attributes
class MethodCall:
    """A struct method read in a kernel, called next: ``v.method`` (``receiver`` v) or
    ``Vec.method`` (no receiver: a static method, or a method taking its receiver
    first, ``Vec.dot(a, b)``)."""

    kernel_callable = True

    def __init__(self, method, receiver=None):
        self.method, self.receiver = method, receiver

    def build(self, fc, args, kwargs, loc):
        if kwargs:
            fc.fail(loc, f"{self.method.__name__}() takes its arguments by position",
                    "simt calls device functions with positional arguments")
        values = [fc.expr(a, loc) for a in args]
        if self.method.kind == "static":
            return fc.call_device(self.method, values, loc)
        if self.receiver is not None:
            return _call(fc, self.method, self.receiver, values, loc)
        if not values or not is_struct(values[0]):
            fc.fail(loc, f"{self.method.__name__}() called through the class takes a "
                    f"{self.method.owner.__name__} first", "call it on a value: v.method(...)")
        return _call(fc, self.method, values[0], values[1:], loc)


def attribute(fc, value, attr, node):
    """``v.attr`` for a struct value: a field, a method (bound), a property's value, a
    static method or a class constant."""
    t = value.type
    found = info(fc, t, fc.loc(node))
    if attr in t.dtype.names:
        return records.field(fc, value, attr, node)
    method = found.methods.get(attr)
    if method is not None:
        if method.kind == "property":
            return _call(fc, method, value, [], fc.loc(node))
        return Static(MethodCall(method, value))
    if attr in found.constants:
        return Static(found.constants[attr], f"{found.cls.__name__}.{attr}")
    fc.fail(node, f"struct {found.cls.__name__} has no field or method '{attr}'",
            _members_hint(found))


def class_attribute(cls, attr):
    """``Vec.attr`` on the class when it names a method (else None: a constant or
    another attribute, read as Python reads it)."""
    method = lang.info_of(cls).methods.get(attr)
    return None if method is None else Static(MethodCall(method))


def _members_hint(found):
    methods = sorted(n for n in found.methods if not n.startswith("__"))
    text = f"its fields: {', '.join(found.fields)}"
    if methods:
        text += f"; its methods: {', '.join(methods)}"
    return text + " (fields are declared in the class body with an annotation: x: np.float32)"


# ----------------------------------------------------------------- operators
def binop(fc, op, lhs, rhs, loc):
    """``lhs op rhs`` with a struct on either side, or None when neither is one."""
    name = BINARY.get(op)
    if is_struct(lhs):
        method = info(fc, lhs.type, loc).methods.get(name)
        if method is not None:
            return _call(fc, method, lhs, [rhs], loc)
    if is_struct(rhs) and name is not None:
        method = info(fc, rhs.type, loc).methods.get(name.replace("__", "__r", 1))
        if method is not None:
            return _call(fc, method, rhs, [lhs], loc)
    if not (is_struct(lhs) or is_struct(rhs)):
        return None
    _refuse(fc, op, [lhs, rhs], f"define {name} (or {name.replace('__', '__r', 1)} on the "
            "right operand's class)" if name else None, loc)


def compare(fc, op, lhs, rhs, loc):
    """``lhs op rhs`` (a comparison) with a struct on either side, or None."""
    name, reflected = COMPARE[op]
    if is_struct(lhs):
        method = info(fc, lhs.type, loc).methods.get(name)
        if method is not None:
            return _call(fc, method, lhs, [rhs], loc)
    if is_struct(rhs):
        method = info(fc, rhs.type, loc).methods.get(reflected)
        if method is not None:
            return _call(fc, method, rhs, [lhs], loc)
    if not (is_struct(lhs) or is_struct(rhs)):
        return None
    _refuse(fc, op, [lhs, rhs], f"define {name}", loc)


def unary(fc, opname, value, loc):
    name = UNARY.get(opname)
    method = info(fc, value.type, loc).methods.get(name) if name else None
    if method is None:
        _refuse(fc, opname, [value], f"define {name}" if name else None, loc)
    return _call(fc, method, value, [], loc)


def getitem(fc, value, index, loc):
    method = info(fc, value.type, loc).methods.get("__getitem__")
    if method is None:
        found = info(fc, value.type, loc)
        fc.fail(loc, f"struct {found.cls.__name__} cannot be indexed: it has no __getitem__",
                "define __getitem__(self, i), or read a field by name (v.x or v['x'])")
    return _call(fc, method, value, [index], loc)


def setitem(fc, place, index, value, loc):
    """``v[i] = x``: the class's ``__setitem__``, which changes ``v``."""
    found = info(fc, place.type, loc)
    method = found.methods.get("__setitem__")
    if method is None:
        fc.fail(loc, f"struct {found.cls.__name__} does not support item assignment: it has "
                "no __setitem__", "define __setitem__(self, i, value), or assign a field")
    done = _call(fc, method, place, [index, value], loc)
    return done if isinstance(done, ir.Stmt) else ir.ExprStmt(loc, done)


def _refuse(fc, op, values, hint, loc):
    names = " and ".join(str(v.type) for v in values)
    fc.fail(loc, f"operator '{_SYMBOLS.get(op, op)}' is not defined for {names}", hint)


# ----------------------------------------------------------------- calls
def _call(fc, method, receiver, args, loc, result="value"):
    """A call of ``method`` on ``receiver``: its value (``result='self'``: the receiver
    after the call, for ``__init__``). A method that changes its receiver writes it back
    first (statements hoisted before the statement being built)."""
    if not method.returns_self:
        value = fc.call_device(method, [receiver] + args, loc)
        return receiver if result == "self" else value
    call = fc.call_device(method, [receiver] + args, loc)
    name = fc.temp("self")
    fc.hoist(*fc.bind_name(name, call, loc))
    returned = ir.Var(fc.var_types[name], loc, name)
    if isinstance(returned.type, T.Tuple):              # (value, self)
        value, new_self = ir.TupleGet(returned.type.items[0], loc, returned, 0), \
            ir.TupleGet(returned.type.items[1], loc, returned, 1)
    else:
        value, new_self = None, returned
    if result == "self":
        return new_self
    back = _write_back(fc, receiver, new_self, loc)
    if value is not None:
        fc.hoist(*back)
        return value
    # a method that returns nothing: the write-back is the statement (its value, used
    # as one, is refused by the caller: "this call is a statement and has no value")
    fc.hoist(*back[:-1])
    return back[-1] if back else ir.ExprStmt(loc, new_self)


def _write_back(fc, place, new, loc):
    """The statements that give ``place`` (the receiver) the value ``new``."""
    root = _root(place)
    if isinstance(root, ir.Param):
        # a parameter (or a field of one) changes: from the next pass on it is a variable
        # holding a copy, as for ``p.x = v`` (frontend's assigned names)
        fc.params_to_copy.add(fc.param_names[root.index])
        fc.changed = True
        return []
    if isinstance(place, ir.Var):
        return fc.bind_name(place.name, new, loc)
    if isinstance(place, ir.Field):
        return [records.assign_field(fc, place.record, place.name, new, loc)]
    if isinstance(place, ir.Load):
        if isinstance(place.array, ir.Field) and not records.in_memory(place.array):
            return [records.assign_field(fc, place.array.record, place.array.name, new, loc,
                                         place.indices)]
        if not all(_simple(i) for i in place.indices):
            fc.fail(loc, "this method changes the array element it is called on, and the "
                    "element's index is an expression simt would evaluate twice",
                    "bind the index to a variable first: j = ...; a[j].method()")
        return [fc.store(place.array, _index(place.indices, loc), new, loc,
                         place.label or "array")]
    return []           # a temporary (f().method()): its change is dropped, as in C++


def _root(place):
    """The variable, parameter or array element a receiver is part of."""
    while True:
        if isinstance(place, ir.Field):
            place = place.record
        elif isinstance(place, ir.Load) and isinstance(place.array, ir.Field) and \
                not records.in_memory(place.array):
            place = place.array.record
        else:
            return place


def _simple(e):
    return isinstance(e, (ir.Const, ir.Var, ir.Param))


def _index(indices, loc):
    if len(indices) == 1:
        return indices[0]
    return ir.TupleExpr(T.Tuple([i.type for i in indices]), loc, list(indices))


# ----------------------------------------------------------------- compiling a method
def return_self(fndef):
    """Rewrite a method that changes ``self`` to return it too: ``return x`` becomes
    ``return (x, self)``, a bare ``return`` and the end of the body ``return self``."""
    self_name = fndef.args.args[0].arg
    has_value = any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fndef))

    class Rewrite(ast.NodeTransformer):
        def visit_Return(self, node):
            me = ast.Name(id=self_name, ctx=ast.Load())
            value = me if node.value is None or not has_value else \
                ast.Tuple(elts=[node.value, me], ctx=ast.Load())
            return ast.copy_location(ast.Return(value=ast.copy_location(value, node)), node)

    Rewrite().visit(fndef)
    fndef.returns = None
    if not has_value and not isinstance(fndef.body[-1], ast.Return):
        last = fndef.body[-1]
        end = ast.Return(value=ast.Name(id=self_name, ctx=ast.Load()))
        end.lineno = end.value.lineno = getattr(last, "end_lineno", last.lineno)
        end.col_offset = end.value.col_offset = last.col_offset
        end.end_col_offset = end.value.end_col_offset = last.col_offset
        fndef.body.append(end)
    ast.fix_missing_locations(fndef)
