"""Math in kernels: Python's ``math`` names, CUDA's extras (``simt.math``),
fast intrinsics, integer intrinsics and bit casts (guide appendix F, B.15)."""
import math

import numpy as np

from ..ir import nodes as ir
from ..ir import types as T
from .registry import Intrinsic, Namespace

UNARY = ["sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
         "lgamma", "tgamma", "cbrt", "exp2", "exp10", "rsqrt", "fabs", "rint", "floor", "ceil",
         "trunc", "round"]
BINARY = ["atan2", "pow", "hypot", "copysign", "fmod", "fmin", "fmax", "fdim", "remainder"]
PREDICATES = ["isnan", "isinf", "isfinite", "signbit"]
FAST = {"fast_exp": "exp", "fast_exp10": "exp10", "fast_log": "log", "fast_log2": "log2",
        "fast_log10": "log10", "fast_sin": "sin", "fast_cos": "cos", "fast_tan": "tan",
        "fast_pow": "pow", "fdividef": "div"}


def float_type(fc, value, loc, what):
    """The float type a math function computes in for an argument of this type."""
    t = value.type
    if not isinstance(t, T.Scalar) or t.kind == "c":
        fc.fail(loc, f"{what} needs a real number, got {t}")
    if t.kind == "f":
        return t.strong()
    return T.FLOAT64


def _unary(name):
    def build(fc, args, kwargs, loc):
        x = fc.expr(fc.one_arg(args, name, loc), loc)
        ft = float_type(fc, x, loc, name)
        return ir.Intrinsic(ft, loc, "math." + name, [fc.cast(x, ft, loc)])
    return build


def _nary(name, n):
    def build(fc, args, kwargs, loc):
        if len(args) != n:
            fc.fail(loc, f"{name} takes {n} arguments, got {len(args)}")
        values = [fc.expr(a, loc) for a in args]
        ft = T.promote(*[T.Scalar(float_type(fc, v, loc, name).dtype, v.type.weak) for v in values])
        ft = ft.strong()
        return ir.Intrinsic(ft, loc, "math." + name, [fc.cast(v, ft, loc) for v in values])
    return build


def _predicate(name):
    def build(fc, args, kwargs, loc):
        x = fc.expr(fc.one_arg(args, name, loc), loc)
        if x.type.kind in "iub":
            return ir.Const(T.BOOL, loc, name == "isfinite")
        ft = float_type(fc, x, loc, name)
        return ir.Intrinsic(T.BOOL, loc, "math." + name, [fc.cast(x, ft, loc)])
    return build


def _python_rounding(name):
    """math.floor/ceil/trunc return int64, as Python's do."""
    def build(fc, args, kwargs, loc):
        x = fc.expr(fc.one_arg(args, name, loc), loc)
        if x.type.kind in "iub":
            return fc.cast(x, T.INT64, loc)
        ft = float_type(fc, x, loc, name)
        return fc.cast(ir.Intrinsic(ft, loc, "math." + name, [fc.cast(x, ft, loc)]), T.INT64, loc)
    return build


def _fast(name, base):
    def build(fc, args, kwargs, loc):
        values = [fc.cast(fc.expr(a, loc), T.FLOAT32, loc) for a in args]
        return ir.Intrinsic(T.FLOAT32, loc, "fast." + base, values)
    return build


def _int_unary(name, result=None):
    def build(fc, args, kwargs, loc):
        x = fc.expr(fc.one_arg(args, name, loc), loc)
        t = x.type.strong() if x.type.kind in "iu" and not x.type.weak else T.INT32
        if t.bits < 32:
            t = T.INT32
        out = result or t
        return ir.Intrinsic(out, loc, "int." + name, [fc.cast(x, t, loc)])
    return build


def _int_binary(name, kind=None):
    def build(fc, args, kwargs, loc):
        a, b = (fc.expr(v, loc) for v in args)
        t = T.promote(a.type, b.type).strong()
        if kind == "24":
            t = T.UINT32 if name.startswith("u") else T.INT32
        elif t.bits < 32 or t.kind not in "iu":
            t = T.INT32
        if name.startswith("u") and t.kind == "i":
            t = T.Scalar(np.dtype(f"uint{t.bits}"))
        return ir.Intrinsic(t, loc, "int." + name, [fc.cast(a, t, loc), fc.cast(b, t, loc)])
    return build


def _bitcast(src, dst):
    def build(fc, args, kwargs, loc):
        x = fc.cast(fc.expr(fc.one_arg(args, "bit cast", loc), loc), T.Scalar(src), loc)
        return ir.Intrinsic(T.Scalar(dst), loc, "bitcast", [x])
    return build


def _fma(fc, args, kwargs, loc):
    return _nary("fma", 3)(fc, args, kwargs, loc)


def _make_math():
    members = {}
    for name in UNARY:
        members[name] = Intrinsic("math." + name, f"{name}(x): CUDA's {name}/{name}f, keeping "
                                  "the precision of a float argument (ints compute in float64).",
                                  _unary(name))
    for name in BINARY:
        members[name] = Intrinsic("math." + name, f"{name}(x, y) in the precision of its "
                                  "arguments.", _nary(name, 2))
    for name in PREDICATES:
        members[name] = Intrinsic("math." + name, f"{name}(x) -> bool.", _predicate(name))
    members["fma"] = Intrinsic("math.fma", "fma(x, y, z): x*y+z rounded once.", _fma)
    for name, base in FAST.items():
        members[name] = Intrinsic("fast." + base, f"{name}: the float32 intrinsic __{base}f "
                                  "(faster, less accurate on the GPU; exact libm on the CPU).",
                                  _fast(name, base))
    for name in ("popc", "clz", "ffs", "brev"):
        members[name] = Intrinsic("int." + name, f"__{name}(x) on a 32- or 64-bit integer.",
                                  _int_unary(name, None if name == "brev" else T.INT32))
    for name in ("mul24", "umul24"):
        members[name] = Intrinsic("int." + name, f"__{name}(x, y): product of the low 24 bits.",
                                  _int_binary(name, "24"))
    for name in ("mulhi", "umulhi"):
        members[name] = Intrinsic("int." + name, f"__{name}(x, y): high half of the full product.",
                                  _int_binary(name))
    return Namespace("simt.math", "CUDA math functions beyond Python's math module.", **members)


math_ns = _make_math()

float_as_int = Intrinsic("bitcast.float_as_int", "__float_as_int: the bits of a float32 as int32.",
                         _bitcast(np.float32, np.int32))
int_as_float = Intrinsic("bitcast.int_as_float", "__int_as_float: int32 bits as a float32.",
                         _bitcast(np.int32, np.float32))
float_as_uint = Intrinsic("bitcast.float_as_uint", "__float_as_uint: float32 bits as uint32.",
                          _bitcast(np.float32, np.uint32))
uint_as_float = Intrinsic("bitcast.uint_as_float", "__uint_as_float: uint32 bits as float32.",
                          _bitcast(np.uint32, np.float32))
double_as_longlong = Intrinsic("bitcast.double_as_longlong", "__double_as_longlong: float64 bits "
                               "as int64.", _bitcast(np.float64, np.int64))
longlong_as_double = Intrinsic("bitcast.longlong_as_double", "__longlong_as_double: int64 bits "
                               "as float64.", _bitcast(np.int64, np.float64))


def _python_math_table():
    """Python's math functions (and NumPy's ufuncs of the same meaning) mapped to intrinsics."""
    table = {}
    for name in UNARY + BINARY + PREDICATES + ["fma"]:
        fn = getattr(math, name, None)
        if fn is not None:
            table[fn] = getattr(math_ns, name)
        ufunc = getattr(np, name, None)
        if isinstance(ufunc, np.ufunc):
            table[ufunc] = getattr(math_ns, name)
    table[math.gamma] = math_ns.tgamma
    for name in ("floor", "ceil", "trunc"):
        table[getattr(math, name)] = Intrinsic("pymath." + name, f"math.{name}(x) -> int64, as "
                                               "in Python.", _python_rounding(name),
                                               python_name="math." + name)
    table[np.arcsin], table[np.arccos], table[np.arctan] = math_ns.asin, math_ns.acos, math_ns.atan
    table[np.arctan2], table[np.power] = math_ns.atan2, math_ns.pow
    table[np.arcsinh], table[np.arccosh], table[np.arctanh] = (math_ns.asinh, math_ns.acosh,
                                                                math_ns.atanh)
    return table


PYTHON_MATH = _python_math_table()
