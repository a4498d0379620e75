"""The arrive/wait barrier (lang/barrier.py) on the CPU device: a phase counter in the
barrier's shared words (a barrier with a completion function counts as on every device:
compiler/mbarrier.py)."""
from ....compiler.lltypes import I64, i64
from ....compiler.mbarrier import LOW, complete_phase, init_counts, state, word
from ....fault import ASSERT
from ....lang.barrier import arrive, arrive_drop, complete, init, wait
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cpu")

NEVER = ("barrier.wait: this phase of the simt.shared.barrier never completes (fewer threads "
         "arrived than its count); on a GPU the wait would hang. Check the count and that "
         "every thread arrives (or arrive_and_drop()s) once a phase")


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


def _arrive(em, e, drop):
    """Count an arrival (or, for a drop, one fewer expected); returns the phase token."""
    b = em.builder
    expected_ptr, progress_ptr = _words(em, e)
    expected, progress = b.load(expected_ptr, typ=I64), b.load(progress_ptr, typ=I64)
    phase, arrived = b.lshr(progress, i64(32)), b.and_(progress, i64(LOW))
    if drop:
        expected = b.sub(expected, i64(1))
        b.store(expected, expected_ptr)
    else:
        arrived = b.add(arrived, i64(1))
    closes = b.icmp_unsigned(">=", arrived, expected)
    next_phase = b.shl(b.add(phase, i64(1)), i64(32))
    b.store(b.select(closes, next_phase, b.or_(b.shl(phase, i64(32)), arrived)), progress_ptr)
    return phase


@lowering(arrive, target=TARGET)
def _arrive_cpu(em, e):
    return _arrive(em, e, drop=False)


@lowering(arrive_drop, target=TARGET)
def _drop_cpu(em, e):
    _arrive(em, e, drop=True)


@lowering(wait, target=TARGET)
def _wait_cpu(em, e):
    """The thread loops met before this (ir.Barrier cpu_only): the phase is over, or never."""
    b = em.builder
    if e.attrs.get("completion"):
        phase = b.load(word(em, e, 2), typ=I64)
    else:
        _, progress_ptr = _words(em, e)
        phase = b.lshr(b.load(progress_ptr, typ=I64), i64(32))
    ok, never = em.new_block("barrier_phase_done"), em.new_block("barrier_never")
    b.cbranch(b.icmp_unsigned("!=", phase, em.expr(e.args[1])), ok, never)
    b.position_at_end(never)
    em.target.emit_error(em, ASSERT, e.loc, message=NEVER)
    em.builder.position_at_end(ok)


@lowering(complete, target=TARGET)
def _complete_cpu(em, e):
    complete_phase(em, e)
