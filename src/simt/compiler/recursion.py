"""Typing device functions that call themselves, directly or through others.

A device function's IR is built by a FrontEnd per argument types; a call of a function
whose FrontEnd is still running (one of the ``frames`` up the chain of calls) is a
recursive call. Its return type is the one the running FrontEnd has inferred so far:
the front end repeats its passes until nothing changes, so the type a recursive call
sees settles with the function's own (``return n * fact(n - 1)`` after ``return 1``
reads int64 in the second pass). A return annotation naming a NumPy dtype
(``def f(n) -> np.int32``) fixes it from the start; it is what a function needs whose
every return depends on a call of itself.

In a pass where the running function has no return type yet, the call is typed as a
weak integer (a guess, which unifies with any scalar), that function must run another
pass, and the returns built from guesses do not count towards its return type. The
functions between the call and the running one depend on its unsettled type, so they
are cached only once it is done (``depends_on_open``, ``pending``): its passes rebuild
them, and what its last pass built is what the cache gets.
"""
import ast

from ..ir import nodes as ir
from ..ir import types as T
from ..lang.registry import Static
from . import calls


def open_frame(fe, pyfunc, key):
    """The FrontEnd up the chain of calls building ``pyfunc`` for ``key``, or None."""
    for frame in fe.frames:
        if frame.pyfunc is pyfunc and frame.key == key:
            return frame
    return None


def call_open(fe, frame, args, loc):
    """The call of the device function ``frame`` is building (a recursive call)."""
    for caller in fe.frames[fe.frames.index(frame) + 1:]:
        caller.depends_on_open = True
    t = frame.return_type
    if t is None:
        frame.changed = True                    # it runs another pass, with its type known
        frame.guessed_at = fe.loc(loc)
        fe.guesses += 1
        t = T.WEAK_INT
    return ir.CallDevice(t, fe.loc(loc), frame.function, args)


def cache(fe, callee, ir_cache, key, function):
    """Keep ``function``, which ``callee`` built, in its device function's ``ir_cache``
    now, or (when it calls a function still being built) once that one is done."""
    if callee.depends_on_open:
        fe.pending[id(ir_cache), key] = (ir_cache, key, function)
        fe.pending.update(callee.pending)
        return
    ir_cache[key] = function
    for other_cache, other_key, other in callee.pending.values():
        other_cache[other_key] = other


def declared_return(fe, fndef):
    """The return type a ``-> np.dtype`` annotation fixes, or None; VOID for a function
    with no ``return value`` (a recursive call of it returns nothing). Python's own
    ``int``/``float``/``bool`` annotations are hints for type checkers and fix nothing
    (the function returns what its values are, as without them)."""
    if fe.is_kernel:
        return None
    if not any(isinstance(node, ast.Return) and node.value is not None
               for node in ast.walk(fndef)):
        return T.VOID
    if fndef.returns is None:
        return None
    value = fe.any(fndef.returns)
    if not isinstance(value, Static) or value.value in (int, float, complex, bool) or \
            isinstance(value.value, str):
        return None
    if value.value is None:
        return T.VOID
    dtype = calls.as_dtype(value.value)
    if dtype is None:
        fe.fail(fndef.returns, f"the return annotation {value.name or value.value!r} is not a "
                "type kernels can return", "annotate with a NumPy dtype (-> np.float32) or "
                "leave the annotation out")
    return T.element_type(fe.static_dtype(value, fndef.returns))


def return_type(fe, value, node, guessed):
    """The function's return type after a ``return value`` (its declared one, else
    ``value``'s unified with the others'); None when ``value`` came from a guess
    (``guessed``)."""
    if fe.declared is not None:
        if fe.declared == T.VOID:
            fe.fail(node, f"'{fe.source.name}' is annotated '-> None' and returns a value",
                    "remove the annotation or the value")
        return fe.declared
    if guessed:
        return None
    merged = T.unify(fe.return_type, value.type)
    if merged is None:
        fe.fail(node, f"this function returns {fe.return_type} elsewhere and "
                f"{value.type} here", "return values of one type")
    return merged


def check_settled(fe):
    """After the last pass: a recursive function whose return type only guesses gave."""
    if fe.return_type is None and fe.guesses and not fe.declared:
        fe.fail(fe.guessed_at, f"cannot infer the return type of the recursive device "
                f"function '{fe.source.name}': each of its returns depends on a call of "
                "itself", f"annotate it with a NumPy dtype: def {fe.source.name}(...) -> "
                "np.int32 (or the type it returns), or return a value of that type on "
                "the path that ends the recursion")


def stub(name, params, is_kernel, loc):
    """The Function a FrontEnd fills when it is built: recursive calls name it before."""
    return ir.Function(name=name, params=params, return_type=T.VOID, body=[], locals={},
                       decls=[], is_kernel=is_kernel, loc=loc)

