"""cg.memcpy_async, cg.wait and cg.wait_prior (guide C.6.2).

A group-cooperative copy: the member of rank r copies chunks r, r + size, r + 2 size, ...
of 16 bytes (consecutive members touch consecutive chunks, so a warp's accesses coalesce).
Each chunk is a ``simt.memcpy_async`` (lang/pipeline.py): on the GPU a ``cp.async`` from
global to shared memory when both addresses are aligned for it (sm_80+), else the thread's
own loads and stores; on the cpu and sim devices a copy done at once. Each call closes a
``cp.async`` group (``commit_group``), as CUDA's cg::memcpy_async does, so ``cg.wait`` is
``cp.async.wait_group 0`` and ``cg.wait_prior(group, n)`` is ``cp.async.wait_group n``,
each followed by the group's sync, which makes every member's copies visible to all.
Arrays not known to be contiguous (a strided view) are copied by loads and stores at once.
docs/warp.md has the forms accepted.
"""
from ..ir import nodes as ir
from ..ir import types as T
from .cg_tiles import BlockTile
from .groups import Coalesced, ThreadBlock, Tile, _group_arg
from .pipeline import commit, memcpy_async as element_copy, wait as wait_group
from .registry import Intrinsic

CHUNK_BYTES = 16        # the widest cp.async

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
    """(dst, dst_count, src, src_count) from the 3-, 4- or 5-argument form."""
    if len(args) == 3:
        dst, src = _array(fc, args[1], "destination", loc), _array(fc, args[2], "source", loc)
        return dst, _size(dst, loc), src, _size(src, loc)
    if len(args) == 4:                          # (group, dst, src, count), API.md
        dst, src = _array(fc, args[1], "destination", loc), _array(fc, args[2], "source", loc)
        count = _count(fc, args[3], loc)
        return dst, count, src, count
    if len(args) == 5:
        dst, src = _array(fc, args[1], "destination", loc), _array(fc, args[3], "source", loc)
        return dst, _count(fc, args[2], loc), src, _count(fc, args[4], loc)
    fc.fail(loc, "cg.memcpy_async takes (group, dst, src), (group, dst, src, count) or "
            f"(group, dst, dst_count, src, src_count), got {len(args) - 1} arguments after "
            "the group")


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
    total = ir.Var(T.INT64, loc, count)
    if _contiguous(dst) and _contiguous(src):
        _chunked(fc, group, dst, src, total, loc)
    else:
        _by_elements(fc, group, dst, src, total, loc)
    fc.hoist(ir.ExprStmt(loc, commit.node(T.VOID, loc, [])))
    return ir.Var(T.INT64, loc, count)


def _contiguous(array):
    """Whether the elements are known to be consecutive: a C-contiguous array, or a slice
    without a step of a 1-d one (``data[start:]``)."""
    if array.type.layout == "C":
        return True
    if not isinstance(array, ir.View) or array.array.type.ndim != 1:
        return False
    part = array.indices[0]
    return isinstance(part, tuple) and part[2] is None and _contiguous(array.array)


def _member_loop(fc, group, step_elements, total, body, loc):
    """for k in range(rank * step, total, size * step): body(k)."""
    k = fc.temp("copy")
    fc.assign_type(k, T.INT64, loc)
    step = ir.Const(T.INT64, loc, step_elements)
    rank = fc.cast(group._thread_rank(fc, [], loc), T.INT64, loc)
    size = fc.cast(group._size(fc, [], loc), T.INT64, loc)
    fc.hoist(ir.ForRange(loc, k, ir.BinOp(T.INT64, loc, "mul", rank, step), total,
                         ir.BinOp(T.INT64, loc, "mul", size, step),
                         body(ir.Var(T.INT64, loc, k))))


def _chunked(fc, group, dst, src, total, loc):
    """Chunks of 16 bytes (whole elements) by simt.memcpy_async: a full chunk has a count
    known when compiling, so the GPU copies it with one 16-byte cp.async when aligned; the
    last, shorter one goes element by element."""
    itemsize = dst.type.dtype.itemsize
    per_chunk = CHUNK_BYTES // itemsize if CHUNK_BYTES % itemsize == 0 else 1
    labels = {"dst": _label(dst, "dst"), "src": _label(src, "src")}

    def copy(k, n, attrs):
        return ir.ExprStmt(loc, element_copy.node(T.VOID, loc, [dst, k, src, k, n], attrs))

    def body(k):
        left = ir.BinOp(T.INT64, loc, "sub", total, k)
        whole = ir.Const(T.INT64, loc, per_chunk)
        full = ir.Compare(T.BOOL, loc, "ge", left, whole)
        return [ir.If(loc, full, [copy(k, whole, labels | {"count": per_chunk})],
                      [copy(k, left, labels)])]
    _member_loop(fc, group, per_chunk, total, body, loc)


def _by_elements(fc, group, dst, src, total, loc):
    def body(k):
        element = ir.Load(src.type.element, loc, src, [k], _label(src, "src"))
        return [ir.Store(loc, dst, [k], element, _label(dst, "dst"))]
    _member_loop(fc, group, 1, total, body, loc)


def _wait(fc, args, kwargs, loc):
    if len(args) != 1 or kwargs:
        fc.fail(loc, "cg.wait(group) takes the group that copied")
    group = _group_arg(fc, args[0], "cg.wait", loc, _GROUPS)
    fc.hoist(ir.ExprStmt(loc, wait_group.node(T.VOID, loc, [ir.Const(T.INT32, loc, 0)])))
    return group._sync(fc, [], loc)


def _wait_prior(fc, args, kwargs, loc):
    if len(args) != 2 or kwargs:
        fc.fail(loc, "cg.wait_prior(group, n) takes the group and the number of copies that "
                "may stay in flight")
    group = _group_arg(fc, args[0], "cg.wait_prior", loc, _GROUPS)
    n = fc.constant_int(args[1], "the stage count of cg.wait_prior", loc)
    if n < 0:
        fc.fail(loc, "cg.wait_prior(group, n) needs n >= 0")
    # cp.async.wait_group n: all but the n most recent copies (more than 7: 7, still correct)
    fc.hoist(ir.ExprStmt(loc, wait_group.node(T.VOID, loc, [ir.Const(T.INT32, loc, n)])))
    return group._sync(fc, [], loc)


memcpy_async = Intrinsic(
    "cg.memcpy_async", "cg.memcpy_async(group, dst, src, count), (group, dst, dst_count, "
    "src, src_count) or (group, dst, src): the group starts copying min(dst_count, src_count) "
    "elements of 1-d arrays (count elements; dst.shape[0] and src.shape[0] in the short form) "
    "and returns that count (int64); read dst after cg.wait(group). GPU: cp.async (sm_80+) "
    "from global to shared memory, 16 bytes at a time where aligned.", _memcpy_async,
    python_name="cg.memcpy_async", lowered_as=(ir.ForRange, ir.Load, ir.Store, ir.If))
wait = Intrinsic("cg.wait", "cg.wait(group): the group's copies are complete and visible to "
                 "every member (cp.async.wait_group 0, then a sync of the group).", _wait,
                 statement=True,
                 python_name="cg.wait", lowered_as=(ir.Barrier, ir.WarpOp))
wait_prior = Intrinsic("cg.wait_prior", "cg.wait_prior(group, n): CUDA's wait_prior<n>: "
                       "every copy but the n most recent is complete and visible to every "
                       "member (cp.async.wait_group n, then a sync of the group).",
                       _wait_prior, statement=True, python_name="cg.wait_prior",
                       lowered_as=(ir.Barrier, ir.WarpOp))
