"""What the arrive/wait barrier's lowerings (lang/barrier.py) share on every LLVM target: its
storage words and the phase counting of a barrier with a completion function, which counts
its arrivals in word 1 and numbers its phases in word 2 on every device. The devices' own
lowerings: backends/cuda/lower/mbarrier.py (NVVM's mbarrier intrinsics; the mbarrier, word
0, expects the one arrival that closes a phase) and backends/cpu/lower/mbarrier.py (a phase
counter in the same shared words)."""
from ..lang.barrier import count, phase
from ..ir import types as T
from .lltypes import I64, i64

LOW = 0xFFFFFFFF


def state(em, e):
    """The barrier's storage (its first argument's data pointer)."""
    return em.expr(e.args[0]).data


def word(em, e, k):
    return em.builder.gep(state(em, e), [i64(k)], source_etype=I64)


def init_counts(em, e, expected):
    b = em.builder
    b.store(b.shl(b.zext(expected, I64), i64(32)), word(em, e, 1))
    b.store(i64(0), word(em, e, 2))


@phase.lowering()
def _phase(em, e):
    return em.builder.load_atomic(word(em, e, 2), "monotonic", 8, typ=I64)


@count.lowering()
def _count(em, e):
    """One atomic add of (expected << 32 | arrived): an arrival adds 1, a drop takes one
    from expected; the thread that makes them equal completes the phase. Acquire-release,
    so that thread sees what the others wrote before arriving."""
    drop = e.attrs["drop"]
    b = em.builder
    delta = i64(-(1 << 32) if drop else 1)
    old = em.target.atomic_rmw(em, "add", word(em, e, 1), delta, T.UINT64, scope="block",
                               order="acq_rel")
    b = em.builder
    arrived = b.add(b.and_(old, i64(LOW)), i64(0 if drop else 1))
    expected = b.sub(b.lshr(old, i64(32)), i64(1 if drop else 0))
    return b.icmp_unsigned("==", arrived, expected)


def complete_phase(em, e):
    """Zero the arrivals and number the next phase (a device's ``complete`` lowering then
    releases its waiters)."""
    em.target.atomic_rmw(em, "and", word(em, e, 1), i64(LOW << 32), T.UINT64, scope="block",
                         order="relaxed")
    em.target.atomic_rmw(em, "add", word(em, e, 2), i64(1), T.UINT64, scope="block",
                         order="relaxed")
