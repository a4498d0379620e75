"""The time functions and __nanosleep (lang/timers.py) on the GPU: PTX special registers
(%clock, %clock64, %globaltimer) and ``nanosleep.u32``."""
from llvmlite import ir as ll

from ....lang.registry import declare_target, lowering
from ....lang.timers import clock, clock64, globaltimer, nanosleep

TARGET = declare_target("cuda")


def _i32():
    return ll.IntType(32)


def _i64():
    return ll.IntType(64)


def _sreg(em, name, lltype):
    """A PTX special register, read with a volatile mov (never hoisted or merged)."""
    asm = ll.InlineAsm(ll.FunctionType(lltype, []), f"mov.u{lltype.width} $0, %{name};",
                       "=r" if lltype.width == 32 else "=l", side_effect=True)
    return em.builder.call(asm, [])


@lowering(clock, target=TARGET)
def _clock_cuda(em, e):
    return _sreg(em, "clock", _i32())


@lowering(clock64, target=TARGET)
def _clock64_cuda(em, e):
    return _sreg(em, "clock64", _i64())


@lowering(globaltimer, target=TARGET)
def _globaltimer_cuda(em, e):
    return _sreg(em, "globaltimer", _i64())


@lowering(nanosleep, target=TARGET)
def _nanosleep_cuda(em, e):
    asm = ll.InlineAsm(ll.FunctionType(ll.VoidType(), [_i32()]), "nanosleep.u32 $0;", "r",
                       side_effect=True)
    em.builder.call(asm, [em.expr(e.args[0])])
