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
    """The nodes directly inside ``node``, in field order."""
    for _, value in fields(node):
        if isinstance(value, NODE):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, NODE):
                    yield item
                elif isinstance(item, tuple):
                    yield from (part for part in item if isinstance(part, NODE))


def walk(*roots):
    """Each root and every node inside it, depth first, a node before its children."""
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(list(children(node))))


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
