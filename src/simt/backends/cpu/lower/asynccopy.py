"""simt.memcpy_async and the pipeline's commit and wait (lang/pipeline.py) on the CPU device:
the copy is a loop of loads and stores, complete at once, so nothing is ever in flight."""
from ....compiler.asynccopy import element_loop, operands
from ....lang.pipeline import commit, memcpy_async, wait
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cpu")


@lowering(memcpy_async, target=TARGET)
def _copy_cpu(em, e):
    element_loop(em, e, *operands(em, e))


@lowering(commit, wait, target=TARGET)
def _nothing_in_flight(em, e):
    return None
