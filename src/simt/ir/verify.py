"""The IR verifier: catches a pass that builds broken IR at the pass, not in codegen.

It checks what code generation relies on and the front end promises (a node's own
docstring in ``nodes.py`` states the contract):

- shape: every field holds what ``nodes.py`` declares (an ``Expr``, a ``list[Stmt]``, a
  type, a string...); an expression's type is a simt type;
- scope: every ``Var`` read and every variable assigned (``Assign``, ``ForRange``,
  ``Collective``, ``WarpOp``) is declared in the function's ``locals``, with a type its
  value fits; a ``Param`` names a parameter and has its type; ``break``/``continue`` sit
  inside a loop; a kernel returns no value, a device function values of its return type;
  every called function is among ``callees``, every ``ArrayRef`` among ``decls``;
- types: an operation's type is consistent with its operands' where the IR states it
  (``BinOp``, ``Compare``, ``Logical``, ``IfExp``, ``UnaryOp``, ``Cast``, tuples, calls),
  conditions are ``bool``, a ``Load``/``Store`` has one integer index per dimension of an
  array and the element's type, a ``View`` drops one dimension per integer index;
  no arithmetic or comparison is of bfloat16 or FP8 (their bits), only of float32.

A violation is a bug in simt, not in the kernel: ``InvalidIR`` names the rule, the node
and its source line, and prints the function with the statement flagged. ``after`` runs
the verifier between passes when ``config.verify_ir`` is on (the test suite turns it on).
"""
import dataclasses
import functools
import typing

from . import nodes as ir
from . import records
from . import types as T
from .printer import format_expr, format_function
from .walk import all_functions, children, fields
from ..config import config

_LOOPS = (ir.While, ir.ForRange)
_SHIFTS = ("lshift", "rshift")
_BINOPS = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift",
           "and", "or", "xor", "min", "max"}
_COMPARES = {"eq", "ne", "lt", "le", "gt", "ge"}


class InvalidIR(Exception):
    """simt built IR that breaks a rule of the verifier: an internal error."""


def after(stage, fn):
    """``fn`` (and the functions it calls), verified when ``config.verify_ir`` is on;
    ``stage`` names the pass that built it, for the report."""
    if config.verify_ir:
        for f in all_functions(fn):
            verify(f, stage)
    return fn


def verify(fn, stage=""):
    """Raise ``InvalidIR`` unless ``fn`` satisfies every rule (module docstring)."""
    _Verifier(fn, stage).function()


def fits(value, declared):
    """Whether a value of type ``value`` may be stored where ``declared`` is expected:
    the same type, or arrays differing only in layout (the front end keeps an
    argument's layout when a variable unifies to 'A'), item by item for tuples."""
    if value == declared:
        return True
    if isinstance(value, T.Array) and isinstance(declared, T.Array):
        return (value.dtype, value.ndim) == (declared.dtype, declared.ndim)
    if isinstance(value, T.Tuple) and isinstance(declared, T.Tuple):
        return len(value.items) == len(declared.items) and all(
            fits(a, b) for a, b in zip(value.items, declared.items))
    return False


def _is_int(t):
    return isinstance(t, T.Scalar) and t.kind in "iu"


def _what(value):
    """A short description of what a field holds, for a report."""
    if isinstance(value, ir.Expr):
        return f"a {type(value).__name__} of type {value.type!r}"
    if isinstance(value, list):
        return "a list of " + (", ".join(sorted({type(v).__name__ for v in value})) or "nothing")
    return f"a {type(value).__name__} {value!r:.40}"


class _Verifier:
    def __init__(self, fn, stage):
        self.fn, self.stage = fn, stage
        self.stmt = None            # the statement being checked, flagged in reports

    def fail(self, node, problem):
        loc = getattr(node, "loc", None) or getattr(self.stmt, "loc", None)
        where = f"{loc.filename}:{loc.line}" if loc is not None else "no source location"
        what = type(node).__name__
        if isinstance(node, ir.Expr):
            what += f" `{format_expr(node, self.fn)}`"
        stage = f" after {self.stage}" if self.stage else ""
        raise InvalidIR(
            f"internal error: invalid IR{stage} in '{self.fn.name}': {problem}\n"
            f"  {what} at {where}\n"
            "  please report this (the function as built, '>>' at the statement):\n"
            + format_function(self.fn, mark=self.stmt))

    # ------------------------------------------------------------ function
    def function(self):
        fn = self.fn
        for name, t in fn.params:
            if not (isinstance(name, str) and isinstance(t, T.Type)):
                self.fail(fn, f"parameter {name!r} has no simt type")
        for name, t in fn.locals.items():
            if not isinstance(t, T.Type):
                self.fail(fn, f"local {name!r} has no simt type")
        if not isinstance(fn.body, list):
            self.fail(fn, "the body is not a list of statements")
        for s in fn.body:
            self.statement(s, in_loop=False)

    def statement(self, s, in_loop):
        """Operands before the node's own rule, so that a report names the innermost
        culprit; nested statements after it."""
        if not isinstance(s, ir.Stmt):
            self.fail(s, "a statement list holds a non-statement")
        self.stmt = s
        self.shape(s)
        nested = [child for child in children(s) if isinstance(child, ir.Stmt)]
        for child in children(s):
            if not isinstance(child, ir.Stmt):
                self.expression(child)
        rule = _STMT_RULES.get(type(s))
        if rule is not None:
            rule(self, s, in_loop)
        for child in nested:
            self.statement(child, in_loop or isinstance(s, _LOOPS))
            self.stmt = s

    def expression(self, e):
        self.shape(e)
        if not isinstance(e.type, T.Type):
            self.fail(e, f"its type {e.type!r} is not a simt type")
        for child in children(e):
            if not isinstance(child, ir.Expr):
                self.fail(e, "an operand is a statement")
            self.expression(child)
        rule = _EXPR_RULES.get(type(e))
        if rule is not None:
            rule(self, e)

    def shape(self, node):
        """Every field holds what its declaration in nodes.py says."""
        for name, value in fields(node):
            expected = _declared(type(node)).get(name)
            if expected is not None and not _matches(value, expected):
                self.fail(node, f"field '{name}' holds {_what(value)}, "
                                f"declared {_describe(expected)}")

    # ------------------------------------------------------------ shared checks
    def declared(self, name, node, value_type):
        """``name`` is a local of the function and a value of ``value_type`` fits it."""
        t = self.fn.locals.get(name)
        if t is None:
            self.fail(node, f"variable '{name}' is not declared in the locals")
        if value_type is not None and not fits(value_type, t):
            self.fail(node, f"variable '{name}' is declared {t!r} but gets a {value_type!r}")

    def condition(self, e, node):
        if e.type != T.BOOL:
            self.fail(node, f"the condition has type {e.type!r}, not bool")

    def indexing(self, array, indices, node):
        """An array with one integer index per dimension."""
        t = array.type
        if not isinstance(t, T.Array):
            self.fail(node, f"indexes a {t!r}, not an array")
        if len(indices) != t.ndim:
            self.fail(node, f"{len(indices)} indices for a {t.ndim}-d array")
        for k, index in enumerate(indices):
            if not (isinstance(index, ir.Expr) and _is_int(index.type)):
                self.fail(node, f"index {k} is {_what(index)}, not an integer expression")


# ---------------------------------------------------------------- declarations

@functools.cache
def _declared(cls):
    """field name -> declared type, for the fields that may hold children."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)
            if f.name not in ("loc", "type") and hints.get(f.name) is not typing.Any}


def _matches(value, expected):
    origin = typing.get_origin(expected)
    if origin is typing.Union:
        return any(_matches(value, option) for option in typing.get_args(expected))
    if origin is list:
        (item,) = typing.get_args(expected)
        return isinstance(value, list) and all(isinstance(v, item) for v in value)
    return isinstance(value, expected)


def _describe(expected):
    args = typing.get_args(expected)
    if typing.get_origin(expected) is list:
        return f"list[{_describe(args[0])}]"
    if args:
        return " or ".join(_describe(a) for a in args)
    return expected.__name__


# ---------------------------------------------------------------- statements

def _assign(v, s, in_loop):
    v.declared(s.name, s, s.value.type)


def _store(v, s, in_loop):
    v.indexing(s.array, s.indices, s)
    element = s.array.type.element
    if s.value.type != element:
        v.fail(s, f"stores a {s.value.type!r} into an array of {element!r}")


def _cond(v, s, in_loop):
    v.condition(s.cond, s)


def _for(v, s, in_loop):
    v.declared(s.var, s, None)
    t = v.fn.locals[s.var]
    if not (_is_int(t) or t == T.BOOL):
        v.fail(s, f"loop variable '{s.var}' has type {t!r}")
    for bound in (s.start, s.stop, s.step):
        if bound.type != t:
            v.fail(s, f"range bound of type {bound.type!r} for a {t!r} variable")


def _loop_exit(v, s, in_loop):
    if not in_loop:
        v.fail(s, f"'{type(s).__name__.lower()}' outside a loop")


def _return(v, s, in_loop):
    if s.value is None:
        return
    if v.fn.is_kernel:
        v.fail(s, "a kernel returns a value")
    if not fits(s.value.type, v.fn.return_type):
        v.fail(s, f"returns a {s.value.type!r} from a function returning {v.fn.return_type!r}")


def _result(v, s, in_loop):
    if s.name is not None:
        v.declared(s.name, s, s.type)


def _store_field(v, s, in_loop):
    place = s.place
    while isinstance(place, ir.Field):
        place = place.record
    if not isinstance(place, ir.Load):
        v.fail(s, "stores a field of a record that is not in memory")
    t = s.place.type
    if isinstance(t, T.Vector):              # one component of a vector in memory
        if s.name not in t.struct.names or s.value.type != t.element:
            v.fail(s, f"stores a {s.value.type!r} as component '{s.name}' of a {t!r}")
        return
    _field_value(v, s, t, s.name, s.value.type, element=False)


def _field_value(v, node, record, name, t, element):
    """Whether ``t`` is the type of field ``name`` of ``record`` (``element``: of one
    element of that array field)."""
    if not isinstance(record, T.Record) or name not in record.dtype.names:
        v.fail(node, f"field '{name}' of a {record!r}")
    fdt = record.dtype.fields[name][0]
    if fdt.subdtype is not None and not element:
        if not (isinstance(t, T.Array) and (t.dtype, t.ndim) == (fdt.subdtype[0], len(fdt.subdtype[1]))):
            v.fail(node, f"type {t!r} for array field '{name}' ({fdt})")
        return
    expected = T.element_type(fdt.subdtype[0] if element else fdt)
    if t != expected:
        v.fail(node, f"type {t!r} for field '{name}' of type {expected!r}")


_STMT_RULES = {ir.StoreField: _store_field, ir.Assign: _assign, ir.Store: _store, ir.If: _cond, ir.While: _cond,
               ir.Assert: _cond, ir.ForRange: _for, ir.Break: _loop_exit,
               ir.Continue: _loop_exit, ir.Return: _return, ir.Collective: _result,
               ir.WarpOp: _result}


# ---------------------------------------------------------------- expressions

def _const(v, e):
    if not isinstance(e.type, T.Scalar):
        v.fail(e, f"a constant of type {e.type!r}")


def _var(v, e):
    v.declared(e.name, e, e.type)


def _checked_var(v, e):
    if e.assigned.type != T.BOOL:
        v.fail(e, f"its flag '{e.assigned.name}' is a {e.assigned.type!r}, not bool")
    if e.type != e.var.type:
        v.fail(e, f"has type {e.type!r}, its variable {e.var.type!r}")


def _param(v, e):
    params = v.fn.params
    if not 0 <= e.index < len(params):
        v.fail(e, f"parameter {e.index} of {len(params)}")
    name, t = params[e.index]
    if e.type != t:
        v.fail(e, f"type {e.type!r} for parameter '{name}' of type {t!r}")


def _cast(v, e):
    if not (isinstance(e.type, T.Scalar) and isinstance(e.value.type, T.Scalar)):
        v.fail(e, f"casts {e.value.type!r} to {e.type!r}: casts are between scalars")


def _bits_type(t):
    """bfloat16 and FP8, which code holds as their bits: arithmetic and comparisons of
    them are of their float32 values (calls.binop, calls.compare, lang/python.py)."""
    return isinstance(t, T.Scalar) and (t.is_bfloat16 or t.float8 is not None)


def _binop(v, e):
    if e.op not in _BINOPS:
        v.fail(e, f"unknown operator '{e.op}'")
    if not isinstance(e.type, T.Scalar):
        v.fail(e, f"arithmetic of type {e.type!r}")
    if _bits_type(e.type):
        v.fail(e, f"arithmetic of type {e.type!r}: it computes in float32")
    if e.lhs.type != e.type:
        v.fail(e, f"type {e.type!r} but its lhs has {e.lhs.type!r}")
    if e.op in _SHIFTS and not _is_int(e.rhs.type):
        v.fail(e, f"shifts by a {e.rhs.type!r}")
    if e.op not in _SHIFTS and e.rhs.type != e.type:
        v.fail(e, f"type {e.type!r} but its rhs has {e.rhs.type!r}")


def _unary(v, e):
    if e.op == "not":
        if not (e.type == T.BOOL and e.value.type == T.BOOL):
            v.fail(e, f"'not' of a {e.value.type!r} giving {e.type!r}: both must be bool")
    else:
        if e.op not in ("neg", "invert"):
            v.fail(e, f"unknown unary operator '{e.op}'")
        if _bits_type(e.type):
            v.fail(e, f"'{e.op}' of type {e.type!r}: it computes in float32")
        if e.value.type != e.type:
            v.fail(e, f"type {e.type!r} but its operand has {e.value.type!r}")


def _compare(v, e):
    if e.op not in _COMPARES:
        v.fail(e, f"unknown comparison '{e.op}'")
    if e.type != T.BOOL:
        v.fail(e, f"a comparison of type {e.type!r}")
    if e.lhs.type != e.rhs.type and {e.lhs.type, e.rhs.type} != {T.INT64, T.UINT64}:
        v.fail(e, f"compares a {e.lhs.type!r} with a {e.rhs.type!r}")
    if _bits_type(e.lhs.type):
        v.fail(e, f"compares {e.lhs.type!r} values: they compare as float32")


def _logical(v, e):
    if e.op not in ("and", "or"):
        v.fail(e, f"unknown logical operator '{e.op}'")
    if not (e.type == e.lhs.type == e.rhs.type == T.BOOL):
        v.fail(e, f"'{e.op}' of {e.lhs.type!r} and {e.rhs.type!r} giving {e.type!r}: "
                  "all must be bool")


def _ifexp(v, e):
    v.condition(e.cond, e)
    for side in (e.then, e.orelse):
        if not fits(side.type, e.type):
            v.fail(e, f"type {e.type!r} but a branch has {side.type!r}")


def _arrayref(v, e):
    if not any(e.decl is d for d in v.fn.decls):
        v.fail(e, f"array '{e.decl.name}' is not among the function's declarations")


def _load(v, e):
    v.indexing(e.array, e.indices, e)
    element = e.array.type.element
    if e.type != element:
        v.fail(e, f"type {e.type!r} loading from an array of {element!r}")


def _view(v, e):
    t = e.array.type
    if not (isinstance(t, T.Array) and isinstance(e.type, T.Array)):
        v.fail(e, f"a view of type {e.type!r} of a {t!r}")
    if len(e.indices) > t.ndim:
        v.fail(e, f"{len(e.indices)} indices for a {t.ndim}-d array")
    dropped = 0
    for index in e.indices:
        parts = index if isinstance(index, tuple) else (index,)
        dropped += not isinstance(index, tuple)
        for part in parts:
            optional = part is None and isinstance(index, tuple)
            if not optional and not (isinstance(part, ir.Expr) and _is_int(part.type)):
                v.fail(e, f"an index is {_what(part)}, not an integer expression")
    if (e.type.dtype, e.type.ndim) != (t.dtype, t.ndim - dropped):
        v.fail(e, f"a view of type {e.type!r} of a {t!r} with {dropped} integer indices")


def _arrayattr(v, e):
    t = e.array.type
    if not (isinstance(t, T.Array) and e.attr in ("shape", "strides", "data")):
        v.fail(e, f"'{e.attr}' of a {t!r}")
    if e.attr == "data":                   # the address of element 0 (ctypes_data.py)
        if not (e.dim == 0 and e.type == T.UINT64):
            v.fail(e, f"data of type {e.type!r}")
    elif not (0 <= e.dim < t.ndim and e.type == T.INT64):
        v.fail(e, f"{e.attr}[{e.dim}] of type {e.type!r} of a {t.ndim}-d array")


def _tuple(v, e):
    items = [item.type for item in e.items]
    if not (isinstance(e.type, T.Tuple) and fits(T.Tuple(items), e.type)):
        v.fail(e, f"type {e.type!r} but items of types {items!r}")


def _tuple_get(v, e):
    t = e.tuple.type
    if not (isinstance(t, T.Tuple) and 0 <= e.index < len(t.items)):
        v.fail(e, f"item {e.index} of a {t!r}")
    if not fits(t.items[e.index], e.type):
        v.fail(e, f"type {e.type!r} for item {e.index} of a {t!r}")


def _call(v, e):
    f = e.function
    if not isinstance(f, ir.Function):
        v.fail(e, f"calls a {type(f).__name__}, not a Function")
    if not any(f is c for c in v.fn.callees):
        v.fail(e, f"calls '{f.name}', which is not among the function's callees")
    if len(e.args) != len(f.params):
        v.fail(e, f"{len(e.args)} arguments for {len(f.params)} parameters of '{f.name}'")
    for arg, (name, t) in zip(e.args, f.params):
        if not fits(arg.type, t):
            v.fail(e, f"argument '{name}' is {t!r}, gets a {arg.type!r}")
    if e.type != f.return_type:
        v.fail(e, f"type {e.type!r} but '{f.name}' returns {f.return_type!r}")


def _field(v, e):
    _field_value(v, e, e.record.type, e.name, e.type, element=False)


def _make_record(v, e):
    if not isinstance(e.type, T.Record):
        v.fail(e, f"builds a record of type {e.type!r}")
    slots = records.slots(e.type.dtype)
    if len(slots) != len(e.items):
        v.fail(e, f"{len(e.items)} values for a record of {len(slots)}")
    for (name, _, dtype), item in zip(slots, e.items):
        if item.type != T.element_type(dtype):
            v.fail(e, f"a {item.type!r} for field '{name}' of type {dtype}")


def _replace(v, e):
    if e.type != e.record.type:
        v.fail(e, f"type {e.type!r} replacing a field of a {e.record.type!r}")
    _field_value(v, e, e.record.type, e.name, e.value.type, element=bool(e.index))
    if not all(_is_int(i.type) for i in e.index):
        v.fail(e, "an element index is not an integer")


_EXPR_RULES = {ir.MakeRecord: _make_record, ir.Field: _field, ir.Replace: _replace, ir.Const: _const, ir.Var: _var, ir.Param: _param, ir.Cast: _cast,
               ir.CheckedVar: _checked_var, ir.BinOp: _binop, ir.UnaryOp: _unary,
               ir.Compare: _compare, ir.Logical: _logical, ir.IfExp: _ifexp, ir.ArrayRef: _arrayref,
               ir.Load: _load, ir.View: _view, ir.ArrayAttr: _arrayattr,
               ir.TupleExpr: _tuple, ir.TupleGet: _tuple_get, ir.CallDevice: _call}
