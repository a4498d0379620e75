"""Warp specialisation and programmatic dependent launch (lang/warpspec.py) on the CPU
device. ``setmaxnreg`` and ``griddepcontrol`` do nothing (launches run in order). A
kernel whose named barriers only part of the block meets (a count other than the block's
threads, a branch only some warps take, ``barrier_arrive``) runs its warps as fibers
(independent.py), where named barriers count arrivals as on a GPU. Any other kernel runs
its block in thread loops, where a named barrier is a barrier of the whole block
(``ir.Barrier``); checked mode keeps every kernel there, so a count other than the
block's threads is refused (when the block reaches it) and ``barrier_arrive`` too.
``elect_one`` is a warp operation (warp.py)."""
import math

from llvmlite import ir as ll

from ....compiler.kernel_options import require_entry_registers
from ....compiler.lltypes import I64
from ....errors import NotSupportedError
from ....fault import ASSERT
from ....ir import nodes as ir
from ....lang.registry import declare_target, lowering
from .. import independent
from ....lang.warpspec import (barrier_arrive, barrier_count,
                               griddepcontrol_launch_dependents, griddepcontrol_wait,
                               setmaxnreg)

TARGET = declare_target("cpu")
WHY = ("checked mode runs a block's threads in loops from one barrier to the next, so one "
       "warp cannot wait at a named barrier for another there; without checks=True the "
       "kernel's warps run as fibers and it runs, and the sim device checks it")


@lowering(barrier_arrive, target=TARGET)
def _barrier_arrive_cpu(em, e):
    """One thread arrives at the named barrier (a kernel run as warps: always, outside
    checked mode)."""
    if getattr(em, "fibers", None) is None:
        raise NotSupportedError(
            f"simt.barrier_arrive is not supported on the cpu device in checked mode: {WHY} "
            f"({e.loc.filename}:{e.loc.line})")
    independent.arrive_named(em, em.expr(e.args[0]), em.expr(e.args[1]))


@lowering(setmaxnreg, target=TARGET)
def _setmaxnreg_cpu(em, e):
    """No registers to move; the options are checked as on a GPU, where they matter."""
    require_entry_registers(em.options, e.loc, "simt.setmaxnreg")


@lowering(griddepcontrol_wait, griddepcontrol_launch_dependents, target=TARGET)
def _griddepcontrol_cpu(em, e):
    """The CPU device runs a stream's launches one after another: nothing to wait for."""
    return None


def named_barrier_refused(stmt):
    """A named barrier under control flow that only some threads of the block take (its
    warps would meet there from different lines, as a GPU allows): the thread loops cannot
    run that, so the NotSupportedError, at compile time."""
    raise NotSupportedError(
        f"simt.barrier_sync in a branch or loop that only some threads of the block take "
        f"is not supported on the cpu device in checked mode: {WHY} "
        f"({stmt.loc.filename}:{stmt.loc.line})")


def _refusal(count, threads=None):
    block = f"in a block of {threads} threads" if threads else \
        "with a count other than the block's threads"
    return (f"simt.barrier_sync(id, {count}) {block} is not supported on the cpu device in "
            f"checked mode: {WHY}")


@lowering(barrier_count, target=TARGET)
def _barrier_count_cpu(em, e):
    if getattr(em, "fibers", None) is not None:
        return None             # counted as on a GPU (independent.barrier)
    count = e.args[0]
    if em.options.block is not None and isinstance(count, ir.Const):
        threads = math.prod(em.options.block)
        if count.value != threads:
            raise NotSupportedError(f"{_refusal(count.value, threads)} "
                                    f"({e.loc.filename}:{e.loc.line})")
        return None
    # a kernel made for any block shape (checked mode, declared signatures): the block
    # checks when it gets there
    b = em.builder
    same = b.icmp_unsigned("==", b.sext(em.expr(count), I64), em.nthreads)
    ok, bad = em.new_block("named_barrier_ok"), em.new_block("named_barrier_refused")
    b.cbranch(same, ok, bad)
    b.position_at_end(bad)
    em.target.emit_error(em, ASSERT, e.loc, message=_refusal("count"))
    em.builder.position_at_end(ok)
    return None
