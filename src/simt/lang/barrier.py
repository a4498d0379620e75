"""Arrive/wait barriers (guide B.23, cuda::barrier<thread_scope_block>): ``bar =
simt.shared.barrier(count)``, or ``simt.shared.barrier(count, completion, *args)`` with a
completion function.

The barrier is 16 bytes of shared memory. Declaring it is block-wide, as syncthreads is:
thread 0 initializes it for ``count`` arrivals a phase and the block waits for that. On the
GPU it is an mbarrier (``mbarrier.init``, ``mbarrier.arrive`` returning the phase token,
``mbarrier.try_wait`` in a loop, ``mbarrier.arrive_drop``). On the CPU device it is a
counter (word 0: arrivals expected; word 1: phase << 32 | arrivals so far), and ``wait`` is
where the block's thread loops meet (a barrier there only), after which a phase that has not
completed is an error: on a GPU that wait would never return. docs/async-copies.md.

A barrier with a completion function (a @simt.device function, called as
``completion(*args)`` with the arguments evaluated where the barrier is declared) takes 24
bytes: word 1 counts arrivals (expected << 32 | arrived, one atomic add per arrival, so the
thread that completes a phase knows it), word 2 numbers the phase. The last thread to arrive
runs the completion, then closes the phase: on the GPU by arriving on an mbarrier (word 0)
that expects one arrival a phase, whose parity the waiters test; on the CPU device by
numbering the next phase. So the completion runs once a phase, after every arrival and
before any waiting thread goes on, as in CUDA.

Transaction counts (for simt.tma's copies, barriers without a completion function):
``expect_tx(nbytes)`` and ``arrive_expect_tx(nbytes)`` add bytes the current phase waits for
(mbarrier.expect_tx, mbarrier.arrive.expect_tx), the copies count them off as they land;
``try_wait(token)`` and ``wait_parity(phase)`` wait (mbarrier.try_wait, .parity). On the CPU
device these waits are where the block's thread loops meet, as ``wait``.
"""
import numpy as np

from ..ir import nodes as ir
from ..ir import types as T
from .groups import Group, flat_rank
from .memory import shared
from .registry import Intrinsic, Static


class ArriveWaitBarrier(Group):
    """A barrier object bound at compile time: its shared storage, and its completion
    function with its arguments: the hidden variables holding them, or shared arrays."""

    methods = ("arrive", "wait", "arrive_and_wait", "arrive_and_drop", "expect_tx",
               "arrive_expect_tx", "try_wait", "wait_parity")

    def __init__(self, storage, completion=None, bound=()):
        self.storage = storage
        self.completion = completion
        self.bound = tuple(bound)

    def signature(self):
        return ("ArriveWaitBarrier", self.storage.decl.name)

    def _arrive(self, fc, args, loc):
        _no_args(fc, args, "arrive", loc)
        if self.completion is None:
            return arrive.node(T.UINT64, loc, [self.storage])
        token = fc.temp("token")
        fc.hoist(*fc.bind_name(token, phase.node(T.UINT64, loc, [self.storage]), loc))
        self._count(fc, loc, drop=False)
        return ir.Var(T.UINT64, loc, token)

    def _count(self, fc, loc, drop):
        """Count an arrival (or a drop); the thread that completes the phase runs the
        completion function and closes the phase."""
        last = fc.temp("last")
        fc.hoist(*fc.bind_name(last, count.node(T.BOOL, loc, [self.storage], {"drop": drop}),
                               loc))
        call = fc.call_device(self.completion, [_again(v, loc) for v in self.bound], loc)
        fc.hoist(ir.If(loc, ir.Var(T.BOOL, loc, last),
                       [ir.ExprStmt(loc, call),
                        ir.ExprStmt(loc, complete.node(T.VOID, loc, [self.storage]))], []))

    def _wait(self, fc, args, loc):
        if len(args) != 1:
            fc.fail(loc, "barrier.wait(token) takes the token arrive() returned")
        token = fc.expr(args[0], loc)
        if token.type != T.UINT64:
            fc.fail(loc, f"barrier.wait(token) takes the uint64 token of arrive(), got "
                    f"{token.type}")
        if not isinstance(token, (ir.Var, ir.Const)):   # bar.wait(bar.arrive()): arrive first
            name = fc.temp("token")
            fc.hoist(*fc.bind_name(name, token, loc))
            token = ir.Var(T.UINT64, loc, name)
        fc.hoist(ir.Barrier(loc, cpu_only=True))
        return wait.node(T.VOID, loc, [self.storage, token],
                         {"completion": self.completion is not None})

    def _arrive_and_wait(self, fc, args, loc):
        _no_args(fc, args, "arrive_and_wait", loc)
        token = fc.temp("token")
        fc.hoist(*fc.bind_name(token, self._arrive(fc, [], loc), loc))
        return self._wait(fc, [ir.Var(T.UINT64, loc, token)], loc)

    def _arrive_and_drop(self, fc, args, loc):
        _no_args(fc, args, "arrive_and_drop", loc)
        if self.completion is None:
            return arrive_drop.node(T.VOID, loc, [self.storage])
        self._count(fc, loc, drop=True)
        return ir.Const(T.INT32, loc, 0)


    # ---------------------------------------------------- transaction counts (TMA, bulk copies)
    def _plain(self, fc, name, loc):
        if self.completion is not None:
            fc.fail(loc, f"barrier.{name} is offered on barriers without a completion "
                    "function", "declare the barrier as simt.shared.barrier(count)")

    def _bytes(self, fc, args, name, loc):
        self._plain(fc, name, loc)
        if len(args) != 1:
            fc.fail(loc, f"barrier.{name}(nbytes) takes the number of bytes the phase awaits")
        nbytes = fc.expr(args[0], loc)
        if not isinstance(nbytes.type, T.Scalar) or nbytes.type.kind not in "iu":
            fc.fail(loc, f"barrier.{name}(nbytes) needs an integer, got {nbytes.type}")
        return fc.cast(nbytes, T.INT32, loc)

    def _expect_tx(self, fc, args, loc):
        return expect_tx.node(T.VOID, loc, [self.storage, self._bytes(fc, args, "expect_tx",
                                                                      loc)])

    def _arrive_expect_tx(self, fc, args, loc):
        nbytes = self._bytes(fc, args, "arrive_expect_tx", loc)
        return arrive_expect_tx.node(T.UINT64, loc, [self.storage, nbytes])

    def _try_wait(self, fc, args, loc):
        self._plain(fc, "try_wait", loc)
        if len(args) != 1:
            fc.fail(loc, "barrier.try_wait(token) takes the token arrive() returned")
        token = fc.expr(args[0], loc)
        if token.type != T.UINT64:
            fc.fail(loc, f"barrier.try_wait(token) takes the uint64 token of arrive(), got "
                    f"{token.type}")
        fc.hoist(ir.Barrier(loc, cpu_only=True))
        return try_wait.node(T.BOOL, loc, [self.storage, token])

    def _wait_parity(self, fc, args, loc):
        self._plain(fc, "wait_parity", loc)
        if len(args) != 1:
            fc.fail(loc, "barrier.wait_parity(phase) takes the parity (0 or 1) of the phase "
                    "to wait for")
        parity = fc.expr(args[0], loc)
        if not isinstance(parity.type, T.Scalar) or parity.type.kind not in "iub":
            fc.fail(loc, f"barrier.wait_parity(phase) needs an integer, got {parity.type}")
        fc.hoist(ir.Barrier(loc, cpu_only=True))
        return wait_parity.node(T.VOID, loc, [self.storage, fc.cast(parity, T.UINT32, loc)])


def _again(value, loc):
    """A new node reading a completion argument (each call site gets its own)."""
    if isinstance(value, ir.ArrayRef):
        return ir.ArrayRef(value.type, loc, value.decl)
    return ir.Var(value.type, loc, value.name)


def _no_args(fc, args, name, loc):
    if args:
        fc.fail(loc, f"barrier.{name}() takes no arguments")


def _barrier_build(fc, args, kwargs, loc):
    if kwargs or not args:
        fc.fail(loc, "simt.shared.barrier(count) takes the number of arrivals a phase "
                "expects (then, optionally, a completion function and its arguments)")
    expected = fc.expr(args[0], loc)
    if not isinstance(expected.type, T.Scalar) or expected.type.kind not in "iu":
        fc.fail(loc, f"simt.shared.barrier(count) needs an integer count, got {expected.type}")
    completion, bound = None, []
    if len(args) > 1:
        completion = args[1].value if isinstance(args[1], Static) else None
        if not hasattr(completion, "_simt_device"):
            fc.fail(loc, "the second argument of simt.shared.barrier(count, completion, *args) "
                    "is the completion function: a @simt.device function")
        for value in args[2:]:                     # evaluated here, as a lambda's captures
            value = fc.expr(value, loc)
            if isinstance(value, ir.ArrayRef):     # a shared array: named by its declaration
                bound.append(value)
                continue
            name = fc.temp("completion_arg")
            fc.hoist(*fc.bind_name(name, value, loc))
            bound.append(ir.Var(value.type, loc, name))
    storage = fc.shared_scratch(np.uint64, 2 if completion is None else 3, loc)
    first = ir.Compare(T.BOOL, loc, "eq", flat_rank(fc, loc), ir.Const(T.INT32, loc, 0))
    start = init.node(T.VOID, loc, [storage, fc.cast(expected, T.INT32, loc)],
                      {"completion": completion is not None})
    fc.hoist(ir.If(loc, first, [ir.ExprStmt(loc, start)], []), ir.Barrier(loc))
    return Static(ArriveWaitBarrier(storage, completion, bound), "barrier")


barrier = Intrinsic(
    "shared.barrier", "simt.shared.barrier(count) or simt.shared.barrier(count, completion, "
    "*args): a cuda::barrier in shared memory expecting count arrivals a phase, with arrive() "
    "-> token, wait(token), arrive_and_wait() and arrive_and_drop(), and transaction counts for "
    "TMA and bulk copies: expect_tx(nbytes), arrive_expect_tx(nbytes) -> token, "
    "try_wait(token) -> bool and wait_parity(phase). Declaring it is "
    "block-wide (thread 0 initializes it, then the block syncs). completion, a @simt.device "
    "function, is called as completion(*args) once a phase by the last thread to arrive, "
    "before any waiting thread goes on (args are evaluated where the barrier is declared; "
    "arrays among them are seen as they are then).", _barrier_build,
    lowered_as=(ir.If, ir.Barrier))
init = Intrinsic("barrier.init", "mbarrier.init: count arrivals a phase.", public=False)
arrive = Intrinsic("barrier.arrive", "bar.arrive(): count this thread's arrival; the token "
                   "names the phase.", public=False)
arrive_drop = Intrinsic("barrier.arrive_drop", "bar.arrive_and_drop(): arrive, and expect one "
                        "arrival fewer in every later phase.", public=False)
wait = Intrinsic("barrier.wait", "bar.wait(token): until the token's phase completes.",
                 public=False)
phase = Intrinsic("barrier.phase", "The number of a completion barrier's current phase.",
                  public=False)
count = Intrinsic("barrier.count", "Count an arrival (attrs drop: one fewer expected "
                  "instead) on a completion barrier; true for the thread that completes the "
                  "phase.", public=False)
complete = Intrinsic("barrier.complete", "Close a completion barrier's phase (after its "
                     "completion function ran).", public=False)
expect_tx = Intrinsic(
    "barrier.expect_tx", "bar.expect_tx(nbytes): the barrier's current phase also waits for "
    "nbytes more bytes of asynchronous copies (simt.tma.load, simt.tma.copy) to land "
    "(mbarrier.expect_tx).", public=False)
arrive_expect_tx = Intrinsic(
    "barrier.arrive_expect_tx", "bar.arrive_expect_tx(nbytes) -> token: expect_tx(nbytes), then "
    "arrive (mbarrier.arrive.expect_tx).", public=False)
try_wait = Intrinsic(
    "barrier.try_wait", "bar.try_wait(token) -> bool: whether the token's phase has completed "
    "(mbarrier.try_wait: the thread may wait a while first); call it in a loop. On the CPU "
    "device the block's threads meet here and the phase has completed (else an error).",
    public=False)
wait_parity = Intrinsic(
    "barrier.wait_parity", "bar.wait_parity(phase): until the phase of that parity (0 or 1) "
    "completes (mbarrier.try_wait.parity in a loop); count phases to keep the parity.",
    public=False)
shared.barrier = barrier
