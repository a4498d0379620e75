"""Calls of external device code (simt.declare_device, lang/linking.py) on the GPU: a call
of the external symbol, which the kernel's link resolves (linker.py, compile.py). Scalars go
by value in their PTX types; a pointer parameter gets an array's data pointer, made generic
(C++ pointers are generic addresses)."""
from llvmlite import ir as ll

from ...compiler.lltypes import ArrayValue, function, ptr, scalar
from ...errors import CompileError
from ...ir import types as T


def call_extern(em, extern, args):
    """Declare ``extern.name`` in the module (once) and call it; the target keeps the
    function, whose files the compile links."""
    known = em.target.externs.setdefault(extern.name, extern)
    if known is not extern and known.signature != extern.signature:
        raise CompileError(f"the external device function {extern.name} is declared twice "
                           f"with different signatures: {known.signature!r} and "
                           f"{extern.signature!r}", construct="simt.declare_device")
    result = ll.VoidType() if extern.result is None else scalar(extern.result_type)
    params = [ptr() if p.pointer else scalar(T.Scalar(p.dtype)) for p in extern.params]
    fn = function(em.module, extern.name, ll.FunctionType(result, params))
    b = em.builder
    values = []
    for value, param in zip(args, extern.params):
        if param.pointer:
            value = value.data if isinstance(value, ArrayValue) else value
            if value.type.addrspace != 0:
                value = b.addrspacecast(value, ptr())
        values.append(value)
    call = b.call(fn, values)
    return None if extern.result is None else call
