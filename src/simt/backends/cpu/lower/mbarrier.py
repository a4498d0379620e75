"""The arrive/wait barrier (lang/barrier.py) on the CPU device: a phase counter in the
barrier's shared words (a barrier with a completion function counts as on every device:
compiler/mbarrier.py). Word 0 holds the arrivals a phase expects (low 32 bits) and the
transaction bytes it still awaits (high 32 bits, signed: a copy may land before its
expect_tx); word 1 the phase (high) and the arrivals so far (low). A phase completes when
its arrivals reach the count and no bytes are pending; the emulated copies
(cpu/lower/tma.py) land at once and count theirs off with ``complete_tx``."""
from llvmlite import ir as ll

from ....compiler.lltypes import I64, i64
from ....compiler.mbarrier import LOW, complete_phase, init_counts, state, word
from ....fault import ASSERT
from ....lang.barrier import (arrive, arrive_drop, arrive_expect_tx, complete, expect_tx, init,
                              try_wait, wait, wait_parity)
from ....lang.registry import declare_target, lowering
from .. import independent

TARGET = declare_target("cpu")

NEVER = ("barrier.wait: this phase of the simt.shared.barrier never completes (fewer threads "
         "arrived than its count); on a GPU the wait would hang. Check the count and that "
         "every thread arrives (or arrive_and_drop()s) once a phase")
NEVER_WARPS = ("barrier.wait: this phase of the simt.shared.barrier never completes: every "
               "warp of the block still running waits, and fewer threads arrived than its "
               "count (or its transaction bytes never landed); on a GPU the block would hang. "
               "Check the count, the expected bytes, and that every thread arrives (or "
               "arrive_and_drop()s) once a phase")


def _words(em, e):
    b, data = em.builder, state(em, e)
    return data, b.gep(data, [i64(1)], source_etype=I64)


@lowering(init, target=TARGET)
def _init_cpu(em, e):
    if e.attrs.get("completion"):
        init_counts(em, e, em.expr(e.args[1]))
        return
    expected, progress = _words(em, e)
    em.builder.store(em.builder.zext(em.expr(e.args[1]), I64), expected)
    em.builder.store(i64(0), progress)


def _arrive(em, e, drop, arrivals=1):
    """Count an arrival (or, for a drop, one fewer expected); returns the phase token.
    ``arrivals=0``: count nothing, only close a phase that is due (``complete_tx``)."""
    b = em.builder
    counts_ptr, progress_ptr = _words(em, e)
    counts, progress = b.load(counts_ptr, typ=I64), b.load(progress_ptr, typ=I64)
    phase, arrived = b.lshr(progress, i64(32)), b.and_(progress, i64(LOW))
    if drop:
        counts = b.sub(counts, i64(1))
        b.store(counts, counts_ptr)
    else:
        arrived = b.add(arrived, i64(arrivals))
    expected, pending = b.and_(counts, i64(LOW)), b.ashr(counts, i64(32))
    closes = b.and_(b.icmp_unsigned(">=", arrived, expected),
                    b.icmp_signed("==", pending, i64(0)))
    if not arrivals:              # bytes landing close a phase only once someone arrived
        closes = b.and_(closes, b.icmp_unsigned(">", arrived, i64(0)))
    next_phase = b.shl(b.add(phase, i64(1)), i64(32))
    b.store(b.select(closes, next_phase, b.or_(b.shl(phase, i64(32)), arrived)), progress_ptr)
    return phase


def _add_tx(em, e, nbytes):
    """Add nbytes (an i32, negative for bytes landed) to the phase's pending bytes."""
    b = em.builder
    counts_ptr, _ = _words(em, e)
    delta = b.shl(b.sext(nbytes, I64), i64(32))
    b.store(b.add(b.load(counts_ptr, typ=I64), delta), counts_ptr)


def complete_tx(em, e, nbytes):
    """An emulated copy of nbytes (an i32) landed: count them off, closing a phase that
    waited only for them (e.args[0] is the barrier's storage)."""
    _add_tx(em, e, em.builder.neg(nbytes))
    _arrive(em, e, drop=False, arrivals=0)


@lowering(arrive, target=TARGET)
def _arrive_cpu(em, e):
    return _arrive(em, e, drop=False)


@lowering(arrive_drop, target=TARGET)
def _drop_cpu(em, e):
    _arrive(em, e, drop=True)


@lowering(wait, target=TARGET)
def _wait_cpu(em, e):
    """The thread loops met before this (ir.Barrier cpu_only): the phase is over, or never.
    In a kernel run as warps: the phase is over, or the warp waits for it."""
    token = em.expr(e.args[1])

    def done():
        b = em.builder
        if e.attrs.get("completion"):
            phase = b.load(word(em, e, 2), typ=I64)
        else:
            _, progress_ptr = _words(em, e)
            phase = b.lshr(b.load(progress_ptr, typ=I64), i64(32))
        return b.icmp_unsigned("!=", phase, token)
    _check_phase(em, e, done)


@lowering(expect_tx, target=TARGET)
def _expect_tx_cpu(em, e):
    _add_tx(em, e, em.expr(e.args[1]))


@lowering(arrive_expect_tx, target=TARGET)
def _arrive_expect_tx_cpu(em, e):
    _add_tx(em, e, em.expr(e.args[1]))
    return _arrive(em, e, drop=False)


def _check_phase(em, e, done):
    """``done()``: the i1 that the phase awaited is over, built where it is checked."""
    if getattr(em, "fibers", None) is not None:
        independent.wait_until(em, done, e.loc, NEVER_WARPS)
        return
    b = em.builder
    ok, never = em.new_block("barrier_phase_done"), em.new_block("barrier_never")
    b.cbranch(done(), ok, never)
    b.position_at_end(never)
    em.target.emit_error(em, ASSERT, e.loc, message=NEVER)
    em.builder.position_at_end(ok)


def _phase(em, e):
    _, progress_ptr = _words(em, e)
    return em.builder.lshr(em.builder.load(progress_ptr, typ=I64), i64(32))


@lowering(try_wait, target=TARGET)
def _try_wait_cpu(em, e):
    """The thread loops met before this: the phase is over (true), or never (an error, not
    false: a loop around try_wait would spin for ever). In a kernel run as warps it waits
    until the phase is over (fibers.py says why)."""
    token = em.expr(e.args[1])
    _check_phase(em, e, lambda: em.builder.icmp_unsigned("!=", _phase(em, e), token))
    return ll.Constant(ll.IntType(1), 1)


@lowering(wait_parity, target=TARGET)
def _wait_parity_cpu(em, e):
    wanted = em.builder.and_(em.builder.zext(em.expr(e.args[1]), I64), i64(1))

    def done():
        b = em.builder
        return b.icmp_unsigned("!=", b.and_(_phase(em, e), i64(1)), wanted)
    _check_phase(em, e, done)


@lowering(complete, target=TARGET)
def _complete_cpu(em, e):
    complete_phase(em, e)
