"""numba's index rule for kernels made by ``cuda.jit``: a negative integer index counts
from the end of its dimension (``a[-1]`` is the last element), as in NumPy and numba-cuda,
for element reads and writes, partial indexing, atomics and cache-hinted loads. Kernels
made by ``simt.kernel`` keep CUDA C's rule (API.md section 2): no wrapping, a negative
index is out of bounds. The rule is the front end's ``wraparound`` flag, which the kernel
passes from its options (part of the cache key) to every device function it calls.

Indices that cannot be negative (unsigned, non-negative constants) are left as they are;
any other gets ``i + shape[d] if i < 0 else i``, its value computed once."""
from ..ir import nodes as ir
from ..ir import types as T


def indices(fc, array, items, loc):
    """``items`` (int64 index expressions, one per leading dimension of ``array``) with
    negative values wrapped when ``fc.wraparound`` is set; as they are otherwise."""
    if not getattr(fc, "wraparound", False) or not isinstance(array.type, T.Array):
        return items
    return [_wrapped(fc, array, item, dim, loc) for dim, item in enumerate(items)]


def one(fc, array, item, dim, loc):
    """The int64 index ``item`` into dimension ``dim`` of ``array``, by the kernel's rule."""
    if not getattr(fc, "wraparound", False):
        return item
    return _wrapped(fc, array, item, dim, loc)


def _never_negative(index):
    if isinstance(index, ir.Const):
        return index.value >= 0
    return isinstance(index, ir.Cast) and isinstance(index.value.type, T.Scalar) and \
        index.value.type.kind in "ub"


def _wrapped(fc, array, index, dim, loc):
    if _never_negative(index):
        return index
    extent = ir.ArrayAttr(T.INT64, loc, array, "shape", dim)
    if isinstance(index, ir.Const):
        return ir.BinOp(T.INT64, loc, "add", index, extent)
    if not isinstance(index, (ir.Var, ir.Param)):          # evaluated once
        name = fc.temp("wrap")
        fc.hoist(*fc.bind_name(name, index, loc))
        index = ir.Var(T.INT64, loc, name)
    negative = ir.Compare(T.BOOL, loc, "lt", index, ir.Const(T.INT64, loc, 0))
    return ir.IfExp(T.INT64, loc, negative, ir.BinOp(T.INT64, loc, "add", index, extent),
                    index)
