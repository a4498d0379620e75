"""Python's builtins in kernels (print, len, abs, min, max, int, float, bool,
complex, round, pow, range) and the complex-number operations they and
``z.real``/``z.imag``/``z.conjugate()`` build."""
import builtins
import math

import numpy as np

from ..ir import nodes as ir
from ..ir import types as T
from .intrinsics_int import int_abs
from .mathbase import float_type
from .mathlib import math_ns
from .round_digits import function as round_function
from .registry import Intrinsic, Static


def _part_type(t):
    return T.Scalar(np.float32 if t.dtype == np.complex64 else np.float64)


def _internal(op, doc):
    return Intrinsic(op, doc, python_name=op, public=False)


complex_real = _internal("complex.real", "z.real of a complex value.")
complex_imag = _internal("complex.imag", "z.imag of a complex value.")
complex_conj = _internal("complex.conj", "z.conjugate() of a complex value.")
complex_make = _internal("complex.make", "complex(re, im) from two float64 values.")
complex_abs = _internal("complex.abs", "abs(z) of a complex value: hypot(re, im).")


def complex_part(fc, value, attr, loc):
    """``z.real`` or ``z.imag``; a real value is its own real part, with imaginary part 0."""
    t = value.type
    if t.kind != "c":
        return value if attr == "real" else ir.Const(t, loc, 0)
    entry = complex_real if attr == "real" else complex_imag
    return entry.node(_part_type(t), loc, [value])


def _print(fc, args, kwargs, loc):
    parts, values = [], []
    for a in args:
        if isinstance(a, Static) and isinstance(a.value, str):
            parts.append(a.value.replace("%", "%%"))
            continue
        v = fc.expr(a, loc)
        if not isinstance(v.type, T.Scalar):
            fc.fail(loc, f"print cannot show a {v.type}", "print its elements")
        if v.type.kind == "c":
            z = fc.cast(v, T.Scalar(np.complex128), v.loc)
            values += [complex_real.node(T.FLOAT64, v.loc, [z]),
                       complex_imag.node(T.FLOAT64, v.loc, [z])]
            parts.append("(%g+%gj)")
        elif v.type.kind == "f":
            values.append(fc.cast(v, T.FLOAT64, v.loc))
            parts.append("%g")
        elif v.type.kind == "u" and v.type.bits == 64:
            values.append(v)
            parts.append("%llu")
        else:
            values.append(fc.cast(v, T.INT64, v.loc))
            parts.append("%lld")
    sep = kwargs.get("sep")
    sep = sep.value if isinstance(sep, Static) else " "
    return ir.Print(loc, sep.join(parts) + "\n", values)


def _len(fc, args, kwargs, loc):
    v = fc.expr(fc.one_arg(args, "len", loc), loc)
    if isinstance(v.type, T.Array):
        return ir.ArrayAttr(T.INT64, loc, v, "shape", 0)
    if isinstance(v.type, T.Tuple):
        return Static(len(v.type.items))
    fc.fail(loc, f"len() of a {v.type}")


def _abs(fc, args, kwargs, loc):
    v = fc.expr(fc.one_arg(args, "abs", loc), loc)
    if not isinstance(v.type, T.Scalar):
        fc.fail(loc, f"abs() of a {v.type}")
    if v.type.kind == "c":
        return complex_abs.node(_part_type(v.type), loc, [v])
    if v.type.float8:               # as CUDA's: of the float it converts to
        v = fc.cast(v, T.FLOAT32, loc)
    if v.type.is_bfloat16:          # its bits: of its float32 value (exact)
        wide = math_ns.fabs.node(T.FLOAT32, loc, [fc.cast(v, T.FLOAT32, loc)])
        return fc.cast(wide, v.type, loc)
    if v.type.kind == "f":
        return math_ns.fabs.node(v.type, loc, [v])
    return int_abs.node(v.type, loc, [v])


def _minmax(op):
    def build(fc, args, kwargs, loc):
        if len(args) < 2:
            fc.fail(loc, f"{op}() in kernels takes two or more numbers")
        values = [fc.expr(a, loc) for a in args]
        result = values[0]
        for v in values[1:]:
            t = T.promote(result.type, v.type)
            if t.kind == "c":
                fc.fail(loc, f"{op}() of complex numbers")
            if t.is_bfloat16:       # its bits: compared as float32 values (exact)
                wide = ir.BinOp(T.FLOAT32, loc, op, fc.cast(result, T.FLOAT32, loc),
                                fc.cast(v, T.FLOAT32, loc))
                result = fc.cast(wide, t, loc)
                continue
            result = ir.BinOp(t, loc, op, fc.cast(result, t, loc), fc.cast(v, t, loc))
        return result
    return build


def _conversion(dtype):
    def build(fc, args, kwargs, loc):
        if dtype == np.complex128 and len(args) == 2:
            re, im = (fc.cast(fc.expr(a, loc), T.FLOAT64, loc) for a in args)
            return complex_make.node(T.Scalar(dtype), loc, [re, im])
        v = fc.expr(fc.one_arg(args, np.dtype(dtype).name, loc), loc)
        if np.dtype(dtype).kind == "b":
            return fc.truth(v, loc)
        if v.type.kind == "c" and np.dtype(dtype).kind != "c":
            fc.fail(loc, "cannot convert complex to a real number", "take .real or abs() first")
        converted = fc.cast(v, T.Scalar(dtype), loc)
        if isinstance(converted, ir.Cast):
            converted.explicit = True        # the user's own: narrowing=True leaves it alone
        return converted
    return build


def _round(fc, args, kwargs, loc):
    if len(args) == 2:
        return _round_to(fc, *args, loc)
    if len(args) != 1:
        fc.fail(loc, "round() in kernels takes one or two arguments")
    v = fc.expr(args[0], loc)
    if v.type.kind in "iub":
        return fc.cast(v, T.INT64, loc)
    if v.type.float8 or v.type.is_bfloat16:         # exactly, as CUDA converts them
        v = fc.cast(v, T.FLOAT32, loc)
    ft = v.type.strong()
    return fc.cast(math_ns.rint.node(ft, loc, [v]), T.INT64, loc)


def _round_to(fc, x, ndigits, loc):
    """round(x, ndigits): a float of x's type (round_digits.py); an int x is returned
    unchanged for ndigits >= 0 in Python, so ints are refused here."""
    x, ndigits = fc.expr(x, loc), fc.expr(ndigits, loc)
    if x.type.kind != "f" or ndigits.type.kind not in "iu":
        fc.fail(loc, f"round(x, ndigits) in kernels takes a float x and an int ndigits, got "
                f"{x.type} and {ndigits.type}")
    t = x.type.strong()
    result = fc.call_device(round_function(), [fc.cast(x, t, loc),
                                                      fc.cast(ndigits, T.INT64, loc)], loc)
    return fc.cast(result, t, loc)


def _scaled(name, numerator, denominator):
    """math.degrees and math.radians: x times numerator / denominator, that quotient
    rounded in x's float type, as NumPy's np.degrees and np.radians compute (ints in
    float64, float16 in float32 and rounded back)."""
    def build(fc, args, kwargs, loc):
        x = fc.expr(fc.one_arg(args, name, loc), loc)
        ft = float_type(fc, x, loc, f"math.{name}")
        wide = T.FLOAT32 if ft.dtype == np.float16 else ft
        factor = float(wide.dtype.type(numerator) / wide.dtype.type(denominator))
        product = ir.BinOp(wide, loc, "mul", fc.cast(x, wide, loc), ir.Const(wide, loc, factor))
        return fc.cast(product, ft, loc)
    return build


def _pow(fc, args, kwargs, loc):
    a, b = (fc.expr(x, loc) for x in args)
    return fc.binop("pow", a, b, loc)


def _range(fc, args, kwargs, loc):
    fc.fail(loc, "range() can only be used in a for loop", "write for i in range(...):")


def _breakpoint(fc, args, kwargs, loc):
    if args or kwargs:
        fc.fail(loc, "breakpoint() takes no arguments in a kernel")
    return breakpoint_.node(T.VOID, loc, [])


def _builtin(fn, doc, build, lowered_as):
    return Intrinsic("builtin." + fn.__name__, doc, build, python_name=fn.__name__,
                     python_objects=(fn,), lowered_as=lowered_as)


_SCALAR = (ir.Cast, ir.Compare, ir.Intrinsic)
print_ = _builtin(builtins.print, "print(*values, sep=' '): printf from each thread; string "
                  "literals, numbers (complex as (re+imj)).", _print, (ir.Print,))
len_ = _builtin(builtins.len, "len(a): a.shape[0] of an array (int64), or a tuple's length.",
                _len, (ir.ArrayAttr,))
abs_ = _builtin(builtins.abs, "abs(x): fabs for floats, |x| for ints, hypot(re, im) for "
                "complex (float of its precision); FP8 gives float32, as in CUDA.", _abs,
                (ir.Intrinsic, ir.Cast))
min_ = _builtin(builtins.min, "min(a, b, ...): the least of two or more numbers, promoted.",
                _minmax("min"), (ir.BinOp, ir.Cast))
max_ = _builtin(builtins.max, "max(a, b, ...): the greatest of two or more numbers, promoted.",
                _minmax("max"), (ir.BinOp, ir.Cast))
int_ = _builtin(builtins.int, "int(x): int64, truncating floats toward zero.",
                _conversion(np.int64), _SCALAR)
float_ = _builtin(builtins.float, "float(x): float64.", _conversion(np.float64), _SCALAR)
bool_ = _builtin(builtins.bool, "bool(x): x != 0.", _conversion(np.bool_), _SCALAR)
complex_ = _builtin(builtins.complex, "complex(x) or complex(re, im): complex128.",
                    _conversion(np.complex128), _SCALAR)
round_ = _builtin(builtins.round, "round(x): int64, halves to even as in Python; round(x, "
                  "ndigits): a float of x's type, rounded as CPython's fallback rounds.", _round,
                  (ir.Cast, ir.Intrinsic))
degrees = Intrinsic("math.degrees", "math.degrees(x): x * (180 / pi), radians to degrees, in "
                    "x's float type (ints in float64); np.degrees and np.rad2deg too.",
                    _scaled("degrees", 180.0, math.pi), python_name="math.degrees",
                    python_objects=(math.degrees, np.degrees, np.rad2deg), lowered_as=(ir.BinOp,))
radians = Intrinsic("math.radians", "math.radians(x): x * (pi / 180), degrees to radians, in "
                    "x's float type (ints in float64); np.radians and np.deg2rad too.",
                    _scaled("radians", math.pi, 180.0), python_name="math.radians",
                    python_objects=(math.radians, np.radians, np.deg2rad), lowered_as=(ir.BinOp,))
pow_ = _builtin(builtins.pow, "pow(x, y): x ** y.", _pow, (ir.BinOp,))
range_ = _builtin(builtins.range, "range(stop) / range(start, stop, step): only as the "
                  "iterable of a for loop.", _range, (ir.ForRange,))
breakpoint_ = Intrinsic("builtin.breakpoint", "breakpoint(): on the sim device, stop this thread "
                        "in pdb at this line, with its variables, threadIdx and blockIdx.",
                        _breakpoint, python_name="breakpoint",
                        python_objects=(builtins.breakpoint,))
