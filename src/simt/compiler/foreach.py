"""``for v in array`` in kernels: Python's (and NumPy's, and numba's) iteration over the
first axis. The array is evaluated once; each trip binds ``v`` to ``array[i]`` (an
element of a 1-d array, a view of the others), for i from 0 to ``array.shape[0]``, as
``for i in range(array.shape[0]): v = array[i]`` would."""
import ast

from ..ir import nodes as ir
from ..ir import types as T


def build(fc, node, iterable):
    """The IR of ``for <name> in <array>: body`` (``iterable``: the array, not yet an
    expression)."""
    loc = fc.loc(node)
    array = fc.expr(iterable, node.iter)
    if not isinstance(array.type, T.Array):
        fc.fail(node.iter, f"kernels can loop over range(...) and over arrays, not over a "
                f"{array.type}", "write for i in range(n): ... and index with i")
    if array.type.ndim == 0:
        fc.fail(node.iter, "iteration over a 0-d array", "read its element with a[()]")
    out = []
    if not isinstance(array, (ir.Var, ir.Param, ir.ArrayRef)):     # evaluated once
        name = fc.temp("each")
        out += fc.bind_name(name, array, node)
        array = fc.name_expr(name, node)
    index = fc.temp("i")
    fc.assign_type(index, T.INT64, node)
    stop = ir.ArrayAttr(T.INT64, loc, array, "shape", 0)
    fc.loop_depth += 1
    element = fc.subscript(array, fc.name_expr(index, node), loc, ast.unparse(node.iter))
    body = fc.bind_name(node.target.id, element, node) + fc.block(node.body)
    fc.loop_depth -= 1
    return out + [ir.ForRange(loc, index, ir.Const(T.INT64, loc, 0), stop,
                              ir.Const(T.INT64, loc, 1), body)]
