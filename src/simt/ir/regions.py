"""Which variables of a kernel with barriers must live per thread across
thread loops (the CPU device runs each barrier-free run of statements as a
loop over the block's threads; see docs/cpu-device.md)."""
from . import nodes as ir
from .fission import Run
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
        elif isinstance(s, ir.WarpGather):
            reads(*s.op.args)               # the result run reads the gathered slots
        elif isinstance(s, ir.WarpResult):
            if s.op.name is not None:
                defs.add(s.op.name)
        else:
            names = stmt_names(s, set())
            out.update(names - defs)
    return defs


class Plan:
    """The variables of a barrier kernel that need per-thread slots, from the pieces
    fission.py cut its body into."""

    def __init__(self, pieces, exclude=()):
        self.runs = []
        self.forced = set()
        self._walk(pieces)
        # recomputed values and block-level loop variables need no slot (uniform.py)
        self.slot_vars = self._decide() - set(exclude)

    def _walk(self, pieces):
        for piece in pieces:
            if isinstance(piece, Run):
                self._run(piece.stmts)
                continue
            s = piece.stmt
            if isinstance(s, ir.Collective):
                self.runs.append(("exprs", [s.value]))
                self.forced.add(s.name)
            elif isinstance(s, ir.If):
                self.runs.append(("exprs", [s.cond]))
            elif isinstance(s, ir.While):
                self.runs.append(("exprs", [s.cond]))
            elif isinstance(s, ir.ForRange):
                self.runs.append(("exprs", [s.start, s.stop, s.step]))
                self.forced.add(s.var)
            for part in piece.parts:
                self._walk(part)

    def _run(self, stmts):
        if not stmts:
            return
        self.runs.append(("stmts", stmts))
        if isinstance(stmts[0], ir.WarpResult) and stmts[0].op.name is not None:
            self.forced.add(stmts[0].op.name)    # computed in one loop, read in later ones

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
