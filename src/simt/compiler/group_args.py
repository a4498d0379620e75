"""Cooperative groups as arguments of device functions: ``def f(g, x)`` called as
``f(tile, v)``; device functions (and tuples of them) passed as values the same way.

A group is a compile-time value (lang/groups.py), so a device function is typed once per
kind of group it is passed, as C++ instantiates a template per group type: the parameter
is bound to the group in the callee and passes no value at run time. Groups with run-time
parts name them in ``hidden_parts`` (a coalesced group its lane mask, a run-time tile its
size and meta-group rank and size): each is passed as a hidden parameter ``$g.part`` that
the callee's copy of the group reads.
"""
import copy

from ..ir import nodes as ir
from ..lang.registry import Static


def compile_time(value):
    """Whether ``value`` is passed as a compile-time value: a group, a device function
    (a function value, issue 35 item 2), or a non-empty tuple of them."""
    if isinstance(value, tuple):
        return bool(value) and all(compile_time(v) for v in value)
    return getattr(value, "compile_time", False)


def _signature(value):
    if isinstance(value, tuple):
        return tuple(_signature(v) for v in value)
    return value.signature()


def split(fc, args, loc):
    """(run-time arguments, {position: group}) of a call's built arguments."""
    values, groups = [], {}
    for position, arg in enumerate(args):
        if isinstance(arg, Static):
            groups[position] = arg.value
            for part in getattr(arg.value, "hidden_parts", ()):
                name = getattr(arg.value, part)
                values.append(ir.Var(fc.var_types[name], loc, name))
        else:
            values.append(arg)
    return values, groups


def key(groups):
    """What of the groups passed the callee's code depends on."""
    return tuple((position, _signature(group)) for position, group in sorted(groups.items()))


def parameters(names, arg_types, groups, assigned):
    """(run-time parameter names, their types, {name: Static(group)}) of a function whose
    parameters ``names`` are passed ``groups`` at their positions; a coalesced group's
    hidden parameters are added to ``assigned`` so that the callee reads them as locals."""
    if not groups:
        return names, arg_types, {}
    runtime, bindings = [], {}
    for position, name in enumerate(names):
        group = groups.get(position)
        if group is None:
            runtime.append(name)
        elif getattr(group, "hidden_parts", ()):
            mine = copy.copy(group)
            for part in group.hidden_parts:
                hidden = f"${name}.{part}"
                runtime.append(hidden)
                assigned.add(hidden)
                setattr(mine, part, hidden)
            bindings[name] = Static(mine, name)
        else:
            bindings[name] = Static(group, name)
    return runtime, arg_types, bindings
