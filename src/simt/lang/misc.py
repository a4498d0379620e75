"""Read-only loads."""
from ..ir import nodes as ir
from .registry import Intrinsic


def _ldg(fc, args, kwargs, loc):
    array, idx = (fc.expr(a, loc) for a in args)
    return fc.subscript(array, idx, loc, fc.label_of(args[0]))


ldg = Intrinsic("ldg", "__ldg(ary, idx): a load through the read-only data cache.", _ldg,
                lowered_as=(ir.Load, ir.View))
