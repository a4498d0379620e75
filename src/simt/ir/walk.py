"""The one traversal of the IR: what a node holds, a node rebuilt with new children,
and the call graph.

Passes, the verifier and the printer read nodes through these functions only, so a
node class added to ``nodes.py`` is seen by all of them. A *child* is an expression or
statement held by a field: directly (``BinOp.lhs``), in a list (``Load.indices``,
``If.then``) or in a slice triple of a ``View`` (``(start, stop, step)``, parts may be
None). A called ``Function``, an ``ArrayRef``'s declaration and types are not children.
"""
import dataclasses
import functools

from . import nodes as ir

NODE = (ir.Expr, ir.Stmt)


@functools.cache
def _field_names(cls):
    """Fields that may hold children (``loc`` and ``type`` never do)."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("loc", "type"))


def fields(node):
    """(name, value) of each field of ``node`` that may hold children, in declaration
    order: the order code generation evaluates operands in."""
    for name in _field_names(type(node)):
        yield name, getattr(node, name)


def children(node):
    """The nodes directly inside ``node``, in field order (a list)."""
    out = []
    for name in _field_names(type(node)):
        value = getattr(node, name)
        if isinstance(value, NODE):
            out.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, NODE):
                    out.append(item)
                elif isinstance(item, tuple):
                    out.extend(part for part in item if isinstance(part, NODE))
    return out


def walk(*roots):
    """Each root and every node inside it, depth first, a node before its children."""
    stack = list(reversed(roots))
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        yield node
        kids = children(node)
        if kids:
            kids.reverse()
            push(kids)


def replace(node, **changes):
    """A copy of ``node`` with ``changes``; an expression keeps its source text (``src``,
    set by the front end for error reports) and, like every node, its location."""
    new = dataclasses.replace(node, **changes)
    if "_src" in node.__dict__:
        new._src = node._src
    return new


def map_children(node, fn):
    """A copy of ``node`` with each child replaced by ``fn(child)`` (lists and slice
    triples rebuilt, everything else shared)."""
    changes = {}
    for name, value in fields(node):
        if isinstance(value, NODE):
            changes[name] = fn(value)
        elif isinstance(value, list):
            changes[name] = [_map_item(item, fn) for item in value]
    return replace(node, **changes)


def _map_item(item, fn):
    if isinstance(item, NODE):
        return fn(item)
    if isinstance(item, tuple):
        return tuple(fn(part) if isinstance(part, NODE) else part for part in item)
    return item


def intrinsics(function):
    """The ``Intrinsic`` nodes of ``function``'s body (not of its callees), in walk order.
    Several steps ask (device launches, arch-specific entries): the body is walked once and
    the list kept on the function while its ``body`` is the same list. Passes that change
    a function give it a new body list (or are new functions)."""
    kept = function.__dict__.get("_intrinsics")
    if kept is not None and kept[0] is function.body:
        return kept[1]
    found = [node for node in walk(*function.body) if isinstance(node, ir.Intrinsic)]
    function.__dict__["_intrinsics"] = (function.body, found)
    return found


def all_functions(fn):
    """The kernel and every device function it reaches, each once, callers first
    (depth first, callees in call order)."""
    order, seen, stack = [], set(), [fn]
    while stack:
        f = stack.pop()
        if id(f) not in seen:
            seen.add(id(f))
            order.append(f)
            stack.extend(reversed(f.callees))
    return order
