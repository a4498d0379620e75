"""Device functions chosen at run time (issue 35 item 2): ``f = add if p else mul``,
``ops[i]`` of a tuple of device functions, a name assigned different functions on
different paths, and such values passed to device functions.

The set of device functions a value may hold is known when compiling, so a run-time
function value is a ``FunctionChoice``: that set (ordered) and an int32 variable, its
selector, holding the index of the function chosen. A call is a switch over the set (an
if-chain on the selector, each branch a direct call), as CUDA compilers lower an indirect
call whose targets are known; every candidate must take the same number of arguments and
return one type. A name assigned functions keeps the union of what it is assigned across
the front end's passes (``FrontEnd.function_sets``); one candidate stays a plain
compile-time function value, as before. Passed to a device function, the selector is a
hidden argument (group_args.py) and the callee is typed for the set.
"""
import inspect

from ..ir import nodes as ir
from ..ir import types as T
from ..lang.registry import Static


class FunctionChoice:
    """One of ``candidates`` (device functions), the one whose index the int32 variable
    ``selector`` holds."""

    compile_time = True
    kernel_callable = True
    hidden_parts = ("selector",)

    def __init__(self, candidates, selector, name="function value"):
        self.candidates, self.selector, self.python_name = tuple(candidates), selector, name

    def signature(self):
        return ("function choice",) + tuple(c.signature() for c in self.candidates)

    def build(self, fc, args, kwargs, loc):
        if kwargs:
            fc.fail(loc, f"'{self.python_name}' is called with keyword arguments",
                    "device functions take positional arguments")
        return call(fc, self, args, loc)


def candidates(value):
    """The device functions a compile-time value may be, or None if it is none."""
    if isinstance(value, FunctionChoice):
        return value.candidates
    if hasattr(value, "_simt_device"):
        return (value,)
    return None


def is_function(built):
    return isinstance(built, Static) and candidates(built.value) is not None


def union(*sets):
    out = []
    for group in sets:
        out.extend(c for c in group if not any(c is seen for seen in out))
    return tuple(out)


def _position(functions, fn):
    return next(i for i, c in enumerate(functions) if c is fn)


def _index(value, functions, loc):
    """The int32 index, in ``functions``, of the function ``value`` holds."""
    if not isinstance(value, FunctionChoice):
        return ir.Const(T.INT32, loc, _position(functions, value))
    selector = ir.Var(T.INT32, loc, value.selector)
    if functions[:len(value.candidates)] == value.candidates:
        return selector
    chosen = ir.Const(T.INT32, loc, _position(functions, value.candidates[-1]))
    for i, fn in reversed(list(enumerate(value.candidates[:-1]))):
        here = ir.Compare(T.BOOL, loc, "eq", selector, ir.Const(T.INT32, loc, i))
        chosen = ir.IfExp(T.INT32, loc, here, ir.Const(T.INT32, loc, _position(functions, fn)),
                          chosen)
    return chosen


def arity(fn):
    """How many parameters a device function (or a lambda: lambdas.py) takes."""
    own = getattr(fn, "arity", None)
    return own() if own is not None else len(inspect.signature(fn.pyfunc).parameters)


def _check_arity(fc, functions, what, loc):
    counts = {c: arity(c) for c in functions}
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"'{c.__name__}' ({n} parameters)" for c, n in counts.items())
        fc.fail(loc, f"{what} may hold device functions of different signatures: {listed}",
                "functions chosen at run time must take the same arguments and return one "
                "type; wrap one of them in a device function of the common signature")


def _choice(fc, functions, index, what, loc, name=None):
    """A FunctionChoice of ``functions`` whose selector (a new variable, or ``name``)
    is assigned ``index`` here."""
    _check_arity(fc, functions, what, loc)
    selector = name or fc.temp("fn")
    fc.assign_type(selector, T.INT32, loc)
    fc.hoist(ir.Assign(loc, selector, index))
    return Static(FunctionChoice(functions, selector, what), what)


def choose(fc, cond, then, orelse, loc):
    """``then if cond else orelse`` of two function values."""
    functions = union(candidates(then.value), candidates(orelse.value))
    if len(functions) == 1:
        return then
    index = ir.IfExp(T.INT32, loc, cond, _index(then.value, functions, loc),
                     _index(orelse.value, functions, loc))
    return _choice(fc, functions, index, "this function value", loc)


def pick(fc, items, index, label, loc):
    """``items[index]`` of a tuple of function values, index known at run time only (an
    index out of range picks the last item)."""
    functions = union(*(candidates(v) for v in items))
    i = fc.cast(fc.index(index, loc), T.INT32, loc)
    chosen = _index(items[-1], functions, loc)
    for k in reversed(range(len(items) - 1)):
        here = ir.Compare(T.BOOL, loc, "eq", i, ir.Const(T.INT32, loc, k))
        chosen = ir.IfExp(T.INT32, loc, here, _index(items[k], functions, loc), chosen)
    return _choice(fc, functions, chosen, f"{label}[...]", loc)


def bind(fc, name, value, loc):
    """``name = value`` of a function value: the name holds the union of every function
    it is assigned (settled over the passes); returns the statements."""
    known = fc.function_sets.get(name, ())
    functions = union(known, candidates(value.value))
    if functions != known:
        fc.function_sets[name] = functions
        fc.changed = True
    if len(functions) == 1:
        fc.static_bindings[name] = value
        return []
    _check_arity(fc, functions, f"'{name}'", loc)
    selector = f"${name}.fn"
    fc.assign_type(selector, T.INT32, loc)
    index = _index(value.value, functions, loc)       # before the name is bound anew
    fc.static_bindings[name] = Static(FunctionChoice(functions, selector, f"'{name}'"), name)
    return [ir.Assign(loc, selector, index)]


def call(fc, choice, args, loc):
    """A switch over the candidates: if selector == 0: add(...) elif ...: each a call."""
    from .calls import is_group
    values = [a if is_group(a) else fc.expr(a, loc) for a in args]
    calls = [fc.call_device(c, values, loc) for c in choice.candidates]
    kinds = {str(c.type) for c in calls}
    if len(kinds) > 1:
        listed = ", ".join(f"'{f.__name__}' returns {c.type}" for f, c in
                           zip(choice.candidates, calls))
        fc.fail(loc, f"{choice.python_name} may hold device functions that return different "
                f"types here: {listed}", "make them return one type (np.float32(...))")
    result = calls[0].type
    name = None if isinstance(result, T.Void) else fc.temp("called")
    if name is not None:
        fc.assign_type(name, result, loc)

    def run(c):
        return ir.Assign(loc, name, c) if name is not None else ir.ExprStmt(loc, c)
    chain = [run(calls[-1])]
    selector = ir.Var(T.INT32, loc, choice.selector)
    for i in reversed(range(len(calls) - 1)):
        here = ir.Compare(T.BOOL, loc, "eq", selector, ir.Const(T.INT32, loc, i))
        chain = [ir.If(loc, here, [run(calls[i])], chain)]
    fc.hoist(*chain)
    return Static(None) if name is None else ir.Var(result, loc, name)
