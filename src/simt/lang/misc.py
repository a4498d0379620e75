"""Timers, sleep, read-only loads."""
from ..ir import nodes as ir
from ..ir import types as T
from .registry import Intrinsic


def _clock64(fc, args, kwargs, loc):
    return ir.Intrinsic(T.INT64, loc, "clock64", [])


def _nanosleep(fc, args, kwargs, loc):
    ns = fc.cast(fc.expr(fc.one_arg(args, "nanosleep", loc), loc), T.UINT32, loc)
    return ir.Intrinsic(T.VOID, loc, "nanosleep", [ns])


def _ldg(fc, args, kwargs, loc):
    array, idx = (fc.expr(a, loc) for a in args)
    return fc.subscript(array, idx, loc, fc.label_of(args[0]))


clock64 = Intrinsic("clock64", "clock64(): a per-multiprocessor cycle counter (int64); on the "
                    "CPU, nanoseconds of a monotonic clock.", _clock64)
nanosleep = Intrinsic("nanosleep", "__nanosleep(ns): suspend the thread for about ns "
                      "nanoseconds.", _nanosleep)
ldg = Intrinsic("ldg", "__ldg(ary, idx): a load through the read-only data cache.", _ldg)
