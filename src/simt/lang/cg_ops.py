"""The operators of cooperative groups' collectives (cg.reduce, cg.inclusive_scan,
cg.exclusive_scan): ``cg.plus``, ``cg.less``, ... passed as is, or a device function of
two values; and the identity each cg operator has, which an exclusive scan gives rank 0."""
import numpy as np

from ..ir import nodes as ir
from .registry import Static


class Operator:
    """cg.plus, cg.less, ...: passed to cg.reduce as is (not called)."""

    def __init__(self, name, binop, redux, doc):
        self.name, self.binop, self.redux, self.__doc__ = name, binop, redux, doc

    def identity(self, t, loc):
        """The value x with op(x, v) == v for every v of scalar type t."""
        if self.name in ("plus", "bit_or", "bit_xor"):
            return ir.Const(t, loc, 0)
        if self.name == "bit_and":
            return ir.Const(t, loc, -1 if t.kind == "i" else int(np.iinfo(t.dtype).max))
        if t.kind == "f":
            return ir.Const(t, loc, float("inf") if self.name == "less" else float("-inf"))
        info = np.iinfo(t.dtype) if t.kind in "iu" else None
        if info is None:                                                    # bool
            return ir.Const(t, loc, self.name == "less")
        return ir.Const(t, loc, int(info.max if self.name == "less" else info.min))

    def __repr__(self):
        return f"cg.{self.name}"


plus = Operator("plus", "add", "add", "a + b")
less = Operator("less", "min", "min", "the lesser of a and b")
greater = Operator("greater", "max", "max", "the greater of a and b")
bit_and = Operator("bit_and", "and", "and", "a & b")
bit_or = Operator("bit_or", "or", "or", "a | b")
bit_xor = Operator("bit_xor", "xor", "xor", "a ^ b")


def _combine(fc, op, a, b, loc):
    if isinstance(op, Operator):
        if op.binop in ("and", "or", "xor") and a.type.kind not in "iub":
            fc.fail(loc, f"cg.{op.name} needs integers, got {a.type}")
        return fc.cast(fc.binop(op.binop, a, b, loc), a.type, loc)
    return fc.cast(fc.call_device(op, [a, b], loc), a.type, loc)



def operator_arg(fc, value, what, loc):
    """The operator a collective was passed: a cg operator or a device function."""
    op = value.value if isinstance(value, Static) else None
    if not (isinstance(op, Operator) or hasattr(op, "_simt_device")):
        fc.fail(loc, f"the operator of {what} must be cg.plus, cg.less, cg.greater, "
                "cg.bit_and, cg.bit_or, cg.bit_xor or a @simt.device function of two values",
                f"pass it without calling it: {what}(tile, v, cg.plus)")
    return op
