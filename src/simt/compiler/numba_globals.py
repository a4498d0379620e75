"""numba's rule for a NumPy array a ``cuda.jit`` kernel reads from a global or closure
name: its contents are frozen into the kernel as a constant array when the kernel is
first compiled (later changes to the host array are not seen), as numba-cuda documents.
simt.kernel code refuses such reads (calls.static_to_expr) and asks for
``simt.const.array_like`` or a ``simt.Constant``, which this builds the same way."""
import numpy as np

from ..ir import nodes as ir
from ..ir import types as T


def constant(fc, static, loc):
    """The constant array that NumPy array ``static.value`` is frozen into (one per array
    a function reads), or None where numba's rule does not apply (simt.kernel code, or an
    element type kernels cannot hold: the caller then refuses it)."""
    value = static.value
    if not fc.wraparound or value.dtype not in T.SCALAR_DTYPES or value.ndim == 0:
        return None
    key = ("numba constant", id(value))
    decl = fc.symbol_decls.get(key)
    if decl is None:
        host = np.ascontiguousarray(value).copy()
        decl = ir.MemoryDecl(static.name or "constant", "const", host.shape, host.dtype,
                             data=host)
        fc.symbol_decls[key] = decl
        fc.decls.append(decl)
    return ir.ArrayRef(decl.type, loc, decl)
