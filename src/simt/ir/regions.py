"""Which variables of a kernel with barriers must live per thread across
thread loops (the CPU device runs each barrier-free run of statements as a
loop over the block's threads; see docs/cpu-device.md)."""
from dataclasses import dataclass

from . import nodes as ir
from .walk import walk


def expr_names(e, out):
    """Add the variable names an expression reads to ``out``."""
    out.update(node.name for node in walk(e) if isinstance(node, ir.Var))
    return out


def stmt_names(stmt, out):
    """Names a statement (and what it holds) reads or writes."""
    for node in walk(stmt):
        if isinstance(node, ir.Var):
            out.add(node.name)
        elif isinstance(node, (ir.Assign, ir.Collective, ir.WarpOp)) and node.name is not None:
            out.add(node.name)
        elif isinstance(node, ir.ForRange):
            out.add(node.var)
    return out


@dataclass(eq=False)
class _Reads(ir.Stmt):
    """A warp operation's operands, gathered at the end of the run before it."""
    exprs: list[ir.Expr]


def exposed(stmts, defs, out):
    """Add to ``out`` the names ``stmts`` may read before assigning them, given the names
    ``defs`` assigned before; returns the names surely assigned after ``stmts``.
    A thread loop needs a slot for exactly such names (the value comes from an earlier
    thread loop); the others can live in registers."""
    defs = set(defs)

    def reads(*exprs):
        for e in exprs:
            if e is not None:
                out.update(expr_names(e, set()) - defs)
    for s in stmts:
        if isinstance(s, ir.Assign):
            reads(s.value)
            defs.add(s.name)
        elif isinstance(s, ir.If):
            reads(s.cond)
            defs = exposed(s.then, defs, out) & exposed(s.orelse, defs, out)
        elif isinstance(s, ir.While):
            reads(s.cond)
            exposed(s.body, defs, out)
        elif isinstance(s, ir.ForRange):
            reads(s.start, s.stop, s.step)
            exposed(s.body, defs | {s.var}, out)
        elif isinstance(s, _Reads):
            reads(*s.exprs)
        else:
            names = stmt_names(s, set())
            out.update(names - defs)
    return defs


class Plan:
    """The runs of a barrier kernel and the variables that need per-thread slots."""

    def __init__(self, body, exclude=()):
        self.runs = []
        self.forced = set()
        self._walk(body)
        # recomputed values and block-level loop variables need no slot (uniform.py)
        self.slot_vars = self._decide() - set(exclude)

    def _walk(self, stmts):
        run = []
        for s in stmts:
            if not ir.contains_barrier(s):
                run.append(s)
                continue
            if isinstance(s, ir.WarpOp):
                # as emit.py does: the operands end this run, the result starts the next
                self._close(run + [_Reads(s.loc, list(s.args))])
                run = []
                if s.name is not None:
                    self.forced.add(s.name)
                continue
            self._close(run)
            run = []
            if isinstance(s, ir.Collective):
                self.runs.append(("exprs", [s.value]))
                self.forced.add(s.name)
            elif isinstance(s, ir.If):
                self.runs.append(("exprs", [s.cond]))
                self._walk(s.then)
                self._walk(s.orelse)
            elif isinstance(s, ir.While):
                self.runs.append(("exprs", [s.cond]))
                self._walk(s.body)
            elif isinstance(s, ir.ForRange):
                self.runs.append(("exprs", [s.start, s.stop, s.step]))
                self.forced.add(s.var)
                self._walk(s.body)
        self._close(run)

    def _close(self, run):
        if run:
            self.runs.append(("stmts", run))

    def _decide(self):
        """A variable needs a slot when some thread loop may read it before assigning it."""
        slots = set(self.forced)
        for kind, items in self.runs:
            if kind == "exprs":
                for item in items:
                    expr_names(item, slots)
            else:
                exposed(items, set(), slots)
        return slots
