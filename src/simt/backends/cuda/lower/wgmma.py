"""The warpgroup MMA (lang/wgmma.py) on the GPU (sm_90a): descriptors are their 64 bits,
each call one PTX instruction in inline assembly with every accumulator register an operand
("+f", or "+r" for int32, as CUTLASS writes it), and a register fragment of A its 4 32-bit
words ("r").

The accumulator is asynchronous between ``mma_async`` and ``wait_group``: the hardware
writes its registers after the instruction has issued. So fence, commit and wait also "touch"
every accumulator of the function (an empty volatile asm with each register tied in and
out): LLVM cannot move a read or write of a register across them, as nvcc cannot across
CUTLASS's ``warpgroup_fence_operand``. The fence ties the register fragments of A the same
way, so that what the thread computed into them is in their registers before the fence.

Mixed integer operands (``.s8.u8``, ``.u8.s8``) exist from PTX ISA 8.4 on: a kernel that
uses them asks for that version (``target.ptx_isa``; compile.py writes it into the PTX)."""
from llvmlite import ir as ll

from ....compiler import wgmma as shared   # noqa: F401  (the shared lowerings: zero, store)
from ....compiler.wgmma import operand_offset, register_address, register_type
from ....compiler.lltypes import F32, I8, I32, I64, i64, ptr
from ....lang.registry import declare_target, lowering
from ....lang.wgmma import (FRAGMENT_BYTES, INTEGER, KINDS, MODE_BITS, Descriptor,
                            commit_group, descriptor, fence, mma_async, wait_group)
from ..archspecific import arch_specific

TARGET = declare_target("cuda")
SHARED = 3
MIXED_INTEGERS_ISA = (8, 4)
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
    elem = register_type(acc.type)
    return data, [em.builder.load(register_address(em, data, i, elem), typ=elem)
                  for i in range(acc.type.registers)]


def _write_back(em, data, value, count, elem):
    for i in range(count):
        em.builder.store(em.builder.extract_value(value, i),
                         register_address(em, data, i, elem))


def _words(em, data):
    """The pointers of a register fragment's 4 32-bit words (its local array's bytes)."""
    return [em.builder.gep(data, [i64(4 * i)], source_etype=I8)
            for i in range(FRAGMENT_BYTES // 4)]


def _operands(count, a_regs):
    """The PTX operands after D: a (a descriptor or a fragment's registers) and b; then the
    scale-d operand the predicate is made from."""
    if a_regs == 1:
        return f"${count}, ${count + 1}", f"${count + 2}"
    a = ", ".join(f"${count + i}" for i in range(a_regs))
    return f"{{{a}}}, ${count + a_regs}", f"${count + a_regs + 1}"


def _immediates(a_kind, fragment, trans_a, trans_b):
    """imm-scale-a, imm-scale-b (1: not negated) and the transposes (1: M- or N-major),
    which only f16 and bf16 have (and a register fragment of A has none); integers have
    none."""
    if a_kind in INTEGER:
        return ""
    if a_kind in ("f16", "bf16"):
        return f", 1, 1, {trans_b}" if fragment else f", 1, 1, {trans_a}, {trans_b}"
    return ", 1, 1"


def _major(operand):
    """1 for an M- or N-major descriptor (wgmma.descriptor(..., major='mn')), else 0."""
    return int(getattr(operand.type, "major", "k") == "mn")


def _a_values(em, a):
    """The a operand: a descriptor's 64 bits, or a fragment's 4 32-bit registers."""
    if isinstance(a.type, Descriptor):
        return [em.expr(a)]
    return [em.builder.load(p, typ=I32) for p in _words(em, em.expr(a).data)]


@lowering(mma_async, target=TARGET)
def _mma(em, e):
    acc, a, b_desc, scale, _rank = e.args
    a_kind, b_kind = e.attrs["kinds"]
    count, elem = acc.type.registers, register_type(acc.type)
    data, regs = _registers(em, acc)
    a_values = _a_values(em, a)
    fragment = len(a_values) > 1
    if a_kind in INTEGER and a_kind != b_kind:
        em.target.ptx_isa = max(em.target.ptx_isa or MIXED_INTEGERS_ISA, MIXED_INTEGERS_ISA)
    registers = ", ".join(f"${i}" for i in range(count))
    operands, predicate = _operands(count, len(a_values))
    dtype = "s32" if acc.type.integer else "f32"
    text = (f"{{\n.reg .pred p;\nsetp.ne.b32 p, {predicate}, 0;\n"
            f"wgmma.mma_async.sync.aligned.m64n{acc.type.n}k{KINDS[a_kind][0]}.{dtype}."
            f"{a_kind}.{b_kind} {{{registers}}}, {operands}, p"
            f"{_immediates(a_kind, fragment, _major(a), _major(b_desc))};\n}}")
    out = "=r" if acc.type.integer else "=f"
    constraints = ",".join([out] * count + ["r" if fragment else "l"] * len(a_values) +
                           ["l", "r"] + [str(i) for i in range(count)])
    args = a_values + [em.expr(b_desc), em.expr(scale)] + regs
    result = ll.LiteralStructType([elem] * count)
    _write_back(em, data, _asm(em, text, constraints, args, result), count, elem)


def _tie(em, values):
    """The values (all float or all i32), through an empty volatile asm LLVM cannot see into."""
    count = len(values)
    code = "f" if values[0].type == F32 else "r"
    constraints = ",".join([f"={code}"] * count + [str(i) for i in range(count)])
    out = _asm(em, "", constraints, values, ll.LiteralStructType([values[0].type] * count))
    return [em.builder.extract_value(out, i) for i in range(count)]


def _pinned(decl, value, em, fragments):
    """(register type, register addresses) of a declaration to pin, or None."""
    acc = getattr(decl, "wgmma", None)
    if acc is not None:
        elem = register_type(acc)
        return elem, [register_address(em, value.data, i, elem) for i in range(acc.registers)]
    if fragments and getattr(decl, "wgmma_fragment", False):
        return I32, _words(em, value.data)
    return None


def _pin_accumulators(em, fragments=False):
    """Tie every accumulator the function has used so far through an empty volatile asm
    (and at a fence every register fragment of A)."""
    for decl in em.function.decls:
        value = em.decl_values.get(id(decl))
        pinned = None if value is None else _pinned(decl, value, em, fragments)
        if pinned is None:
            continue
        elem, addresses = pinned
        regs = [em.builder.load(address, typ=elem) for address in addresses]
        for address, tied in zip(addresses, _tie(em, regs)):
            em.builder.store(tied, address)


@lowering(fence, target=TARGET)
def _fence(em, e):
    _pin_accumulators(em, fragments=True)
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
