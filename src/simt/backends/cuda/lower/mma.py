"""The warp-level matrix instructions (lang/mma.py) on the GPU: one PTX instruction each
(inline PTX: mma.sync.aligned, ldmatrix.sync.aligned, stmatrix.sync.aligned); a fragment's
registers live in its local array, 32-bit words in register order, which LLVM's SROA
turns back into registers."""
from llvmlite import ir as ll

from ....compiler.flat import flat_address
from ....compiler.lltypes import F32, I8, I32, I64, i64, ptr
from ....lang.mma import ldmatrix, stmatrix, sync
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cuda")


def _words(em, frag, count):
    """The first ``count`` 32-bit words of a fragment's local array (their pointers)."""
    data = em.expr(frag).data
    return [em.builder.gep(data, [i64(4 * i)], source_etype=I8) for i in range(count)]


def _asm(em, text, outputs, inputs, operands, memory=True):
    """Call inline PTX ``text`` (LLVM's $n operands) with ``outputs`` (LLVM types), returning
    a list of their values. Convergent: every lane of the warp makes the call."""
    out = [t for t, _ in outputs]
    ret = ll.VoidType() if not out else (out[0] if len(out) == 1 else ll.LiteralStructType(out))
    clobbers = ["~{memory}"] if memory else []
    constraints = ",".join([f"={c}" for _, c in outputs] + inputs + clobbers)
    fnty = ll.FunctionType(ret, [v.type for v in operands])
    b = em.builder
    result = b.call(ll.InlineAsm(fnty, text, constraints, side_effect=True), operands,
                    attrs=("convergent",))
    if len(out) <= 1:
        return [result] if out else []
    return [b.extract_value(result, i) for i in range(len(out))]


def _row_address(em, e, array_node, offset_node):
    """This lane's row address (lang/mma.py's ldmatrix doc): a 32-bit shared address of row
    lane % 16, column 8 * (lane // 16) of the tile at element ``offset``."""
    array = em.expr(array_node)
    b = em.builder
    lane = b.zext(em.target.laneid(em), I64)
    row = b.mul(b.and_(lane, i64(15)), array.strides[0])
    index = b.add(em.expr(offset_node), b.add(row, b.mul(b.lshr(lane, i64(4)), i64(8))))
    address = flat_address(em, array, index, e.attrs["label"], e.loc)
    b = em.builder
    if address.type.addrspace != 3:
        address = b.addrspacecast(address, ptr(3))
    return b.trunc(b.ptrtoint(address, I64), I32)


def _regs(n):
    return ", ".join(f"${i}" for i in range(n))


@lowering(ldmatrix, target=TARGET)
def _ldmatrix(em, e):
    frag, array, offset = e.args
    n, trans = e.attrs["n"], ".trans" if e.attrs["trans"] else ""
    address = _row_address(em, e, array, offset)
    text = (f"ldmatrix.sync.aligned.m8n8.x{n}{trans}.shared.b16 {{{_regs(n)}}}, [${n}];")
    values = _asm(em, text, [(I32, "r")] * n, ["r"], [address])
    for value, pointer in zip(values, _words(em, frag, n)):
        em.builder.store(value, pointer)


@lowering(stmatrix, target=TARGET)
def _stmatrix(em, e):
    array, offset, frag = e.args
    n, trans = e.attrs["n"], ".trans" if e.attrs["trans"] else ""
    address = _row_address(em, e, array, offset)
    regs = [em.builder.load(p, typ=I32) for p in _words(em, frag, n)]
    text = (f"stmatrix.sync.aligned.m8n8.x{n}{trans}.shared.b16 [$0], "
            f"{{{', '.join(f'${i + 1}' for i in range(n))}}};")
    _asm(em, text, [], ["r"] * (n + 1), [address] + regs)


# an accumulator's PTX type: (instruction type, register type, constraint)
_ACC = {"f32": ("f32", F32, "f"), "f16": ("f16", I32, "r")}


def _kind(node):
    return "f16" if node.type.dtype.itemsize == 2 else "f32"


def _braces(first, count):
    return "{" + ", ".join(f"${first + i}" for i in range(count)) + "}"


@lowering(sync, target=TARGET)
def _mma(em, e):
    d, a, b, c = e.args
    m, n, k = e.attrs["shape"]
    kind, dk, ck = e.attrs["kind"], _kind(d), _kind(c)
    na, nb = {16: (4, 2), 8: (2, 1)}[k]
    nd, nc = (4 if x == "f32" else 2 for x in (dk, ck))
    bld = em.builder
    regs = [bld.load(p, typ=I32) for p in _words(em, a, na) + _words(em, b, nb)]
    regs += [bld.load(p, typ=_ACC[ck][1]) for p in _words(em, c, nc)]
    text = (f"mma.sync.aligned.m{m}n{n}k{k}.row.col.{dk}.{kind}.{kind}.{ck} {_braces(0, nd)}, "
            f"{_braces(nd, na)}, {_braces(nd + na, nb)}, {_braces(nd + na + nb, nc)};")
    outputs = [(_ACC[dk][1], _ACC[dk][2])] * nd
    inputs = ["r"] * (na + nb) + [_ACC[ck][2]] * nc
    values = _asm(em, text, outputs, inputs, regs, memory=False)
    for value, pointer in zip(values, _words(em, d, nd)):
        em.builder.store(value, pointer)
