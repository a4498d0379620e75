"""The sim device's target and how its lowerings register: ``rule(entry)(fn(g, e, args) ->
Python text)``, args the arguments' Python texts (codegen.py's Generator is g)."""
from ....lang.registry import declare_target, lowering

TARGET = declare_target("sim", llvm=False)


def rule(*entries):
    """Register ``fn(g, e, args)`` (args: the arguments' Python texts) for entries."""
    def register(fn):
        lowering(*entries, target=TARGET)(lambda g, e: fn(g, e, [g.expr(a) for a in e.args]))
        return fn
    return register
