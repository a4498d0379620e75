"""The bounds guard of element-wise kernels on the CPU: ``i = ...; if i < n: body``.

Inside the loop over a block's threads the guard makes LLVM vectorize the body with masked
loads and stores, which AMD's Zen 1-3 cores run in microcode: bench saxpy took 22 ms
against 12.9 ms scalar and 9-10 ms unmasked on one znver3 core. Every block but the last
passes the guard for all its threads, so the block first evaluates the guard alone for
each thread (pure integer arithmetic: a short vector loop), and when all pass it runs the
body with no guard; otherwise it runs the kernel as written.

Only on the cores whose masked stores are microcoded (``SLOW_MASKED``): where they are
cheap (AVX-512 machines) the masked loop beats the extra pass (on znver3 the pass costs
about a third of saxpy's unmasked loop). Only kernels whose body is pure assignments followed by one ``if`` without ``else``, the
assignments and condition reading only thread and block indices, parameters, array shapes
and constants (evaluating them twice changes nothing), and whose ``if`` body holds no loop
(the body is copied: loops would double the compile time for no vector gain)."""
import llvmlite.binding as llvm
from llvmlite import ir as ll

from ...ir import nodes as ir
from ...compiler.lltypes import I1
from .target import SPECIALS

_PURE_INTRINSICS = frozenset(SPECIALS) | {"grid", "gridsize"}
SLOW_MASKED = llvm.get_host_cpu_name() in ("znver1", "znver2", "znver3")


def split(body):
    """(assignments, condition, guarded statements) of a body of that shape on a core
    with SLOW_MASKED stores, else None."""
    if not SLOW_MASKED or not body or not isinstance(body[-1], ir.If) or body[-1].orelse:
        return None
    *pre, guard = body
    if not all(isinstance(s, ir.Assign) and _pure(s.value) for s in pre):
        return None
    if not _pure(guard.cond) or any(isinstance(s, (ir.While, ir.ForRange))
                                    for s in ir.walk_stmts(guard.then)):
        return None
    return pre, guard.cond, guard.then


def _pure(e):
    if isinstance(e, (ir.Const, ir.Var, ir.Param)):
        return True
    if isinstance(e, ir.ArrayAttr):
        return _pure(e.array)
    if isinstance(e, (ir.Cast, ir.UnaryOp)):
        return _pure(e.value)
    if isinstance(e, (ir.BinOp, ir.Compare, ir.Logical)):
        return _pure(e.lhs) and _pure(e.rhs)
    if isinstance(e, ir.Intrinsic):
        return e.op in _PURE_INTRINSICS and all(_pure(a) for a in e.args)
    return False


def emit(em, pre, cond, then, body):
    """The block's threads: the guard for all, then ``then`` unguarded or ``body``."""
    every = em.alloca(I1, name="every_thread_passes")
    em.builder.store(ll.Constant(I1, 1), every)

    def probe():
        passes = em.expr(cond)
        b = em.builder
        b.store(b.and_(b.load(every, typ=I1), passes), every)
    em.thread_loop(lambda: (em.emit_stmts(pre), probe()), [])
    b = em.builder
    full, partial, done = (em.new_block(n) for n in ("all_pass", "some_fail", "guarded_done"))
    b.cbranch(b.load(every, typ=I1), full, partial)
    for block, stmts in ((full, list(pre) + list(then)), (partial, body)):
        em.builder.position_at_end(block)
        em.thread_loop(lambda stmts=stmts: em.emit_stmts(stmts), [])
        em.builder.branch(done)
    em.builder.position_at_end(done)
