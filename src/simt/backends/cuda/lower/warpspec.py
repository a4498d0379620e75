"""Warp specialisation and programmatic dependent launch (lang/warpspec.py) on the GPU:
``setmaxnreg`` (sm_90a: arch-specific), ``bar.arrive`` (named barriers' ``bar.sync`` is an
``ir.Barrier``: target.py), ``griddepcontrol`` (sm_90). ``elect_one`` is a warp operation
(warp.py)."""
from llvmlite import ir as ll

from ....compiler.kernel_options import require_entry_registers
from ....compiler.lltypes import I32, function
from ....lang.registry import declare_target, lowering
from ....lang.warpspec import (barrier_arrive, barrier_count, griddepcontrol_launch_dependents,
                               griddepcontrol_wait, setmaxnreg)
from ..archspecific import arch_specific

TARGET = declare_target("cuda")
arch_specific(setmaxnreg, major=9)


def _instruction(em, text, clobbers=""):
    """One PTX instruction with no operands, kept where it is (and convergent)."""
    code = ll.InlineAsm(ll.FunctionType(ll.VoidType(), []), text, clobbers, side_effect=True)
    em.builder.call(code, [], attrs=("convergent",))


@lowering(setmaxnreg, target=TARGET)
def _setmaxnreg_cuda(em, e):
    require_entry_registers(em.options, e.loc, "simt.setmaxnreg")
    _instruction(em, f"setmaxnreg.{e.attrs['action']}.sync.aligned.u32 {e.attrs['n']};")


@lowering(barrier_arrive, target=TARGET)
def _barrier_arrive_cuda(em, e):
    fn = function(em.module, "llvm.nvvm.barrier.cta.arrive.aligned.count",
                  ll.FunctionType(ll.VoidType(), [I32, I32]))
    em.builder.call(fn, [em.expr(a) for a in e.args])


@lowering(barrier_count, target=TARGET)
def _barrier_count_cuda(em, e):
    """A GPU has barriers of part of a block: nothing to check."""
    return None


@lowering(griddepcontrol_wait, target=TARGET)
def _wait_cuda(em, e):
    # a memory clobber: no load of what the grids before wrote may move above it
    _instruction(em, "griddepcontrol.wait;", "~{memory}")


@lowering(griddepcontrol_launch_dependents, target=TARGET)
def _launch_dependents_cuda(em, e):
    _instruction(em, "griddepcontrol.launch_dependents;", "~{memory}")
