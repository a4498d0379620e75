"""The CUDA target's lowerings of registry entries (lang/): the ones every LLVM target shares
(compiler/intrinsics.py) and, one module per family, the GPU's own (PTX instructions, NVVM
intrinsics, libdevice). Imported by compile.py before a compile; docs/architecture.md says
how to add one."""
from ....lang import python
from ....lang.registry import declare_target, refuse

TARGET = declare_target("cuda")

from ....compiler import intrinsics  # noqa: E402,F401  (the shared lowerings)
from . import (asm, asynccopy, cachehints, cluster, extern, float8, graphs,  # noqa: E402,F401
               lanemasks, math, mbarrier, mma, printf, timers, tma, warpspec, wgmma, wmma)

refuse(python.breakpoint_, target=TARGET,
       why="breakpoint() stops in pdb only on the sim device: run the kernel under "
           "simt.use_device('sim')")
