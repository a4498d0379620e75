"""The arrive/wait barrier (lang/barrier.py) on the GPU: NVVM's mbarrier intrinsics, and
inline PTX for try_wait (LLVM has no intrinsic for it). A barrier with a completion function
keeps its counts in words 1 and 2 (compiler/mbarrier.py); its mbarrier (word 0) then expects
the one arrival that closes a phase."""
from llvmlite import ir as ll

from ....compiler.lltypes import I32, I64, i32, i64, ptr
from ....compiler.mbarrier import complete_phase, init_counts, state
from ....lang.barrier import (arrive, arrive_drop, arrive_expect_tx, complete, expect_tx, init,
                              try_wait, wait, wait_parity)
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cuda")


def _shared(em, pointer):
    shared = em.target.addrspace("shared")
    if pointer.type.addrspace == shared:
        return pointer
    return em.builder.addrspacecast(pointer, ptr(shared))


def _nvvm(em, name, ret, args):
    fn = em.module.declare_intrinsic(name, fnty=ll.FunctionType(ret, [a.type for a in args]))
    return em.builder.call(fn, args)


@lowering(init, target=TARGET)
def _init_gpu(em, e):
    expected = em.expr(e.args[1])
    if e.attrs.get("completion"):
        init_counts(em, e, expected)
        expected = i32(1)                  # the arrival that closes a phase
    _nvvm(em, "llvm.nvvm.mbarrier.init.shared", ll.VoidType(),
          [_shared(em, state(em, e)), expected])


@lowering(arrive, target=TARGET)
def _arrive_gpu(em, e):
    return _nvvm(em, "llvm.nvvm.mbarrier.arrive.shared", I64, [_shared(em, state(em, e))])


@lowering(arrive_drop, target=TARGET)
def _drop_gpu(em, e):
    _nvvm(em, "llvm.nvvm.mbarrier.arrive.drop.shared", I64, [_shared(em, state(em, e))])


@lowering(wait, target=TARGET)
def _wait_gpu(em, e):
    bar, token = _shared(em, state(em, e)), em.expr(e.args[1])
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
    ready = b.call(asm, [b.ptrtoint(bar, I64), token])
    b.cbranch(b.icmp_unsigned("!=", ready, ll.Constant(I32, 0)), done, loop)
    b.position_at_end(done)


@lowering(complete, target=TARGET)
def _complete_gpu(em, e):
    """Close the phase, then release the waiters: the mbarrier's one expected arrival."""
    complete_phase(em, e)
    _nvvm(em, "llvm.nvvm.mbarrier.arrive.shared", I64, [_shared(em, state(em, e))])


def _asm(em, text, constraints, ret, args):
    """One inline PTX statement on the barrier (args: LLVM values; the barrier first)."""
    fnty = ll.FunctionType(ret, [a.type for a in args])
    return em.builder.call(ll.InlineAsm(fnty, text, constraints, side_effect=True), args)


def _address(em, e):
    return em.builder.ptrtoint(_shared(em, state(em, e)), I64)


@lowering(expect_tx, target=TARGET)
def _expect_tx_gpu(em, e):
    _asm(em, "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], $1;", "l,r,~{memory}",
         ll.VoidType(), [_address(em, e), em.expr(e.args[1])])


@lowering(arrive_expect_tx, target=TARGET)
def _arrive_expect_tx_gpu(em, e):
    return _asm(em, "mbarrier.arrive.expect_tx.shared::cta.b64 $0, [$1], $2;",
                "=l,l,r,~{memory}", I64, [_address(em, e), em.expr(e.args[1])])


@lowering(try_wait, target=TARGET)
def _try_wait_gpu(em, e):
    ready = _asm(em, "{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [$1], $2; "
                 "selp.b32 $0, 1, 0, p; }", "=r,l,l,~{memory}", I32,
                 [_address(em, e), em.expr(e.args[1])])
    return em.builder.icmp_unsigned("!=", ready, ll.Constant(I32, 0))


@lowering(wait_parity, target=TARGET)
def _wait_parity_gpu(em, e):
    bar, parity = _address(em, e), em.expr(e.args[1])
    b = em.builder
    loop, done = em.new_block("mbarrier_parity_wait"), em.new_block("mbarrier_parity_done")
    b.branch(loop)
    b.position_at_end(loop)
    ready = _asm(em, "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; "
                 "selp.b32 $0, 1, 0, p; }", "=r,l,r,~{memory}", I32, [bar, parity])
    b.cbranch(b.icmp_unsigned("!=", ready, ll.Constant(I32, 0)), done, loop)
    b.position_at_end(done)
