"""Operands that only some threads evaluate: the right of ``and``/``or``, a later link of a
chained comparison, a branch of ``x if c else y``, a ``while`` condition (each trip).

Warp functions and collectives are statements hoisted before the statement that uses them
(lang/warp.py). Inside such an operand they must stay under its condition, as in CUDA C,
where ``if (c && __any_sync(m, p))`` runs the vote only in the lanes with ``c`` true: the
operand is built apart (``guarded``), and when it hoisted anything, or calls a device
function holding a barrier (which the CPU device inlines into statements), the expression
becomes statements that evaluate it only there. Otherwise the plain expression stays.
"""
from ..ir import nodes as ir
from ..ir.walk import walk
from ..ir.callgraph import holds_barrier
from ..ir import types as T
from . import calls


def guarded(fc, build):
    """``build()``'s value and, apart, the statements building it hoisted."""
    outer, fc.prelude = fc.prelude, []
    value = build()
    pre, fc.prelude = fc.prelude, outer
    return value, pre


def needs_statements(pre, *values):
    return bool(pre) or any(runs_barrier(v) for v in values)


def logical(fc, op, lhs, rhs, pre, node):
    """``lhs and rhs`` / ``lhs or rhs``, rhs built with ``pre``: as statements when needed,
    ``$t = lhs; if $t (or: not $t): pre; $t = rhs``."""
    loc = fc.loc(node)
    if not needs_statements(pre, rhs):
        return ir.Logical(T.BOOL, loc, op, lhs, rhs)
    name = fc.temp(op)
    fc.hoist(*fc.bind_name(name, lhs, node))
    flag = ir.Var(T.BOOL, loc, name)
    test = flag if op == "and" else calls.unary(fc, "Not", flag, loc)
    fc.hoist(ir.If(loc, test, pre + fc.bind_name(name, rhs, node), []))
    return ir.Var(T.BOOL, loc, name)


def choose(fc, t, cond, then, then_pre, orelse, else_pre, node):
    """``then if cond else orelse`` (both of type ``t``): only the chosen side runs its
    statements, ``if cond: then_pre; $t = then else: else_pre; $t = orelse``."""
    loc = fc.loc(node)
    if not needs_statements(then_pre + else_pre, then, orelse):
        return ir.IfExp(t, loc, cond, then, orelse)
    name = fc.temp("ifexp")
    fc.hoist(ir.If(loc, cond, then_pre + fc.bind_name(name, then, node),
                   else_pre + fc.bind_name(name, orelse, node)))
    return ir.Var(fc.var_types[name], loc, name)


def loop(fc, cond, pre, body, loc):
    """``while cond: body``; a condition that needs statements runs at the top of every
    trip (``continue`` included): ``while True: pre; if not cond: break; body``."""
    if not needs_statements(pre, cond):
        return ir.While(loc, cond, body)
    leave = ir.If(loc, calls.unary(fc, "Not", cond, loc), [ir.Break(loc)], [])
    return ir.While(loc, ir.Const(T.BOOL, loc, True), pre + [leave] + body)


def runs_barrier(e):
    """Whether evaluating ``e`` calls a device function that holds barriers or warp
    functions (itself or through its calls)."""
    return any(isinstance(node, ir.CallDevice) and holds_barrier(node.function)
               for node in walk(e))
