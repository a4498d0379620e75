"""What a CPU compile makes (compile.py), in a module of its own: loading a kernel from
the disk cache unpickles it, which should not load the compiler."""
from dataclasses import dataclass

from ...compiler.binary import Binary


@dataclass
class CpuBinary(Binary):
    """A kernel compiled for the CPU: object code plus its launch metadata."""
    object_code: bytes
    slot_bytes: int               # per thread, for kernels with barriers
    checked: bool = False         # compiled for checked mode (checked.py, shadow.py)
    read_only: tuple = ()         # checked mode: the parameters the kernel only reads
    owned: tuple = ()             # checked mode: (parameter, its accesses' spec) (ir/disjoint.py)
    private: tuple = ()           # checked mode: (spec, shape) of shared access groups (same)
    uses_heap: bool = False       # calls simt.malloc (checked mode checks the heap)
    launches_kernels: bool = False  # has launches inside (devlaunch.py)
    children: tuple = ()          # the CpuBinary of each other kernel they reach (family.py)
    barriers: bool = False        # has __syncthreads (its threads run as loops between them)
    block: "tuple | None" = None  # the block shape it was made for (CompileOptions.block)
    warps: bool = False           # runs its warps as fibers (independent.py, fibers.py)
