"""Lowerings of the arrive/wait barrier (lang/barrier.py): NVVM's mbarrier intrinsics on the
GPU, a phase counter in the same shared words on the CPU device. A barrier with a completion
function counts its arrivals in word 1 and numbers its phases in word 2 on both devices; on
the GPU its mbarrier (word 0) expects the one arrival that closes a phase."""
from llvmlite import ir as ll

from ..fault import ASSERT
from ..lang.barrier import arrive, arrive_drop, complete, count, init, phase, wait
from ..ir import types as T
from .lltypes import I32, I64, i32, i64, ptr

LOW = 0xFFFFFFFF
NEVER = ("barrier.wait: this phase of the simt.shared.barrier never completes (fewer threads "
         "arrived than its count); on a GPU the wait would hang. Check the count and that "
         "every thread arrives (or arrive_and_drop()s) once a phase")


def _state(em, e):
    return em.expr(e.args[0]).data


def _shared(em, pointer):
    shared = em.target.addrspace("shared")
    if pointer.type.addrspace == shared:
        return pointer
    return em.builder.addrspacecast(pointer, ptr(shared))


def _nvvm(em, name, ret, args):
    fn = em.module.declare_intrinsic(name, fnty=ll.FunctionType(ret, [a.type for a in args]))
    return em.builder.call(fn, args)


@init.lowering("cuda")
def _init_gpu(em, e):
    expected = em.expr(e.args[1])
    if e.attrs.get("completion"):
        _init_counts(em, e, expected)
        expected = i32(1)                  # the arrival that closes a phase
    _nvvm(em, "llvm.nvvm.mbarrier.init.shared", ll.VoidType(),
          [_shared(em, _state(em, e)), expected])


def _word(em, e, k):
    return em.builder.gep(_state(em, e), [i64(k)], source_etype=I64)


def _init_counts(em, e, expected):
    b = em.builder
    b.store(b.shl(b.zext(expected, I64), i64(32)), _word(em, e, 1))
    b.store(i64(0), _word(em, e, 2))


@phase.lowering()
def _phase(em, e):
    return em.builder.load_atomic(_word(em, e, 2), "monotonic", 8, typ=I64)


@count.lowering()
def _count(em, e):
    """One atomic add of (expected << 32 | arrived): an arrival adds 1, a drop takes one
    from expected; the thread that makes them equal completes the phase. Acquire-release,
    so that thread sees what the others wrote before arriving."""
    drop = e.attrs["drop"]
    b = em.builder
    delta = i64(-(1 << 32) if drop else 1)
    old = em.target.atomic_rmw(em, "add", _word(em, e, 1), delta, T.UINT64, scope="block",
                               order="acq_rel")
    b = em.builder
    arrived = b.add(b.and_(old, i64(LOW)), i64(0 if drop else 1))
    expected = b.sub(b.lshr(old, i64(32)), i64(1 if drop else 0))
    return b.icmp_unsigned("==", arrived, expected)


@complete.lowering()
def _complete(em, e):
    """Zero the arrivals, number the next phase, and (GPU) release the waiters."""
    b = em.builder
    em.target.atomic_rmw(em, "and", _word(em, e, 1), i64(LOW << 32), T.UINT64, scope="block",
                         order="relaxed")
    em.target.atomic_rmw(em, "add", _word(em, e, 2), i64(1), T.UINT64, scope="block",
                         order="relaxed")
    if em.target.name == "cuda":
        _nvvm(em, "llvm.nvvm.mbarrier.arrive.shared", I64, [_shared(em, _state(em, e))])


@arrive.lowering("cuda")
def _arrive_gpu(em, e):
    return _nvvm(em, "llvm.nvvm.mbarrier.arrive.shared", I64, [_shared(em, _state(em, e))])


@arrive_drop.lowering("cuda")
def _drop_gpu(em, e):
    _nvvm(em, "llvm.nvvm.mbarrier.arrive.drop.shared", I64, [_shared(em, _state(em, e))])


@wait.lowering("cuda")
def _wait_gpu(em, e):
    state, token = _shared(em, _state(em, e)), em.expr(e.args[1])
    b = em.builder
    loop, done = em.new_block("mbarrier_wait"), em.new_block("mbarrier_done")
    b.branch(loop)
    b.position_at_end(loop)
    # LLVM has no try_wait intrinsic: inline PTX (the thread may sleep inside it). A
    # completion barrier's token is its phase number: wait on the parity of that phase
    if e.attrs.get("completion"):
        asm = ll.InlineAsm(ll.FunctionType(I32, [I64, I32]),
                           "{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [$1], $2; "
                           "selp.b32 $0, 1, 0, p; }", "=r,l,r", side_effect=True)
        token = b.trunc(b.and_(token, i64(1)), I32)
    else:
        asm = ll.InlineAsm(ll.FunctionType(I32, [I64, I64]),
                           "{ .reg .pred p; mbarrier.try_wait.shared.b64 p, [$1], $2; "
                           "selp.b32 $0, 1, 0, p; }", "=r,l,l", side_effect=True)
    ready = b.call(asm, [b.ptrtoint(state, I64), token])
    b.cbranch(b.icmp_unsigned("!=", ready, ll.Constant(I32, 0)), done, loop)
    b.position_at_end(done)


# ------------------------------------------------------------------ CPU: a phase counter
def _words(em, e):
    b, data = em.builder, _state(em, e)
    return data, b.gep(data, [i64(1)], source_etype=I64)


@init.lowering("cpu")
def _init_cpu(em, e):
    if e.attrs.get("completion"):
        _init_counts(em, e, em.expr(e.args[1]))
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
    complete = b.icmp_unsigned(">=", arrived, expected)
    next_phase = b.shl(b.add(phase, i64(1)), i64(32))
    b.store(b.select(complete, next_phase, b.or_(b.shl(phase, i64(32)), arrived)), progress_ptr)
    return phase


@arrive.lowering("cpu")
def _arrive_cpu(em, e):
    return _arrive(em, e, drop=False)


@arrive_drop.lowering("cpu")
def _drop_cpu(em, e):
    _arrive(em, e, drop=True)


@wait.lowering("cpu")
def _wait_cpu(em, e):
    """The thread loops met before this (ir.Barrier cpu_only): the phase is over, or never."""
    b = em.builder
    if e.attrs.get("completion"):
        phase = b.load(_word(em, e, 2), typ=I64)
    else:
        _, progress_ptr = _words(em, e)
        phase = b.lshr(b.load(progress_ptr, typ=I64), i64(32))
    ok, never = em.new_block("barrier_phase_done"), em.new_block("barrier_never")
    b.cbranch(b.icmp_unsigned("!=", phase, em.expr(e.args[1])), ok, never)
    b.position_at_end(never)
    em.target.emit_error(em, ASSERT, e.loc, message=NEVER)
    em.builder.position_at_end(ok)
