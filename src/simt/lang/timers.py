"""Time functions (guide B.13) and __nanosleep (B.21): entries, typing and lowerings.

On the GPU they read PTX special registers and sleep with ``nanosleep.u32``;
on the CPU the counters are the host's cycle counter (rdtsc on x86) and
CLOCK_MONOTONIC, and the sleep is libc's nanosleep.
"""
from ..ir import types as T
from .registry import Intrinsic, lazy_module

ll = lazy_module("llvmlite.ir")           # loaded at the first compile, not by `import simt`
_CLOCK_MONOTONIC = 1                      # Linux's id


def _no_args(name, result):
    def build(fc, args, kwargs, loc):
        if args or kwargs:
            fc.fail(loc, f"simt.{name}() takes no arguments")
        return _ENTRIES[name].node(result, loc, [])
    return build


def _nanosleep_build(fc, args, kwargs, loc):
    if kwargs:
        fc.fail(loc, "simt.nanosleep(ns) takes one positional argument")
    ns = fc.expr(fc.one_arg(args, "simt.nanosleep", loc), loc)
    if not isinstance(ns.type, T.Scalar) or ns.type.kind not in "iub":
        fc.fail(loc, f"simt.nanosleep(ns) needs an integer number of nanoseconds, got {ns.type}")
    return nanosleep.node(T.VOID, loc, [fc.cast(ns, T.UINT32, loc)])


clock = Intrinsic("clock", "simt.clock(): clock(), the low 32 bits of a per-multiprocessor cycle "
                  "counter (uint32, wraps; subtract two readings in uint32). On the CPU, the "
                  "host's cycle counter.", _no_args("clock", T.UINT32))
clock64 = Intrinsic("clock64", "simt.clock64(): clock64(), a per-multiprocessor cycle counter "
                    "(int64). On the CPU, the host's cycle counter.",
                    _no_args("clock64", T.INT64))
globaltimer = Intrinsic("globaltimer", "simt.globaltimer(): %globaltimer, a nanosecond timer "
                        "shared by the device (uint64; its resolution is a microsecond or so "
                        "on many GPUs). On the CPU, CLOCK_MONOTONIC in nanoseconds.",
                        _no_args("globaltimer", T.UINT64))
nanosleep = Intrinsic("nanosleep", "simt.nanosleep(ns): __nanosleep, suspend the thread for "
                      "about ns nanoseconds (uint32; the GPU sleeps between 0 and 2*ns, at most "
                      "a millisecond). Needs compute capability 7.0.", _nanosleep_build)
_ENTRIES = {"clock": clock, "clock64": clock64, "globaltimer": globaltimer}


def _i32():
    return ll.IntType(32)


def _i64():
    return ll.IntType(64)


def _timespec():
    return ll.LiteralStructType([_i64(), _i64()])


def _function(module, name, fnty):
    return module.globals.get(name) or ll.Function(module, fnty, name)


def _sreg(em, name, lltype):
    """A PTX special register, read with a volatile mov (never hoisted or merged)."""
    asm = ll.InlineAsm(ll.FunctionType(lltype, []), f"mov.u{lltype.width} $0, %{name};",
                       "=r" if lltype.width == 32 else "=l", side_effect=True)
    return em.builder.call(asm, [])


@clock.lowering("cuda")
def _clock_cuda(em, e):
    return _sreg(em, "clock", _i32())


@clock64.lowering("cuda")
def _clock64_cuda(em, e):
    return _sreg(em, "clock64", _i64())


@globaltimer.lowering("cuda")
def _globaltimer_cuda(em, e):
    return _sreg(em, "globaltimer", _i64())


@nanosleep.lowering("cuda")
def _nanosleep_cuda(em, e):
    asm = ll.InlineAsm(ll.FunctionType(ll.VoidType(), [_i32()]), "nanosleep.u32 $0;", "r",
                       side_effect=True)
    em.builder.call(asm, [em.expr(e.args[0])])


def _cycles(em):
    fn = em.module.declare_intrinsic("llvm.readcyclecounter", fnty=ll.FunctionType(_i64(), []))
    return em.builder.call(fn, [])


@clock.lowering("cpu")
def _clock_cpu(em, e):
    return em.builder.trunc(_cycles(em), _i32())


@clock64.lowering("cpu")
def _clock64_cpu(em, e):
    return _cycles(em)


@globaltimer.lowering("cpu")
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


@nanosleep.lowering("cpu")
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
