"""Graph calls in kernels (lang/graphs.py) on the GPU: calls into the CUDA device runtime
as nvcc -rdc=true compiles them,

    cudaGraphSetConditional(handle, value)                    // void (u64, u32)
    err = cudaGraphLaunch(exec, cudaStreamGraphFireAndForget) // cudaError_t (u64, u64)

both defined in libcudadevrt.a, which compile.py links the kernel with when its module
declares either (SETS_CONDITION, LAUNCHES_GRAPH). A nonzero cudaError of a graph launch
fails the launch through the fault record, naming the line (simt/fault.py)."""
from llvmlite import ir as ll

import simt.fault as fault
from ....compiler.lltypes import I32, I64, function, i32
from ....lang.graphs import GRAPH_LABEL, graph_launch, graph_set_condition
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cuda")
SETS_CONDITION, LAUNCHES_GRAPH = "cudaGraphSetConditional", "cudaGraphLaunch"
# cuda_device_runtime_api.h's cudaStreamGraphFireAndForget
FIRE_AND_FORGET = 0x0200000000000000


@lowering(graph_set_condition, target=TARGET)
def _set_condition_cuda(em, e):
    handle, value = (em.expr(a) for a in e.args)
    setter = function(em.module, SETS_CONDITION, ll.FunctionType(ll.VoidType(), [I64, I32]))
    em.builder.call(setter, [handle, value])


@lowering(graph_launch, target=TARGET)
def _graph_launch_cuda(em, e):
    exe = em.expr(e.args[0])
    launch = function(em.module, LAUNCHES_GRAPH, ll.FunctionType(I32, [I64, I64]))
    code = em.builder.call(launch, [exe, ll.Constant(I64, FIRE_AND_FORGET)])
    fail_unless_zero(em, e, code)


def fail_unless_zero(em, e, code):
    """Go on where the cudaError ``code`` is 0; else fail the launch naming the line."""
    b = em.builder
    good, bad = em.new_block("graph_launch_ok"), em.new_block("graph_launch_failed")
    b.cbranch(b.icmp_unsigned("==", code, i32(0)), good, bad)
    b.position_at_end(bad)
    em.target.emit_error(em, fault.DEVICE_LAUNCH, e.loc,
                         array=em.target.label_id(GRAPH_LABEL), index=b.sext(code, I64))
    em.builder.position_at_end(good)
