"""Facts about the graph of device function calls, which may have cycles (a device
function that calls itself, directly or through others: compiler/recursion.py)."""
from .walk import all_functions


def holds_barrier(function):
    """Whether ``function`` or a device function it reaches holds a barrier or
    collective."""
    return any(f.uses_barrier for f in all_functions(function))


def recursive(kernel):
    """The ids of the functions ``kernel`` reaches that are on a cycle of calls (each
    can call itself, directly or through others)."""
    out = set()
    for f in all_functions(kernel):
        if any(id(g) == id(f) for callee in f.callees for g in all_functions(callee)):
            out.add(id(f))
    return frozenset(out)
