"""Math in kernels: Python's ``math`` names and the CUDA math library (guide appendix F.1)
in ``simt.math``, each in the precision of its float arguments (``sinf`` for float32,
``sin`` for float64; ints compute in float64). The intrinsics (F.2, B.15) are in
intrinsics_fp.py and intrinsics_int.py; this module gathers all of them in ``simt.math``.
docs/math.md has the table with the ULP bounds the tests check."""
import math

import numpy as np

from ..ir import nodes as ir
from ..ir import types as T
from .intrinsics_fp import ENTRIES as FP_ENTRIES
from .intrinsics_int import ENTRIES as INT_ENTRIES
from .mathbase import float_type, make, python_functions, signature_rule
from .registry import Namespace

# name -> (signature, what it computes); signatures as in mathbase.signature_rule
FUNCTIONS = {
    "sqrt": ("f>f", "square root"), "rsqrt": ("f>f", "1/sqrt(x)"),
    "cbrt": ("f>f", "cube root"), "rcbrt": ("f>f", "1/cbrt(x)"),
    "exp": ("f>f", "e**x"), "exp2": ("f>f", "2**x"), "exp10": ("f>f", "10**x"),
    "expm1": ("f>f", "e**x - 1, accurate near 0"),
    "log": ("f>f", "natural logarithm"), "log2": ("f>f", "base-2 logarithm"),
    "log10": ("f>f", "base-10 logarithm"), "log1p": ("f>f", "log(1 + x), accurate near 0"),
    "sin": ("f>f", "sine"), "cos": ("f>f", "cosine"), "tan": ("f>f", "tangent"),
    "sinpi": ("f>f", "sin(pi * x), exact argument reduction"),
    "cospi": ("f>f", "cos(pi * x), exact argument reduction"),
    "asin": ("f>f", "arc sine"), "acos": ("f>f", "arc cosine"), "atan": ("f>f", "arc tangent"),
    "sinh": ("f>f", "hyperbolic sine"), "cosh": ("f>f", "hyperbolic cosine"),
    "tanh": ("f>f", "hyperbolic tangent"), "asinh": ("f>f", "inverse hyperbolic sine"),
    "acosh": ("f>f", "inverse hyperbolic cosine"), "atanh": ("f>f", "inverse hyperbolic tangent"),
    "erf": ("f>f", "error function"), "erfc": ("f>f", "1 - erf(x), accurate for large x"),
    "erfinv": ("f>f", "inverse of erf on (-1, 1)"), "erfcinv": ("f>f", "inverse of erfc on (0, 2)"),
    "erfcx": ("f>f", "scaled complementary error function exp(x*x) * erfc(x)"),
    "normcdf": ("f>f", "standard normal cumulative distribution function"),
    "normcdfinv": ("f>f", "inverse of normcdf on (0, 1)"),
    "lgamma": ("f>f", "log of the absolute value of the gamma function"),
    "tgamma": ("f>f", "gamma function"),
    "j0": ("f>f", "Bessel function of the first kind, order 0"),
    "j1": ("f>f", "Bessel function of the first kind, order 1"),
    "y0": ("f>f", "Bessel function of the second kind, order 0"),
    "y1": ("f>f", "Bessel function of the second kind, order 1"),
    "jn": ("if>f", "jn(n, x): Bessel function of the first kind, order n"),
    "yn": ("if>f", "yn(n, x): Bessel function of the second kind, order n"),
    "cyl_bessel_i0": ("f>f", "modified Bessel function of the first kind, order 0"),
    "cyl_bessel_i1": ("f>f", "modified Bessel function of the first kind, order 1"),
    "fabs": ("f>f", "absolute value"), "ceil": ("f>f", "smallest integer >= x, as a float"),
    "floor": ("f>f", "largest integer <= x, as a float"),
    "trunc": ("f>f", "x rounded toward zero, as a float"),
    "round": ("f>f", "x rounded to nearest, halves away from zero, as a float"),
    "rint": ("f>f", "x rounded to nearest, halves to even, as a float"),
    "nearbyint": ("f>f", "x rounded to nearest, halves to even, as a float"),
    "logb": ("f>f", "the unbiased exponent of x, as a float"),
    "ilogb": ("f>i", "the unbiased exponent of x, as an int32"),
    "lrint": ("f>l", "rint(x) as an int64"), "llrint": ("f>l", "rint(x) as an int64"),
    "lround": ("f>l", "round(x) as an int64"), "llround": ("f>l", "round(x) as an int64"),
    "atan2": ("ff>f", "atan2(y, x): the angle of (x, y)"), "pow": ("ff>f", "x**y"),
    "hypot": ("ff>f", "sqrt(x*x + y*y) without overflow"),
    "rhypot": ("ff>f", "1/sqrt(x*x + y*y) without overflow"),
    "copysign": ("ff>f", "|x| with the sign of y"),
    "fmod": ("ff>f", "x - trunc(x/y)*y, exact"),
    "remainder": ("ff>f", "x - rint(x/y)*y, exact"),
    "fmin": ("ff>f", "the smaller (a NaN argument is ignored)"),
    "fmax": ("ff>f", "the larger (a NaN argument is ignored)"),
    "fdim": ("ff>f", "x - y if x > y else +0"),
    "nextafter": ("ff>f", "the next float after x toward y"),
    "fma": ("fff>f", "x*y + z rounded once"),
    "norm3d": ("fff>f", "sqrt(a*a + b*b + c*c) without overflow"),
    "rnorm3d": ("fff>f", "1/sqrt(a*a + b*b + c*c) without overflow"),
    "norm4d": ("ffff>f", "sqrt(a*a + b*b + c*c + d*d) without overflow"),
    "rnorm4d": ("ffff>f", "1/sqrt(a*a + b*b + c*c + d*d) without overflow"),
    "ldexp": ("fi>f", "ldexp(x, n): x * 2**n, exact"),
    "scalbn": ("fi>f", "scalbn(x, n): x * 2**n, exact"),
    "scalbln": ("fl>f", "scalbln(x, n): x * 2**n for an int64 n, exact"),
    "sincos": ("f>ff", "(sin(x), cos(x))"),
    "sincospi": ("f>ff", "(sinpi(x), cospi(x))"),
    "modf": ("f>ff", "(fractional part, integral part), both with the sign of x"),
    "frexp": ("f>fi", "(m, e) with x == m * 2**e and 0.5 <= |m| < 1"),
    "remquo": ("ff>fi", "(remainder(x, y), q): q has the sign and at least the low 3 bits "
               "of the rounded quotient x/y"),
}
PREDICATES = {"isnan": "x is a NaN", "isinf": "x is an infinity",
              "isfinite": "x is neither infinite nor NaN", "signbit": "the sign bit of x is set"}
# Python's math names are float functions, but for these (Python returns ints: see below)
PY_ROUNDING = ("floor", "ceil", "trunc")
NUMPY_NAMES = {"asin": ["asin", "arcsin"], "acos": ["acos", "arccos"], "atan": ["atan", "arctan"],
               "atan2": ["atan2", "arctan2"], "pow": ["pow", "power"],
               "asinh": ["asinh", "arcsinh"], "acosh": ["acosh", "arccosh"],
               "atanh": ["atanh", "arctanh"]}
NOT_PYTHON = {"round", "fma"}       # math.fma (3.13) raises on overflow; round() is the builtin


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


def _objects(name):
    if name in NOT_PYTHON:
        return python_functions(name, with_math=False)
    objects = python_functions(name, NUMPY_NAMES.get(name), with_math=name not in PY_ROUNDING)
    return objects + ((math.gamma,) if name == "tgamma" else ())


def _function(name, signature, what):
    params = signature.split(">")[0]
    call = name + "(" + ", ".join("xyzw"[:len(params)] if params.count("f") == len(params)
                                  else ["n", "x"] if params == "if" else ["x", "n"]) + ")"
    doc = (f"{call}: {what}; CUDA's {name}f on float32, {name} on float64 (ints compute in "
           "float64).")
    return make("math." + name, doc, signature_rule, name, signature,
                signature in ("f>f", "ff>f", "fff>f"), python_objects=_objects(name),
                python_name="simt.math." + name)


def _make_math():
    members = {name: _function(name, *spec) for name, spec in FUNCTIONS.items()}
    for name, what in PREDICATES.items():
        members[name] = make("math." + name, f"{name}(x) -> bool: {what}.", _predicate, name,
                             python_objects=python_functions(name),
                             python_name="simt.math." + name)
    members["nan"] = make("math.nan", "nan(): a quiet float64 NaN (CUDA's nan(\"\")).",
                          lambda entry: lambda fc, a, k, loc: ir.Const(T.FLOAT64, loc, math.nan),
                          python_name="simt.math.nan", lowered_as=())
    members["nanf"] = make("math.nanf", "nanf(): a quiet float32 NaN (CUDA's nanf(\"\")).",
                           lambda entry: lambda fc, a, k, loc: ir.Const(T.FLOAT32, loc, math.nan),
                           python_name="simt.math.nanf", lowered_as=())
    for entry in FP_ENTRIES + INT_ENTRIES:
        members[entry.python_name.rsplit(".", 1)[1]] = entry
    return Namespace("simt.math", "The CUDA math library and intrinsics (docs/math.md).",
                     **members)


math_ns = _make_math()
python_rounding = [make("pymath." + name, f"math.{name}(x) -> int64, as in Python.",
                        _python_rounding, name, python_name="math." + name,
                        python_objects=(getattr(math, name),))
                   for name in PY_ROUNDING]

MATH_FUNCS = [getattr(math_ns, n) for n in list(FUNCTIONS) + list(PREDICATES)] + \
    python_rounding
