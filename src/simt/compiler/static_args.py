"""numba's compile-time arguments of device functions, for ``cuda.jit`` code only: a
type (``uint32``, ``np.float64``), an intrinsic (``cuda.atomic.add``) or a literal int or
tuple of ints passed to a device function, as numba-cuda's own tests write
``helper(ary, uint32, 32, cuda.atomic.add)``. numba types such arguments by their value
(a NumberClass, a Function type, a Literal[int] when the callee needs a constant); here
the callee is typed once per such value, the parameter bound to it as a name read from
Python would be (group_args.py passes it the way it passes cooperative groups), so
``cuda.shared.array(n, dtype)`` in the callee sees constants.

simt.kernel code is untouched: its device functions take run-time values, device
functions and groups only (the front end's ``wraparound`` flag marks cuda.jit code).
A literal int is passed so only where the callee never assigns that parameter."""
import ast
import weakref

import numpy as np

from ..lang.registry import Intrinsic, Static, callable_entry

_assigned = weakref.WeakKeyDictionary()      # device function -> its assigned names


class StaticArg:
    """A compile-time value passed to a device function; the callee binds ``value``."""

    compile_time = True

    def __init__(self, value, key):
        self.value, self.key = value, key

    def signature(self):
        return ("static", self.key)

    def bound_value(self):
        return self.value


def passed(fc, target, args, as_dtype):
    """``args`` (built arguments of a call of device function ``target``) with numba's
    compile-time values wrapped as StaticArg; unchanged outside cuda.jit code.
    ``as_dtype``: the dtype a Python object names, or None (the caller's, calls.py)."""
    if not fc.wraparound:
        return args
    params = _params(target)
    out = []
    for position, arg in enumerate(args):
        if isinstance(arg, Static) and not getattr(arg.value, "compile_time", False):
            value = arg.value
            name = params[0][position] if position < len(params[0]) else None
            if _is_type_or_intrinsic(value, as_dtype) or (
                    _is_literal(value) and name is not None and name not in params[1]):
                arg = Static(StaticArg(value, _key(value, as_dtype)), arg.name)
        out.append(arg)
    return out


def _is_type_or_intrinsic(value, as_dtype):
    if isinstance(value, Intrinsic) or callable_entry(value) is not None:
        return not getattr(value, "value", False)         # not threadIdx.x and the like
    if isinstance(value, (str, bool, int, float, complex, np.generic, tuple)):
        return False
    return as_dtype(value) is not None


def _is_literal(value):
    if isinstance(value, tuple):
        return bool(value) and all(_is_literal(v) for v in value)
    return type(value) in (int, bool)


def _params(target):
    """(parameter names, names assigned in the body) of a device function."""
    pyfunc = target.pyfunc
    try:
        return _assigned[pyfunc]
    except (KeyError, TypeError):
        pass
    from .source import Source
    fndef = Source(pyfunc).fndef
    names = [a.arg for a in fndef.args.args]
    stores = {n.id for n in ast.walk(fndef) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Store)}
    try:
        _assigned[pyfunc] = (names, stores)
    except TypeError:
        pass
    return names, stores


def _key(value, as_dtype):
    if isinstance(value, tuple):
        return tuple(_key(v, as_dtype) for v in value)
    if type(value) in (int, bool):
        return (type(value).__name__, value)
    dtype = None if isinstance(value, Intrinsic) else as_dtype(value)
    return ("dtype", dtype.str) if dtype is not None else ("object", id(value))
