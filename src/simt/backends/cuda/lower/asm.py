"""simt.asm (lang/inline_asm.py) on the GPU: an LLVM ``InlineAsm`` call of the inputs
(the fallback call, if any, is for the other devices and is not evaluated here). As
clang does for CUDA, the call is ``convergent``: LLVM must not move it into or out of
code that only some lanes run, since PTX in it may be a warp-wide instruction."""
from llvmlite import ir as ll

from ....compiler.lltypes import I64, ptr, value_type
from ....ir import types as T
from ....lang.inline_asm import asm
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cuda")


@lowering(asm, target=TARGET)
def _asm_cuda(em, e):
    inputs = e.args[:-1] if e.attrs["fallback"] else e.args
    values = [_operand(em, a) for a in inputs]
    ret = value_type(e.type, em.target)
    fnty = ll.FunctionType(ret, [v.type for v in values])
    side_effect = e.attrs["volatile"] or e.attrs["outputs"] == 0
    code = ll.InlineAsm(fnty, e.attrs["template"], e.attrs["constraints"],
                        side_effect=side_effect)
    result = em.builder.call(code, values, attrs=("convergent",))
    return None if e.attrs["outputs"] == 0 else result


def _operand(em, arg):
    """An input's value; an array's is the generic address of its first element (i64)."""
    value = em.expr(arg)
    if not isinstance(arg.type, T.Array):
        return value
    data = value.data
    if data.type.addrspace != 0:
        data = em.builder.addrspacecast(data, ptr())
    return em.builder.ptrtoint(data, I64)
