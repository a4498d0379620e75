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
        return T.FLOAT32 if t.is_bfloat16 else t.strong()    # bfloat16: as C++ converts it
    return T.FLOAT64


def _unary(entry, name):
    def build(fc, args, kwargs, loc):
        x = fc.expr(fc.one_arg(args, name, loc), loc)
        ft = float_type(fc, x, loc, name)
        return entry.node(ft, loc, [fc.cast(x, ft, loc)])
    return build


def _nary(entry, name, n):
    def build(fc, args, kwargs, loc):
        if len(args) != n:
            fc.fail(loc, f"{name} takes {n} arguments, got {len(args)}")
        values = [fc.expr(a, loc) for a in args]
        ft = T.promote(*[T.Scalar(float_type(fc, v, loc, name).dtype, v.type.weak) for v in values])
        ft = ft.strong()
        return entry.node(ft, loc, [fc.cast(v, ft, loc) for v in values])
    return build


def _predicate(entry, name):
    def build(fc, args, kwargs, loc):
        x = fc.expr(fc.one_arg(args, name, loc), loc)
        if x.type.kind in "iub":
            return ir.Const(T.BOOL, loc, name == "isfinite")
        ft = float_type(fc, x, loc, name)
        return entry.node(T.BOOL, loc, [fc.cast(x, ft, loc)])
    return build


def _python_rounding(entry, name):
    """math.floor/ceil/trunc return int64, as Python's do."""
    def build(fc, args, kwargs, loc):
        x = fc.expr(fc.one_arg(args, name, loc), loc)
        if x.type.kind in "iub":
            return fc.cast(x, T.INT64, loc)
        ft = float_type(fc, x, loc, name)
        return fc.cast(entry.node(ft, loc, [fc.cast(x, ft, loc)], op="math." + name), T.INT64, loc)
    return build


def _fast(entry):
    def build(fc, args, kwargs, loc):
        values = [fc.cast(fc.expr(a, loc), T.FLOAT32, loc) for a in args]
        return entry.node(T.FLOAT32, loc, values)
    return build


def _int_unary(entry, name, result=None):
    def build(fc, args, kwargs, loc):
        x = fc.expr(fc.one_arg(args, name, loc), loc)
        t = x.type.strong() if x.type.kind in "iu" and not x.type.weak else T.INT32
        if t.bits < 32:
            t = T.INT32
        out = result or t
        return entry.node(out, loc, [fc.cast(x, t, loc)])
    return build


def _int_binary(entry, name, kind=None):
    def build(fc, args, kwargs, loc):
        a, b = (fc.expr(v, loc) for v in args)
        t = T.promote(a.type, b.type).strong()
        if kind == "24":
            t = T.UINT32 if name.startswith("u") else T.INT32
        elif t.bits < 32 or t.kind not in "iu":
            t = T.INT32
        if name.startswith("u") and t.kind == "i":
            t = T.Scalar(np.dtype(f"uint{t.bits}"))
        return entry.node(t, loc, [fc.cast(a, t, loc), fc.cast(b, t, loc)])
    return build


def _bitcast(entry, src, dst):
    def build(fc, args, kwargs, loc):
        x = fc.cast(fc.expr(fc.one_arg(args, "bit cast", loc), loc), T.Scalar(src), loc)
        return entry.node(T.Scalar(dst), loc, [x], op="bitcast")
    return build


def _entry(op, doc, rule, *rule_args, **kw):
    """An entry whose typing rule builds its own IR node (the rule gets the entry)."""
    entry = Intrinsic(op, doc, **kw)
    entry.build = rule(entry, *rule_args)
    return entry


def _math_objects(name, with_math=True):
    """Python's math function and NumPy's ufuncs of this name, where they exist."""
    found = [getattr(math, name, None)] if with_math else []
    found += [u for u in (getattr(np, n, None) for n in _NUMPY.get(name, [name]))
              if isinstance(u, np.ufunc)]
    return tuple(f for f in found if f is not None)


_NUMPY = {"asin": ["asin", "arcsin"], "acos": ["acos", "arccos"], "atan": ["atan", "arctan"],
          "atan2": ["atan2", "arctan2"], "pow": ["pow", "power"], "asinh": ["asinh", "arcsinh"],
          "acosh": ["acosh", "arccosh"], "atanh": ["atanh", "arctanh"]}


def _make_math():
    members = {}
    for name in UNARY:
        objects = _math_objects(name, with_math=name not in _PY_ROUNDING)
        if name == "tgamma":
            objects += (math.gamma,)
        members[name] = _entry("math." + name, f"{name}(x): CUDA's {name}/{name}f, keeping "
                               "the precision of a float argument (ints compute in float64).",
                               _unary, name, python_objects=objects)
    for name in BINARY:
        members[name] = _entry("math." + name, f"{name}(x, y) in the precision of its "
                               "arguments.", _nary, name, 2, python_objects=_math_objects(name))
    for name in PREDICATES:
        members[name] = _entry("math." + name, f"{name}(x) -> bool.", _predicate, name,
                               python_objects=_math_objects(name))
    members["fma"] = _entry("math.fma", "fma(x, y, z): x*y+z rounded once.", _nary, "fma", 3,
                            python_objects=_math_objects("fma"))
    for name, base in FAST.items():
        members[name] = _entry("fast." + base, f"{name}: the float32 intrinsic __{base}f "
                               "(faster, less accurate on the GPU; exact libm on the CPU).", _fast,
                               python_name="simt.math." + name)
    for name in ("popc", "clz", "ffs", "brev"):
        members[name] = _entry("int." + name, f"__{name}(x) on a 32- or 64-bit integer.",
                               _int_unary, name, None if name == "brev" else T.INT32,
                               python_name="simt.math." + name)
    for name in ("mul24", "umul24"):
        members[name] = _entry("int." + name, f"__{name}(x, y): product of the low 24 bits.",
                               _int_binary, name, "24", python_name="simt.math." + name)
    for name in ("mulhi", "umulhi"):
        members[name] = _entry("int." + name, f"__{name}(x, y): high half of the full product.",
                               _int_binary, name, python_name="simt.math." + name)
    for name in UNARY + BINARY + PREDICATES + ["fma"]:
        members[name].python_name = "simt.math." + name
    return Namespace("simt.math", "CUDA math functions beyond Python's math module.", **members)


_PY_ROUNDING = ("floor", "ceil", "trunc")
math_ns = _make_math()
int_abs = _entry("int.abs", "abs(x) of an integer (built by abs()).", lambda entry: None,
                 public=False)
python_rounding = [_entry("pymath." + name, f"math.{name}(x) -> int64, as in Python.",
                          _python_rounding, name, python_name="math." + name,
                          python_objects=(getattr(math, name),))
                   for name in _PY_ROUNDING]

MATH_FUNCS = [getattr(math_ns, n) for n in UNARY + BINARY + PREDICATES + ["fma"]] + \
    python_rounding
FAST_FUNCS = [getattr(math_ns, n) for n in FAST]
INT_FUNCS = [getattr(math_ns, n) for n in ("popc", "clz", "ffs", "brev", "mul24", "umul24",
                                           "mulhi", "umulhi")] + [int_abs]

float_as_int = _entry("bitcast.float_as_int", "__float_as_int: the bits of a float32 as int32.",
                      _bitcast, np.float32, np.int32)
int_as_float = _entry("bitcast.int_as_float", "__int_as_float: int32 bits as a float32.",
                      _bitcast, np.int32, np.float32)
float_as_uint = _entry("bitcast.float_as_uint", "__float_as_uint: float32 bits as uint32.",
                       _bitcast, np.float32, np.uint32)
uint_as_float = _entry("bitcast.uint_as_float", "__uint_as_float: uint32 bits as float32.",
                       _bitcast, np.uint32, np.float32)
double_as_longlong = _entry("bitcast.double_as_longlong", "__double_as_longlong: float64 bits "
                            "as int64.", _bitcast, np.float64, np.int64)
longlong_as_double = _entry("bitcast.longlong_as_double", "__longlong_as_double: int64 bits "
                            "as float64.", _bitcast, np.int64, np.float64)
BITCASTS = [float_as_int, int_as_float, float_as_uint, uint_as_float, double_as_longlong,
            longlong_as_double]
