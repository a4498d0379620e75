"""The CPU device's guard on recursion: ``set_limit('stack_size')`` and a fault, not a
crash, when a recursive device function goes past it.

Only device functions on a cycle of calls pay (compiler/recursion.py): each takes one
more parameter, the stack floor, the address its frames may not go below. A call from
outside the cycle computes it (its own frame's address less the limit), calls inside
pass it on, and each entry of a recursive function compares its frame's address with it
and records STACK_OVERFLOW (simt/fault.py) past it; the caller then ends the thread, as
after any failed call. Kernels and device functions that recurse nowhere are built as
before. The limit counts the host stack bytes of the recursion (its frames are larger
than a GPU's), read at run time from ``simt_cpu_stack_limit``, so setting it compiles
nothing again.
"""
import ctypes

import llvmlite.binding as llvm
from llvmlite import ir as ll

from ...compiler.lltypes import I32, I64, i32, ptr
import simt.fault as fault

SYMBOL = "simt_cpu_stack_limit"
DEFAULT = 256 << 10      # 256 KiB: a few thousand frames of a small recursive function
# the stacks kernels run on: a warp's fiber has 2 MiB (fibers.py), simt's threads 64 MiB,
# the launching thread its own (8 MiB under Linux's usual ulimit); the recursion's frames
# come on top of what the kernel's own frames and local arrays use
MAXIMUM = 1 << 20

_limit = ctypes.c_int64(DEFAULT)
llvm.add_symbol(SYMBOL, ctypes.addressof(_limit))


def set_limit(nbytes):
    if nbytes > MAXIMUM:
        from ...errors import CudaError
        raise CudaError(f"set_limit('stack_size', {nbytes}) on the 'cpu' device: at most "
                        f"{MAXIMUM} bytes (the host stacks its threads and warps run on "
                        "hold the kernel too); make the recursion shallower, or run it on "
                        "a CUDA GPU device")
    _limit.value = nbytes


def get_limit():
    return _limit.value


def _frame_address(em):
    module, b = em.module, em.builder
    fn = module.globals.get("llvm.frameaddress.p0")
    if fn is None:
        fn = ll.Function(module, ll.FunctionType(ptr(), [I32]), "llvm.frameaddress.p0")
    return b.ptrtoint(b.call(fn, [i32(0)]), I64)


def _limit_value(em):
    module = em.module
    limit = module.globals.get(SYMBOL)
    if limit is None:
        limit = ll.GlobalVariable(module, I64, SYMBOL)
        limit.linkage = "external"
    return em.builder.load(limit, typ=I64)


def floor(em):
    """The stack floor for a call into a cycle of recursive functions from ``em``'s
    function: the floor it was given when it is on a cycle too, else its frame's
    address less the limit."""
    given = getattr(em, "stack_floor", None)
    if given is not None:
        return given
    return em.builder.sub(_frame_address(em), _limit_value(em))


def guard(em, loc):
    """At the entry of a recursive function: fail past the floor."""
    b = em.builder
    over = b.icmp_unsigned("<", _frame_address(em), em.stack_floor)
    bad, ok = em.new_block("stack_overflow"), em.new_block("stack_ok")
    b.cbranch(over, bad, ok)
    b.position_at_end(bad)
    em.target.emit_error(em, fault.STACK_OVERFLOW, loc, extent=_limit_value(em))
    b.position_at_end(ok)
