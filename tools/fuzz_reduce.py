"""Shrink a failing fuzz program to a small reproducer.

Greedy, as C-Reduce starts: try deleting a statement, replacing a compound statement by one of
its bodies, replacing an expression by a child of the same type, dropping blocks; keep any
change after which the evaluator still runs and the device still fails the same way. Divisors,
shift counts and clamps are never entered, so every variant stays well-defined.
"""
import copy

import fuzz_ref
from fuzz_ast import Expr
from fuzz_check import check

GUARDED = {"//", "%", "/", "<<", ">>"}     # their right operand keeps the program defined


def expr_variants(e):
    """Smaller expressions of the same type as ``e``."""
    if not isinstance(e, Expr) or e.op in ("lit", "var", "load", "minmax", "call"):
        return
    children = [(k, x) for k, x in enumerate(e.args) if isinstance(x, Expr)]
    if e.op == "bin" and e.args[0] in GUARDED:
        children = children[:1]
    for _, child in children:
        if child.dtype is not None and child.dtype == e.dtype:
            yield child
    for k, child in children:
        for smaller in expr_variants(child):
            args = list(e.args)
            args[k] = smaller
            yield Expr(e.op, tuple(args), e.dtype, e.flags)


def is_stmt(x):
    return isinstance(x, tuple) and x and isinstance(x[0], str)


def bodies(s):
    """The statement lists inside a compound statement."""
    if s[0] == "if":
        return [body for _, body in s[1]] + ([s[2]] if s[2] is not None else [])
    if s[0] in ("for", "while", "uloop"):
        return [s[-1]]
    if s[0] == "voteif":
        return [s[3], s[4]]
    return []


def stmt_variants(s):
    """Smaller versions of one statement."""
    for k, part in enumerate(s):
        if k == 0:
            continue
        if isinstance(part, Expr):
            for smaller in expr_variants(part):
                yield s[:k] + (smaller,) + s[k + 1:]
        elif isinstance(part, list) and all(is_stmt(x) for x in part):
            for smaller in list_variants(part):
                yield s[:k] + (smaller,) + s[k + 1:]
        elif isinstance(part, list) and s[0] == "if":
            for j, (cond, body) in enumerate(part):
                if len(part) > 1:
                    yield s[:k] + (part[:j] + part[j + 1:],) + s[k + 1:]
                for smaller in expr_variants(cond):
                    yield s[:k] + (part[:j] + [(smaller, body)] + part[j + 1:],) + s[k + 1:]
                for smaller in list_variants(body):
                    yield s[:k] + (part[:j] + [(cond, smaller)] + part[j + 1:],) + s[k + 1:]
        elif isinstance(part, list) and s[0] == "warp":
            for j, arg in enumerate(part):
                for smaller in expr_variants(arg):
                    yield s[:k] + (part[:j] + [smaller] + part[j + 1:],) + s[k + 1:]
    if s[0] == "if" and s[2] is not None:
        yield s[:2] + (None,)


def list_variants(stmts):
    for k, s in enumerate(stmts):
        yield stmts[:k] + stmts[k + 1:]
        for body in bodies(s):
            yield stmts[:k] + body + stmts[k + 1:]
    for k, s in enumerate(stmts):
        for smaller in stmt_variants(s):
            yield stmts[:k] + [smaller] + stmts[k + 1:]


def signature(outcome):
    """What must stay the same while shrinking: the kind, and an error's last line."""
    if outcome.kind == "error":
        return ("error", outcome.detail.strip().splitlines()[-1].split(":")[0])
    return (outcome.kind,)


def valid(program):
    try:
        return fuzz_ref.reference(program)[2]
    except Exception:
        return False


def reduce(program, device, folder, budget=400, check=check):
    """The smallest program found that fails like ``program``, and the checks spent
    (``check``: fuzz_check.check_isolated for a kernel that crashes its process)."""
    target = signature(check(program, device, folder))
    if target[0] not in ("mismatch", "error", "crash"):
        return program, 1
    best, spent = program, 0
    candidates = [dict(blocks=1)] if program.blocks > 1 else []
    changed = True
    while changed and spent < budget:
        changed = False
        for change in candidates + [dict(body=b) for b in list_variants(best.body)]:
            trial = copy.copy(best)
            trial.__dict__.update(change)
            if not valid(trial):
                continue
            spent += 1
            if signature(check(trial, device, folder)) == target:
                best, changed = trial, True
                candidates = []
                break
            if spent >= budget:
                break
    return best, spent
