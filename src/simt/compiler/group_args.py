"""Cooperative groups as arguments of device functions: ``def f(g, x)`` called as
``f(tile, v)``; device functions (and tuples of them) passed as values the same way.

A group is a compile-time value (lang/groups.py), so a device function is typed once per
kind of group it is passed, as C++ instantiates a template per group type: the parameter
is bound to the group in the callee and passes no value at run time. The one group with
a run-time part, a coalesced group (its lane mask), passes that mask as a hidden uint32
parameter ``$g.mask`` that the callee's group reads.
"""
from ..lang.groups import Coalesced
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
            if isinstance(arg.value, Coalesced):
                values.append(arg.value.mask(fc, loc))
        else:
            values.append(arg)
    return values, groups


def key(groups):
    """What of the groups passed the callee's code depends on."""
    return tuple((position, _signature(group)) for position, group in sorted(groups.items()))


def parameters(names, arg_types, groups, assigned):
    """(run-time parameter names, their types, {name: Static(group)}) of a function whose
    parameters ``names`` are passed ``groups`` at their positions; a coalesced group's
    hidden mask parameter is added to ``assigned`` so that the callee reads it as a local."""
    if not groups:
        return names, arg_types, {}
    runtime, bindings = [], {}
    for position, name in enumerate(names):
        group = groups.get(position)
        if group is None:
            runtime.append(name)
        elif isinstance(group, Coalesced):
            hidden = f"${name}.mask"
            runtime.append(hidden)
            assigned.add(hidden)
            bindings[name] = Static(Coalesced(hidden), name)
        else:
            bindings[name] = Static(group, name)
    return runtime, arg_types, bindings
