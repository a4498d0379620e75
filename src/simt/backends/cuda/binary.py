"""What a CUDA compile makes (compile.py), in a module of its own: loading a kernel from
the disk cache unpickles it, which should not load the compiler and llvmlite."""
from dataclasses import dataclass

from ...compiler.binary import Binary

PTX_FEATURES = "+ptx80"      # PTX ISA 8.0: sm_90 needs 7.8; drivers of CUDA 12.0+ read it


def target_id(arch):
    """What the disk cache keys a GPU compile by. llvmlite's version names the LLVM it was
    built with, so asking LLVM (loading llvmlite's library) is not needed to look up a
    kernel."""
    import llvmlite
    return f"cuda {arch} {PTX_FEATURES} llvmlite {llvmlite.__version__}"


@dataclass
class CudaBinary(Binary):
    """A kernel compiled for NVIDIA GPUs: PTX text plus its launch metadata.
    ``symbols``: [(Python name, module global, 'array' | 'pointer')]."""
    ptx: str
    arch: str
    uses_dynamic_shared: bool
    can_fail: bool = False
    grid_sync: bool = False       # calls cg.this_grid().sync(): needs a cooperative launch
    recursive: bool = False       # has recursive device functions: not launched (kernels.py)
    lineinfo: bool = False        # has line tables: the driver's JIT keeps them (module.py)
    device_launches: bool = False  # launches kernels: linked with libcudadevrt (link.py)
    linked: bytes = None          # the cubin of the PTX linked with device code (linker.py)
    link_files: tuple = ()        # the names of the files linked in
    cluster_dims: tuple = None    # (x, y, z) fixed by the PTX (.reqnctapercluster), or None

    @property
    def param_kinds(self):
        from . import params           # llvmlite's IR types: not needed to load a binary
        return [k for t in self.params for k in params.kinds(t)]
