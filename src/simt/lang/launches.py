"""Dynamic parallelism (guide appendix D): ``child[grid, block](args)`` inside a kernel.

The typing rule types the child for its arguments as the host would (a kernel launched
from a kernel is a kernel like any other) and leaves the child named by its kernel object
and argument types in the node's attrs; compiler/family.py then builds the typed IR of
every kernel a compile can reach this way and numbers them (``attrs['index']``: 0 is the
kernel being compiled, i is ``fn.launches[i - 1]``). The lowerings are the targets'
``device_launch`` hooks: the device runtime's parameter buffer and launch on the GPU, a
queue the CPU and sim devices run at the parent's end.

The fourth item in the brackets names one of the device runtime's named streams
(``child[grid, block, shared, simt.stream_tail_launch](args)``): ``attrs['stream']`` is
its ``cudaStream_t`` value, 0 for the block's own stream.
"""
from ..ir import nodes as ir
from ..ir import types as T
from ..devstreams import DeviceStream
from .registry import Intrinsic, Static

_DOC = ("child[grid, block](args), child[grid, block, shared_bytes](args) or "
        "child[grid, block, shared_bytes, stream](args) inside a kernel: launches the "
        "@simt.kernel child from every thread that runs the line (dynamic parallelism, guide "
        "appendix D). grid and block are ints or tuples of up to three ints, computed at run "
        "time if need be; the child is compiled for the argument types as a host launch would "
        "be, with the options of the kernel the host launched (a child that declares others "
        "is refused). Children of a block run in the order its threads launch them, each "
        "after the one before has finished with all its own children; every child has "
        "finished before the parent's grid counts as finished, so the host sees their "
        "results after synchronizing. The parent cannot wait for a child (CUDA 12 removed "
        "cudaDeviceSynchronize in kernels), so it must not read what its children write. "
        "stream: None or 0 (the block's stream), simt.stream_fire_and_forget (the child is "
        "ordered with nothing else the parent launches) or simt.stream_tail_launch (the "
        "child starts after the parent's grid and everything else it launched have "
        "finished; tail launches run in the order they were made). Arguments: scalars, "
        "tuples and global-memory arrays (never shared or local memory). A launch the "
        "device runtime refuses (a bad configuration, more than "
        "simt.get_limit('dev_runtime_pending_launch_count') launches unfinished) fails the "
        "whole launch with a LaunchError naming the line. GPU: links the CUDA toolkit's "
        "libcudadevrt.a. CPU and sim: each child grid runs after its parent's grid, in "
        "launch order, tail launches last.")



def build(fc, kernel, config, args, loc):
    """The node of ``kernel[config](*args)`` met in kernel code: ``config`` the values in
    the brackets, ``args`` the arguments' values (built, not yet made expressions)."""
    grid, block, shared, stream = _config(fc, kernel, config, loc)
    values = [fc.expr(a, loc) for a in args]
    names = _param_names(kernel)
    if names is not None and len(names) != len(values):
        fc.fail(loc, f"kernel '{kernel.__name__}' takes {len(names)} arguments "
                f"({', '.join(names)}), this launch passes {len(values)}")
    for i, v in enumerate(values):
        _check_argument(fc, kernel, i, v, loc)
    types = tuple(v.type for v in values)
    attrs = {"kernel": kernel, "types": types, "index": None, "name": kernel.__name__,
             "stream": stream}
    return device_launch.node(T.VOID, loc, grid + block + [shared] + values, attrs)


def _param_names(kernel):
    code = getattr(getattr(kernel, "pyfunc", None), "__code__", None)
    return None if code is None else list(code.co_varnames[:code.co_argcount])


def _config(fc, kernel, items, loc):
    name = kernel.__name__
    if len(items) not in (2, 3, 4):
        fc.fail(loc, f"a launch inside a kernel is {name}[grid, block], "
                f"{name}[grid, block, shared_bytes] or {name}[grid, block, shared_bytes, "
                f"stream], got {len(items)} items in the brackets")
    grid = _dims(fc, items[0], "grid", loc)
    block = _dims(fc, items[1], "block", loc)
    shared = ir.Const(T.UINT32, loc, 0)
    if len(items) >= 3:
        shared = fc.expr(items[2], loc)
        if not _is_int(shared.type):
            fc.fail(loc, "the shared memory size of a launch is an integer number of bytes")
        shared = fc.cast(shared, T.UINT32, loc)
    stream = _stream(fc, name, items[3], loc) if len(items) == 4 else 0
    return grid, block, shared, stream


def _stream(fc, name, item, loc):
    """The cudaStream_t value of a launch's stream item: 0 (the block's stream) for None
    or 0, as CUDA's ``<<<grid, block, shared, 0>>>``."""
    value = item.value if isinstance(item, Static) else item
    if value is None or (type(value) is int and value == 0):
        return 0
    if isinstance(value, DeviceStream):
        return value.value
    got = repr(value) if isinstance(item, Static) else f"a run-time {item.type}"
    fc.fail(loc, f"the stream of a launch of '{name}' inside a kernel is "
            "simt.stream_fire_and_forget, simt.stream_tail_launch, or None or 0 (the block's "
            f"own stream), not {got}: device-side streams of one's own "
            "(cudaStreamCreateWithFlags in kernels) are not offered, and a simt.Stream "
            "belongs to the host",
            f"write {name}[grid, block, shared_bytes, simt.stream_tail_launch](...) or "
            "leave the stream out")


def _dims(fc, value, what, loc):
    """Three uint32 expressions of a grid or block: an int or a tuple of one to three."""
    if isinstance(value, Static) and isinstance(value.value, tuple):
        parts = [fc.expr(Static(v), loc) for v in value.value]
    else:
        value = fc.expr(value, loc)
        if isinstance(value.type, T.Tuple):
            parts = [ir.TupleGet(t, loc, value, i) for i, t in enumerate(value.type.items)]
        else:
            parts = [value]
    if not 1 <= len(parts) <= 3 or not all(_is_int(p.type) for p in parts):
        fc.fail(loc, f"the {what} of a launch inside a kernel is an int or a tuple of one to "
                f"three ints, got {', '.join(str(p.type) for p in parts)}")
    parts = [fc.cast(p, T.UINT32, loc) for p in parts]
    return parts + [ir.Const(T.UINT32, loc, 1)] * (3 - len(parts))


def _is_int(t):
    return isinstance(t, T.Scalar) and t.kind in "iub"


def _check_argument(fc, kernel, i, value, loc):
    t = value.type
    if isinstance(t, T.Tuple):
        for item in t.items:
            if isinstance(item, T.Array):
                fc.fail(loc, f"argument {i} of the launch of '{kernel.__name__}' is a tuple "
                        "holding arrays, which a launch inside a kernel does not pass yet",
                        "pass the arrays as arguments of their own")
            _check_type(fc, kernel, i, item, loc)
        return
    _check_type(fc, kernel, i, t, loc)


def _check_type(fc, kernel, i, t, loc):
    if isinstance(t, T.Array):
        if t.space != "global":
            fc.fail(loc, f"argument {i} of the launch of '{kernel.__name__}' is an array in "
                    f"{t.space} memory: a child kernel can reach only global memory (guide "
                    "D.2.2.1: the parent's shared and local memory are its own)",
                    "copy what the child needs into a global array (simt.malloc or an "
                    "argument of the parent) and pass that")
        return
    if isinstance(t, T.Scalar) and t.kind in "biufc":
        return
    fc.fail(loc, f"argument {i} of the launch of '{kernel.__name__}' has type {t}, which a "
            "launch inside a kernel does not pass yet (scalars, tuples of scalars and "
            "global arrays)", "pass its parts as scalars or arrays")


device_launch = Intrinsic("device_launch", _DOC, build, statement=True,
                          python_name="child[grid, block](args)")
