"""What the math families (mathlib.py, intrinsics_fp.py, intrinsics_int.py) share: the
float type a function computes in, typing rules built from a signature string, and the
entry maker."""
import math

import numpy as np

from ..ir import types as T
from .registry import Intrinsic

# signature letters: f a float in the arguments' precision, i int32, l int64, u uint32,
# b bool, F float32, D float64
LETTERS = {"i": T.INT32, "l": T.INT64, "u": T.UINT32, "b": T.BOOL, "F": T.FLOAT32,
           "D": T.FLOAT64, "U": T.UINT64}


def float_type(fc, value, loc, what):
    """The float type a math function computes in for an argument of this type."""
    t = value.type
    if not isinstance(t, T.Scalar) or t.kind == "c":
        fc.fail(loc, f"{what} needs a real number, got {t}")
    if t.kind == "f":
        return T.FLOAT32 if t.is_bfloat16 else t.strong()    # bfloat16: as C++ converts it
    return T.FLOAT64


def signature_rule(entry, name, signature, half=True):
    """The typing rule of a call with ``signature`` "args>results" (letters above): the
    float arguments promote together (ints compute in float64), the others are cast;
    two or more results make a tuple. ``half=False``: float16 computes in float32."""
    params, results = signature.split(">")
    entry.arity = len(params)

    def build(fc, args, kwargs, loc):
        if kwargs:
            fc.fail(loc, f"{entry.python_name} takes no keyword arguments")
        if len(args) != len(params):
            fc.fail(loc, f"{entry.python_name} takes {len(params)} argument"
                    f"{'s' if len(params) != 1 else ''}, got {len(args)}")
        values = [fc.expr(a, loc) for a in args]
        floats = [v for v, p in zip(values, params) if p == "f"]
        ft = None
        if floats:
            ft = T.promote(*[T.Scalar(float_type(fc, v, loc, name).dtype, v.type.weak)
                             for v in floats]).strong()
            if not half and ft.dtype.itemsize == 2:
                ft = T.FLOAT32
        for k, (v, p) in enumerate(zip(values, params)):
            if p in "iluU" and (not isinstance(v.type, T.Scalar) or v.type.kind not in "iub"):
                fc.fail(loc, f"{entry.python_name}: argument {k + 1} must be an integer, "
                        f"got {v.type}")
            if p in "FD":
                float_type(fc, v, loc, entry.python_name)
        cast = [fc.cast(v, ft if p == "f" else LETTERS[p], loc) for v, p in zip(values, params)]
        types = [ft if r == "f" else LETTERS[r] for r in results]
        return entry.node(types[0] if len(types) == 1 else T.Tuple(types), loc, cast)
    return build


def make(op, doc, rule, *rule_args, **kw):
    """An entry whose typing rule builds its own IR node (the rule gets the entry)."""
    entry = Intrinsic(op, doc, **kw)
    entry.build = rule(entry, *rule_args)
    return entry


def python_functions(name, numpy_names=None, with_math=True):
    """Python's math function and NumPy's ufuncs of this name, where they exist."""
    found = [getattr(math, name, None)] if with_math else []
    found += [u for u in (getattr(np, n, None) for n in (numpy_names or [name]))
              if isinstance(u, np.ufunc)]
    return tuple(f for f in found if f is not None)
