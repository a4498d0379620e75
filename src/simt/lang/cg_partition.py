"""cg.labeled_partition and cg.binary_partition (guide C.5.2, C.5.3).

A partition is a coalesced group (lang/cg.py's ``Coalesced``): a compile-time object whose
run-time lane mask is the result of one ``match_any`` over the parent's mask, so the lanes
of the parent that pass equal labels get the same mask. The CPU and the GPU share it:
``match_any`` is a warp operation on both (docs/warp.md).
"""
from ..ir import nodes as ir
from ..ir import types as T
from .groups import Coalesced, Tile, _group_arg, _static
from .registry import Intrinsic
from .warp import shuffle_value, warp_op

_PARENTS = (Tile, Coalesced)
_HINT = "partition a tile or a coalesced group: tile = cg.tiled_partition(block, 32)"


def _parent(fc, args, kwargs, what, loc):
    if len(args) != 2 or kwargs:
        fc.fail(loc, f"cg.{what}(group, {'label' if what.startswith('labeled') else 'pred'}) "
                "takes a group and a value")
    group = _group_arg(fc, args[0], f"cg.{what}", loc)
    if not isinstance(group, _PARENTS):
        fc.fail(loc, f"cg.{what} partitions a tile or a coalesced group, not a "
                f"{type(group).__name__}", _HINT)
    return group


def _split(fc, parent, label, loc):
    mask = warp_op(fc, "match.any", [parent.mask(fc, loc), label], fc.warp().mask, loc)
    return _static(Coalesced(mask.name))


def _labeled_partition(fc, args, kwargs, loc):
    parent = _parent(fc, args, kwargs, "labeled_partition", loc)
    label = shuffle_value(fc, args[1], "cg.labeled_partition", loc)
    if label.type.kind == "f":
        fc.fail(loc, f"the label of cg.labeled_partition is an integer, got {label.type}",
                "convert it with int(...), or compare floats into an integer label")
    return _split(fc, parent, label, loc)


def _binary_partition(fc, args, kwargs, loc):
    parent = _parent(fc, args, kwargs, "binary_partition", loc)
    pred = fc.truth(fc.expr(args[1], loc), loc)
    return _split(fc, parent, fc.cast(pred, T.INT32, loc), loc)


labeled_partition = Intrinsic(
    "cg.labeled_partition", "cg.labeled_partition(group, label): the coalesced group of the "
    "members of group (a tile or a coalesced group) whose integer label equals this "
    "thread's.", _labeled_partition, python_name="cg.labeled_partition",
    lowered_as=(ir.WarpOp,))
binary_partition = Intrinsic(
    "cg.binary_partition", "cg.binary_partition(group, pred): the coalesced group of the "
    "members of group (a tile or a coalesced group) whose predicate has this thread's truth "
    "value.", _binary_partition, python_name="cg.binary_partition",
    lowered_as=(ir.WarpOp,))
