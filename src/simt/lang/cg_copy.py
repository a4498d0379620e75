"""cg.memcpy_async, cg.wait and cg.wait_prior (guide C.6.2).

A group-cooperative copy: the member of rank r copies elements r, r + size, r + 2 size, ...
(consecutive members touch consecutive elements, so a warp's loads and stores coalesce).
The copy is done by the threads' own loads and stores when it is called, not by the
hardware async-copy engine (cp.async), so ``wait`` only has to make every member's stores
visible to the group: it is the group's sync. Programs written for the asynchronous copy
(copy, wait, then read) are correct under this one. docs/warp.md has the forms accepted.
"""
from ..ir import nodes as ir
from ..ir import types as T
from .cg_tiles import BlockTile
from .groups import Coalesced, ThreadBlock, Tile, _group_arg
from .registry import Intrinsic

_GROUPS = (ThreadBlock, Tile, BlockTile, Coalesced)


def _array(fc, value, what, loc):
    a = fc.expr(value, loc)
    if not isinstance(a.type, T.Array) or a.type.ndim != 1:
        got = f"a {a.type.ndim}-d array" if isinstance(a.type, T.Array) else f"a {a.type}"
        fc.fail(loc, f"the {what} of cg.memcpy_async must be a 1-d array, got {got}",
                "pass a row or a flat view: smem[stage], data[start:stop], a.reshape(n)")
    return a


def _count(fc, value, loc):
    v = fc.expr(value, loc)
    if not isinstance(v.type, T.Scalar) or v.type.kind not in "iub":
        fc.fail(loc, f"an element count of cg.memcpy_async must be an integer, got {v.type}")
    return fc.cast(v, T.INT64, loc)


def _size(array, loc):
    return ir.ArrayAttr(T.INT64, loc, array, "shape", 0)


def _label(array, default):
    return getattr(array, "label", "") or getattr(getattr(array, "decl", None), "name", "") \
        or default


def _operands(fc, args, loc):
    """(dst, dst_count, src, src_count) from the 3- or 5-argument form."""
    if len(args) == 3:
        dst, src = _array(fc, args[1], "destination", loc), _array(fc, args[2], "source", loc)
        return dst, _size(dst, loc), src, _size(src, loc)
    if len(args) == 5:
        dst, src = _array(fc, args[1], "destination", loc), _array(fc, args[3], "source", loc)
        return dst, _count(fc, args[2], loc), src, _count(fc, args[4], loc)
    fc.fail(loc, "cg.memcpy_async takes (group, dst, src) or (group, dst, dst_count, src, "
            f"src_count), got {len(args) - 1} arguments after the group")


def _memcpy_async(fc, args, kwargs, loc):
    if kwargs or not args:
        fc.fail(loc, "cg.memcpy_async(group, dst, dst_count, src, src_count) takes "
                "positional arguments")
    group = _group_arg(fc, args[0], "cg.memcpy_async", loc, _GROUPS)
    dst, dst_count, src, src_count = _operands(fc, args, loc)
    if dst.type.dtype != src.type.dtype:
        fc.fail(loc, f"cg.memcpy_async copies elements of one type: the destination holds "
                f"{dst.type.dtype}, the source {src.type.dtype}",
                "copy between arrays of the same dtype, or convert in a loop of your own")
    if dst.type.space == "const":
        fc.fail(loc, "cg.memcpy_async cannot write constant memory",
                "copy into a shared or global array")
    count = fc.temp("copy_count")
    least = ir.BinOp(T.INT64, loc, "min", dst_count, src_count)
    fc.hoist(*fc.bind_name(count, ir.BinOp(T.INT64, loc, "max", least,
                                                   ir.Const(T.INT64, loc, 0)), loc))
    k = fc.temp("copy")
    fc.assign_type(k, T.INT64, loc)
    element = ir.Load(src.type.element, loc, src, [ir.Var(T.INT64, loc, k)], _label(src, "src"))
    body = [ir.Store(loc, dst, [ir.Var(T.INT64, loc, k)], element, _label(dst, "dst"))]
    rank = fc.cast(group._thread_rank(fc, [], loc), T.INT64, loc)
    size = fc.cast(group._size(fc, [], loc), T.INT64, loc)
    fc.hoist(ir.ForRange(loc, k, rank, ir.Var(T.INT64, loc, count), size, body))
    return ir.Var(T.INT64, loc, count)


def _wait(fc, args, kwargs, loc):
    if len(args) != 1 or kwargs:
        fc.fail(loc, "cg.wait(group) takes the group that copied")
    group = _group_arg(fc, args[0], "cg.wait", loc, _GROUPS)
    return group._sync(fc, [], loc)


def _wait_prior(fc, args, kwargs, loc):
    if len(args) != 2 or kwargs:
        fc.fail(loc, "cg.wait_prior(group, n) takes the group and the number of copies that "
                "may stay in flight")
    group = _group_arg(fc, args[0], "cg.wait_prior", loc, _GROUPS)
    if fc.constant_int(args[1], "the stage count of cg.wait_prior", loc) < 0:
        fc.fail(loc, "cg.wait_prior(group, n) needs n >= 0")
    return group._sync(fc, [], loc)     # no copy is left in flight: waiting for all of them


memcpy_async = Intrinsic(
    "cg.memcpy_async", "cg.memcpy_async(group, dst, dst_count, src, src_count) or "
    "(group, dst, src): the group copies min(dst_count, src_count) elements of 1-d arrays "
    "(dst_count = dst.shape[0] ... in the short form) and returns that count (int64); read "
    "dst after cg.wait(group).", _memcpy_async, python_name="cg.memcpy_async",
    lowered_as=(ir.ForRange, ir.Load, ir.Store))
wait = Intrinsic("cg.wait", "cg.wait(group): the group's copies are complete and visible to "
                 "every member (a sync of the group).", _wait, statement=True,
                 python_name="cg.wait", lowered_as=(ir.Barrier, ir.WarpOp))
wait_prior = Intrinsic("cg.wait_prior", "cg.wait_prior(group, n): CUDA's wait_prior<n>; "
                       "copies are never left in flight here, so it is cg.wait(group).",
                       _wait_prior, statement=True, python_name="cg.wait_prior",
                       lowered_as=(ir.Barrier, ir.WarpOp))
