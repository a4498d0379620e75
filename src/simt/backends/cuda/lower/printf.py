"""simt.printf (lang/printf.py) on the GPU: the values, laid out as a struct with C's
alignment, to the CUDA runtime's ``vprintf(fmt, args)``."""
from llvmlite import ir as ll

from ....lang.printf import arguments, count_of, function, printf
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cuda")


@lowering(printf, target=TARGET)
def _printf_cuda(em, e):
    """vprintf(fmt, args): the arguments in a struct laid out as C's varargs buffer."""
    b = em.builder
    args = arguments(em, e)
    generic = ll.PointerType()
    if args:
        struct = ll.LiteralStructType([a.type for a in args])
        buf = em.alloca(struct, name="printf_args")
        zero = ll.Constant(ll.IntType(32), 0)
        for i, a in enumerate(args):
            b.store(a, b.gep(buf, [zero, ll.Constant(ll.IntType(32), i)], source_etype=struct))
    else:
        buf = ll.Constant(generic, None)
    vprintf = function(em.module, "vprintf", ll.FunctionType(ll.IntType(32), [generic] * 2))
    b.call(vprintf, [em.target.string_constant(em, e.attrs["format"]), buf])
    return count_of(e)
