"""CUDA's built-in vector types (guide B.3.1): ``simt.float4`` and the others, their
``make_*`` constructors, components, arithmetic and the helper_math functions.

Each vector type is a host class (``simt.float4(1, 2, 3, 4)`` is a kernel argument,
``simt.float4.dtype`` the aligned NumPy struct of its arrays) and, in kernels, a value of
type ``T.Vector`` held as an LLVM vector, so an element of a float4 array is loaded and
stored as one vector access (``ld.global.v4.f32``). Arithmetic is the CUDA samples'
helper_math: + - * / component-wise, between two vectors of one type or a vector and a
scalar; CUDA C itself has none.
"""
from typing import Any

import numpy as np

from ..ir import nodes as ir
from ..ir import types as T
from .bfloat16 import bits, narrow, to_float32, widen
from .registry import Intrinsic, lazy_module

ll = lazy_module("llvmlite.ir")

COMPONENTS = "xyzw"
# element dtype, CUDA's names for it, the component counts CUDA has
_KINDS = [("i1", ("char",), (1, 2, 3, 4)), ("u1", ("uchar",), (1, 2, 3, 4)),
          ("i2", ("short",), (1, 2, 3, 4)), ("u2", ("ushort",), (1, 2, 3, 4)),
          ("i4", ("int",), (1, 2, 3, 4)), ("u4", ("uint",), (1, 2, 3, 4)),
          ("i8", ("long", "longlong"), (1, 2, 3, 4)), ("u8", ("ulong", "ulonglong"), (1, 2, 3, 4)),
          ("f4", ("float",), (1, 2, 3, 4)), ("f8", ("double",), (1, 2, 3, 4)),
          ("f2", ("half",), (2,))]


class VectorValue:
    """A host value of a vector type: ``simt.float4(1, 2, 3, 4)``, or
    ``simt.float4(a[i])`` from an element of an array of ``simt.float4.dtype``.
    Components are NumPy scalars of the element dtype, converted as a C cast would."""

    __slots__ = ("_items",)
    dtype: Any = None      # the NumPy struct of arrays of this type (set per class)
    _simt_type = None      # its T.Vector: what a kernel argument of this class is

    def __init__(self, *values):
        t = self._simt_type
        if len(values) == 1 and t.n > 1:
            values = tuple(values[0])
        if len(values) != t.n:
            raise TypeError(f"{t.name} takes {t.n} components, got {len(values)}")
        with np.errstate(all="ignore"):
            if t.element.is_bfloat16:         # kept as float32 values that bfloat16 holds
                self._items = tuple(to_float32(np.uint16(bits(v)))[()]
                                    for v in values)
            else:
                self._items = tuple(np.array(v).astype(t.dtype)[()] for v in values)

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __getitem__(self, i):
        return self._items[i]

    def __eq__(self, other):
        return type(other) is type(self) and self._items == other._items

    def __hash__(self):
        return hash((type(self).__name__, self._items))

    def __repr__(self):
        return f"{self._simt_type.name}({', '.join(str(v) for v in self._items)})"

    @classmethod
    def view(cls, array):
        """The (..., n) array ``array`` of the component dtype (a NumPy or device array,
        C-contiguous in its last axis) as an array of this vector type, without copying:
        ``simt.float4.view(np.zeros((n, 4), np.float32))`` has shape (n,). Its data must
        be aligned as CUDA aligns the type (16 bytes for float4)."""
        t = cls._simt_type
        shape, strides = tuple(array.shape), tuple(array.strides)
        if T.Scalar(array.dtype) != t.element or not shape or shape[-1] != t.n or \
                (t.n > 1 and strides[-1] != t.dtype.itemsize):
            raise ValueError(f"{t.name}.view needs an array of {t.element!r} whose last axis "
                             f"holds the {t.n} components contiguously; got shape {shape}, "
                             f"dtype {array.dtype}")
        address = array.ctypes.data if isinstance(array, np.ndarray) else array.ptr
        if address % t.align:
            raise ValueError(f"{t.name}.view: the data at {address:#x} is not aligned to "
                             f"{t.align} bytes as a {t.name} must be (copy it to a fresh "
                             "array first)")
        if isinstance(array, np.ndarray):
            return np.lib.stride_tricks.as_strided(
                array[..., 0].view(cls.dtype) if t.n == 1 else
                array.view(cls.dtype)[..., 0], shape[:-1], strides[:-1])
        return array.retyped(shape[:-1], cls.dtype, strides[:-1])


def _property(i):
    return property(lambda self: self._items[i], doc=f"component {COMPONENTS[i]}")


def vector_class(name, t, dtype=None):
    """The host class of vector type t (``dtype``: its arrays' NumPy struct)."""
    members = {"__slots__": (), "dtype": t.struct if dtype is None else dtype, "_simt_type": t,
               "__doc__": f"CUDA's {name}: {t.n} x {t.dtype.name} (.{', .'.join(COMPONENTS[:t.n])}); "
                          f"arrays of it have dtype simt.{name}.dtype (aligned to {t.align} bytes)."}
    members.update({c: _property(i) for i, c in enumerate(COMPONENTS[:t.n])})
    return type(name, (VectorValue,), members)


class Maker(Intrinsic):
    """``simt.make_float4(x, y, z, w)``: builds the vector in kernels, the host value on
    the host (as CUDA's make_* work on both sides)."""

    def __init__(self, name, cls):
        self.cls = cls
        t = cls._simt_type
        args = ", ".join(COMPONENTS[:t.n])
        super().__init__(f"make_{name}", f"simt.make_{name}({args}) (also simt.{name}({args})): "
                         f"a {name} from {t.n} numbers, each converted to {t.dtype.name} as an "
                         "assignment converts.", self._build, python_objects=(cls,),
                         lowered_as=(ir.Intrinsic, ir.Cast))

    def _build(self, fc, args, kwargs, loc):
        t = self.cls._simt_type
        if kwargs or len(args) != t.n:
            fc.fail(loc, f"{self.python_name}() takes {t.n} positional numbers, got "
                    f"{len(args) + len(kwargs)}")
        values = [fc.expr(a, loc) for a in args]
        for v in values:
            if not isinstance(v.type, T.Scalar):
                fc.fail(loc, f"{self.python_name}() takes numbers, got a {v.type}")
        return make(fc, t, values, loc)

    def __call__(self, *values: Any) -> Any:       # a kernel's vector, or a host VectorValue
        return self.cls(*values)


def make(fc, t, values, loc):
    """The vector of type t with components ``values`` (scalars, converted)."""
    return make_entry.node(t, loc, [fc.cast(v, t.element, loc) for v in values])


# ------------------------------------------------------------------ the types
TYPES = {}      # name -> host class
MAKERS = {}     # name -> Maker entry
for _code, _names, _counts in _KINDS:
    for _n in _counts:
        _t = T.Vector(_code, _n)
        for _base in _names:
            _name = f"{_base}{_n}"
            TYPES[_name] = vector_class(_name, _t)
            MAKERS[_name] = Maker(_name, TYPES[_name])
DIM3 = T.Vector("i4", 3, name="dim3")

make_entry = Intrinsic("vector.make", "A vector from its components (built by make_*).",
                       public=False)
component = Intrinsic("vector.component", "One component of a vector (.x .y .z .w).",
                      public=False)
with_component = Intrinsic("vector.with", "A vector with one component replaced (v.x = e).",
                           public=False)
arith = Intrinsic("vector.arith", "Component-wise + - * / of two vectors of one type.",
                  public=False)
negate = Intrinsic("vector.neg", "Component-wise negation.", public=False)


# ------------------------------------------------------------------ typing rules
def is_vector(value):
    return isinstance(getattr(value, "type", None), T.Vector)


def get(fc, value, i, loc):
    return component.node(value.type.element, loc, [value], {"index": i})


def index_of(fc, t, name, loc):
    """The position of component ``name`` (x, y, z or w) of vector type t."""
    i = COMPONENTS.find(name) if len(name) == 1 else -1
    if not 0 <= i < t.n:
        fc.fail(loc, f"{t.name} has no attribute '{name}'",
                f"its components are .{', .'.join(COMPONENTS[:t.n])}")
    return i


def attribute(fc, value, attr, loc):
    """``v.x`` ... ``v.w`` (and ``v['x']``: NumPy names them as its struct's fields)."""
    return get(fc, value, index_of(fc, value.type, attr, loc), loc)


def subscript(fc, value, index, loc):
    """``v[i]`` for a constant i (as the tuples textures returned before vectors)."""
    if not isinstance(index, ir.Const) or index.type.kind not in "iu":
        fc.fail(loc, f"a {value.type.name} can only be indexed by integer constants",
                "use .x .y .z .w")
    i = index.value + value.type.n if index.value < 0 else index.value
    if not 0 <= i < value.type.n:
        fc.fail(loc, f"index {index.value} out of range for a {value.type.name}")
    return get(fc, value, i, loc)


def simple(fc, value, loc):
    """value, bound to a fresh variable first unless it is one (so it is evaluated once)."""
    if isinstance(value, (ir.Var, ir.Param, ir.Const)):
        return value
    name = fc.temp("vec")
    fc.hoist(*fc.bind_name(name, value, loc))
    return ir.Var(value.type, loc, name)


def as_tuple(fc, value, loc):
    """The components as a tuple (``x, y, z, w = v``)."""
    value = simple(fc, value, loc)
    items = [get(fc, value, i, loc) for i in range(value.type.n)]
    return ir.TupleExpr(T.Tuple([i.type for i in items]), loc, items)


def replace(fc, value, attr, new, loc):
    """``v.x = new``: v with component x replaced."""
    t = value.type
    i = index_of(fc, t, attr, loc)
    return with_component.node(t, loc, [value, fc.cast(new, t.element, loc)], {"index": i})


_OPS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/"}


def binop(fc, op, lhs, rhs, loc):
    """helper_math's operators: vector op vector (one type), vector op scalar and
    scalar op vector (the scalar converted to the component type)."""
    t = lhs.type if is_vector(lhs) else rhs.type
    if op not in _OPS or (op == "truediv" and t.kind != "f"):
        offered = "+ - * /" if t.kind == "f" else "+ - *"
        fc.fail(loc, f"operator '{op}' is not defined for {t.name} (vector types offer "
                f"{offered}, component-wise, as the CUDA samples' helper_math)",
                "compute on the components (.x .y .z .w)")
    sides = []
    for side in (lhs, rhs):
        if is_vector(side):
            if side.type != t:
                fc.fail(loc, f"operator '{_OPS[op]}' needs two vectors of one type, got "
                        f"{lhs.type} and {rhs.type}", "convert with make_* first")
            sides.append(side)
        elif isinstance(side.type, T.Scalar) and side.type.kind != "c":
            s = simple(fc, fc.cast(side, t.element, loc), loc)
            sides.append(make_entry.node(t, loc, [s] * t.n))
        else:
            fc.fail(loc, f"operator '{_OPS[op]}' is not defined between {lhs.type} and {rhs.type}")
    return arith.node(t, loc, sides, {"op": op})


def unary(fc, opname, value, loc):
    if opname == "UAdd":
        return value
    if opname != "USub":
        fc.fail(loc, f"this unary operator is not defined for {value.type.name} (only -v)")
    return negate.node(value.type, loc, [value])


def _vectors(fc, args, n, name, loc, kinds="f"):
    if len(args) != n:
        fc.fail(loc, f"simt.{name} takes {n} vector argument{'s' if n > 1 else ''}")
    values = [fc.expr(a, loc) for a in args]
    t = values[0].type
    if not all(is_vector(v) and v.type == t for v in values) or t.kind not in kinds or \
            t.element.is_bfloat16:
        fc.fail(loc, f"simt.{name} takes float or double vectors of one type, got "
                f"{', '.join(str(v.type) for v in values)}")
    return values


def _dot_build(fc, args, kwargs, loc):
    a, b = _vectors(fc, args, 2, "dot", loc, kinds="fiu")
    return dot.node(a.type.element, loc, [a, b])


def _length_build(fc, args, kwargs, loc):
    v, = _vectors(fc, args, 1, "length", loc)
    return length.node(v.type.element, loc, [v])


def _normalize_build(fc, args, kwargs, loc):
    v, = _vectors(fc, args, 1, "normalize", loc)
    return normalize.node(v.type, loc, [v])


def _cross_build(fc, args, kwargs, loc):
    a, b = _vectors(fc, args, 2, "cross", loc)
    if a.type.n != 3:
        fc.fail(loc, f"simt.cross takes two 3-component vectors, got {a.type.name}")
    return cross.node(a.type, loc, [a, b])


dot = Intrinsic("dot", "simt.dot(a, b): helper_math's dot, a.x*b.x + a.y*b.y + ... in order, "
                "for two vectors of one type (float, double or integer components).", _dot_build)
length = Intrinsic("length", "simt.length(v): helper_math's length, sqrt(dot(v, v)), for "
                   "float and double vectors.", _length_build)
normalize = Intrinsic("normalize", "simt.normalize(v): helper_math's normalize, v * "
                      "(1 / sqrt(dot(v, v))), for float and double vectors (CUDA's uses rsqrtf; "
                      "this divides, so it is correctly rounded).", _normalize_build)
cross = Intrinsic("cross", "simt.cross(a, b): helper_math's cross product of two float3 "
                  "(or double3) vectors.", _cross_build)


# ------------------------------------------------------------------ lowerings
def _i32(i):
    return ll.Constant(ll.IntType(32), i)


@make_entry.lowering()
def _make(em, e):
    values = [em.expr(a) for a in e.args]
    vector = ll.Constant(ll.VectorType(values[0].type, len(values)), ll.Undefined)
    for i, v in enumerate(values):
        vector = em.builder.insert_element(vector, v, _i32(i))
    return vector


@component.lowering()
def _component(em, e):
    return em.builder.extract_element(em.expr(e.args[0]), _i32(e.attrs["index"]))


@with_component.lowering()
def _with(em, e):
    return em.builder.insert_element(em.expr(e.args[0]), em.expr(e.args[1]),
                                     _i32(e.attrs["index"]))


def vector_arith(b, op, x, y, kind):
    """x op y component-wise (also used by half2 arithmetic)."""
    if kind == "f":       # no "contract": the typed IR decides fusion (docs/math.md),
        return {"add": b.fadd, "sub": b.fsub, "mul": b.fmul,    # vectors are never fused
                "truediv": b.fdiv}[op](x, y)
    return {"add": b.add, "sub": b.sub, "mul": b.mul}[op](x, y)


@arith.lowering()
def _arith(em, e):
    b = em.builder
    x, y = (em.expr(a) for a in e.args)
    if e.type.element.is_bfloat16:          # in float32, rounded once
        wide = vector_arith(b, e.attrs["op"], widen(b, x), widen(b, y), "f")
        return narrow(b, wide)
    return vector_arith(b, e.attrs["op"], x, y, e.type.kind)


@negate.lowering()
def _negate(em, e):
    x = em.expr(e.args[0])
    if e.type.element.is_bfloat16:
        return em.builder.xor(x, ll.Constant(x.type, [ll.Constant(ll.IntType(16), 0x8000)] * e.type.n))
    if e.type.kind == "f":
        return em.builder.fneg(x)
    return em.builder.sub(ll.Constant(x.type, None), x)


def _dot_value(b, x, y, n, kind):
    product = vector_arith(b, "mul", x, y, kind)
    total = b.extract_element(product, _i32(0))
    for i in range(1, n):
        part = b.extract_element(product, _i32(i))
        total = b.fadd(total, part) if kind == "f" else b.add(total, part)
    return total


@dot.lowering()
def _dot(em, e):
    x, y = (em.expr(a) for a in e.args)
    return _dot_value(em.builder, x, y, e.args[0].type.n, e.args[0].type.kind)


def _sqrt(b, x):
    return b.call(b.module.declare_intrinsic("llvm.sqrt", [x.type]), [x])


@length.lowering()
def _length(em, e):
    x = em.expr(e.args[0])
    return _sqrt(em.builder, _dot_value(em.builder, x, x, e.args[0].type.n, "f"))


@normalize.lowering()
def _normalize(em, e):
    b = em.builder
    x = em.expr(e.args[0])
    n = e.type.n
    norm = _sqrt(b, _dot_value(b, x, x, n, "f"))
    splat = ll.Constant(x.type, ll.Undefined)
    for i in range(n):
        splat = b.insert_element(splat, norm, _i32(i))
    return b.fdiv(x, splat)


@cross.lowering()
def _cross(em, e):
    b = em.builder
    x, y = (em.expr(a) for a in e.args)
    comp = [[b.extract_element(v, _i32(i)) for i in range(3)] for v in (x, y)]
    (ax, ay, az), (bx, by, bz) = comp
    out = [b.fsub(b.fmul(ay, bz), b.fmul(az, by)), b.fsub(b.fmul(az, bx), b.fmul(ax, bz)),
           b.fsub(b.fmul(ax, by), b.fmul(ay, bx))]
    vector = ll.Constant(x.type, ll.Undefined)
    for i, v in enumerate(out):
        vector = b.insert_element(vector, v, _i32(i))
    return vector
