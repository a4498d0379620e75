"""Device-side ``memcpy`` and ``memset`` (guide B.30's companions): ``simt.memcpy(dst, src,
n)`` and ``simt.memset(dst, value, n)`` in kernels, on device arrays, heap arrays
(simt.malloc), shared and local arrays.

``n`` counts elements of ``dst``'s dtype, as ``cg.memcpy_async`` and ``simt.memcpy_async``
count them, and ``value`` is an element value, as the host's ``simt.memset(array, value)``
takes one: CUDA's byte-wise ``memset(p, 0, bytes)`` is ``simt.memset(p, 0, n)``. The calling
thread does the whole copy with its own loads and stores (what CUDA's device memcpy does
too), built here as a loop of the IR's loads and stores: every device runs it with its
usual checks (an ``n`` past either array's end is an IllegalAddressError on the cpu and sim
devices, and checked mode follows each element), and no target needs a lowering of its own.
"""
from ..ir import nodes as ir
from ..ir import types as T
from .registry import Intrinsic


def _array(fc, value, call, what, loc):
    a = fc.expr(value, loc)
    if not isinstance(a.type, T.Array) or a.type.ndim != 1:
        got = f"a {a.type.ndim}-d array" if isinstance(a.type, T.Array) else f"a {a.type}"
        fc.fail(loc, f"the {what} of {call} must be a 1-d array, got {got}",
                "pass a flat view: a.reshape(n) or a row a[r] (on the host: a.ravel())")
    return a


def _count(fc, value, call, loc):
    n = fc.expr(value, loc)
    if not isinstance(n.type, T.Scalar) or n.type.kind not in "iub":
        fc.fail(loc, f"the element count n of {call} must be an integer, got {n.type}",
                "n counts elements of the destination's dtype, not bytes")
    return fc.cast(n, T.INT64, loc)


def _label(array, default):
    return getattr(array, "label", "") or getattr(getattr(array, "decl", None), "name", "") \
        or default


def _loop(fc, count, body_of, loc):
    """``for k in range(count): body_of(k)`` with ``count`` evaluated once."""
    n = fc.temp("memn")
    fc.hoist(*fc.bind_name(n, count, loc))
    k = fc.temp("memk")
    fc.assign_type(k, T.INT64, loc)
    return ir.ForRange(loc, k, ir.Const(T.INT64, loc, 0), ir.Var(T.INT64, loc, n),
                       ir.Const(T.INT64, loc, 1), body_of(ir.Var(T.INT64, loc, k)))


def _writable(fc, dst, call, loc):
    if dst.type.space == "const":
        fc.fail(loc, f"{call} cannot write constant memory", "write a global, shared or "
                "local array")


def _memcpy(fc, args, kwargs, loc):
    if kwargs or len(args) != 3:
        fc.fail(loc, "simt.memcpy(dst, src, n) takes 3 positional arguments: the destination "
                "and source arrays and the number of elements to copy")
    dst = _array(fc, args[0], "simt.memcpy", "destination", loc)
    src = _array(fc, args[1], "simt.memcpy", "source", loc)
    _writable(fc, dst, "simt.memcpy", loc)
    if dst.type.dtype != src.type.dtype:
        fc.fail(loc, f"simt.memcpy copies elements of one type: the destination holds "
                f"{dst.type.dtype}, the source {src.type.dtype}",
                "copy between arrays of one dtype, or convert element by element in a loop")
    count = _count(fc, args[2], "simt.memcpy", loc)
    return _loop(fc, count, lambda k: [ir.Store(
        loc, dst, [k], ir.Load(src.type.element, loc, src, [k], _label(src, "src")),
        _label(dst, "dst"))], loc)


def _memset(fc, args, kwargs, loc):
    if kwargs or len(args) != 3:
        fc.fail(loc, "simt.memset(dst, value, n) takes 3 positional arguments in a kernel: "
                "the array, the element value and the number of elements to set")
    dst = _array(fc, args[0], "simt.memset", "destination", loc)
    _writable(fc, dst, "simt.memset", loc)
    if not isinstance(dst.type.element, T.Scalar):
        fc.fail(loc, f"simt.memset sets elements of a scalar dtype, the array holds "
                f"{dst.type.element}", "set the fields in a loop of your own")
    value = fc.cast(fc.expr(args[1], loc), dst.type.element, loc)
    slot = fc.temp("memv")
    fc.hoist(*fc.bind_name(slot, value, loc))
    count = _count(fc, args[2], "simt.memset", loc)
    return _loop(fc, count, lambda k: [ir.Store(
        loc, dst, [k], ir.Var(dst.type.element, loc, slot), _label(dst, "dst"))], loc)


memcpy = Intrinsic(
    "memcpy", "simt.memcpy(dst, src, n): memcpy in a kernel: the calling thread copies "
    "elements 0 .. n-1 of the 1-d array src to dst (n counts elements, not bytes; one dtype "
    "on both sides). Overlapping arrays are undefined, as in CUDA. On device, heap "
    "(simt.malloc), shared and local arrays.", _memcpy, statement=True,
    lowered_as=(ir.ForRange, ir.Load, ir.Store))
memset = Intrinsic(
    "memset", "simt.memset(dst, value, n): memset in a kernel: the calling thread sets "
    "elements 0 .. n-1 of the 1-d array dst to value (converted to dst's dtype; n counts "
    "elements, as the host's simt.memset sets elements, so CUDA's memset(p, 0, bytes) is "
    "simt.memset(p, 0, n)). On device, heap (simt.malloc), shared and local arrays.",
    _memset, statement=True, lowered_as=(ir.ForRange, ir.Store))
