"""Time functions (guide B.13) and __nanosleep (B.21): entries and typing.

Lowerings (backends/*/lower/timers.py): on the GPU they read PTX special registers and sleep with ``nanosleep.u32``;
on the CPU the counters are the host's cycle counter (rdtsc on x86) and
CLOCK_MONOTONIC, and the sleep is libc's nanosleep.
"""
from ..ir import types as T
from .registry import Intrinsic


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
