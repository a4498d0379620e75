"""How the sim device's lowerings are registered, for every module of this package: ``rule``
registers ``fn(g, e, args) -> Python text`` for entries (args: the arguments' texts)."""
from ....lang.registry import declare_target, lowering

TARGET = declare_target("sim", llvm=False)


def rule(*entries):
    """Register ``fn(g, e, args)`` (args: the arguments' Python texts) for entries."""
    def register(fn):
        lowering(*entries, target=TARGET)(lambda g, e: fn(g, e, [g.expr(a) for a in e.args]))
        return fn
    return register
