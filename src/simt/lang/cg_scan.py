"""cg.inclusive_scan, cg.exclusive_scan and cg.invoke_one (CUDA 11+'s cooperative groups).

A scan runs over a tile of at most a warp (its size known at compile or run time) or a
coalesced group: the up-sweep of Hillis and Steele, log2(warp size) steps of ``shfl_up``
by 1, 2, 4, ..., each member combining the value ``offset`` ranks below its own where that
rank exists. Members combine in rank order (op(lower ranks, own)), so a device function
that is not commutative still gets CUDA's order. An exclusive scan is the inclusive one
moved up a rank; rank 0 gets the operator's identity (0 for cg.plus, the type's largest
value for cg.less, ...), as CUDA's cg operators give it; with a device function as the
operator, rank 0's result is undefined in CUDA and is rank 0's own value here.
"""
from ..ir import nodes as ir
from ..ir import types as T
from .cg_ops import Operator, _combine, operator_arg, plus
from .cg_tiles import BlockTile
from .groups import Coalesced, Group, Grid, Tile, _const, _group_arg
from .registry import Intrinsic, Static
from .warp import shuffle_value, warp_op

_SCANNED = (Tile, Coalesced)


def _shift_up(fc, group, value, offset, loc):
    """The value of the member ``offset`` ranks below (own value where there is none)."""
    if isinstance(group, Coalesced):
        return group._shuffle("shfl_up", fc, [value, Static(offset)], loc)
    return warp_op(fc, "shfl.up", [group.mask(fc, loc), value, _const(offset),
                                   group.size_value(loc)], value.type, loc)


def _group(fc, args, kwargs, what, loc):
    if len(args) not in (2, 3) or kwargs:
        fc.fail(loc, f"{what}(group, value, op=cg.plus) takes a group, a value and an "
                "optional operator")
    if isinstance(args[0], Static) and isinstance(args[0].value, BlockTile):
        fc.fail(loc, f"{what} scans tiles of at most {fc.warp().size} threads and coalesced "
                "groups, as CUDA's does", "scan each warp (cg.tiled_partition(tile, 32)) and "
                "add the warp totals, gathered in shared memory")
    return _group_arg(fc, args[0], what, loc, _SCANNED)


def inclusive(fc, group, value, op, what, loc):
    """The inclusive scan of ``value`` (an ir expression) over ``group``: a variable."""
    v = shuffle_value(fc, value, what, loc)
    name = fc.temp("scan")
    fc.hoist(*fc.bind_name(name, v, loc))
    rank = group._thread_rank(fc, [], loc)
    offset = 1
    while offset < (group.n if isinstance(group, Tile) and group.n else fc.warp().size):
        current = ir.Var(v.type, loc, name)
        below = _shift_up(fc, group, current, offset, loc)
        present = ir.Compare(T.BOOL, loc, "ge", rank, _const(offset))
        combined = ir.IfExp(v.type, loc, present, _combine(fc, op, below, current, loc), current)
        fc.hoist(*fc.bind_name(name, combined, loc))
        offset *= 2
    return ir.Var(v.type, loc, name)


def _inclusive_scan(fc, args, kwargs, loc):
    group = _group(fc, args, kwargs, "cg.inclusive_scan", loc)
    op = operator_arg(fc, args[2], "cg.inclusive_scan", loc) if len(args) == 3 else plus
    return inclusive(fc, group, args[1], op, "cg.inclusive_scan", loc)


def _exclusive_scan(fc, args, kwargs, loc):
    group = _group(fc, args, kwargs, "cg.exclusive_scan", loc)
    op = operator_arg(fc, args[2], "cg.exclusive_scan", loc) if len(args) == 3 else plus
    value = shuffle_value(fc, args[1], "cg.exclusive_scan", loc)
    name = fc.temp("scanned")
    fc.hoist(*fc.bind_name(name, value, loc))
    own = ir.Var(value.type, loc, name)
    total = inclusive(fc, group, own, op, "cg.exclusive_scan", loc)
    below = _shift_up(fc, group, total, 1, loc)
    first = own if not isinstance(op, Operator) else op.identity(own.type, loc)
    is_first = ir.Compare(T.BOOL, loc, "eq", group._thread_rank(fc, [], loc), _const(0))
    return ir.IfExp(own.type, loc, is_first, first, below)


def _invoke_one(fc, args, kwargs, loc):
    if len(args) < 2 or kwargs:
        fc.fail(loc, "cg.invoke_one(group, fn, *args) takes a group, a device function and "
                "its arguments")
    group = _group_arg(fc, args[0], "cg.invoke_one", loc, (Group,))
    if isinstance(group, Grid):
        fc.fail(loc, "cg.invoke_one takes a block, a tile or a coalesced group, not the grid",
                "test cg.this_grid().thread_rank() == 0 yourself")
    fn = args[1].value if isinstance(args[1], Static) else None
    if not hasattr(fn, "_simt_device"):
        fc.fail(loc, "the second argument of cg.invoke_one must be a @simt.device function "
                "(or a lambda)", "pass it without calling it: cg.invoke_one(tile, f, x)")
    values = [a if isinstance(a, Static) and getattr(a.value, "compile_time", False)
              else fc.expr(a, loc) for a in args[2:]]
    call = fc.call_device(fn, values, loc)
    chosen = ir.Compare(T.BOOL, loc, "eq", group._thread_rank(fc, [], loc), _const(0))
    return ir.If(loc, chosen, [ir.ExprStmt(loc, call)], [])


inclusive_scan = Intrinsic(
    "cg.inclusive_scan", "cg.inclusive_scan(group, value, op=cg.plus): op over the values of "
    "ranks 0 .. thread_rank() (tiles of at most a warp, their size known at compile or run "
    "time, and coalesced groups).", _inclusive_scan, python_name="cg.inclusive_scan",
    lowered_as=(ir.WarpOp, ir.BinOp, ir.IfExp))
exclusive_scan = Intrinsic(
    "cg.exclusive_scan", "cg.exclusive_scan(group, value, op=cg.plus): op over the values of "
    "ranks 0 .. thread_rank() - 1; rank 0 gets op's identity (0 for cg.plus), or its own "
    "value when op is a device function.", _exclusive_scan, python_name="cg.exclusive_scan",
    lowered_as=(ir.WarpOp, ir.BinOp, ir.IfExp))
invoke_one = Intrinsic(
    "cg.invoke_one", "cg.invoke_one(group, fn, *args): one member of the group (rank 0) "
    "calls fn(*args); the arguments are evaluated by every member.", _invoke_one,
    statement=True, python_name="cg.invoke_one", lowered_as=(ir.If, ir.CallDevice))
