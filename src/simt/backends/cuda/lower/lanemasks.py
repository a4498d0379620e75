"""The lane masks (lang/warp.py's lanemask_lt ... lanemask_gt) on the GPU: PTX's
%lanemask_* special registers, read through their NVVM intrinsics, instead of the shared
lowering that computes them from %laneid."""
from llvmlite import ir as ll

from ....compiler.lltypes import I32, function
from ....lang.registry import declare_target, lowering
from ....lang.warp import LANEMASKS

TARGET = declare_target("cuda")


def _read(em, kind):
    name = f"llvm.nvvm.read.ptx.sreg.lanemask.{kind}"
    return em.builder.call(function(em.module, name, ll.FunctionType(I32, [])), [])


for _kind, _entry in LANEMASKS.items():
    lowering(_entry, target=TARGET)(lambda em, e, kind=_kind: _read(em, kind))
