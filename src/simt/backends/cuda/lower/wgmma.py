"""The warpgroup MMA (lang/wgmma.py) on the GPU (sm_90a): descriptors are their 64 bits,
each call one PTX instruction in inline assembly with every accumulator register an operand
("+f", as CUTLASS writes it).

The accumulator is asynchronous between ``mma_async`` and ``wait_group``: the hardware
writes its registers after the instruction has issued. So fence, commit and wait also "touch"
every accumulator of the function (an empty volatile asm with each register tied in and
out): LLVM cannot move a read or write of a register across them, as nvcc cannot across
CUTLASS's ``warpgroup_fence_operand``."""
from llvmlite import ir as ll

from ....compiler import wgmma as shared   # noqa: F401  (the shared lowerings: zero, store)
from ....compiler.wgmma import operand_offset, register_address
from ....compiler.lltypes import F32, I64, i64, ptr
from ....lang.registry import declare_target, lowering
from ....lang.wgmma import (KINDS, MODE_BITS, commit_group, descriptor, fence, mma_async,
                            wait_group)
from ..archspecific import arch_specific

TARGET = declare_target("cuda")
SHARED = 3
arch_specific(descriptor, mma_async, fence, commit_group, wait_group, major=9)


def _asm(em, text, constraints, args, result=None):
    fnty = ll.FunctionType(result or ll.VoidType(), [a.type for a in args])
    return em.builder.call(ll.InlineAsm(fnty, text, constraints, side_effect=True), args)


@lowering(descriptor, target=TARGET)
def _descriptor(em, e):
    array, row, k = e.args
    t = e.type
    b = em.builder
    data = em.expr(array).data
    if data.type.addrspace != SHARED:
        data = b.addrspacecast(data, ptr(SHARED))
    address = b.add(b.ptrtoint(data, I64), operand_offset(b, t, em.expr(row), em.expr(k)))
    start = b.lshr(b.and_(address, i64(0x3FFFF)), i64(4))
    fixed = (t.lbo >> 4) << 16 | (t.sbo >> 4) << 32 | MODE_BITS[t.swizzle] << 62
    return b.or_(start, i64(fixed))


def _registers(em, acc):
    data = em.expr(acc).data
    return data, [em.builder.load(register_address(em, data, i), typ=F32)
                  for i in range(acc.type.registers)]


def _write_back(em, data, value, count):
    for i in range(count):
        em.builder.store(em.builder.extract_value(value, i), register_address(em, data, i))


@lowering(mma_async, target=TARGET)
def _mma(em, e):
    acc, a, b_desc, scale, _rank = e.args
    count = acc.type.registers
    data, regs = _registers(em, acc)
    kind = a.type.precision
    k = KINDS[kind][0]
    registers = ", ".join(f"${i}" for i in range(count))
    # the scales of a and b; for 16-bit operands, whether each is M- (N-) major
    transposes = f", {int(a.type.major == 'mn')}, {int(b_desc.type.major == 'mn')}"
    extra = ", 1, 1" + (transposes if kind in ("f16", "bf16") else "")
    text = (f"{{\n.reg .pred p;\nsetp.ne.b32 p, ${count + 2}, 0;\n"
            f"wgmma.mma_async.sync.aligned.m64n{acc.type.n}k{k}.f32.{kind}.{kind} "
            f"{{{registers}}}, ${count}, ${count + 1}, p{extra};\n}}")
    constraints = ",".join(["=f"] * count + ["l", "l", "r"] + [str(i) for i in range(count)])
    args = [em.expr(a), em.expr(b_desc), em.expr(scale)] + regs
    result = ll.LiteralStructType([F32] * count)
    _write_back(em, data, _asm(em, text, constraints, args, result), count)


def _pin_accumulators(em):
    """Tie every accumulator the function has used so far through an empty volatile asm."""
    for decl in em.function.decls:
        acc = getattr(decl, "wgmma", None)
        value = em.decl_values.get(id(decl))
        if acc is None or value is None:
            continue
        regs = [em.builder.load(register_address(em, value.data, i), typ=F32)
                for i in range(acc.registers)]
        count = len(regs)
        constraints = ",".join(["=f"] * count + [str(i) for i in range(count)])
        out = _asm(em, "", constraints, regs, ll.LiteralStructType([F32] * count))
        _write_back(em, value.data, out, count)


@lowering(fence, target=TARGET)
def _fence(em, e):
    _pin_accumulators(em)
    # the thread's shared-memory stores (the generic proxy) before wgmma's reads (the async
    # proxy): a tile written by threads, then fenced, then a barrier, as CUTLASS orders it
    _asm(em, "fence.proxy.async.shared::cta;\nwgmma.fence.sync.aligned;", "~{memory}", [])


@lowering(commit_group, target=TARGET)
def _commit(em, e):
    _asm(em, "wgmma.commit_group.sync.aligned;", "~{memory}", [])
    _pin_accumulators(em)


@lowering(wait_group, target=TARGET)
def _wait(em, e):
    _asm(em, f"wgmma.wait_group.sync.aligned {e.attrs['n']};", "~{memory}", [])
    _pin_accumulators(em)
