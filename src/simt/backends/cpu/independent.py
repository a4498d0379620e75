"""Kernels whose warps wait for each other, on the CPU device: which they are, and what
their code does differently (the scheduler that runs their warps is fibers.py).

A kernel runs its warps as fibers when one warp may have to wait for another to move on
(docs/cpu-device.md, "Warps that wait for each other"):
- an arrive/wait barrier's wait (``wait``, ``wait_parity``, ``try_wait``) or a named
  barrier (``barrier_sync``) in a branch or loop that only some threads take;
- ``barrier_sync(id, count)`` whose count is not the block's threads, ``barrier_arrive``;
- a spin loop: a ``while`` loop that reads memory through ``simt.volatile_load`` or
  ``simt.atomic.load`` (the loads a CUDA spin-wait must use), in its condition or body.
Checked mode keeps every kernel in thread loops (its race detector follows them). Other
kernels, syncthreads-only ones among them, are compiled as before and pay nothing.

In such a kernel each thread loop runs over one warp's lanes, syncthreads and named
barriers count arrivals in the scheduler (``simt_fiber_bar``), a wait that finds its
barrier not complete yields to the other warps, and a spin loop yields once a trip.
"""
from llvmlite import ir as ll

from ...compiler import loopmeta
from ...compiler.flat import counted_loop
from ...compiler.lltypes import I32, I64, i32, i64, ptr
from ...errors import NotSupportedError
from ...fault import ASSERT
from ...ir import nodes as ir
from ...ir import types as T
from ...ir.fission import Run
from ...ir.walk import walk
from . import fibers

POLLS = ("volatile_load", "atomic.load")      # the loads that make a while loop a spin loop
WARP = 32
_NO_WRAP = ["nuw", "nsw"]

NEVER_BAR = ("{what} never completes: every warp of the block still running waits, and "
             "fewer threads than its count arrive ({why}); on a GPU the block would hang. "
             "Check the count and that enough warps reach a barrier of this id")


class Plan:
    """A kernel compiled as warps: its spin loops (ids of While nodes)."""

    def __init__(self, spins):
        self.spins = spins


def plan(function, pieces, options):
    """The Plan of ``function`` (typed IR, barrier calls inlined; ``pieces``: its fission,
    None without barriers), or None when its warps never wait for each other."""
    if options.checks:
        return None
    spins = {id(s) for s in ir.walk_stmts(function.body)
             if isinstance(s, ir.While) and _polls(s)}
    arrives = any(isinstance(n, ir.Intrinsic) and n.op == "barrier_arrive"
                  for n in walk(*function.body))
    block = options.block
    if not (spins or arrives or (pieces and _waits_across(pieces, block, False))):
        return None
    for s in ir.walk_stmts(function.body):
        if isinstance(s, ir.GridSync):
            what = "cluster.sync()" if s.scope == "cluster" else "grid.sync()"
            raise NotSupportedError(
                f"{what} in a kernel whose warps wait for each other is not supported on "
                f"the cpu device yet ({s.loc.filename}:{s.loc.line}); run it on the sim "
                f"device, or keep its waits where the whole block reaches them")
    return Plan(spins)


def _polls(loop):
    return any(isinstance(n, ir.Intrinsic) and n.op in POLLS
               for n in walk(loop.cond, *loop.body))


def _waits_across(pieces, block, masked):
    """Whether a wait or named barrier in ``pieces`` may wait for other warps."""
    for piece in pieces:
        if isinstance(piece, Run):
            continue
        s = piece.stmt
        if isinstance(s, ir.Barrier):
            if (s.cpu_only or s.named) and masked:
                return True
            if len(s.named) == 2 and not _whole_block(s.named[1], block):
                return True
            continue
        inner = masked or (isinstance(s, (ir.If, ir.While, ir.ForRange))
                           and piece.uniform is None)
        if any(_waits_across(part, block, inner) for part in piece.parts):
            return True
    return False


def _whole_block(count, block):
    if block is None or not isinstance(count, ir.Const):
        return False
    threads = block[0] * block[1] * block[2]
    return count.value == threads


# ---------------------------------------------------------------- the kernel's shape
def signature():
    """``warp(args, launch, block, warp, shared, slots, sched)``: one warp of one block."""
    return ll.FunctionType(I32, [ptr(), ptr(), I64, I64, ptr(), ptr(), ptr()])


def entry(module, symbol, warp_fn):
    """The kernel's entry, ``kernel(args, launch, first, last, shared, slots)``: the
    scheduler runs blocks [first, last) as warps of ``warp_fn``."""
    fnty = ll.FunctionType(I32, [ptr(), ptr(), I64, I64, ptr(), ptr()])
    fn = ll.Function(module, fnty, symbol)
    run = _declare(module, "simt_fiber_run", ll.FunctionType(
        I32, [ptr(), ptr(), ptr(), I64, I64, ptr(), ptr()]))
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.call(run, [warp_fn] + list(fn.args)))
    return fn


def lanes(em, warp):
    """In the warp function's entry: this warp's first and end flat thread indices (i32),
    and the first lane's thread index (for barrier faults, raised outside thread loops)."""
    eb = em.entry_builder
    first = _opaque(eb, eb.mul(warp, i64(WARP)))
    end = eb.add(first, i64(WARP))
    end = eb.select(eb.icmp_unsigned("<", end, em.nthreads), end, em.nthreads)
    em.lane_span = (eb.trunc(first, I32), eb.trunc(end, I32))
    bx, by = (eb.trunc(d, I32) for d in em.block_dims[:2])
    flat = em.lane_span[0]
    rest = eb.udiv(flat, bx)
    em.first_lane = {"threadIdx.x": eb.urem(flat, bx), "threadIdx.y": eb.urem(rest, by),
                     "threadIdx.z": eb.udiv(rest, by)}


def _opaque(b, value):
    """``value`` (an i64), its bits hidden from LLVM's optimizer by an empty inline asm.

    LLVM 22's loop vectorizer miscompiles a lane loop whose start it knows to be a multiple
    of 32 (warp * 32): an index such as ``tid % 4`` of a block of known shape becomes a
    narrow induction that wraps every 4 lanes, and the vectorizer drops the run-time check
    that it does not, then treats ``shared[tid % 4]`` as consecutive elements: a read-
    modify-write loses updates and writes past the array (issue 33, fuzz seed 702327).
    With the start unknown, the check stays and such loops run lane by lane, as a GPU's
    would; loops without such an index still vectorize."""
    fnty = ll.FunctionType(I64, [I64])
    return b.asm(fnty, "", "=r,0", [value], side_effect=False, name="first_lane")


def lane_loop(em, body_fn, guards, check_exit, state):
    """emit.thread_loop for one warp: the lanes of this warp, one after another."""
    b = em.builder
    bx, by = (b.trunc(d, I32) for d in em.block_dims[:2])
    names = ("lane_head", "thread", "recompute", "run", "write_back", "x_next",
             "threads_done")
    blocks = {n: em.new_block(n) for n in names}
    first, end = em.lane_span
    loop = counted_loop(em, end, "lane", [blocks[n] for n in ("lane_head", "thread",
                                                                "x_next", "threads_done")],
                        start=first, signed=False, flags=_NO_WRAP)
    with loop as flat:
        b = em.builder
        rest = b.udiv(flat, bx)
        tids = (b.udiv(rest, by), b.urem(rest, by), b.urem(flat, bx))
        em.thread_body(body_fn, guards, check_exit, state, blocks, tids, (by, bx), flat=flat)
    loopmeta.mark(em.module, loop.back_edge, [loopmeta.rolled_at_run_time(em.module)])


# ---------------------------------------------------------------- waiting
def yield_now(em, kind):
    """Give the thread to the other warps (``kind``: fibers.BLOCKED, STILL or SPIN, an int
    or an i32); the i1 says the block is deadlocked and this warp is to report it."""
    fn = _declare(em.module, "simt_fiber_yield", ll.FunctionType(I32, [ptr(), I32]))
    b = em.builder
    kind = i32(kind) if isinstance(kind, int) else kind
    return b.icmp_unsigned("!=", b.call(fn, [em.fiber_state, kind]), i32(0))


def wait_until(em, done_fn, loc, message):
    """Code that returns once ``done_fn()`` (an i1, built anew at each check) is true,
    yielding to the other warps meanwhile; a deadlock is a fault at ``loc``."""
    b = em.builder
    kind = em.alloca(I32, name="wait_kind")
    b.store(i32(fibers.BLOCKED), kind)
    head, wait, stuck, out = (em.new_block(n) for n in ("wait", "wait_yield", "wait_stuck",
                                                        "wait_done"))
    b.branch(head)
    b.position_at_end(head)
    em.builder.cbranch(done_fn(), out, wait)
    b = em.builder
    b.position_at_end(wait)
    gave_up = yield_now(em, b.load(kind, typ=I32))
    em.builder.store(i32(fibers.STILL), kind)
    em.builder.cbranch(gave_up, stuck, head)
    em.builder.position_at_end(stuck)
    em.target.emit_error(em, ASSERT, loc, message=message)
    em.builder.position_at_end(out)


def spin(em, stmt):
    """A spin loop's trip (target.loop_poll): let the other warps run."""
    if id(stmt) in em.fibers.spins:
        yield_now(em, fibers.SPIN)


# ---------------------------------------------------------------- barriers of the block
def barrier(em, s, guards):
    """syncthreads or a named barrier met by this warp's lanes that passed ``guards``:
    arrive with them (none: this warp is not there) and wait for the barrier."""
    if s.cpu_only:
        return             # an arrive/wait barrier's wait waits itself (lower/mbarrier.py)
    named = s.named or [ir.Const(T.INT32, s.loc, 0)]
    count = named[1] if len(named) > 1 else ir.Const(T.INT32, s.loc, 0)
    (ident, total), arrived, _ = _gather(em, s, guards, [named[0], count])
    what = "syncthreads()" if not s.named else "simt.barrier_sync(id, count)"
    _arrive(em, s, ident, total, arrived, None, NEVER_BAR.format(
        what=what, why="the other warps wait elsewhere or have exited"))


def collective(em, s, guards):
    """syncthreads_count/_and/_or: each warp adds its lanes' predicates at barrier 0."""
    _, arrived, trues = _gather(em, s, guards, [], predicate=s.value)
    out = em.alloca(ll.ArrayType(I32, 2), name="collective")
    _arrive(em, s, i32(0), i32(0), arrived, (trues, out), NEVER_BAR.format(
        what=f"syncthreads_{s.op}()", why="the other warps wait elsewhere"))
    b = em.builder
    pair = ll.ArrayType(I32, 2)
    total = b.load(b.gep(out, [i32(0), i32(0)], source_etype=pair), typ=I32)
    threads = b.load(b.gep(out, [i32(0), i32(1)], source_etype=pair), typ=I32)
    value = {"count": lambda: total,
             "and": lambda: b.zext(b.icmp_unsigned("==", total, threads), I32),
             "or": lambda: b.zext(b.icmp_unsigned("!=", total, i32(0)), I32)}[s.op]()
    result = em.alloca(I32, name="collective_value")
    b.store(value, result)
    em.thread_loop(lambda: em.store_var(s.name, em.builder.load(result, typ=I32)), guards,
                   state=em.uniform.state(s))


def _gather(em, s, guards, exprs, predicate=None):
    """A loop over this warp's lanes that passed ``guards``: how many did, the values of
    ``exprs`` (the last lane's: whole warps give one value) and the true predicates."""
    b = em.builder
    values = [em.alloca(I32, name="barrier_arg") for _ in exprs]
    arrived = em.alloca(I32, name="arrived")
    trues = em.alloca(I32, name="trues")
    for p in values + [arrived, trues]:
        b.store(i32(0), p)

    def each():
        b = em.builder
        b.store(b.add(b.load(arrived, typ=I32), i32(1)), arrived)
        for p, e in zip(values, exprs):
            b.store(em.expr(e), p)
        if predicate is not None:
            b = em.builder
            b.store(b.add(b.load(trues, typ=I32), b.zext(em.expr(predicate), I32)), trues)
    em.thread_loop(each, guards, state=em.uniform.state(s))
    b = em.builder
    return ([b.load(p, typ=I32) for p in values], b.load(arrived, typ=I32),
            b.load(trues, typ=I32))


def _arrive(em, s, ident, count, arrived, collect, message):
    """If any lane arrived: simt_fiber_bar; a deadlock is a fault of the warp's first lane."""
    fn = _declare(em.module, "simt_fiber_bar", ll.FunctionType(
        I32, [ptr(), I32, I32, I32, I32, I32, ptr()]))
    b = em.builder
    go, stuck, out = (em.new_block(n) for n in ("bar_arrive", "bar_stuck", "bar_done"))
    b.cbranch(b.icmp_unsigned("!=", arrived, i32(0)), go, out)
    b.position_at_end(go)
    trues, dest = collect if collect else (i32(0), ll.Constant(ptr(), None))
    gave = b.call(fn, [em.fiber_state, ident, count, arrived, trues, i32(1), dest])
    b.cbranch(b.icmp_unsigned("!=", gave, i32(0)), stuck, out)
    b.position_at_end(stuck)
    em.specials.update(em.first_lane)
    em.target.emit_error(em, ASSERT, s.loc, message=message)
    em.builder.position_at_end(out)


def arrive_named(em, ident, count):
    """barrier_arrive in a lane: one thread arrives, no wait."""
    fn = _declare(em.module, "simt_fiber_bar", ll.FunctionType(
        I32, [ptr(), I32, I32, I32, I32, I32, ptr()]))
    em.builder.call(fn, [em.fiber_state, ident, count, i32(1), i32(0), i32(0),
                         ll.Constant(ptr(), None)])


def _declare(module, name, fnty):
    fn = module.globals.get(name)
    return fn if fn is not None else ll.Function(module, fnty, name)
