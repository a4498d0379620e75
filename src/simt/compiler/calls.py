"""Typing rules of the front end: operators, casts, indexing, and calls of
registry entries (lang/: intrinsics, math, Python builtins) and device functions."""
import ast
import math
import operator

import numpy as np

from ..ir import nodes as ir
from ..ir import types as T
from ..lang import python as pylang
from ..lang import bfloat16, float8, intrinsics_int, launches, vectors, wgmma, wmma
from ..lang.memory import _Symbol
from ..lang.registry import Intrinsic, Static, callable_entry
from . import group_args
from ..lang.textures import attribute as texture_attribute
from . import ctypes_data, numba_functions, numba_globals, numba_ufuncs, records, static_args, structs, wraparound
from ..lang import structs as struct_classes


# ----------------------------------------------------------------- constants
def as_dtype(value):
    """The NumPy dtype a Python object names, or None."""
    if isinstance(value, np.dtype):
        return value
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value)
    if isinstance(value, type) and isinstance(getattr(value, "dtype", None), np.dtype):
        return value.dtype          # simt.float4, simt.bfloat16 without ml_dtypes
    if value in (int, float, complex, bool):
        return np.dtype({int: np.int64, float: np.float64, complex: np.complex128,
                         bool: np.bool_}[value])
    if isinstance(value, str) or type(value).__module__.startswith("numba."):
        try:            # numba's scalar types name their dtype: str(numba.float32) "float32"
            return np.dtype(str(value))
        except (TypeError, ValueError):
            return None
    return None


def static_to_expr(fc, static, node):
    value = static.value
    loc = fc.loc(node) if not isinstance(node, ir.Loc) else node
    if isinstance(value, np.generic) and value.dtype in T.SCALAR_DTYPES:
        # before the Python types: np.float64 and np.complex128 subclass float and complex,
        # and a NumPy scalar keeps its dtype (API.md section 2); only Python literals are weak
        return ir.Const(T.Scalar(value.dtype), loc, value.item())
    if isinstance(value, bool):
        return ir.Const(T.WEAK_BOOL, loc, value)
    if isinstance(value, int):
        return ir.Const(T.WEAK_INT, loc, value)
    if isinstance(value, float):
        return ir.Const(T.WEAK_FLOAT, loc, value)
    if isinstance(value, complex):
        return ir.Const(T.WEAK_COMPLEX, loc, value)
    if isinstance(value, tuple):
        items = [static_to_expr(fc, Static(v), node) for v in value]
        if records.is_namedtuple_class(type(value)):
            t = T.NamedTuple([i.type for i in items], type(value)._fields, type(value))
        else:
            t = T.Tuple([i.type for i in items])
        return ir.TupleExpr(t, loc, items)
    if isinstance(value, _Symbol):
        decl = fc.symbol_decls.get(id(value))
        if decl is None:
            decl = ir.MemoryDecl(static.name, "symbol", value.shape, value.dtype, data=value,
                                 symbol=static.name)
            fc.symbol_decls[id(value)] = decl
            fc.decls.append(decl)
        return ir.ArrayRef(decl.type, loc, decl)
    if isinstance(value, np.ndarray):
        frozen = numba_globals.constant(fc, static, loc)     # cuda.jit code: numba's rule
        if frozen is not None:
            return frozen
        fc.fail(loc, f"the NumPy array '{static.name}' cannot be read inside a kernel",
                f"pass it as an argument, or bake it in with C = simt.const.array_like("
                f"{static.name or 'ARRAY'}), or make it a module-level simt.Constant")
    what = static.name or type(value).__name__
    if group_args.compile_time(value) and not getattr(value, "compile_time", False) or \
            hasattr(value, "_simt_device"):
        fc.fail(loc, f"the device function '{what}' is used here as a number or an array: "
                "device functions are values only where a function is expected",
                "call it, pass it to a device function, bind it to a name (f = add), hold it "
                "in a tuple, or choose between functions (f = add if p else mul); a device "
                "function cannot be returned, stored in an array or mixed with numbers")
    fc.fail(loc, f"'{what}' ({type(value).__name__}) cannot be used as a value in a kernel",
            "kernels can use numbers, arrays, tuples and the names simt provides")


def fold_static(fc, node, lhs, rhs):
    numbers = (int, float, complex, np.generic)
    if isinstance(lhs, numbers) and isinstance(rhs, numbers):
        try:
            tree = ast.fix_missing_locations(ast.Expression(
                ast.BinOp(ast.Constant(lhs), node.op, ast.Constant(rhs))))
            return Static(eval(compile(tree, "<fold>", "eval")))
        except Exception:
            return None
    if isinstance(lhs, tuple) and isinstance(rhs, (tuple, int)):
        try:
            return Static(lhs + rhs if isinstance(node.op, ast.Add) else lhs * rhs)
        except Exception:
            return None
    return None


_FOLD_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
                 ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}


def fold_compare(op, lhs, rhs):
    """Static(bool) of a comparison of two compile-time numbers or tuples of numbers
    (``simt.arch() >= (8, 0)``), else None (compiled as a comparison of values)."""
    if not (isinstance(lhs, Static) and isinstance(rhs, Static)) or op not in _FOLD_COMPARE:
        return None
    if not all(_plain(v) for v in (lhs.value, rhs.value)):
        return None
    return Static(bool(_FOLD_COMPARE[op](lhs.value, rhs.value)))


def _plain(value):
    """A Python number (not complex) or a tuple of them."""
    if isinstance(value, tuple):
        return all(_plain(v) for v in value)
    return isinstance(value, (bool, int, float, np.integer, np.floating, np.bool_))


# ----------------------------------------------------------------- casts
def cast(fc, value, t, loc):
    if value.type == t:
        return value
    if isinstance(t, T.Tuple):
        if not isinstance(value.type, T.Tuple) or len(value.type.items) != len(t.items):
            fc.fail(loc, f"cannot convert {value.type} to {t}")
        items = [cast(fc, tuple_get(fc, value, i, loc), it, loc) for i, it in enumerate(t.items)]
        return ir.TupleExpr(t, loc, items)
    if isinstance(t, T.Record) and isinstance(value.type, T.Tuple):
        return records.from_tuple(fc, value, t, loc)
    if isinstance(t, T.Array):
        if isinstance(value.type, T.Array) and value.type.dtype == t.dtype and \
                value.type.ndim == t.ndim:
            value.type = t if value.type.layout == t.layout else value.type
            return value
        fc.fail(loc, f"cannot convert {value.type} to {t}")
    if not isinstance(value.type, T.Scalar) or not isinstance(t, T.Scalar):
        fc.fail(loc, f"cannot convert {value.type} to {t}")
    if value.type.float8 or t.float8:
        return float8.convert(fc, value, t, loc)
    if isinstance(value, ir.Const):
        return ir.Const(t, loc, _convert_const(value.value, t))
    if value.type.kind == "c" and t.kind != "c":
        fc.fail(loc, f"cannot convert complex to {t} implicitly", "take .real or abs() first")
    return ir.Cast(t, loc, value)


def explicit(value):
    """``value``, a conversion the user wrote (``np.int32(v)``): the narrowing check
    (narrowing=True) leaves it alone."""
    if isinstance(value, ir.Cast):
        value.explicit = True
    return value


def _convert_const(value, t):
    if t.is_bfloat16:
        return float(bfloat16.to_float32(bfloat16.bits(value.real if isinstance(value, complex)
                                                        else value)))
    if t.kind == "b":
        return bool(value)
    if t.kind in "iu":
        if isinstance(value, float):
            if math.isnan(value):
                return 0
            info = np.iinfo(t.dtype)
            return int(min(max(value, info.min), info.max)) if math.isinf(value) else \
                int(min(max(int(value), info.min), info.max))
        return int(np.array(int(value)).astype(t.dtype)) if -2**63 <= int(value) < 2**64 else 0
    if t.kind == "f":
        return float(t.dtype.type(value.real if isinstance(value, complex) else value))
    return complex(value)


def truth(fc, value, node):
    if isinstance(value.type, T.Scalar):
        if value.type.kind == "b":
            return value if not value.type.weak else cast(fc, value, T.BOOL, fc.loc(node))
        if value.type.is_bfloat16 or value.type.float8:
            value = cast(fc, value, T.FLOAT32, value.loc)
        zero = ir.Const(value.type, value.loc, 0)
        return ir.Compare(T.BOOL, value.loc, "ne", value, zero)
    fc.fail(node, f"a {value.type} cannot be used as a condition", "compare it explicitly")


def common_type(fc, a, b, node):
    if isinstance(a, T.Scalar) and isinstance(b, T.Scalar):
        return T.promote(a, b)
    merged = T.unify(a, b)
    if merged is None:
        fc.fail(node, f"the two branches have types {a} and {b}", "make them the same type")
    return merged


# ----------------------------------------------------------------- operators
def binop(fc, op, lhs, rhs, loc):
    if structs.is_struct(lhs) or structs.is_struct(rhs):
        return structs.binop(fc, op, lhs, rhs, loc)
    if vectors.is_vector(lhs) or vectors.is_vector(rhs):
        return vectors.binop(fc, op, lhs, rhs, loc)
    for side in (lhs, rhs):
        if not isinstance(side.type, T.Scalar):
            if isinstance(side.type, T.Tuple) and op in ("add", "mul"):
                fc.fail(loc, "tuple arithmetic is not supported in kernels")
            fc.fail(loc, f"operator '{op}' is not defined for {side.type}",
                    "index arrays to get their elements" if isinstance(side.type, T.Array) else None)
    t = T.promote(lhs.type, rhs.type)
    if t.is_bfloat16:           # computed in float32, rounded once (lang/bfloat16.py)
        return cast(fc, binop(fc, op, cast(fc, lhs, T.FLOAT32, loc), cast(fc, rhs, T.FLOAT32, loc),
                              loc), T.BFLOAT16, loc)
    if op == "truediv" and t.kind in "iub":
        t = T.Scalar(np.float64, t.weak)
    if op in ("lshift", "rshift", "and", "or", "xor") and t.kind not in "iub":
        fc.fail(loc, f"bitwise operator '{op}' needs integers, got {lhs.type} and {rhs.type}")
    if op in ("floordiv", "mod") and t.kind == "c":
        fc.fail(loc, "// and % are not defined for complex numbers")
    if t.kind == "b" and op in ("sub", "floordiv", "mod", "pow", "lshift", "rshift"):
        t = T.Scalar(np.int8, t.weak)    # NumPy has bool loops only for + (or) and * (and)
    return ir.BinOp(t, loc, op, cast(fc, lhs, t, loc), cast(fc, rhs, t, loc))


def unary(fc, opname, value, loc):
    if structs.is_struct(value) and opname != "Not":
        return structs.unary(fc, opname, value, loc)
    if vectors.is_vector(value):
        return vectors.unary(fc, opname, value, loc)
    if not isinstance(value.type, T.Scalar):
        fc.fail(loc, f"unary operator not defined for {value.type}")
    if opname == "UAdd":
        return value
    if value.type.float8:                       # as CUDA's: the float it converts to
        value = cast(fc, value, T.FLOAT32, loc)
    if opname == "USub" and value.type.is_bfloat16:
        return cast(fc, ir.UnaryOp(T.FLOAT32, loc, "neg", cast(fc, value, T.FLOAT32, loc)), T.BFLOAT16,
                    loc)
    if opname == "USub":
        return ir.UnaryOp(value.type, loc, "neg", value)
    if opname == "Not":
        return ir.UnaryOp(T.BOOL, loc, "not", truth(fc, value, loc))
    if value.type.kind not in "iub":
        fc.fail(loc, f"~ needs an integer, got {value.type}")
    return ir.UnaryOp(value.type, loc, "invert", value)


def compare(fc, op, lhs, rhs, loc):
    if structs.is_struct(lhs) or structs.is_struct(rhs):
        return structs.compare(fc, op, lhs, rhs, loc)
    if not (isinstance(lhs.type, T.Scalar) and isinstance(rhs.type, T.Scalar)):
        fc.fail(loc, f"cannot compare {lhs.type} with {rhs.type}")
    t = T.promote(lhs.type, rhs.type)
    if t.is_bfloat16:
        t = T.FLOAT32                                  # exact
    if t.kind == "c" and op not in ("eq", "ne"):
        fc.fail(loc, "complex numbers are not ordered", "compare abs() or .real")
    if t.kind == "f" and {lhs.type.kind, rhs.type.kind} == {"i", "u"}:
        # a signed and an unsigned int that promote to float64 (one of them 64-bit): NumPy 2
        # compares them exactly ('qQ->?'), not through float64, which rounds both to 2**63
        kind = lambda v: T.INT64 if v.type.kind == "i" else T.UINT64      # noqa: E731
        return ir.Compare(T.BOOL, loc, op, cast(fc, lhs, kind(lhs), loc),
                          cast(fc, rhs, kind(rhs), loc))
    return ir.Compare(T.BOOL, loc, op, cast(fc, lhs, t, loc), cast(fc, rhs, t, loc))


# ----------------------------------------------------------------- arrays
def index(fc, value, loc):
    if not isinstance(value.type, T.Scalar) or value.type.kind not in "iub":
        fc.fail(loc, f"array indices must be integers, got {value.type}",
                "convert with int(...)")
    return cast(fc, value, T.INT64, loc)


def index_list(fc, value, loc):
    if isinstance(value.type, T.Tuple):
        return [index(fc, tuple_get(fc, value, i, loc), loc) for i in range(len(value.type.items))]
    return [index(fc, value, loc)]


def tuple_get(fc, value, i, loc):
    if isinstance(value, ir.TupleExpr):
        return value.items[i]
    return ir.TupleGet(value.type.items[i], loc, value, i)


def subscript(fc, base, idx, loc, label):
    if isinstance(base.type, T.Tuple):
        if not isinstance(idx, ir.Const) or idx.type.kind not in "iu":
            fc.fail(loc, "tuples can only be indexed by integer constants")
        n = len(base.type.items)
        i = idx.value + n if idx.value < 0 else idx.value
        if not 0 <= i < n:
            fc.fail(loc, f"tuple index {idx.value} out of range for a tuple of {n}")
        return tuple_get(fc, base, i, loc)
    if vectors.is_vector(base):
        return vectors.subscript(fc, base, idx, loc)
    if structs.is_struct(base):
        return structs.getitem(fc, base, idx, loc)
    if not isinstance(base.type, T.Array):
        fc.fail(loc, f"a {base.type} cannot be indexed")
    indices = index_list(fc, idx, loc)
    ndim = base.type.ndim
    if len(indices) > ndim:
        fc.fail(loc, f"too many indices: {len(indices)} for a {ndim}-d array")
    indices = wraparound.indices(fc, base, indices, loc)
    if len(indices) == ndim:
        return ir.Load(base.type.element, loc, base, indices, label)
    t = base.type.with_(ndim=ndim - len(indices),
                        layout="C" if base.type.layout == "C" else "A")
    return ir.View(t, loc, base, indices, label)


def has_slice(node):
    if isinstance(node, ast.Slice):
        return True
    return isinstance(node, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.elts)


def view(fc, base, slice_node, node, label):
    if not isinstance(base.type, T.Array):
        fc.fail(node, f"a {base.type} cannot be sliced")
    elts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
    if len(elts) > base.type.ndim:
        fc.fail(node, f"too many indices for a {base.type.ndim}-d array")
    parts, ndim = [], base.type.ndim
    for dim, e in enumerate(elts):
        if isinstance(e, ast.Slice):
            parts.append(tuple(None if p is None else index(fc, fc.expr(fc.any(p), p), fc.loc(p))
                               for p in (e.lower, e.upper, e.step)))
        else:
            i = index(fc, fc.expr(fc.any(e), e), fc.loc(e))
            parts.append(wraparound.one(fc, base, i, dim, fc.loc(e)))
            ndim -= 1
    t = base.type.with_(ndim=ndim, layout="A")
    return ir.View(t, fc.loc(node), base, parts, label)


def attribute(fc, value, attr, node):
    loc = fc.loc(node)
    t = value.type
    if isinstance(t, (T.Texture, T.Surface)):
        return texture_attribute(fc, value, attr, node)
    if isinstance(t, T.Vector):
        return vectors.attribute(fc, value, attr, loc)
    if isinstance(t, wmma.Fragment) and attr == "num_elements":
        return wmma.num_elements_of(value, loc)
    if isinstance(t, wgmma.Accumulator) and attr == "store":
        return Static(wgmma.StoreMethod(value))
    if isinstance(t, T.Struct):
        return structs.attribute(fc, value, attr, node)
    if records.has_fields(t):
        return records.field(fc, value, attr, node)
    if isinstance(t, T.Array):
        if attr in ("shape", "strides"):
            items = [ir.ArrayAttr(T.INT64, loc, value, attr, d) for d in range(t.ndim)]
            return ir.TupleExpr(T.Tuple([T.INT64] * t.ndim), loc, items)
        if attr == "ndim":
            return Static(t.ndim)
        if attr == "size":
            size = ir.Const(T.INT64, loc, 1)
            for d in range(t.ndim):
                size = ir.BinOp(T.INT64, loc, "mul", size, ir.ArrayAttr(T.INT64, loc, value, "shape", d))
            return size
        if attr == "dtype":
            return Static(t.dtype)
        if attr == "ctypes" and fc.wraparound:            # numba's a.ctypes.data
            return Static(ctypes_data.Ctypes(value))
    if isinstance(t, T.Scalar):
        if attr in ("real", "imag"):
            return pylang.complex_part(fc, value, attr, loc)
        if attr == "conjugate":
            return Static(_Method("conjugate", value))
        if attr == "bit_count" and t.kind in "iub":
            return Static(_Method("bit_count", value))
    fc.fail(node, f"{t} has no attribute '{attr}' in kernels")


class _Method:
    def __init__(self, name, value):
        self.name, self.value = name, value


def bit_count(fc, value, loc):
    """``x.bit_count()`` of an integer: the set bits of abs(x), as Python and NumPy count
    them (int32, from popc on 64 bits)."""
    if value.type.kind == "i":
        value = pylang.abs_.build(fc, [cast(fc, value, T.INT64, loc)], {}, loc)
    return intrinsics_int.BY_NAME["popc"].build(fc, [cast(fc, value, T.UINT64, loc)], {}, loc)


# ----------------------------------------------------------------- calls
def call(fc, node, statement):
    loc = fc.loc(node)
    if isinstance(node.func, ast.Subscript) and isinstance(node.func.value, (ast.Name,
                                                                            ast.Attribute)):
        base = fc.any(node.func.value)
        if isinstance(base, Static) and hasattr(base.value, "_simt_kernel"):
            return device_launch(fc, base.value, node, statement)
    func = fc.any(node.func)
    if not isinstance(func, Static):
        fc.fail(node, f"'{ast.unparse(node.func)}' is not callable in a kernel")
    callee = func.value
    if isinstance(callee, _Method):
        if callee.name == "bit_count":
            return bit_count(fc, callee.value, loc)
        return pylang.complex_conj.node(callee.value.type, loc, [callee.value])
    if any(isinstance(a, ast.Starred) for a in node.args):
        fc.fail(node, "*args in calls is not supported", "pass arguments one by one")
    args = [fc.any(a) for a in node.args]
    kwargs = {k.arg: fc.any(k.value) for k in node.keywords}
    python_object = callee
    if not isinstance(callee, Intrinsic):
        callee = callable_entry(callee) or callee
    if fc.wraparound and hasattr(callee, "_simt_kernel") and hasattr(callee, "device_function"):
        callee = callee.device_function()         # numba: a kernel called as a function
    callee = numba_functions.device_function(fc, callee) or callee      # numba.jit's
    if isinstance(callee, Intrinsic):
        loop = None if kwargs else numba_ufuncs.call(fc, callee, python_object, args, node,
                                                     statement)
        if loop is not None:                    # cuda.jit: np.sin(x, out) on arrays
            return loop
        result = callee.build(fc, args, kwargs, loc)
        if isinstance(result, ir.Stmt) and not statement:
            fc.fail(node, f"{callee.python_name}() is a statement", "call it on a line of its own")
        return result
    if isinstance(callee, type) and struct_classes.info_of(callee) is not None:
        return structs.construct(fc, callee, args, kwargs, loc)
    if records.is_namedtuple_class(callee):
        return records.make_namedtuple(fc, callee, args, kwargs, loc)
    if getattr(callee, "kernel_callable", False):     # methods of compile-time objects (cg)
        return callee.build(fc, args, kwargs, loc)
    if _is_device_function(callee):
        args = static_args.passed(fc, callee, args, as_dtype)
        return fc.call_device(callee, [a if is_group(a) else fc.expr(a, node) for a in args],
                              loc)
    dtype = as_dtype(callee)
    if dtype is not None and T.float8_storage(dtype) is not None:      # saturate=
        return float8.NARROW[T.Scalar(dtype).float8].build(fc, args, kwargs, loc)
    if dtype is not None:
        if len(args) != 1:
            fc.fail(node, f"{ast.unparse(node.func)}() takes one value")
        value = fc.expr(args[0], node)
        if value.type.kind == "c" and dtype.kind != "c":
            fc.fail(node, "cannot convert complex to a real type", "take .real first")
        return explicit(cast(fc, value, T.Scalar(dtype), loc))
    if hasattr(callee, "_simt_kernel"):
        refuse_launch(fc, callee, node)
    fc.fail(node, f"'{ast.unparse(node.func)}' cannot be called in a kernel",
            "decorate Python helpers with @simt.device; use math functions and simt intrinsics")


def device_launch(fc, kernel, node, statement):
    """``child[grid, block](args)`` inside a kernel (lang/launches.py)."""
    if node.keywords:
        fc.fail(node, f"a launch of '{kernel.__name__}' takes its arguments by position")
    if not statement:
        fc.fail(node, f"a launch of '{kernel.__name__}' is a statement and has no value",
                "write it on a line of its own")
    if any(isinstance(a, ast.Starred) for a in node.args):
        fc.fail(node, "*args in calls is not supported", "pass arguments one by one")
    config = node.func.slice
    items = config.elts if isinstance(config, ast.Tuple) else [config]
    return launches.build(fc, kernel, [fc.any(i) for i in items],
                          [fc.any(a) for a in node.args], fc.loc(node))


def refuse_launch(fc, kernel, node):
    """A kernel named inside a kernel other than as ``child[grid, block](...)``."""
    fc.fail(node, f"kernel '{kernel.__name__}' is named here without a launch: inside a "
            "kernel a kernel can only be launched (dynamic parallelism, guide appendix D)",
            f"write {kernel.__name__}[grid, block](args) on a line of its own, or make it a "
            "@simt.device function and call it")


def is_group(value):
    """Whether a built argument is a compile-time value: a cooperative group
    (lang/groups.py), a device function, or a tuple of device functions."""
    return isinstance(value, Static) and group_args.compile_time(value.value)


def _is_device_function(target):
    return hasattr(target, "_simt_device")
