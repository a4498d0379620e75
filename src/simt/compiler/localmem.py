"""Per-thread local memory of a kernel: its local arrays and those of every device
function it calls. CUDA allows 512 KB a thread; simt holds kernels to that on every
device (on the CPU device the arrays live on the stack of the thread running the blocks,
and every thread that runs blocks has room for that much)."""
from ..ir.walk import all_functions
from ..lang.memory import LOCAL_MEMORY_LIMIT, local_bytes
from .errors import fail


def check_local_memory(fn):
    """Raise CompileError if a typed kernel's local arrays exceed CUDA's limit."""
    arrays = [(f.name, d) for f in all_functions(fn) for d in f.decls if d.space == "local"]
    total = sum(local_bytes(d) for _, d in arrays)
    if total > LOCAL_MEMORY_LIMIT:
        listed = ", ".join(f"{d.name} in '{name}': {local_bytes(d)} bytes"
                           for name, d in arrays)
        fail(None, fn.loc, f"kernel '{fn.name}' needs {total} bytes of local memory per "
             f"thread ({listed}); CUDA allows {LOCAL_MEMORY_LIMIT // 1024} KB",
             "use global arrays (one slice per thread) or shared memory for the large ones")
