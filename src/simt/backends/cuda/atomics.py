"""Scoped and ordered atomics on NVIDIA GPUs.

LLVM's NVPTX back end (LLVM 22) honours sync scopes and orderings on
``cmpxchg`` and atomic loads and stores, but drops them on ``atomicrmw``:
``atomicrmw add ... syncscope("block") acquire`` becomes a plain relaxed
``atom.global.add``. So a read-modify-write that PTX has as one instruction is
written here as ``atom{.sem}.{scope}{.space}.op.type`` when its scope or order
is not the default (device, relaxed); the others (float min/max, 64-bit
inc/dec) stay LLVM's compare-and-swap loops, whose ``cmpxchg`` carries both.
A seq_cst atomic is ``fence.sc.<scope>`` then the acquire form, as
``cuda::atomic_ref`` does. 16-bit compare-and-swap is ``atom.cas.b16`` (sm_70),
where LLVM would loop on a 32-bit word.
"""
from llvmlite import ir as ll

I16 = ll.IntType(16)

SCOPES = {"block": "cta", "device": "gpu", "system": "sys"}
SPACES = {1: ".global", 3: ".shared"}           # LLVM address space -> PTX state space
INT = {32: "32", 64: "64"}

# LLVM atomicrmw op -> {element kind + bits -> PTX op.type}, where PTX has one instruction
NATIVE = {
    "add": {"i32": "add.u32", "u32": "add.u32", "i64": "add.u64", "u64": "add.u64"},
    "fadd": {"f16": "add.noftz.f16", "f32": "add.f32", "f64": "add.f64"},
    "xchg": {k + b: "exch.b" + b for k in "iuf" for b in INT.values()},
    "min": {"i32": "min.s32", "i64": "min.s64"}, "umin": {"u32": "min.u32", "u64": "min.u64"},
    "max": {"i32": "max.s32", "i64": "max.s64"}, "umax": {"u32": "max.u32", "u64": "max.u64"},
    "and": {k + b: "and.b" + b for k in "iu" for b in INT.values()},
    "or": {k + b: "or.b" + b for k in "iu" for b in INT.values()},
    "xor": {k + b: "xor.b" + b for k in "iu" for b in INT.values()},
    "uinc_wrap": {"u32": "inc.u32", "i32": "inc.u32"},
    "udec_wrap": {"u32": "dec.u32", "i32": "dec.u32"},
}
CONSTRAINT = {"i16": "h", "i32": "r", "i64": "l", "float": "f", "double": "d"}


def atomic_rmw(target, em, op, address, value, t, scope, order):
    """``op`` at ``address``; LLVM's atomicrmw unless PTX's scoped form is needed."""
    b = em.builder
    if op in ("sub", "fsub"):        # PTX has no atom.sub: add the negation
        op, value = ("add", b.neg(value)) if op == "sub" else ("fadd", b.fneg(value))
    ptx = NATIVE.get(op, {}).get(f"{t.kind}{t.bits}")
    if ptx is None or (scope, order) == ("device", "relaxed"):
        return b.atomic_rmw(op, address, value, target.ordering(order, scope))
    return _asm(em, ptx, address, [value], scope, order)


def cas16(em, address, cmp, new, scope, order):
    """16-bit compare-and-swap as one ``atom.cas.b16``."""
    return _asm(em, "cas.b16", address, [cmp, new], scope, order)


def _asm(em, op_type, address, values, scope, order):
    """``[fence.sc.scope;] atom{.sem}.scope{.space}.op_type $0, [$1], $2[, $3];``"""
    b = em.builder
    value_type = values[0].type
    half = isinstance(value_type, ll.HalfType)
    if half:
        values = [b.bitcast(v, I16) for v in values]
    reg = CONSTRAINT[str(values[0].type)]
    sem = {"relaxed": "", "seq_cst": ".acquire"}.get(order, "." + order)
    fence = f"fence.sc.{SCOPES[scope]}; " if order == "seq_cst" else ""
    space = SPACES.get(address.type.addrspace, "")
    operands = ", ".join(f"${i + 2}" for i in range(len(values)))
    text = f"{fence}atom{sem}.{SCOPES[scope]}{space}.{op_type} $0, [$1], {operands};"
    constraints = ",".join([f"={reg}", "l"] + [reg] * len(values) + ["~{memory}"])
    fnty = ll.FunctionType(values[0].type, [address.type] + [v.type for v in values])
    old = b.call(ll.InlineAsm(fnty, text, constraints, side_effect=True), [address] + values)
    return b.bitcast(old, value_type) if half else old
