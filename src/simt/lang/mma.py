"""Warp-level matrix instructions of the PTX ISA: ``mma.sync``, ``ldmatrix``, ``stmatrix``.

Unlike wmma (lang/wmma.py), whose element-to-lane mapping is unspecified, these name the
hardware's registers: a fragment is a plain 1-D ``simt.local.array`` holding this lane's
registers in the PTX ISA's order, two 16-bit elements per 32-bit register, the lower
element first (``a[0]``, ``a[1]`` are PTX's a0, a1 ...). So a lane may compute on its
elements, and the CPU device must give every lane the registers the GPU gives it: the
layouts are the PTX ISA's figures, with ``g = lane >> 2`` (groupID) and ``t = lane % 4``
(threadID_in_group):

- ``ldmatrix`` matrix j (of n 8x8 matrices of b16): elements ``2j``, ``2j+1`` of the
  fragment are row g, columns 2t and 2t+1 (``trans``: rows 2t and 2t+1 of column g).
- ``mma.sync`` m16n8k16, A (16x16, 8 elements): i in 0..7 is row ``g + 8*((i//2) % 2)``,
  column ``2t + i%2 + 8*(i//4)``; B (16x8, 4): row ``2t + i%2 + 8*(i//2)``, column g;
  C and D (16x8, 4): row ``g + 8*(i//2)``, column ``2t + i%2``. m16n8k8 keeps A's first
  4 elements (16x8) and B's first 2 (8x8).

Each call hoists an ``exchange`` warp operation before it (lang/warp.py's machinery): on
the GPU it is nothing (the instruction itself crosses lanes); on the CPU device, where a
warp's lanes run in turn, it is where every lane leaves the operands the others need
(addresses, registers) and the call's result run reads them (backends/cpu/lower/mma.py).
docs/tensor-cores.md has the contract.
"""
import numpy as np

from .arguments import bind
from ..ir import nodes as ir
from ..ir import types as T
from .registry import Intrinsic, Static

# shape (m, n, k) -> elements of a, b (16-bit) per lane
SHAPES = {(16, 8, 16): (8, 4), (16, 8, 8): (4, 2)}
ACCUMULATORS = {"f16": ("f32", "f16"), "bf16": ("f32",)}


def kind_of(dtype):
    """'f16', 'bf16', 'f32' or None: the PTX type a fragment array holds."""
    if T.is_bfloat16_dtype(dtype):
        return "bf16"
    return {"float16": "f16", "float32": "f32"}.get(np.dtype(dtype).name)


def _args(fc, args, kwargs, names, loc, name):
    return bind(fc, args, kwargs, names, loc, name)


def exchange(fc, values, loc):
    """Hoist the warp operation through which the CPU device's lanes see each other's
    ``values`` (scalars); every lane of the warp takes part."""
    warp = fc.warp()
    mask = ir.Const(warp.mask, loc, warp.full_mask)
    op = ir.WarpOp(loc, None, "exchange", [mask] + list(values), T.VOID)
    fc.hoist(op)
    return tuple(a.type for a in op.args)


def _fragment(fc, value, loc, name, what):
    """A local array argument: (the ArrayRef, its element count, its PTX type)."""
    v = fc.expr(value, loc)
    t = v.type
    if not (isinstance(v, ir.ArrayRef) and v.decl.space == "local" and len(v.decl.shape) == 1
            and type(t) is T.Array):
        fc.fail(loc, f"{name}: {what} must be a 1-D simt.local.array of this function "
                f"(a fragment), got {t}")
    return v, v.decl.shape[0], kind_of(t.dtype)


def _shared(fc, value, loc, name):
    array = fc.expr(value, loc)
    t = array.type
    if not isinstance(t, T.Array) or t.space != "shared" or t.ndim != 2 or t.layout != "C":
        fc.fail(loc, f"{name} needs a 2-D C-contiguous shared array (its rows are the "
                f"matrix rows), got {t}", "simt.shared.array((rows, cols), np.float16)")
    if t.dtype.itemsize != 2:
        fc.fail(loc, f"{name} moves 16-bit elements (float16, bfloat16, int16, uint16); "
                f"{fc.label_of(value)} holds {t.dtype}")
    return array


def _count(fc, value, loc, name):
    n = fc.constant_int(value, "n", loc)
    if n not in (1, 2, 4):
        fc.fail(loc, f"{name}: n is the number of 8x8 matrices, 1, 2 or 4; got {n}")
    return n


def _trans(fc, value, loc):
    trans = value.value if isinstance(value, Static) else fc.static(value, "trans", loc)
    if not isinstance(trans, (bool, np.bool_)):
        fc.fail(loc, f"trans must be True or False, got {trans!r}")
    return bool(trans)


def _offset(fc, value, loc):
    """The offset, bound once to a temporary: both the exchange and the call read it."""
    offset = fc.index(fc.expr(value, loc), loc)
    name = fc.temp("mma_offset")
    fc.assign_type(name, T.INT64, loc)
    fc.hoist(ir.Assign(loc, name, offset))
    return ir.Var(T.INT64, loc, name)


def _ldmatrix_build(fc, args, kwargs, loc):
    array, offset, n, trans = _args(fc, args, kwargs, [
        ("shared_array", None), ("offset", None), ("n", Static(1)), ("trans", Static(False))],
        loc, "simt.ldmatrix")
    mem = _shared(fc, array, loc, "simt.ldmatrix")
    n, trans = _count(fc, n, loc, "simt.ldmatrix"), _trans(fc, trans, loc)
    name = fc.pending_name()
    if name.startswith("$"):
        fc.fail(loc, "bind the fragment simt.ldmatrix returns to a name: "
                "a = simt.ldmatrix(As, offset, n=4)")
    decl = ir.MemoryDecl(name, "local", (2 * n,), mem.type.dtype)
    frag = ir.ArrayRef(decl.type, loc, decl)
    offset = _offset(fc, offset, loc)
    types = exchange(fc, [offset], loc)
    fc.hoist(ir.ExprStmt(loc, ldmatrix.node(T.VOID, loc, [frag, mem, offset], {
        "n": n, "trans": trans, "exchange": types, "label": fc.label_of(array)})))
    return frag


def _stmatrix_build(fc, args, kwargs, loc):
    array, offset, frag, n, trans = _args(fc, args, kwargs, [
        ("shared_array", None), ("offset", None), ("frag", None), ("n", Static(1)),
        ("trans", Static(False))], loc, "simt.stmatrix")
    mem = _shared(fc, array, loc, "simt.stmatrix")
    n, trans = _count(fc, n, loc, "simt.stmatrix"), _trans(fc, trans, loc)
    f, count, _ = _fragment(fc, frag, loc, "simt.stmatrix", "frag")
    if count < 2 * n or f.type.dtype.itemsize != 2:
        fc.fail(loc, f"simt.stmatrix(n={n}) stores {2 * n} 16-bit elements per lane; frag "
                f"holds {count} of {f.type.dtype}")
    if f.type.dtype != mem.type.dtype:
        fc.fail(loc, f"frag holds {f.type.dtype} and {fc.label_of(array)} {mem.type.dtype}")
    offset = _offset(fc, offset, loc)
    types = exchange(fc, [offset], loc)
    return stmatrix.node(T.VOID, loc, [mem, offset, f], {
        "n": n, "trans": trans, "exchange": types, "label": fc.label_of(array)})


def _shape(fc, value, loc):
    shape = fc.static(value, "shape", loc)
    if not isinstance(shape, tuple) or tuple(shape) not in SHAPES:
        fc.fail(loc, f"simt.mma.sync has the shapes "
                f"{', '.join(str(s) for s in SHAPES)} (m, n, k); got {shape!r}")
    return tuple(int(v) for v in shape)


def _mma_build(fc, args, kwargs, loc):
    d, a, b, c, shape = _args(fc, args, kwargs, [
        ("d", None), ("a", None), ("b", None), ("c", None), ("shape", Static((16, 8, 16)))],
        loc, "simt.mma.sync")
    shape = _shape(fc, shape, loc)
    na, nb = SHAPES[shape]
    frags = {}
    for value, what, count in ((d, "d", 4), (a, "a", na), (b, "b", nb), (c, "c", 4)):
        frags[what] = ref, size, kind = _fragment(fc, value, loc, "simt.mma.sync", what)
        if size != count:
            fc.fail(loc, f"simt.mma.sync m{shape[0]}n{shape[1]}k{shape[2]}: {what} holds "
                    f"{count} elements per lane, got a local array of {size}")
    kind = frags["a"][2]
    if kind not in ACCUMULATORS or frags["b"][2] != kind:
        fc.fail(loc, "simt.mma.sync multiplies float16 or bfloat16 fragments, a and b of one "
                f"type; got {frags['a'][0].type.dtype} and {frags['b'][0].type.dtype}")
    for what in ("c", "d"):
        if frags[what][2] not in ACCUMULATORS[kind]:
            wanted = " or ".join({"f32": "float32", "f16": "float16"}[k]
                                 for k in ACCUMULATORS[kind])
            fc.fail(loc, f"simt.mma.sync: {kind} products accumulate in {wanted}; {what} "
                    f"holds {frags[what][0].type.dtype}")
    values = [fc.subscript(frags[w][0], ir.Const(T.INT64, loc, i), loc, w)
              for w, count in (("a", na), ("b", nb)) for i in range(count)]
    types = exchange(fc, values, loc)
    return sync.node(T.VOID, loc, [frags[w][0] for w in ("d", "a", "b", "c")], {
        "shape": shape, "kind": kind, "exchange": types})


ldmatrix = Intrinsic(
    "ldmatrix", "simt.ldmatrix(shared_array, offset, n=1, trans=False): PTX "
    "ldmatrix.sync.aligned.m8n8.x{n}(.trans).shared.b16 (cc 7.5+): the warp loads n 8x8 "
    "matrices of 16-bit elements from a 2-D C-contiguous shared array and returns this lane's "
    "fragment, a local array of 2n elements of the array's dtype (bind it to a name). Lane l "
    "supplies the address of one 8-element row: row l % 16, column 8 * (l // 16) of the "
    "16 x 16 (n=4), 16 x 8 (n=2) or 8 x 8 (n=1) tile whose top-left element is flat element "
    "`offset` of shared_array (offset may differ between lanes; each lane's own is used). So "
    "matrix j is the tile's 8x8 block (j % 2, j // 2): n=4 on a row-major 16x16 A tile gives "
    "mma.sync's a (m16n8k16), and n=2, trans=True on a row-major 16x8 (k x n) B tile gives "
    "its b. Fragment element 2j+i is row g, column 2t+i of matrix j (trans: row 2t+i, column "
    "g), g = lane // 4, t = lane % 4. Every lane of the warp makes the call.", _ldmatrix_build,
    writes=True)
stmatrix = Intrinsic(
    "stmatrix", "simt.stmatrix(shared_array, offset, frag, n=1, trans=False): PTX "
    "stmatrix.sync.aligned.m8n8.x{n}(.trans).shared.b16 (cc 9.0+): the inverse of "
    "simt.ldmatrix with the same addresses and layout: elements 2j, 2j+1 of each lane's frag "
    "(a local array of at least 2n 16-bit elements of shared_array's dtype) go to row g, "
    "columns 2t, 2t+1 of matrix j (trans: rows 2t, 2t+1 of column g). Every lane of the warp "
    "makes the call.", _stmatrix_build, writes=True)
sync = Intrinsic(
    "mma.sync", "simt.mma.sync(d, a, b, c, shape=(16, 8, 16)): PTX mma.sync.aligned."
    "m16n8k16.row.col (shape (16, 8, 8): m16n8k8; cc 8.0+): d = a @ b + c over the warp, "
    "each argument a 1-D simt.local.array of this lane's registers in the PTX ISA's order. "
    "a (16 x k) and b (k x 8): float16 or simt.bfloat16, 8 and 4 elements per lane (k=16; 4 "
    "and 2 for k=8): a[i] is row g + 8*((i//2)%2), column 2t + i%2 + 8*(i//4); b[i] row "
    "2t + i%2 + 8*(i//2), column g. c and d (16 x 8): 4 float32 (or float16, for float16 "
    "inputs), c[i] row g + 8*(i//2), column 2t + i%2; g = lane // 4, t = lane % 4. d may "
    "be c. Products are exact and summed in the accumulator's precision. Every lane of the "
    "warp makes the call.", _mma_build, writes=True)
