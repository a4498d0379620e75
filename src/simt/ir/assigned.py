"""Checked mode: a thread that reads a local variable it did not assign is reported.

The front end refuses a read that no path assigns and warns of one that some paths leave
unassigned (compiler/definite.py); there the value is undefined, as in C, and unchecked
code reads whatever is in the variable's place. In checked mode (the CPU device with
``checks=True``, the sim device) this pass runs on the kernel after inlining: each
variable that some read may find unassigned (``regions.exposed``, the analysis that
gives barrier kernels their per-thread slots) gets a bool variable ``$assigned.<name>``,
false where its function starts and set by each assignment, and each read of it becomes
a ``CheckedVar`` that stops the launch when the flag is false. The flags are ordinary
variables, so barrier kernels keep them per thread as they keep any other. A program
with no such variable is returned as it is; unchecked compiles never run this pass.
"""
from . import nodes as ir
from . import types as T
from .regions import exposed
from .walk import all_functions, map_children, replace

PREFIX = "$assigned."
_BODIES = {ir.If: ("then", "orelse"), ir.While: ("body",), ir.ForRange: ("body",)}
_ASSIGNING = (ir.Assign, ir.Collective, ir.WarpOp)       # statements that set ``name``


def check_reads(kernel):
    """``kernel`` with every read that may find its variable unassigned checked (new
    Functions; the IR given is left as it is)."""
    functions = all_functions(kernel)
    unsure = {id(f): _unsure(f) for f in functions}
    if not any(unsure.values()):
        return kernel
    new = {id(f): replace(f) for f in functions}
    for f in functions:
        _Rewrite(unsure[id(f)], new).function(f, new[id(f)])
    return new[id(kernel)]


def display_name(name):
    """The user's name of a variable: ``x`` of a device function inlined as ``$f.3.x``
    (ir/inline.py names a callee's variables ``$<function>.<call>.<name>``)."""
    while name.startswith("$") and name.count(".") >= 2:
        name = name.split(".", 2)[2]
    return name


def _unsure(fn):
    """The names of ``fn``'s variables that a read may find unassigned."""
    found = set()
    exposed(fn.body, set(), found)
    return {name for name in found if name in fn.locals}


class _Rewrite:
    def __init__(self, names, functions):
        self.names = names                # the variables to check
        self.functions = functions        # id(old Function) -> its new Function

    def function(self, old, new):
        flags = {name: PREFIX + name for name in sorted(self.names)}
        new.locals = dict(old.locals, **{flag: T.BOOL for flag in flags.values()})
        start = [self.set_flag(name, False, old.loc) for name in flags]
        new.body = start + self.block(old.body)
        new.callees = [self.functions[id(f)] for f in old.callees]

    def set_flag(self, name, value, loc):
        return ir.Assign(loc, PREFIX + name, ir.Const(T.BOOL, loc, value))

    def block(self, stmts):
        out = []
        for s in stmts:
            new = map_children(s, lambda c: c if isinstance(c, ir.Stmt) else self.expr(c))
            for field in _BODIES.get(type(s), ()):
                setattr(new, field, self.block(getattr(s, field)))
            if isinstance(s, ir.ForRange) and s.var in self.names:
                new.body = [self.set_flag(s.var, True, s.loc)] + new.body
            out.append(new)
            if isinstance(s, _ASSIGNING) and s.name in self.names:
                out.append(self.set_flag(s.name, True, s.loc))
        return out

    def expr(self, e):
        if isinstance(e, ir.Var) and e.name in self.names:
            return ir.CheckedVar(e.type, e.loc, e, ir.Var(T.BOOL, e.loc, PREFIX + e.name))
        if isinstance(e, ir.CallDevice) and id(e.function) in self.functions:
            e = replace(e, function=self.functions[id(e.function)])
        return map_children(e, self.expr)
