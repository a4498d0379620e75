"""Cooperative groups as arguments of device functions: ``def f(g, x)`` called as
``f(tile, v)``; device functions (and tuples of them) passed as values the same way.

A group is a compile-time value (lang/groups.py), so a device function is typed once per
kind of group it is passed, as C++ instantiates a template per group type: the parameter
is bound to the group in the callee and passes no value at run time. Groups with run-time
parts name them in ``hidden_parts`` (a coalesced group its lane mask, a run-time tile its
size and meta-group rank and size): each is passed as a hidden parameter ``$g.part`` that
the callee's copy of the group reads. Lambdas (lambdas.py) pass their captured values
the same way, also from inside a tuple or a function chosen at run time. A device function
passed to a kernel is such a value of the kernel (``kernel_arguments``).
"""
import copy

from ..ir import nodes as ir
from ..ir import types as T
from ..lang.registry import Static


def compile_time(value):
    """Whether ``value`` is passed as a compile-time value: a group, a device function
    (a function value, issue 35 item 2), or a non-empty tuple of them."""
    if isinstance(value, tuple):
        return bool(value) and all(compile_time(v) for v in value)
    return getattr(value, "compile_time", False)


def signature(value):
    """What code specialised for a compile-time value depends on (tuples item by item)."""
    if isinstance(value, tuple):
        return tuple(signature(v) for v in value)
    return value.signature()


def holders(value):
    """[(holder, part)]: each run-time part of a compile-time value, in a fixed order: its
    own ``hidden_parts``, then those of the values inside it (a tuple's items, the
    candidates of a function chosen at run time: lambdas that captured values)."""
    if isinstance(value, tuple):
        return [hp for item in value for hp in holders(item)]
    out = [(value, part) for part in getattr(value, "hidden_parts", ())]
    for inner in getattr(value, "candidates", ()):
        out += holders(inner)
    return out


def split(fc, args, loc):
    """(run-time arguments, {position: group}) of a call's built arguments."""
    values, groups = [], {}
    for position, arg in enumerate(args):
        if isinstance(arg, Static):
            groups[position] = arg.value
            for holder, part in holders(arg.value):
                name = getattr(holder, part)
                values.append(ir.Var(fc.var_types[name], loc, name))
        else:
            values.append(arg)
    return values, groups


def key(groups):
    """What of the groups passed the callee's code depends on."""
    return tuple((position, signature(group)) for position, group in sorted(groups.items()))


def kernel_arguments(arg_types):
    """(run-time argument types, {position: device function}) of a kernel's argument
    types: a device function passed to a kernel (a ``T.FunctionArg``) is a compile-time
    value of the kernel's code, as one passed to a device function is."""
    runtime, groups = [], {}
    for position, t in enumerate(arg_types):
        if isinstance(t, T.FunctionArg):
            groups[position] = t.function
        else:
            runtime.append(t)
    return runtime, groups


def parameters(names, arg_types, groups, assigned):
    """(run-time parameter names, their types, {name: Static(group)}) of a function whose
    parameters ``names`` are passed ``groups`` at their positions; the hidden parameters
    of groups with run-time parts are added to ``assigned`` so that the callee reads them
    as locals."""
    if not groups:
        return names, arg_types, {}
    runtime, bindings = [], {}
    for position, name in enumerate(names):
        group = groups.get(position)
        if group is None:
            runtime.append(name)
            continue
        hidden = []
        mine = _renamed(group, f"${name}", hidden)
        runtime += hidden
        assigned.update(hidden)
        if hasattr(mine, "bound_value"):         # a type or constant (static_args.py)
            mine = mine.bound_value()
        bindings[name] = Static(mine, name)
    return runtime, arg_types, bindings


def _renamed(value, prefix, hidden):
    """A copy of ``value`` whose run-time parts read the callee's hidden parameters (named
    after ``prefix``, appended to ``hidden``), in the order of ``holders``."""
    if isinstance(value, tuple):
        return tuple(_renamed(v, f"{prefix}.{i}", hidden) for i, v in enumerate(value))
    inner = getattr(value, "candidates", ())
    if not holders(value):
        return value
    mine = copy.copy(value)
    for part in getattr(value, "hidden_parts", ()):
        hidden.append(f"{prefix}.{part}")
        setattr(mine, part, hidden[-1])
    if any(holders(c) for c in inner):
        mine.candidates = tuple(_renamed(c, f"{prefix}.{i}", hidden)
                                for i, c in enumerate(inner))
    return mine
