"""Locals assigned once and read only below their assignment: code generation keeps
them as SSA values instead of stack slots.

A long straight-line kernel (machine-generated code: thousands of ``t5 = t3 * a[i] + t1``)
gave LLVM one stack slot per local and a load at every read; promoting them to registers
(SROA, mem2reg) scans the block once per slot, quadratic in the block's length: 3.4 s of a
3,000-statement kernel's compile (bench/compile_time.py, bench/NOTES.md).

A name qualifies when one ``Assign`` sets it (no other statement: no loop variable, no
collective or warp result) and every read of it lies in a statement after that
assignment in the same statement list, or inside one: in structured code that statement
is run before every such read, so its value dominates them. A read anywhere else (in the
condition of an enclosing ``while``, in a loop body above the assignment, in a branch
parallel to it) disqualifies the name: those keep their stack slot.
"""
from . import nodes as ir
from . import walk


def single_assignments(function):
    """The names of ``function``'s locals that qualify (see the module's docstring)."""
    scan = _Scan()
    scan.stmts(function.body)
    return frozenset(name for name, count in scan.assigned.items()
                     if count == 1 and name not in scan.spoiled)


class _Scan:
    """One pass over the statements: assignments counted, reads checked against the names
    whose assignment is above them (``visible``)."""

    def __init__(self):
        self.assigned = {}        # name -> number of Assign statements
        self.spoiled = set()      # read where no assignment dominates, or set otherwise
        self.visible = set()

    def stmts(self, body):
        added = []
        for s in body:
            self.stmt(s)
            if isinstance(s, ir.Assign) and s.name not in self.visible:
                self.visible.add(s.name)
                added.append(s.name)
        self.visible.difference_update(added)

    def stmt(self, s):
        if isinstance(s, ir.Assign):
            self.assigned[s.name] = self.assigned.get(s.name, 0) + 1
        else:
            for attr in ("name", "var"):        # set by a loop, a collective, a warp op...
                name = getattr(s, attr, None)
                if isinstance(name, str):
                    self.spoiled.add(name)
        for _, value in walk.fields(s):
            if isinstance(value, ir.Expr):
                self.reads(value)
            elif isinstance(value, list) and any(isinstance(v, ir.Stmt) for v in value):
                self.stmts(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, (ir.Expr, tuple)):
                        self.reads(item)
            elif isinstance(value, ir.Stmt):
                self.stmt(value)

    def reads(self, root):
        parts = root if isinstance(root, tuple) else (root,)
        for node in walk.walk(*(p for p in parts if isinstance(p, ir.Expr))):
            if isinstance(node, ir.Var) and node.name not in self.visible:
                self.spoiled.add(node.name)
