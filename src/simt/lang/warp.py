"""Warp-level functions (guide B.16 to B.21): vote, match, reduce, shuffle, syncwarp, laneid,
the lane masks.

Each call becomes an ``ir.WarpOp`` statement hoisted before the statement that uses it
(as syncthreads_count is), so that the CPU device can split its thread loops there: a warp
operation is a barrier at warp scope. An operand that only some threads evaluate (the right
of and/or, a branch of ``x if c else y``, a while condition) keeps its WarpOps under its own
condition (compiler/conditional.py), so only those threads run them, as in CUDA C. The GPU
lowers them to the NVVM intrinsics (backends/cuda/warp.py), the CPU in backends/cpu/warp.py;
docs/warp.md has the semantics.
"""
import numpy as np

from .arguments import bind
from ..ir import nodes as ir
from ..ir import types as T
from .registry import Intrinsic, Static

SHFL_KINDS = {"shfl_sync": "idx", "shfl_up_sync": "up", "shfl_down_sync": "down",
              "shfl_xor_sync": "bfly"}


def warp_op(fc, op, args, result, loc):
    """Hoist ``op(args)`` into a WarpOp before the current statement; its value is a temp."""
    name = fc.temp("warp")
    fc.assign_type(name, result, loc)
    fc.hoist(ir.WarpOp(loc, name, op, list(args), result))
    return ir.Var(result, loc, name)


def mask_arg(fc, value, loc):
    return fc.cast(fc.expr(value, loc), fc.warp().mask, loc)


def int32_arg(fc, value, loc):
    v = fc.expr(value, loc)
    if not isinstance(v.type, T.Scalar) or v.type.kind not in "iub":
        fc.fail(loc, f"expected an integer here, got {v.type}")
    return fc.cast(v, T.INT32, loc)


def shuffle_value(fc, value, what, loc):
    """A value that can cross lanes: any real scalar (bool, ints, floats) up to 64 bits."""
    v = fc.expr(value, loc)
    if not isinstance(v.type, T.Scalar) or v.type.kind == "c":
        fc.fail(loc, f"{what} moves real numbers (bool, int, float), got {v.type}",
                "shuffle the .real and .imag parts separately")
    return fc.cast(v, v.type.strong(), loc)


def _args(fc, args, kwargs, names, loc, name):
    return bind(fc, args, kwargs, names, loc, f"simt.{name}")


def _static_width(fc, width, loc):
    size = fc.warp().size
    if isinstance(width, Static):
        w = width.value
        if not isinstance(w, (int, np.integer)) or w < 1 or w > size or w & (w - 1):
            fc.fail(loc, f"width must be a power of 2 from 1 to {size}, got {w!r}")
    return width


def _shfl_builder(name):
    kind = SHFL_KINDS[name]
    third = "src_lane" if kind == "idx" else ("lane_mask" if kind == "bfly" else "delta")

    def build(fc, args, kwargs, loc):
        mask, value, lane, width = _args(fc, args, dict(kwargs), [
            ("mask", None), ("value", None), (third, None), ("width", Static(fc.warp().size))],
            loc, name)
        _static_width(fc, width, loc)
        v = shuffle_value(fc, value, f"simt.{name}", loc)
        operands = [mask_arg(fc, mask, loc), v, int32_arg(fc, lane, loc),
                    int32_arg(fc, width, loc)]
        return warp_op(fc, "shfl." + kind, operands, v.type, loc)
    return build


def _vote_builder(kind):
    def build(fc, args, kwargs, loc):
        mask, pred = _args(fc, args, dict(kwargs), [("mask", None), ("predicate", None)], loc,
                           kind + "_sync")
        p = fc.truth(fc.expr(pred, loc), loc)
        result = fc.warp().mask if kind == "ballot" else T.INT32
        return warp_op(fc, "vote." + kind, [mask_arg(fc, mask, loc), p], result, loc)
    return build


def _activemask(fc, args, kwargs, loc):
    if args or kwargs:
        fc.fail(loc, "simt.activemask() takes no arguments")
    return warp_op(fc, "activemask", [], fc.warp().mask, loc)


def _match_builder(kind):
    def build(fc, args, kwargs, loc):
        mask, value = _args(fc, args, dict(kwargs), [("mask", None), ("value", None)], loc,
                            f"match_{kind}_sync")
        v = shuffle_value(fc, value, f"simt.match_{kind}_sync", loc)
        mask_type = fc.warp().mask
        result = mask_type if kind == "any" else T.Tuple([mask_type, T.INT32])
        return warp_op(fc, "match." + kind, [mask_arg(fc, mask, loc), v], result, loc)
    return build


def reduce_value(fc, value, kind, loc):
    v = fc.expr(value, loc)
    t = v.type
    if isinstance(t, T.Scalar) and t.weak and t.kind in "iub":
        return fc.cast(v, T.INT32, loc)
    if not (isinstance(t, T.Scalar) and t.kind in "iu" and t.bits == 32):
        fc.fail(loc, f"simt.reduce_{kind}_sync reduces 32-bit integers (int32, uint32) as "
                f"CUDA's __reduce_{kind}_sync does, got {t}",
                "convert with np.int32(...), or use cg.reduce(tile, value, op) for other types")
    return v


def _reduce_builder(kind):
    def build(fc, args, kwargs, loc):
        mask, value = _args(fc, args, dict(kwargs), [("mask", None), ("value", None)], loc,
                            f"reduce_{kind}_sync")
        v = reduce_value(fc, value, kind, loc)
        return warp_op(fc, "reduce." + kind, [mask_arg(fc, mask, loc), v], v.type, loc)
    return build


def _syncwarp(fc, args, kwargs, loc):
    every_lane = Static(fc.warp().full_mask)
    (mask,) = _args(fc, args, dict(kwargs), [("mask", every_lane)], loc, "syncwarp")
    return ir.WarpOp(loc, None, "syncwarp", [mask_arg(fc, mask, loc)], T.VOID)


def _laneid(fc, args, kwargs, loc):
    if args or kwargs:
        fc.fail(loc, "simt.laneid() takes no arguments")
    return laneid.node(T.INT32, loc, [])


def _lanemask_builder(kind):
    def build(fc, args, kwargs, loc):
        if args or kwargs:
            fc.fail(loc, f"simt.lanemask_{kind}() takes no arguments")
        return LANEMASKS[kind].node(T.UINT32, loc, [])
    return build


_WARP = (ir.WarpOp,)      # lowered by backends/*/warp.py
_DOC_SHFL = {
    "shfl_sync": "__shfl_sync(mask, value, src_lane, width=32): value of lane src_lane of "
                 "this thread's width-wide segment of the warp.",
    "shfl_up_sync": "__shfl_up_sync(mask, value, delta, width=32): value of lane - delta; "
                    "lanes below delta in their segment keep their own value.",
    "shfl_down_sync": "__shfl_down_sync(mask, value, delta, width=32): value of lane + delta; "
                      "lanes past the end of their segment keep their own value.",
    "shfl_xor_sync": "__shfl_xor_sync(mask, value, lane_mask, width=32): value of lane ^ "
                     "lane_mask (butterfly exchange).",
}
shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync = (
    Intrinsic(name, _DOC_SHFL[name], _shfl_builder(name), lowered_as=_WARP) for name in SHFL_KINDS)
all_sync = Intrinsic("all_sync", "__all_sync(mask, p): 1 if p is true in every lane of mask "
                     "that takes part, else 0 (int32).", _vote_builder("all"), lowered_as=_WARP)
any_sync = Intrinsic("any_sync", "__any_sync(mask, p): 1 if p is true in any lane of mask "
                     "that takes part, else 0 (int32).", _vote_builder("any"), lowered_as=_WARP)
uni_sync = Intrinsic("uni_sync", "__uni_sync(mask, p): 1 if p has the same value in every "
                     "lane of mask that takes part (all true or all false), else 0 (int32). "
                     "PTX vote.sync.uni.pred.", _vote_builder("uni"), lowered_as=_WARP)
ballot_sync = Intrinsic("ballot_sync", "__ballot_sync(mask, p): uint32 whose bit i is set when "
                        "lane i of mask takes part with p true.", _vote_builder("ballot"),
                        lowered_as=_WARP)
activemask = Intrinsic("activemask", "__activemask(): uint32 mask of the lanes of this warp "
                       "executing this call together.", _activemask, lowered_as=_WARP)
match_any_sync = Intrinsic("match_any_sync", "__match_any_sync(mask, v): uint32 mask of the "
                           "lanes of mask whose v equals this lane's.", _match_builder("any"),
                           lowered_as=_WARP)
match_all_sync = Intrinsic("match_all_sync", "__match_all_sync(mask, v) -> (mask, pred): (the "
                           "lanes of mask taking part, 1) if they all have the same v, else "
                           "(0, 0); missing lanes of a partial warp are 0 bits.",
                           _match_builder("all"), lowered_as=_WARP)
reduce_add_sync, reduce_min_sync, reduce_max_sync, reduce_and_sync, reduce_or_sync, \
    reduce_xor_sync = (
        Intrinsic(f"reduce_{k}_sync", f"__reduce_{k}_sync(mask, v): the {k} of v over the lanes "
                  "of mask (32-bit integers), returned to each of them.", _reduce_builder(k),
                  lowered_as=_WARP)
        for k in ("add", "min", "max", "and", "or", "xor"))
syncwarp = Intrinsic("syncwarp", "__syncwarp(mask=0xFFFFFFFF): wait until the lanes of mask "
                     "arrive; memory ordering among them, as a barrier at warp scope.",
                     _syncwarp, statement=True, lowered_as=_WARP)
laneid = Intrinsic("laneid", "laneid(): this thread's lane in its warp, 0 to 31 (int32): its "
                   "linear index in the block modulo 32.", _laneid)

# %lanemask_lt ... %lanemask_gt: which lanes' bits each mask holds, relative to this lane
LANEMASK_DOC = {"lt": "below", "le": "below and at", "eq": "at", "ge": "at and above",
                "gt": "above"}
LANEMASKS = {kind: Intrinsic(f"lanemask_{kind}", f"lanemask_{kind}(): uint32 with the bits of "
                             f"the lanes {where} this thread's lane set (PTX %lanemask_{kind}, "
                             f"__lanemask_{kind}).", _lanemask_builder(kind))
             for kind, where in LANEMASK_DOC.items()}
lanemask_lt, lanemask_le, lanemask_eq, lanemask_ge, lanemask_gt = LANEMASKS.values()
