"""The time functions and __nanosleep (lang/timers.py) on the CPU: the host's cycle counter
(rdtsc on x86), CLOCK_MONOTONIC and libc's nanosleep."""
from llvmlite import ir as ll

from ....lang.registry import declare_target, lowering
from ....lang.timers import clock, clock64, globaltimer, nanosleep

TARGET = declare_target("cpu")

_CLOCK_MONOTONIC = 1                      # Linux's id


def _i32():
    return ll.IntType(32)


def _i64():
    return ll.IntType(64)


def _timespec():
    return ll.LiteralStructType([_i64(), _i64()])


def _function(module, name, fnty):
    return module.globals.get(name) or ll.Function(module, fnty, name)


def _cycles(em):
    fn = em.module.declare_intrinsic("llvm.readcyclecounter", fnty=ll.FunctionType(_i64(), []))
    return em.builder.call(fn, [])


@lowering(clock, target=TARGET)
def _clock_cpu(em, e):
    return em.builder.trunc(_cycles(em), _i32())


@lowering(clock64, target=TARGET)
def _clock64_cpu(em, e):
    return _cycles(em)


@lowering(globaltimer, target=TARGET)
def _globaltimer_cpu(em, e):
    b = em.builder
    spec = em.alloca(_timespec(), name="timespec")
    gettime = _function(em.module, "clock_gettime",
                        ll.FunctionType(_i32(), [_i32(), spec.type]))
    b.call(gettime, [ll.Constant(_i32(), _CLOCK_MONOTONIC), spec])
    zero = ll.Constant(_i32(), 0)
    sec, nsec = (b.load(b.gep(spec, [zero, ll.Constant(_i32(), i)], source_etype=_timespec()),
                        typ=_i64()) for i in (0, 1))
    return b.add(b.mul(sec, ll.Constant(_i64(), 1_000_000_000)), nsec)


@lowering(nanosleep, target=TARGET)
def _nanosleep_cpu(em, e):
    b = em.builder
    ns = b.zext(em.expr(e.args[0]), _i64())
    billion = ll.Constant(_i64(), 1_000_000_000)
    spec = em.alloca(_timespec(), name="sleep")
    zero = ll.Constant(_i32(), 0)
    for i, part in enumerate((b.udiv(ns, billion), b.urem(ns, billion))):
        b.store(part, b.gep(spec, [zero, ll.Constant(_i32(), i)], source_etype=_timespec()))
    sleep = _function(em.module, "nanosleep",
                      ll.FunctionType(_i32(), [spec.type, spec.type]))
    b.call(sleep, [spec, ll.Constant(spec.type, None)])
