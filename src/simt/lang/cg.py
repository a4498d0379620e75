"""Cooperative groups (guide appendix C): ``from simt import cg``.

Groups are compile-time values in the front end: ``block = cg.this_thread_block()`` binds a
name to a group object (lang/groups.py), and its methods build IR when called. A tile of
static size n is a set of n consecutive lanes of a warp; its collectives are the warp
functions of lang/warp.py with the tile's lane mask (and ``width=n`` for shuffles), so the
CPU and the GPU share them. Ranks and sizes are int32 (API.md).
"""
from ..ir import nodes as ir
from ..ir import types as T
from .cg_copy import memcpy_async, wait, wait_prior
from .cg_ops import (Operator, _combine, bit_and, bit_or, bit_xor, greater, less,  # noqa: F401
                     operator_arg, plus)
from .cg_scan import exclusive_scan, inclusive_scan, invoke_one
from .cg_partition import binary_partition, labeled_partition
from .cg_runtime_tile import RuntimeTile, partition as runtime_partition
from .cg_tiles import BlockTile
from .groups import (Coalesced, Grid, ThreadBlock, Tile, _bin, _const, _group_arg, _static)
from .registry import Intrinsic, Static
from .cluster import this_cluster
from .warp import reduce_value, shuffle_value, warp_op


def _this_thread_block(fc, args, kwargs, loc):
    return _static(ThreadBlock())


def _this_grid(fc, args, kwargs, loc):
    return _static(Grid())


def _coalesced_threads(fc, args, kwargs, loc):
    mask = warp_op(fc, "activemask", [], fc.warp().mask, loc)
    return _static(Coalesced(mask.name))


def _tiled_partition(fc, args, kwargs, loc):
    if len(args) != 2 or kwargs:
        fc.fail(loc, "cg.tiled_partition(parent, n) takes a group and a tile size")
    parent = _group_arg(fc, args[0], "cg.tiled_partition", loc, (ThreadBlock, Tile, BlockTile))
    if not isinstance(args[1], Static):                 # n computed at run time
        return _static(runtime_partition(fc, parent, args[1], loc))
    n = fc.constant_int(args[1], "the tile size", loc)
    if isinstance(parent, RuntimeTile):
        return _static(runtime_partition(fc, parent, args[1], loc))
    limit = parent.n if isinstance(parent, (Tile, BlockTile)) else 1024
    size = fc.warp().size
    if n < 1 or n > limit or n & (n - 1):
        fc.fail(loc, f"tile size {n}: tiles have a power-of-2 size from 1 to {limit}",
                f"use 1, 2, 4, ..., {size} (one warp or less) or {2 * size} ... 1024 (whole "
                "warps), no larger than the parent tile")
    return _static(Tile(parent, n) if n <= size else BlockTile(parent, n))


def _sync(fc, args, kwargs, loc):
    group = _group_arg(fc, fc.one_arg(args, "cg.sync", loc), "cg.sync", loc)
    return group._sync(fc, [], loc)


def _reduce(fc, args, kwargs, loc):
    if len(args) != 3 or kwargs:
        fc.fail(loc, "cg.reduce(group, value, op) takes a group, a value and an operator")
    group = _group_arg(fc, args[0], "cg.reduce", loc, (Tile, BlockTile, Coalesced))
    op = operator_arg(fc, args[2], "cg.reduce", loc)
    if isinstance(group, BlockTile):          # each warp's total, then across the warps
        warp = _reduce_group(fc, Tile(group, fc.warp().size), args[1], op, loc)
        return group.across_warps(fc, warp, lambda a, b: _combine(fc, op, a, b, loc), loc)
    return _reduce_group(fc, group, args[1], op, loc)


def _reduce_group(fc, group, value, op, loc):
    """cg.reduce over a tile of at most a warp or a coalesced group."""
    raw = fc.expr(value, loc)
    v = shuffle_value(fc, raw, "cg.reduce", loc)
    int32 = raw.type.kind in "iu" and (raw.type.bits == 32 or raw.type.weak)
    if isinstance(op, Operator) and int32:          # __reduce_*_sync, as CUDA's cg.reduce does on 32-bit ints
        v = reduce_value(fc, value, op.redux, loc)
        return warp_op(fc, "reduce." + op.redux, [group.mask(fc, loc), v], v.type, loc)
    if isinstance(group, Coalesced):
        return _reduce_coalesced(fc, group, v, op, loc)
    name = fc.temp("reduce")
    fc.hoist(*fc.bind_name(name, v, loc))
    offset = (group.n or fc.warp().size) // 2
    while offset:
        current = ir.Var(v.type, loc, name)
        other = warp_op(fc, "shfl.bfly", [group.mask(fc, loc), current, _const(offset),
                                          group.size_value(loc)], v.type, loc)
        combined = _combine(fc, op, current, other, loc)
        if group.n is None:            # a run-time tile: the steps inside it only
            inside = ir.Compare(T.BOOL, loc, "lt", _const(offset), group.size_value(loc))
            combined = ir.IfExp(v.type, loc, inside, combined, current)
        fc.hoist(*fc.bind_name(name, combined, loc))
        offset //= 2
    return ir.Var(v.type, loc, name)


def _reduce_coalesced(fc, group, v, op, loc):
    """A tree over ranks for any member count (shfl_down by rank, as the group's own
    shfl_down does), then rank 0's total to every member."""
    name = fc.temp("reduce")
    fc.hoist(*fc.bind_name(name, v, loc))
    size = group._size(fc, [], loc)
    offset = 1
    while offset < fc.warp().size:          # 1, 2, 4, 8, 16 on a warp of 32
        current = ir.Var(v.type, loc, name)
        other = group._shuffle("shfl_down", fc, [current, _static(offset)], loc)
        rank = group._thread_rank(fc, [], loc)
        inside = ir.Compare(T.BOOL, loc, "lt", _bin("add", rank, _const(offset), loc), size)
        combined = ir.IfExp(v.type, loc, inside, _combine(fc, op, current, other, loc), current)
        fc.hoist(*fc.bind_name(name, combined, loc))
        offset *= 2
    return group._shuffle("shfl", fc, [ir.Var(v.type, loc, name), _static(0)], loc)


this_thread_block = Intrinsic("cg.this_thread_block", "cg.this_thread_block(): the group of "
                              "this block's threads.", _this_thread_block,
                              python_name="cg.this_thread_block", lowered_as=())
this_grid = Intrinsic("cg.this_grid", "cg.this_grid(): every thread of the launch; its sync() "
                      "needs kernel.launch_cooperative.", _this_grid,
                      python_name="cg.this_grid", lowered_as=())
coalesced_threads = Intrinsic("cg.coalesced_threads", "cg.coalesced_threads(): the lanes of "
                              "this warp executing this call together.", _coalesced_threads,
                              python_name="cg.coalesced_threads", lowered_as=(ir.WarpOp,))
tiled_partition = Intrinsic("cg.tiled_partition", "cg.tiled_partition(parent, n): tiles of n "
                            "consecutive threads (n = 1, 2, 4, 8, 16, 32 within a warp; 64 to "
                            "1024 as whole warps: sync, ranks, any, all, shfl, cg.reduce). n may "
                            "be computed at run time (a power of 2 up to 32, checked).",
                            _tiled_partition,
                            python_name="cg.tiled_partition", lowered_as=())
sync = Intrinsic("cg.sync", "cg.sync(group): group.sync().", _sync, statement=True,
                 python_name="cg.sync", lowered_as=(ir.Barrier, ir.WarpOp, ir.GridSync))
reduce = Intrinsic("cg.reduce", "cg.reduce(group, value, op): op over the group's values, "
                   "returned to every member (tiles and coalesced groups).", _reduce,
                   python_name="cg.reduce", lowered_as=(ir.WarpOp, ir.BinOp, ir.IfExp))

__all__ = ["this_thread_block", "this_grid", "this_cluster", "coalesced_threads", "tiled_partition", "sync",
           "reduce", "plus", "less", "greater", "bit_and", "bit_or", "bit_xor",
           "labeled_partition", "binary_partition", "memcpy_async", "wait", "wait_prior",
           "invoke_one", "inclusive_scan", "exclusive_scan"]
