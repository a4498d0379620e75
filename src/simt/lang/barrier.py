"""Arrive/wait barriers (guide B.23, cuda::barrier<thread_scope_block>): ``bar =
simt.shared.barrier(count)``.

The barrier is 16 bytes of shared memory. Declaring it is block-wide, as syncthreads is:
thread 0 initializes it for ``count`` arrivals a phase and the block waits for that. On the
GPU it is an mbarrier (``mbarrier.init``, ``mbarrier.arrive`` returning the phase token,
``mbarrier.try_wait`` in a loop, ``mbarrier.arrive_drop``). On the CPU device it is a
counter (word 0: arrivals expected; word 1: phase << 32 | arrivals so far), and ``wait`` is
where the block's thread loops meet (a barrier there only), after which a phase that has not
completed is an error: on a GPU that wait would never return. docs/async-copies.md.
"""
import numpy as np

from ..ir import nodes as ir
from ..ir import types as T
from .groups import Group, flat_rank
from .memory import shared
from .registry import Intrinsic, Static


class ArriveWaitBarrier(Group):
    """A barrier object bound at compile time: its shared storage."""

    methods = ("arrive", "wait", "arrive_and_wait", "arrive_and_drop")

    def __init__(self, storage):
        self.storage = storage

    def signature(self):
        return ("ArriveWaitBarrier", self.storage.decl.name)

    def _arrive(self, fc, args, loc):
        _no_args(fc, args, "arrive", loc)
        return arrive.node(T.UINT64, loc, [self.storage])

    def _wait(self, fc, args, loc):
        if len(args) != 1:
            fc.fail(loc, "barrier.wait(token) takes the token arrive() returned")
        token = fc.expr(args[0], loc)
        if token.type != T.UINT64:
            fc.fail(loc, f"barrier.wait(token) takes the uint64 token of arrive(), got "
                    f"{token.type}")
        fc.hoist(ir.Barrier(loc, cpu_only=True))
        return wait.node(T.VOID, loc, [self.storage, token])

    def _arrive_and_wait(self, fc, args, loc):
        _no_args(fc, args, "arrive_and_wait", loc)
        token = fc.temp("token")
        fc.hoist(*fc.bind_name(token, arrive.node(T.UINT64, loc, [self.storage]), loc))
        return self._wait(fc, [ir.Var(T.UINT64, loc, token)], loc)

    def _arrive_and_drop(self, fc, args, loc):
        _no_args(fc, args, "arrive_and_drop", loc)
        return arrive_drop.node(T.VOID, loc, [self.storage])


def _no_args(fc, args, name, loc):
    if args:
        fc.fail(loc, f"barrier.{name}() takes no arguments")


def _barrier_build(fc, args, kwargs, loc):
    if kwargs or len(args) != 1:
        fc.fail(loc, "simt.shared.barrier(count) takes the number of arrivals a phase expects")
    count = fc.expr(args[0], loc)
    if not isinstance(count.type, T.Scalar) or count.type.kind not in "iu":
        fc.fail(loc, f"simt.shared.barrier(count) needs an integer count, got {count.type}")
    storage = fc.shared_scratch(np.uint64, 2, loc)
    first = ir.Compare(T.BOOL, loc, "eq", flat_rank(fc, loc), ir.Const(T.INT32, loc, 0))
    start = init.node(T.VOID, loc, [storage, fc.cast(count, T.INT32, loc)])
    fc.hoist(ir.If(loc, first, [ir.ExprStmt(loc, start)], []), ir.Barrier(loc))
    return Static(ArriveWaitBarrier(storage), "barrier")


barrier = Intrinsic(
    "shared.barrier", "simt.shared.barrier(count): a cuda::barrier in shared memory expecting "
    "count arrivals a phase, with arrive() -> token, wait(token), arrive_and_wait() and "
    "arrive_and_drop(). Declaring it is block-wide (thread 0 initializes it, then the block "
    "syncs).", _barrier_build, lowered_as=(ir.If, ir.Barrier))
init = Intrinsic("barrier.init", "mbarrier.init: count arrivals a phase.", public=False)
arrive = Intrinsic("barrier.arrive", "bar.arrive(): count this thread's arrival; the token "
                   "names the phase.", public=False)
arrive_drop = Intrinsic("barrier.arrive_drop", "bar.arrive_and_drop(): arrive, and expect one "
                        "arrival fewer in every later phase.", public=False)
wait = Intrinsic("barrier.wait", "bar.wait(token): until the token's phase completes.",
                 public=False)
shared.barrier = barrier
