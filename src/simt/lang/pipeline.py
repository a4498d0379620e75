"""Asynchronous copies through a thread-scope pipeline (guide B.24, cuda::pipeline).

``pipe = simt.pipeline()`` is a compile-time object whose state is two hidden int32
variables of the thread: stages committed and stages released. ``simt.memcpy_async(dst, di,
src, si, count, pipe)`` starts a copy; ``pipe.producer_commit()`` closes a stage (PTX
``cp.async.commit_group``); ``pipe.consumer_wait()`` waits for the oldest stage not yet
released (``cp.async.wait_group`` with the number of younger stages, at most 7 left in
flight); ``pipe.consumer_release()`` frees it; ``pipe.producer_acquire()`` has nothing to
wait for (a thread-scope pipeline has no stage limit). The GPU copies global to shared memory
with ``cp.async.ca.shared.global`` (16, 8 or 4 bytes at a time when both addresses allow it,
else by plain loads and stores); the CPU device copies at once. Each thread waits for its own
copies only: the block reads them after ``syncthreads()``, as in CUDA. A barrier in place of
the pipeline ties the copy to its current phase (``cp.async.mbarrier.arrive`` after the
copies: the phase completes when they have landed). docs/async-copies.md.
"""
from ..ir import nodes as ir
from ..ir import types as T
from .barrier import ArriveWaitBarrier
from .groups import Group
from .registry import Intrinsic, Static

MAX_IN_FLIGHT = 7     # cp.async.wait_group N takes N as an immediate: 0..7 here


class Pipeline(Group):
    """A thread-scope pipeline: the names of its two counters."""

    methods = ("producer_acquire", "producer_commit", "consumer_wait", "consumer_release")

    def __init__(self, committed, released):
        self.committed, self.released = committed, released

    def signature(self):
        return ("Pipeline", self.committed, self.released)

    def _count(self, name, loc):
        return ir.Var(T.INT32, loc, name)

    def _bump(self, fc, name, loc):
        one = ir.Const(T.INT32, loc, 1)
        fc.hoist(*fc.bind_name(name, ir.BinOp(T.INT32, loc, "add", self._count(name, loc), one),
                               loc))

    def _producer_acquire(self, fc, args, loc):
        _none(fc, args, "producer_acquire", loc)
        return ir.Const(T.INT32, loc, 0)

    def _producer_commit(self, fc, args, loc):
        _none(fc, args, "producer_commit", loc)
        self._bump(fc, self.committed, loc)
        return commit.node(T.VOID, loc, [])

    def _consumer_wait(self, fc, args, loc):
        _none(fc, args, "consumer_wait", loc)
        pending = ir.BinOp(T.INT32, loc, "sub", self._count(self.committed, loc),
                           self._count(self.released, loc))
        younger = ir.BinOp(T.INT32, loc, "sub", pending, ir.Const(T.INT32, loc, 1))
        return wait.node(T.VOID, loc, [younger])

    def _consumer_release(self, fc, args, loc):
        _none(fc, args, "consumer_release", loc)
        self._bump(fc, self.released, loc)
        return ir.Const(T.INT32, loc, 0)


def _none(fc, args, name, loc):
    if args:
        fc.fail(loc, f"pipeline.{name}() takes no arguments")


def _pipeline_build(fc, args, kwargs, loc):
    if args or kwargs:
        fc.fail(loc, "simt.pipeline() takes no arguments (its scope is the thread)")
    pipe = Pipeline(fc.temp("pipe_committed"), fc.temp("pipe_released"))
    for name in (pipe.committed, pipe.released):
        fc.hoist(*fc.bind_name(name, ir.Const(T.INT32, loc, 0), loc))
    return Static(pipe, "pipeline")


def _array(fc, value, what, loc):
    a = fc.expr(value, loc)
    t = a.type
    if not isinstance(t, T.Array) or (t.layout != "C" and t.ndim != 1):
        fc.fail(loc, f"the {what} of simt.memcpy_async must be a C-contiguous array, got {t}")
    return a


def _memcpy_build(fc, args, kwargs, loc):
    names = ("dst", "dst_index", "src", "src_index", "count", "pipe")
    if kwargs or len(args) != len(names):
        fc.fail(loc, f"simt.memcpy_async({', '.join(names)}) takes {len(names)} positional "
                "arguments")
    dst, src = _array(fc, args[0], "destination", loc), _array(fc, args[2], "source", loc)
    pipe = args[5].value if isinstance(args[5], Static) else None
    if not isinstance(pipe, (Pipeline, ArriveWaitBarrier)):
        fc.fail(loc, "the last argument of simt.memcpy_async must be a simt.pipeline() or a "
                "simt.shared.barrier(count)")
    if isinstance(pipe, ArriveWaitBarrier) and pipe.completion is not None:
        fc.fail(loc, "simt.memcpy_async with a barrier that has a completion function is not "
                "offered yet: its completion would run before the copy lands",
                "use a barrier without one, or a simt.pipeline()")
    if dst.type.dtype != src.type.dtype:
        fc.fail(loc, f"simt.memcpy_async copies elements of one type: the destination holds "
                f"{dst.type.dtype}, the source {src.type.dtype}")
    if dst.type.space == "const":
        fc.fail(loc, "simt.memcpy_async cannot write constant memory")
    index = [fc.index(fc.expr(args[i], loc), loc) for i in (1, 3, 4)]
    attrs = {"dst": fc.label_of(args[0]), "src": fc.label_of(args[2])}
    count = args[4].value if isinstance(args[4], Static) else None
    if count is not None:
        attrs["count"] = int(count)
    operands = [dst, index[0], src, index[1], index[2]]
    if isinstance(pipe, ArriveWaitBarrier):            # the copy completes with its phase
        operands.append(pipe.storage)
    return memcpy_async.node(T.VOID, loc, operands, attrs)


pipeline = Intrinsic(
    "pipeline", "simt.pipeline(): a thread-scope cuda::pipeline for asynchronous copies, with "
    "producer_acquire(), producer_commit(), consumer_wait() and consumer_release().",
    _pipeline_build, lowered_as=(ir.Assign,))
memcpy_async = Intrinsic(
    "memcpy_async", "simt.memcpy_async(dst, dst_index, src, src_index, count, pipe): start "
    "copying count elements src[src_index:] -> dst[dst_index:] (flat indices of C-contiguous "
    "arrays) in pipe's current stage; read them after pipe.consumer_wait(). With a "
    "simt.shared.barrier(count) in place of pipe, the copy is part of the barrier's current "
    "phase: read it after bar.wait(bar.arrive()). GPU: cp.async from global to shared "
    "memory (and cp.async.mbarrier.arrive for a barrier).", _memcpy_build, writes=True)
commit = Intrinsic("pipeline.commit", "pipe.producer_commit(): close the stage "
                   "(cp.async.commit_group).", public=False)
wait = Intrinsic("pipeline.wait", "pipe.consumer_wait(): wait for the oldest unreleased stage "
                 "(cp.async.wait_group).", public=False)
