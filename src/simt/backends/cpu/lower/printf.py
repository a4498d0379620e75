"""simt.printf (lang/printf.py) on the CPU: the C library's ``snprintf`` formats the line and
one write hands it to Python's ``sys.stdout`` (backends/hostjit.py), so each call's output
stays whole."""
from llvmlite import ir as ll

from ....lang.printf import arguments, count_of, function, printf
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cpu")

CPU_LINE = 512                             # snprintf's first try; longer lines malloc


@lowering(printf, target=TARGET)
def _printf_cpu(em, e):
    """snprintf into a stack buffer (a malloc'd one for a longer line), then one write."""
    b = em.builder
    i64, generic = ll.IntType(64), ll.PointerType()
    args = arguments(em, e)
    fmt = em.target.string_constant(em, e.attrs["format"])
    snprintf = function(em.module, "snprintf", ll.FunctionType(
        ll.IntType(32), [generic, i64, generic], var_arg=True))
    write = function(em.module, "simt_cpu_write", ll.FunctionType(ll.VoidType(),
                                                                   [generic, i64]))
    line = em.alloca(ll.ArrayType(ll.IntType(8), CPU_LINE), name="printf_line")
    n = b.sext(b.call(snprintf, [line, ll.Constant(i64, CPU_LINE), fmt] + args), i64)
    short, long_, done = (em.new_block(n) for n in ("printf_short", "printf_long",
                                                     "printf_done"))
    b.cbranch(b.icmp_signed("<", n, ll.Constant(i64, CPU_LINE)), short, long_)
    b.position_at_end(short)
    b.call(write, [line, b.select(b.icmp_signed("<", n, ll.Constant(i64, 0)),
                                  ll.Constant(i64, 0), n)])
    b.branch(done)
    b.position_at_end(long_)
    size = b.add(n, ll.Constant(i64, 1))
    big = b.call(function(em.module, "malloc", ll.FunctionType(generic, [i64])), [size])
    b.call(snprintf, [big, size, fmt] + args)
    b.call(write, [big, n])
    b.call(function(em.module, "free", ll.FunctionType(ll.VoidType(), [generic])), [big])
    b.branch(done)
    b.position_at_end(done)
    return count_of(e)
