"""Warp specialisation and programmatic dependent launch (lang/warpspec.py) on the CPU
device. A block's warps run in thread loops there, in lock step: ``setmaxnreg`` and
``griddepcontrol`` do nothing (launches run in order), a named barrier is a barrier of
the whole block (``ir.Barrier``), so its count must be the block's threads (checked
here: when the kernel is made for one block shape, at compile time; else when the block
reaches it), and ``barrier_arrive`` is refused. ``elect_one`` is a warp operation
(warp.py)."""
import math

from llvmlite import ir as ll

from ....compiler.kernel_options import require_entry_registers
from ....compiler.lltypes import I64
from ....errors import NotSupportedError
from ....fault import ASSERT
from ....ir import nodes as ir
from ....lang.registry import declare_target, lowering, refuse
from ....lang.warpspec import (warps_reason, barrier_arrive, barrier_count,
                               griddepcontrol_launch_dependents, griddepcontrol_wait,
                               setmaxnreg)

TARGET = declare_target("cpu")
WHY = warps_reason("cpu", "it runs a block's threads in loops from one barrier to the next")
refuse(barrier_arrive, target=TARGET,
       why=WHY + "; a named barrier runs there only as barrier_sync(id) or "
       "barrier_sync(id, count) with count the block's threads, which are syncthreads")


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
        f"is not supported on the cpu device: {WHY}; a named barrier runs there only where "
        f"the whole block reaches the same line, as syncthreads "
        f"({stmt.loc.filename}:{stmt.loc.line})")


def _refusal(count, threads=None):
    block = f"in a block of {threads} threads" if threads else \
        "with a count other than the block's threads"
    return (f"simt.barrier_sync(id, {count}) {block} is not supported on the cpu device: "
            f"{WHY}; it runs a named barrier only over the whole block: barrier_sync(id) or "
            f"barrier_sync(id, {threads or 'its thread count'})")


@lowering(barrier_count, target=TARGET)
def _barrier_count_cpu(em, e):
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
