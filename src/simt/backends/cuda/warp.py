"""Warp functions and grid sync on NVIDIA GPUs: NVVM intrinsics, as nvcc's headers use them.

Shuffles move 32 bits: narrower values are widened, floats bitcast, 64-bit values split into
two 32-bit shuffles (as CUDA's __shfl_sync(double) does). ``c`` packs the segment mask and
clamp exactly as sm_30_intrinsics.hpp does: ((32 - width) << 8) | clamp.
"""
from llvmlite import ir as ll

from ...compiler.lltypes import I1, I32, I64, function, i32, scalar

REDUX = {"add": ("add", "add"), "min": ("min", "umin"), "max": ("max", "umax"),
         "and": ("and", "and"), "or": ("or", "or"), "xor": ("xor", "xor")}


def _fn(em, name, ret, args):
    return function(em.module, name, ll.FunctionType(ret, args))


def to_words(b, value, t):
    """A scalar as a list of i32 words (one, or two for 64-bit values)."""
    if t.kind == "f":
        value = b.bitcast(value, ll.IntType(t.bits))
    if t.bits <= 32:
        if t.bits < 32:
            extend = b.sext if t.kind == "i" else b.zext
            value = extend(value, I32)
        return [value]
    return [b.trunc(value, I32), b.trunc(b.lshr(value, ll.Constant(I64, 32)), I32)]


def from_words(b, words, t):
    if len(words) == 2:
        value = b.or_(b.zext(words[0], I64), b.shl(b.zext(words[1], I64), ll.Constant(I64, 32)))
    else:
        value = words[0]
        if t.bits < 32:
            value = b.trunc(value, ll.IntType(t.bits))
    if t.kind == "f":
        value = b.bitcast(value, scalar(t))
    return value


def emit_warp(em, s, args=None):
    """Lower one ir.WarpOp; returns its value (None for syncwarp). ``args``: its
    arguments' values, when the caller evaluated them (checked mode)."""
    b = em.builder
    kind, _, sub = s.op.partition(".")
    args = [em.expr(a) for a in s.args] if args is None else args
    if kind == "syncwarp":
        b.call(_fn(em, "llvm.nvvm.bar.warp.sync", ll.VoidType(), [I32]), args)
        return None
    if kind == "exchange":      # the CPU device's lanes meet here; the GPU's instruction
        return None             # (mma.sync, ldmatrix ...) crosses lanes itself
    if kind == "activemask":
        # convergent: LLVM must not hoist identical calls out of both sides of a branch
        asm = ll.InlineAsm(ll.FunctionType(I32, []), "activemask.b32 $0;", "=r", side_effect=True)
        return b.call(asm, [], attrs=("convergent",))
    if kind == "elect":
        return _elect(em)
    if kind == "shfl":
        return _shfl(em, sub, args, s.args[1].type)
    if kind == "vote":
        mask, pred = args
        if sub == "ballot":
            return b.call(_fn(em, "llvm.nvvm.vote.ballot.sync", I32, [I32, I1]), [mask, pred])
        result = b.call(_fn(em, f"llvm.nvvm.vote.{sub}.sync", I1, [I32, I1]), [mask, pred])
        return b.zext(result, I32)
    if kind == "match":
        return _match(em, sub, args, s.args[1].type)
    if kind == "reduce":
        mask, value = args
        signed, unsigned = REDUX[sub]
        name = signed if s.type.kind == "i" else unsigned
        return b.call(_fn(em, f"llvm.nvvm.redux.sync.{name}", I32, [I32, I32]), [value, mask])
    raise NotImplementedError(s.op)


# elect.sync among the lanes executing together (activemask): the full mask would be
# undefined behaviour where some lanes of the warp have exited or branched away
ELECT = ("{\n.reg .pred %simt_elected;\n.reg .b32 %simt_lanes;\n"
         "activemask.b32 %simt_lanes;\nelect.sync _|%simt_elected, %simt_lanes;\n"
         "selp.u32 $0, 1, 0, %simt_elected;\n}")


def _elect(em):
    asm = ll.InlineAsm(ll.FunctionType(I32, []), ELECT, "=r", side_effect=True)
    chosen = em.builder.call(asm, [], attrs=("convergent",))
    return em.builder.icmp_unsigned("!=", chosen, i32(0))


def _shfl(em, mode, args, t):
    b = em.builder
    mask, value, lane, width = args
    seg = b.shl(b.sub(i32(32), width), i32(8))
    c = seg if mode == "up" else b.or_(seg, i32(0x1F))
    fn = _fn(em, f"llvm.nvvm.shfl.sync.{mode}.i32", I32, [I32, I32, I32, I32])
    words = [b.call(fn, [mask, w, lane, c]) for w in to_words(b, value, t)]
    if t.kind == "b":
        return b.icmp_unsigned("!=", words[0], i32(0))
    return from_words(b, words, t)


def _match(em, kind, args, t):
    b = em.builder
    mask, value = args
    if t.kind == "f":
        value = b.bitcast(value, ll.IntType(t.bits))
    wide = t.bits > 32
    it = I64 if wide else I32
    if not wide and value.type.width < 32:
        value = (b.sext if t.kind == "i" else b.zext)(value, I32)
    suffix = "i64" if wide else "i32"
    if kind == "any":
        return b.call(_fn(em, f"llvm.nvvm.match.any.sync.{suffix}", I32, [I32, it]), [mask, value])
    pair_t = ll.LiteralStructType([I32, I1])
    pair = b.call(_fn(em, f"llvm.nvvm.match.all.sync.{suffix}p", pair_t, [I32, it]), [mask, value])
    out = ll.Constant(ll.LiteralStructType([I32, I32]), ll.Undefined)
    out = b.insert_value(out, b.extract_value(pair, 0), 0)
    return b.insert_value(out, b.zext(b.extract_value(pair, 1), I32), 1)


def laneid(em):
    return em.builder.call(_fn(em, "llvm.nvvm.read.ptx.sreg.laneid", I32, []), [])


CLUSTER_BARRIERS = {"cluster": ("barrier.cluster.arrive;", "barrier.cluster.wait;"),
                    "cluster.arrive": ("barrier.cluster.arrive;",),
                    "cluster.wait": ("barrier.cluster.wait;",)}


def emit_grid_sync(em, stmt):
    """A grid-wide barrier for cooperative launches, on one counter per module.

    Thread 0 of each block adds 1 (block 0 adds 0x80000000 - (blocks - 1)), so the counter's
    top bit flips exactly once when every block has arrived; it then waits for the flip.
    The counter never needs resetting, so the module is reusable launch after launch
    (one cooperative launch of a kernel at a time, as CUDA's own grid barrier needs).
    A cluster's sync is the hardware's: barrier.cluster.arrive (release) and wait (acquire),
    both, or one of them for the split barrier_arrive() / barrier_wait()."""
    b = em.builder
    if stmt.scope in CLUSTER_BARRIERS:
        for text in CLUSTER_BARRIERS[stmt.scope]:
            b.call(ll.InlineAsm(ll.FunctionType(ll.VoidType(), []), text, "~{memory}",
                                side_effect=True), [], attrs=("convergent",))
        return
    counter = em.module.globals.get("simt_grid_barrier")
    if counter is None:
        counter = ll.GlobalVariable(em.module, I32, "simt_grid_barrier", addrspace=1)
        counter.initializer = ll.Constant(I32, 0)
        counter.align = 4
    barrier = _fn(em, "llvm.nvvm.barrier0", ll.VoidType(), [])
    b.call(barrier, [])
    sreg = {n: em.target.special(em, n) for n in
            ("threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y",
             "blockIdx.z", "gridDim.x", "gridDim.y", "gridDim.z")}
    first_thread = b.icmp_unsigned("==", b.or_(b.or_(sreg["threadIdx.x"], sreg["threadIdx.y"]),
                                               sreg["threadIdx.z"]), i32(0))
    arrive, wait, done = em.new_block("grid_arrive"), em.new_block("grid_wait"), em.new_block("grid_synced")
    b.cbranch(first_thread, arrive, done)
    b.position_at_end(arrive)
    nblocks = b.mul(b.mul(sreg["gridDim.x"], sreg["gridDim.y"]), sreg["gridDim.z"])
    first_block = b.icmp_unsigned("==", b.or_(b.or_(sreg["blockIdx.x"], sreg["blockIdx.y"]),
                                              sreg["blockIdx.z"]), i32(0))
    add = b.select(first_block, b.sub(i32(0x80000000), b.sub(nblocks, i32(1))), i32(1))
    b.fence("seq_cst", "device")
    old = b.atomic_rmw("add", counter, add, "monotonic")
    b.branch(wait)
    b.position_at_end(wait)
    now = b.load_atomic(counter, "monotonic", 4, typ=I32)
    flipped = b.icmp_unsigned("!=", b.and_(b.xor(old, now), i32(0x80000000)), i32(0))
    b.cbranch(flipped, done, wait)
    b.position_at_end(done)
    b.fence("seq_cst", "device")
    b.call(barrier, [])
