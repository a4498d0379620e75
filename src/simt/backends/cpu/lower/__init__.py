"""The CPU target's lowerings of registry entries (lang/): the ones every LLVM target shares
(compiler/intrinsics.py) and, one module per family, the CPU device's own. Imported by
compile.py before a compile; docs/architecture.md says how to add one."""
from ....lang import linking, python
from ....lang.registry import declare_target, refuse

TARGET = declare_target("cpu")

from ....compiler import intrinsics  # noqa: E402,F401  (the shared lowerings)
from . import (asm, asynccopy, cachehints, cluster, graphs, math, mbarrier, mma,  # noqa: E402,F401
               printf, timers, tma, warpspec, wgmma, wmma)

refuse(linking.EXTERN, target=TARGET, why=linking.NO_FALLBACK)
refuse(python.breakpoint_, target=TARGET,
       why="breakpoint() stops in pdb only on the sim device: run the kernel under "
           "simt.use_device('sim')")
