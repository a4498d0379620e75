"""``llvm.loop`` metadata on a loop's back edge: the unrolling requests of ``simt.unroll``
(``ir.ForRange.unroll``) on every target, and the node type the CUDA target's own hints
(backends/cuda/loops.py) use too."""
from llvmlite import ir as ll

from .lltypes import I32


def mark(module, back_edge, props):
    """Attach the loop properties ``props`` (metadata nodes) to ``back_edge``."""
    back_edge.set_metadata("llvm.loop", LoopID(module, props))


def requested(module, back_edge, unroll):
    """simt.unroll's request: 0 unrolls fully, 1 never, n > 1 n times."""
    if unroll == 0:
        props = [_flag(module, "llvm.loop.unroll.full")]
    elif unroll == 1:
        props = [_flag(module, "llvm.loop.unroll.disable")]
    else:
        props = [module.add_metadata([ll.MetaDataString(module, "llvm.loop.unroll.count"),
                                      ll.Constant(I32, unroll)])]
    mark(module, back_edge, props)


def constant_trips(start, stop, step, signed):
    """The trip count of range(start, stop, step) when all three are constants, else None."""
    if not all(isinstance(v, ll.Constant) and isinstance(v.constant, int)
               for v in (start, stop, step)):
        return None
    bits = start.type.width

    def value(c):
        v = c.constant & ((1 << bits) - 1)     # constants are kept as bit patterns
        return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v
    lo, hi, st = value(start), value(stop), value(step)
    if st == 0:
        return None
    return len(range(lo, hi, st))


def _flag(module, name):
    return module.add_metadata([ll.MetaDataString(module, name)])


class _Distinct(ll.values.MDValue):
    """A ``distinct !{...}`` node, which ``Module.add_metadata`` cannot make."""

    def __init__(self, module, operands=()):
        super().__init__(module, [], name=str(len(module.metadata)))
        self.operands = tuple(operands)

    def descr(self, buf):
        buf.append("distinct ")
        super().descr(buf)

    # identity, not structure: the default compares operands (a LoopID's include itself)
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__


class LoopID(_Distinct):
    """A loop's ``distinct !{!self, properties...}`` node: LLVM requires the first
    operand to be the node itself."""

    def __init__(self, module, props):
        super().__init__(module)
        self.operands = (self, *props)


def parallel(module, back_edge, group, props=()):
    """Mark the loop as one whose iterations' accesses tagged with ``group`` are
    independent of each other's (``llvm.loop.parallel_accesses``): LLVM then vectorizes
    it without run-time alias checks, if every access in it is so tagged. ``props``:
    more properties of the loop."""
    mark(module, back_edge, [module.add_metadata([
        ll.MetaDataString(module, "llvm.loop.parallel_accesses"), group]), *props])


def rolled_at_run_time(module):
    """The property of a loop that LLVM must not unroll at run time (a loop whose trip
    count it cannot know when compiling; it may still vectorize it)."""
    return _flag(module, "llvm.loop.unroll.runtime.disable")


class AccessGroup(_Distinct):
    """An access group, ``distinct !{}`` (LLVM takes only distinct empty nodes as groups)."""
