"""The device heap (guide B.30) and ``__trap()``: ``simt.malloc``, ``simt.free``,
``simt.trap``: entries and typing. Their lowerings are shared code over two
target hooks (compiler/intrinsics.py: ``heap_malloc``, ``heap_free``,
``emit_trap``): the CUDA runtime's device ``malloc``/``free`` on the GPU, a heap
of ``malloc_heap_size`` bytes in the CPU device (backends/cpu/heap.py).
"""
from ..ir import types as T
from .registry import Intrinsic


def _malloc_build(fc, args, kwargs, loc):
    if kwargs or len(args) != 2:
        fc.fail(loc, "simt.malloc(n, dtype) takes 2 arguments: a number of elements and a dtype")
    count = fc.expr(args[0], loc)
    if not isinstance(count.type, T.Scalar) or count.type.kind not in "iu":
        fc.fail(loc, f"simt.malloc(n, dtype) needs an integer number of elements, got "
                f"{count.type}")
    dtype = fc.static_dtype(args[1], loc)
    return malloc.node(T.Array(dtype, 1, "C", "global"), loc, [fc.index(count, loc)])


def _free_build(fc, args, kwargs, loc):
    if kwargs:
        fc.fail(loc, "simt.free(p) takes one positional argument")
    array = fc.expr(fc.one_arg(args, "simt.free", loc), loc)
    if not isinstance(array.type, T.Array) or array.type.space != "global":
        fc.fail(loc, f"simt.free(p) frees an array simt.malloc returned, got {array.type}")
    return free.node(T.VOID, loc, [array])


def _trap_build(fc, args, kwargs, loc):
    if args or kwargs:
        fc.fail(loc, "simt.trap() takes no arguments")
    return trap.node(T.VOID, loc, [])


malloc = Intrinsic("malloc", "simt.malloc(n, dtype): malloc in a kernel (guide B.30): a new "
                   "1-d array of n elements of dtype (uninitialized, 16-byte aligned) from the "
                   "device heap; it stays allocated until simt.free (the heap outlives "
                   "launches: what a kernel does not free is lost to it). When the heap "
                   "has no room the array is empty: test p.size == 0 (CUDA's NULL). The heap "
                   "holds simt.get_limit('malloc_heap_size') bytes (8 MiB by default; "
                   "simt.set_limit before the first kernel that calls malloc).", _malloc_build)
free = Intrinsic("free", "simt.free(p): free in a kernel: return an array simt.malloc made "
                 "to the device heap; an empty one is ignored. On the CPU, freeing anything else is a LaunchError; on the GPU it "
                 "is undefined, as in CUDA.", _free_build)
trap = Intrinsic("trap", "simt.trap(): __trap(), stop the kernel with an error. The CPU "
                 "device raises LaunchError naming the kernel, line, block and thread, and "
                 "stays usable; on a GPU the launch fails and, as in CUDA, the context is "
                 "unusable afterwards.", _trap_build)
