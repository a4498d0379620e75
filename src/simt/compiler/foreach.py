"""``for v in array`` in kernels, and ``enumerate`` and ``zip`` over arrays: Python's (and
NumPy's, and numba's) iteration over the first axis. Each array is evaluated once; the
loop runs an int64 index i from 0 to the length (``zip``: the shortest), and each trip
binds the targets to ``array[i]`` (an element of a 1-d array, a row view of the others),
``i + start`` for ``enumerate``, and tuples of these, unpacked into tuple targets
(``for i, (x, y) in enumerate(zip(a, b))``)."""
import ast

from ..ir import nodes as ir
from ..ir import types as T
from ..lang.registry import Static


def is_iterator_call(fc, node):
    """Whether ``for`` iterates ``enumerate(...)`` or ``zip(...)``."""
    if not isinstance(node, ast.Call):
        return False
    func = fc.any(node.func)
    return isinstance(func, Static) and func.value in (enumerate, zip)


def build(fc, node):
    """The IR of ``for <targets> in <array | enumerate(...) | zip(...)>: body``."""
    loc = fc.loc(node)
    out = []
    length, element = _plan(fc, node.iter, out)
    index = fc.temp("i")
    fc.assign_type(index, T.INT64, node)
    fc.loop_depth += 1
    body = _bind(fc, node.target, element(fc.name_expr(index, node)), node) + \
        fc.block(node.body)
    fc.loop_depth -= 1
    return out + [ir.ForRange(loc, index, ir.Const(T.INT64, loc, 0), length,
                              ir.Const(T.INT64, loc, 1), body)]


def _plan(fc, it, out):
    """(the trip count, a function from the index to the element: an ir.Expr or a tuple
    of elements) of iterable ``it``; statements evaluating it once go to ``out``."""
    loc = fc.loc(it)
    if is_iterator_call(fc, it):
        func = fc.any(it.func).value
        if func is enumerate:
            return _enumerate(fc, it, out)
        if it.keywords or not it.args:
            fc.fail(it, "zip(...) in a kernel takes one or more arrays, no keywords")
        plans = [_plan(fc, arg, out) for arg in it.args]
        length = plans[0][0]
        for other, _ in plans[1:]:
            length = ir.BinOp(T.INT64, loc, "min", length, other)
        return length, lambda i: tuple(element(i) for _, element in plans)
    array = _once(fc, fc.expr(fc.any(it), it), it, out)
    if not isinstance(array.type, T.Array):
        fc.fail(it, f"kernels can loop over range(...) and over arrays, not over a "
                f"{array.type}", "write for i in range(n): ... and index with i")
    if array.type.ndim == 0:
        fc.fail(it, "iteration over a 0-d array", "read its element with a[()]")
    label = ast.unparse(it)
    return (ir.ArrayAttr(T.INT64, loc, array, "shape", 0),
            lambda i: fc.subscript(array, i, loc, label))


def _enumerate(fc, it, out):
    loc = fc.loc(it)
    starts = it.args[1:] + [k.value for k in it.keywords if k.arg == "start"]
    if not 1 <= len(it.args) + len(it.keywords) <= 2 or len(starts) > 1 or \
            any(k.arg != "start" for k in it.keywords):
        fc.fail(it, "enumerate(...) in a kernel takes an array and an optional start")
    start = ir.Const(T.INT64, loc, 0)
    if starts:
        start = _once(fc, fc.index(fc.expr(fc.any(starts[0]), starts[0]), loc), it, out)
    length, element = _plan(fc, it.args[0], out)
    return length, lambda i: (ir.BinOp(T.INT64, loc, "add", i, start), element(i))


def _once(fc, value, node, out):
    """``value``, bound to a temporary first unless reading it again is free."""
    if isinstance(value, (ir.Var, ir.Param, ir.ArrayRef, ir.Const)):
        return value
    name = fc.temp("each")
    out += fc.bind_name(name, value, node)
    return fc.name_expr(name, node)


def _bind(fc, target, element, node):
    """Statements binding ``target`` (a name, or a tuple of targets) to ``element``."""
    if isinstance(target, (ast.Tuple, ast.List)):
        if not isinstance(element, tuple) or len(element) != len(target.elts):
            fc.fail(target, f"cannot unpack this loop's items into {len(target.elts)} names")
        return [stmt for t, e in zip(target.elts, element) for stmt in _bind(fc, t, e, node)]
    if not isinstance(target, ast.Name):
        fc.fail(target, "the loop variable must be a name or a tuple of names")
    return fc.bind_name(target.id, _tuple(fc, element, node), node)


def _tuple(fc, element, node):
    """An element as one value: a tuple of elements as an ir.TupleExpr."""
    if not isinstance(element, tuple):
        return element
    items = [_tuple(fc, e, node) for e in element]
    return ir.TupleExpr(T.Tuple([e.type for e in items]), fc.loc(node), items)
