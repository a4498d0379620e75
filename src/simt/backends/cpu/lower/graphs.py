"""Graph calls in kernels (lang/graphs.py) on the CPU device. A conditional handle is the
address of its condition, a 32-bit cell the graph's replay reads (graphs.py), so setting
it is a store. A device graph launch hands the exec's id to ``simt_cpu_graph_launch``
(devlaunch.py), which queues it behind the launching grid as a launch from a kernel is."""
from llvmlite import ir as ll

import simt.fault as fault
from ....compiler.lltypes import I32, I64, function, i32, ptr
from ....lang.graphs import graph_launch, graph_set_condition
from ....lang.registry import declare_target, lowering
from .. import devlaunch

TARGET = declare_target("cpu")


@lowering(graph_set_condition, target=TARGET)
def _set_condition_cpu(em, e):
    handle, value = (em.expr(a) for a in e.args)
    b = em.builder
    # a plain store: the replay reads the cell after the grid has finished
    b.store(value, b.inttoptr(handle, ll.PointerType(I32)), align=4)


@lowering(graph_launch, target=TARGET)
def _graph_launch_cpu(em, e):
    b = em.builder
    em.target.launches_kernels = True          # the launching grid gets a launch queue
    launch = function(em.module, devlaunch.GRAPH_LAUNCH, ll.FunctionType(I32, [ptr(), I64]))
    code = b.call(launch, [em.err_ptr, em.expr(e.args[0])])
    failed, done = em.new_block("graph_launch_failed"), em.new_block("graph_launch_done")
    b.cbranch(b.icmp_unsigned("!=", code, i32(0)), failed, done)
    b.position_at_end(failed)
    em.target.emit_error(em, fault.DEVICE_LAUNCH, e.loc,
                         array=em.target.label_id(fault.GRAPH_LABEL), index=b.sext(code, I64))
    em.builder.position_at_end(done)
