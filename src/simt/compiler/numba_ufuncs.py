"""NumPy ufuncs called on arrays in ``cuda.jit`` kernels, as numba compiles them:
``np.sin(x, out)`` in a kernel is a loop over the elements, run by each thread that calls
it (numba-cuda's documentation example). One-dimensional arrays of one length, the output
array passed; scalar arguments are used for every element. simt.kernel code keeps
refusing arrays to math functions."""
import numpy as np

from ..ir import nodes as ir
from ..ir import types as T


def call(fc, callee, python_object, args, node, statement):
    """The loop for ufunc ``python_object`` (registry entry ``callee``) applied to built
    ``args``, or None where numba's rule does not apply."""
    if not (fc.wraparound and isinstance(python_object, np.ufunc)):
        return None
    values = [fc.expr(a, node) for a in args]
    if not any(isinstance(v.type, T.Array) for v in values):
        return None
    loc = fc.loc(node)
    if len(values) != python_object.nin + 1 or not isinstance(values[-1].type, T.Array):
        fc.fail(node, f"np.{python_object.__name__} on arrays in a kernel takes its output "
                "array as the last argument", f"write np.{python_object.__name__}(x, out)")
    if not statement:
        fc.fail(node, f"np.{python_object.__name__}(..., out) on arrays is a statement here",
                "write it on a line of its own and read out")
    if any(isinstance(v.type, T.Array) and v.type.ndim != 1 for v in values):
        fc.fail(node, "ufuncs on arrays in kernels take 1-d arrays",
                "loop over the rows yourself")
    index = fc.temp("u")
    fc.assign_type(index, T.INT64, node)
    i = fc.name_expr(index, node)
    label = f"np.{python_object.__name__}"
    *inputs, out = values
    items = [fc.subscript(v, i, loc, label) if isinstance(v.type, T.Array) else v
             for v in inputs]
    body = [fc.store(out, i, callee.build(fc, items, {}, loc), node, label)]
    return ir.ForRange(loc, index, ir.Const(T.INT64, loc, 0),
                       ir.ArrayAttr(T.INT64, loc, out, "shape", 0), ir.Const(T.INT64, loc, 1),
                       body)
