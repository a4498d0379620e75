"""Which variables of a kernel with barriers must live per thread across
thread loops (the CPU device runs each barrier-free run of statements as a
loop over the block's threads; see docs/cpu-device.md)."""
from ...compiler import ir


def expr_names(e, out):
    """Add the variable names an expression reads to ``out``."""
    if isinstance(e, ir.Var):
        out.add(e.name)
    for value in vars(e).values():
        if isinstance(value, ir.Expr):
            expr_names(value, out)
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, ir.Expr):
                    expr_names(item, out)
                elif isinstance(item, tuple):
                    for part in item:
                        if isinstance(part, ir.Expr):
                            expr_names(part, out)
    return out


def stmt_names(stmt, out):
    """Names a statement (and what it holds) reads or writes."""
    for s in ir.walk_stmts([stmt]):
        if isinstance(s, (ir.Assign, ir.Collective)):
            out.add(s.name)
        if isinstance(s, ir.WarpOp) and s.name is not None:
            out.add(s.name)
        if isinstance(s, ir.ForRange):
            out.add(s.var)
        for value in vars(s).values():
            if isinstance(value, ir.Expr):
                expr_names(value, out)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ir.Expr):
                        expr_names(item, out)
    return out


def _defines_first(stmt, name):
    if isinstance(stmt, ir.Assign) and stmt.name == name:
        return name not in expr_names(stmt.value, set())
    if isinstance(stmt, ir.ForRange) and stmt.var == name:
        reads = set()
        for e in (stmt.start, stmt.stop, stmt.step):
            expr_names(e, reads)
        return name not in reads
    return False


class Plan:
    """The runs of a barrier kernel and the variables that need per-thread slots."""

    def __init__(self, body):
        self.runs = []
        self.forced = set()
        self._walk(body)
        self.slot_vars = self._decide()

    def _walk(self, stmts):
        run = []
        for s in stmts:
            if not ir.contains_barrier(s):
                run.append(s)
                continue
            self._close(run)
            run = []
            if isinstance(s, ir.Collective):
                self.runs.append(("exprs", [s.value]))
                self.forced.add(s.name)
            elif isinstance(s, ir.WarpOp):
                self.runs.append(("exprs", list(s.args)))
                if s.name is not None:
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
        where = {}
        for index, (kind, items) in enumerate(self.runs):
            names = set()
            for item in items:
                if kind == "exprs":
                    expr_names(item, names)
                else:
                    stmt_names(item, names)
            for name in names:
                where.setdefault(name, set()).add(index)
        slots = set(self.forced)
        for name, runs in where.items():
            if len(runs) > 1:
                slots.add(name)
                continue
            kind, items = self.runs[next(iter(runs))]
            if kind == "exprs":
                slots.add(name)
                continue
            first = next(s for s in items if name in stmt_names(s, set()))
            if not _defines_first(first, name):
                slots.add(name)
        return slots
