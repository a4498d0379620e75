"""What kernels do to graphs (guide 3.2.6.6, CUDA 12.3+): set the condition of a
conditional node (``simt.graph_set_condition``) and launch an instantiated graph from the
device (``simt.graph_launch``).

Both take a handle made on the host and passed as a kernel argument: a conditional handle
(``g.conditional_handle()``) or a GraphExec instantiated with ``device_launch=True``; their
kernel type is ``T.GraphHandle`` (a uint64 underneath). On the GPU they are calls into the
CUDA device runtime (cudaGraphSetConditional, cudaGraphLaunch: backends/cuda/lower/graphs.py,
the kernel then linked with libcudadevrt). On the CPU device the conditional handle is the
address of the condition's cell, which the graph's replay reads (backends/hostgraphs.py),
and a device graph launch is queued to run after the launching grid, as a launch from a
kernel is. The sim device has no graphs.
"""
from ..fault import GRAPH_LABEL  # noqa: F401  (for the lowerings)
from ..ir import types as T
from .registry import Intrinsic

CONDITIONAL = T.GraphHandle("conditional")
EXEC = T.GraphHandle("exec")


def _handle(fc, value, want, loc, name, hint):
    v = fc.expr(value, loc)
    if v.type != want:
        fc.fail(loc, f"simt.{name}: the first argument must be {hint}, got {v.type}",
                "pass the handle as a kernel argument, as the host made it")
    return v


def _set_condition_build(fc, args, kwargs, loc):
    if kwargs or len(args) != 2:
        fc.fail(loc, "simt.graph_set_condition(handle, value) takes a conditional handle "
                "and the value")
    handle = _handle(fc, args[0], CONDITIONAL, loc, "graph_set_condition",
                     "a graph's conditional handle (g.conditional_handle())")
    value = fc.expr(args[1], loc)
    if not isinstance(value.type, T.Scalar) or value.type.kind not in "biu":
        fc.fail(loc, f"simt.graph_set_condition: the value must be an integer or a bool, got "
                f"{value.type}", "a condition is an unsigned 32-bit value: 0 is false")
    return graph_set_condition.node(T.VOID, loc, [handle, fc.cast(value, T.UINT32, loc)])


def _launch_build(fc, args, kwargs, loc):
    if kwargs or len(args) != 1:
        fc.fail(loc, "simt.graph_launch(exe) takes one argument: a GraphExec instantiated "
                "with device_launch=True")
    exe = _handle(fc, args[0], EXEC, loc, "graph_launch",
                  "a GraphExec instantiated with device_launch=True")
    return graph_launch.node(T.VOID, loc, [exe])


graph_set_condition = Intrinsic(
    "graph_set_condition", "simt.graph_set_condition(handle, value): cudaGraphSetConditional: "
    "set the condition of the conditional nodes using ``handle`` (a kernel argument made by "
    "g.conditional_handle()) to ``value`` (an unsigned 32-bit int: 0 is false; a switch "
    "runs body ``value``). Call it from one thread: concurrent calls race, as on a GPU. "
    "The kernel must run as a node of the graph that made the handle (or of one of its "
    "bodies). GPU: a call into the CUDA device runtime (libcudadevrt). CPU: a store to "
    "the condition the graph's replay reads.", _set_condition_build, statement=True)
graph_launch = Intrinsic(
    "graph_launch", "simt.graph_launch(exe): cudaGraphLaunch from the device, "
    "fire-and-forget (cudaStreamGraphFireAndForget): start the GraphExec ``exe`` (a kernel "
    "argument, instantiated with device_launch=True) alongside the rest of the launching "
    "graph, which completes only after it; so the host sees its results after "
    "synchronizing, and the launching graph must not read what it writes. The launching "
    "kernel must be a kernel node of a graph. Each thread that runs the line launches it. "
    "A launch the device runtime refuses fails the launch with a LaunchError naming the "
    "line. GPU: links libcudadevrt. CPU: the graph runs after the launching grid, before "
    "the next node of the launching graph.", _launch_build, statement=True)
