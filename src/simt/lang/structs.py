"""``@simt.struct``: C++ classes in device code (guide G.4.10).

A struct class declares its fields with annotations (``x: np.float32``, ``pos: Vec3``,
``v: (np.float32, 3)``) and may define methods, properties, static methods and
operators. Its values are records (ir/types.Struct): the class's NumPy structured dtype,
laid out as a C compiler lays out the struct (``align=True``), marked with the class's
token in the dtype's metadata so that arrays of it (``simt.device_array(n, Vec)``,
``np.zeros(n, Vec)``) and their elements know their class. compiler/structs.py types
the calls; this module makes the class: its dtype, its methods as device functions, and
its host side (instances hold a 0-d structured array, so a host ``Vec(1, 2)`` is a
kernel argument and host code may call the same methods).

A method that assigns a field of ``self`` (or calls one that does, on ``self`` or on a
struct field of it) changes its receiver, as a non-const C++ method changes ``*this``:
it is compiled to return ``self`` as well, and the call writes it back.
"""
import ast
import hashlib
import inspect
import textwrap
import typing
from typing import TypeVar

import numpy as np

from ..errors import CompileError
from ..ir import records
from ..ir import types as T

_C = TypeVar("_C")
_CLASSES = {}           # token -> the struct class (by_token, method_at: typing, disk cache)
_PYTHON = {int: np.int64, float: np.float64, bool: np.bool_, complex: np.complex128}
_PLAIN_VALUES = (bool, int, float, complex, str, bytes, tuple, np.generic)


class Method:
    """A function of a struct class, compiled as a device function: ``kind`` is
    'method', 'static' or 'property'; ``returns_self``: it changes its receiver."""

    def __init__(self, owner, name, pyfunc, kind, returns_self=False):
        self.owner, self.name, self.pyfunc, self.kind = owner, name, pyfunc, kind
        self.returns_self = returns_self
        self.inline = None
        self.ir_cache = {}
        self.__name__ = f"{owner.__name__}.{name}"


class StructInfo:
    """What simt knows of a struct class: fields, dtype, methods, constants."""

    def __init__(self, cls, token, dtype, fields, defaults, methods, constants):
        self.cls, self.token, self.dtype = cls, token, dtype
        self.fields = fields              # name -> field dtype, in declaration order
        self.defaults = defaults          # name -> default value
        self.methods = methods            # name -> Method
        self.constants = constants        # name -> ClassVar value


@typing.dataclass_transform()
def struct(cls: "type[_C]") -> "type[_C]":
    """Decorator: make ``cls`` a struct usable in kernels (a C++ class in device code).

    Fields are the class's annotations (NumPy scalar types, Python int/float/bool/complex,
    vector types, other struct classes, ``(type, shape)`` for a fixed-size array; a
    default after ``=``); ``typing.ClassVar`` annotations are constants. Methods and
    operators (``__add__``, ``__mul__``, ``__rmul__``, ``__neg__``, ``__eq__``,
    ``__getitem__``, ``__setitem__`` ...) are compiled as device functions when a kernel
    calls them. ``Vec.dtype`` is the struct's NumPy dtype. Type checkers see the class as
    a dataclass (PEP 681): its constructor takes the fields' annotated types."""
    if not isinstance(cls, type):
        raise TypeError(f"@simt.struct decorates a class, not {cls!r}")
    where = _ClassSource(cls)
    annotations = _annotations(cls, where)
    fields, defaults, constants = {}, {}, {}
    for name, annotation in annotations.items():
        if annotation is typing.ClassVar or typing.get_origin(annotation) is typing.ClassVar:
            constants[name] = cls.__dict__.get(name)
            continue
        fields[name] = _field_dtype(cls, name, annotation, where)
        if name in cls.__dict__:
            defaults[name] = cls.__dict__[name]
    if not fields:
        where.fail(None, f"struct {cls.__name__} has no fields",
                   "declare each field with an annotation in the class body: x: np.float32")
    _check_unannotated(cls, annotations, where)
    dtype = _dtype(cls, fields, where)
    functions = _functions(cls, annotations)
    token = f"{cls.__module__}.{cls.__qualname__}@{where.digest()}"
    dtype = np.dtype(dtype, metadata={T.STRUCT_METADATA: token})
    mutating = _mutating(cls, functions, fields)
    methods = {name: Method(cls, name, fn, kind, name in mutating)
               for name, (fn, kind) in functions.items()}
    cls._simt_struct = StructInfo(cls, token, dtype, fields, defaults, methods, constants)
    cls.dtype = dtype
    _host_side(cls, fields, defaults)
    _CLASSES[token] = cls
    return cls


def info_of(value):
    """The StructInfo of a struct class (or an instance), else None."""
    return getattr(value, "_simt_struct", None) if value is not None else None


STEP = records.STRUCT_STEP   # runtime/cache.py: a dependency path's step into a struct method


def method_step(function):
    """``struct:<token>:<method>`` when ``function`` (typed IR) was built from a struct
    method, else None: the disk cache's name for it."""
    for cls in _CLASSES.values():
        for method in cls._simt_struct.methods.values():
            if any(function is f for f in method.ir_cache.values()):
                return f"{STEP}{cls._simt_struct.token}:{method.name}"
    return None


def method_at(step):
    """The Method a ``method_step`` names, if its class (that source) is defined here."""
    token, _, name = step[len(STEP):].rpartition(":")
    found = by_token(token)
    return None if found is None else found.methods.get(name)


def by_token(token):
    """The StructInfo of the struct class named by a Struct type's token, else None."""
    cls = _CLASSES.get(token)
    return None if cls is None else cls._simt_struct


# ------------------------------------------------------------------ the class source
class _ClassSource:
    """The class's source, for the lines of error messages and its token's hash."""

    def __init__(self, cls):
        self.name = cls.__name__
        try:
            lines, self.first = inspect.getsourcelines(cls)
            self.filename = inspect.getsourcefile(cls) or "<unknown>"
            self.text = "".join(lines)
        except (OSError, TypeError):
            lines, self.first, self.filename, self.text = [], 0, "<unknown>", ""
        self.lines = self.text.splitlines()
        try:
            self.tree = ast.parse(textwrap.dedent(self.text)).body[0] if self.text else None
        except SyntaxError:
            self.tree = None

    def digest(self):
        text = f"{self.filename}:{self.first}\n{self.text}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def line_of(self, name):
        """The file line that declares ``name`` in the class body, else the class's."""
        for node in getattr(self.tree, "body", []):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else \
                getattr(node, "targets", [])
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return self.first + node.lineno - 1
        return self.first

    def fail(self, name, message, hint):
        line = self.line_of(name) if name else self.first
        text = self.lines[line - self.first].strip() if 0 <= line - self.first < len(
            self.lines) else ""
        parts = [message, f"  in struct '{self.name}', {self.filename}:{line}"]
        if text:
            parts.append("      " + text)
        parts.append("  " + hint)
        raise CompileError("\n".join(parts), filename=self.filename, line=line,
                           construct=text, why=message)


def _annotations(cls, where):
    try:
        return dict(inspect.get_annotations(cls, eval_str=True))
    except Exception as exc:         # noqa: BLE001 - a name the annotation's string names
        where.fail(None, f"the annotations of struct {cls.__name__} cannot be evaluated "
                   f"({exc})", "annotate fields with types defined before the class")


def _field_dtype(cls, name, annotation, where):
    """The NumPy dtype of field ``name`` from its annotation."""
    try:
        dtype = _annotation_dtype(annotation)
    except TypeError:
        dtype = None
    if dtype is None:
        where.fail(name, f"field '{name}' of struct {cls.__name__} has the type "
                   f"{_describe(annotation)}, which a struct field cannot hold",
                   "fields hold NumPy scalar types (np.float32, np.int32 ...), Python "
                   "int/float/bool/complex, vector types (simt.float3), other @simt.struct "
                   "classes, or (type, shape) for a fixed-size array")
    try:
        records.check(np.dtype([(name, dtype)]))
    except TypeError as exc:
        where.fail(name, f"field '{name}' of struct {cls.__name__}: {exc}",
                   "use a NumPy number type, a vector type or a struct")
    return dtype


def _annotation_dtype(annotation):
    if isinstance(annotation, tuple) and len(annotation) == 2:
        base, shape = annotation
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        element = _annotation_dtype(base)
        return None if element is None else np.dtype((element, shape))
    info = info_of(annotation)
    if info is not None and isinstance(annotation, type):
        return info.dtype
    if annotation in _PYTHON:
        return np.dtype(_PYTHON[annotation])
    if isinstance(annotation, np.dtype):
        return annotation
    if isinstance(annotation, type) and issubclass(annotation, np.generic):
        return np.dtype(annotation)
    dtype = getattr(annotation, "dtype", None)      # simt.float3, simt.bfloat16
    if isinstance(annotation, type) and isinstance(dtype, np.dtype):
        return dtype
    if isinstance(annotation, str):
        return np.dtype(annotation)
    return None


def _describe(annotation):
    return getattr(annotation, "__name__", None) or repr(annotation)


def _check_unannotated(cls, annotations, where):
    """A plain value in the class body without an annotation is a field missing its
    type (or a constant missing ClassVar): refused rather than guessed."""
    for name, value in cls.__dict__.items():
        if name.startswith("__") or name in annotations:
            continue
        if isinstance(value, _PLAIN_VALUES):
            where.fail(name, f"'{name}' in struct {cls.__name__} has no type annotation: "
                       "fields are declared with one",
                       f"write {name}: np.float32 = {value!r} (with its type) for a field, or "
                       f"{name}: typing.ClassVar = {value!r} for a constant")


def _dtype(cls, fields, where):
    try:
        return np.dtype(list(fields.items()), align=True)
    except (TypeError, ValueError) as exc:
        where.fail(None, f"struct {cls.__name__}'s fields do not make a NumPy dtype ({exc})",
                   "check the field annotations")


def _functions(cls, annotations):
    """name -> (function, kind) of the class's methods, static methods and properties."""
    out = {}
    for name, value in cls.__dict__.items():
        if name in annotations:
            continue
        if isinstance(value, staticmethod):
            out[name] = (value.__func__, "static")
        elif isinstance(value, property) and value.fget is not None:
            out[name] = (value.fget, "property")
        elif inspect.isfunction(value):
            out[name] = (value, "method")
    return out


# ------------------------------------------------------------------ which methods mutate
def _mutating(cls, functions, fields):
    """The names of the methods that change ``self``: they assign through it, or call a
    method that does on it or on a struct field of it (to a fixed point)."""
    trees = {}
    for name, (fn, kind) in functions.items():
        tree = _function_tree(fn)
        if kind == "method" and tree is not None and tree.args.args:
            trees[name] = tree
    mutating = set()
    changed = True
    while changed:
        changed = False
        for name, tree in trees.items():
            if name not in mutating and _mutates(tree, cls, fields, mutating):
                mutating.add(name)
                changed = True
    return mutating


def _function_tree(fn):
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        node = ast.parse(source).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    return node if isinstance(node, ast.FunctionDef) else None


def _mutates(tree, cls, fields, mutating):
    self_name = tree.args.args[0].arg
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and \
                isinstance(node.ctx, ast.Store) and _root(node) == self_name:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                _root(node.func.value) == self_name:
            owner = _owner(node.func.value, cls, fields)
            if owner is cls and node.func.attr in mutating:
                return True
            if owner is not None and owner is not cls and \
                    node.func.attr in owner._simt_struct.methods and \
                    owner._simt_struct.methods[node.func.attr].returns_self:
                return True
    return False


def _root(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _owner(node, cls, fields):
    """The struct class of ``self``, ``self.f``, ``self.f.g``, ``self.a[k]`` ... where
    the fields' annotations name one, else None."""
    if isinstance(node, ast.Name):
        return cls
    if isinstance(node, ast.Subscript):
        node = node.value       # an element of an array field: the field's class
    if not isinstance(node, ast.Attribute):
        return None
    outer = _owner(node.value, cls, fields)
    if outer is None:
        return None
    outer_fields = fields if outer is cls else outer._simt_struct.fields
    dtype = outer_fields.get(node.attr)
    if dtype is None:
        return None
    base = dtype.subdtype[0] if dtype.subdtype is not None else dtype
    token = T.struct_token(base) if base.names else None
    return _CLASSES.get(token) if token else None


# ------------------------------------------------------------------ the host side
def _host_side(cls, fields, defaults):
    """Instances hold their bytes in a 0-d structured array: fields read and write it,
    ``Vec(1.0, 2.0)`` (or the class's own ``__init__``) fills it, and a launch passes it
    by value (runtime/launch.py)."""
    dtype = cls.dtype
    user_new = cls.__dict__.get("__new__")
    if user_new is None:
        def __new__(klass, *args, **kwargs):
            obj = object.__new__(klass)
            obj._simt_record = np.zeros((), dtype)
            return obj
        cls.__new__ = staticmethod(__new__)
    for name in fields:
        setattr(cls, name, _FieldProperty(name))
    if "__init__" not in cls.__dict__:
        cls.__init__ = _default_init(cls, list(fields), defaults)
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = _repr(fields)
    cls._simt_value = property(lambda self: self._simt_record[()],
                               doc="the instance as a NumPy record (np.void)")
    cls.from_record = classmethod(_from_record)


def _repr(fields):
    def __repr__(self):
        parts = []
        for name in fields:
            value = getattr(self, name)
            parts.append(f"{name}={value.item() if isinstance(value, np.generic) else value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"
    return __repr__


class _FieldProperty:
    """A field of a host instance: reads give a NumPy scalar (a struct field: an
    instance over the same bytes; an array field: a view), writes convert as NumPy does."""

    def __init__(self, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        part = obj._simt_record[self.name]
        info = info_of_dtype(part.dtype)
        if info is not None and part.ndim == 0:
            return info.cls.from_record(part)
        return part if part.ndim else part[()]

    def __set__(self, obj, value):
        if info_of(type(value)) is not None:
            value = value._simt_record
        obj._simt_record[self.name] = value


def info_of_dtype(dtype):
    token = T.struct_token(dtype) if dtype.names else None
    return by_token(token) if token else None


def _default_init(cls, names, defaults):
    def __init__(self, *args, **kwargs):
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__}() takes {len(names)} field values, got {len(args)}")
        given = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in given:
                raise TypeError(f"{cls.__name__}() got an unexpected or repeated field '{key}'")
            given[key] = value
        for name in names:
            if name in given:
                setattr(self, name, given[name])
            elif name in defaults:
                setattr(self, name, defaults[name])
            else:
                raise TypeError(f"{cls.__name__}() is missing field '{name}'")
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _from_record(cls, record):
    """A host instance over ``record`` (an element of an array of ``cls.dtype``, an
    np.void, or a 0-d structured array): a view where NumPy gives one, else a copy."""
    obj = object.__new__(cls)
    data = np.asarray(record)
    if data.dtype != cls.dtype:
        raise TypeError(f"{cls.__name__}.from_record takes a record of {cls.__name__}.dtype, "
                        f"not {data.dtype}")
    obj._simt_record = data.reshape(()) if data.ndim == 0 else None
    if obj._simt_record is None:
        raise TypeError(f"{cls.__name__}.from_record takes one record, not an array of "
                        f"shape {data.shape}")
    return obj
