"""Warp matrix functions (guide B.22, ``nvcuda::wmma``): tensor-core tiles held in fragments.

A fragment is a per-thread local array (its elements are ``frag[i]``) whose type records its
use, shape, precision and layout. On the GPU each call is one NVVM WMMA intrinsic
(``llvm.nvvm.wmma.m16n16k16.load.a.row.stride.f16`` ...) over the fragment's registers, and
``frag.num_elements`` is the hardware's count (8 floats of a 16x16 f32 accumulator ...).
On the CPU device every lane holds the whole tile, row-major (``num_elements`` = rows *
cols): CUDA leaves the element-to-lane mapping unspecified and requires every lane of a warp
to make the same call, so each lane loads, multiplies and stores the tile itself and the
results match the hardware's (inputs at their precision, products exact, sums in the
accumulator's precision). ``store_matrix_sync`` is a warp barrier first, so that no lane
overwrites a tile another lane has yet to load, and lane 0 writes the warp's tile. docs/tensor-cores.md has the contract.
"""
import numpy as np

from .arguments import bind
from ..ir import nodes as ir
from ..ir import types as T
from .registry import Intrinsic, Static

USES = {"matrix_a": "a", "matrix_b": "b", "accumulator": "c"}
STORAGE = {"f16": np.dtype(np.float16), "bf16": T.BF16_STORAGE, "tf32": np.dtype(np.float32),
           "f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "s8": np.dtype(np.int8),
           "u8": np.dtype(np.uint8), "s32": np.dtype(np.int32)}
# shape (m, n, k) -> {multiplicand precision: accumulator precisions}
HALF_AND_BYTES = {"f16": ("f32", "f16"), "bf16": ("f32",), "s8": ("s32",), "u8": ("s32",)}
SHAPES = {(16, 16, 16): HALF_AND_BYTES, (32, 8, 16): HALF_AND_BYTES, (8, 32, 16): HALF_AND_BYTES,
          (16, 16, 8): {"tf32": ("f32",)},
          (8, 8, 4): {"f64": ("f64",)}}
# the GPU's registers of one fragment (LLVM's WMMA register types): (type name, count)
REGS = {("ab", "f16"): ("h2", 8), ("c", "f16"): ("h2", 4), ("c", "f32"): ("f32", 8),
        ("ab", "bf16"): ("i32", 4), ("ab", "tf32"): ("i32", 4), ("ab", "f64"): ("f64", 1),
        ("c", "f64"): ("f64", 2), ("ab", "s8"): ("i32", 2), ("ab", "u8"): ("i32", 2),
        ("c", "s32"): ("i32", 8)}
# where the tall and wide shapes differ: (shape, use, precision) -> registers
REGS_OF_SHAPE = {((32, 8, 16), "a", "bf16"): ("i32", 8), ((32, 8, 16), "b", "bf16"): ("i32", 2),
                 ((8, 32, 16), "a", "bf16"): ("i32", 2), ((8, 32, 16), "b", "bf16"): ("i32", 8)}
for _kind in ("s8", "u8"):
    REGS_OF_SHAPE.update({((32, 8, 16), "a", _kind): ("i32", 4), ((32, 8, 16), "b", _kind): ("i32", 1),
                          ((8, 32, 16), "a", _kind): ("i32", 1), ((8, 32, 16), "b", _kind): ("i32", 4)})
REG_BYTES = {"h2": 4, "f32": 4, "i32": 4, "f64": 8}


class Fragment(T.Array):
    """A wmma fragment: a 1-D local array of its tile (CPU) or registers (GPU)."""

    def __init__(self, use, m, n, k, kind, layout):
        self.use, self.m, self.n, self.k, self.kind, self.matrix_layout = use, m, n, k, kind, layout
        super().__init__(STORAGE[kind], 1, "C", "local")

    def key(self):
        return super().key() + ("wmma", self.use, self.m, self.n, self.k, self.kind,
                                self.matrix_layout)

    @property
    def rows_cols(self):
        return {"a": (self.m, self.k), "b": (self.k, self.n), "c": (self.m, self.n)}[self.use]

    @property
    def tile(self):
        rows, cols = self.rows_cols
        return rows * cols

    @property
    def regs(self):
        special = REGS_OF_SHAPE.get(((self.m, self.n, self.k), self.use, self.kind))
        return special or REGS[("c" if self.use == "c" else "ab", self.kind)]

    @property
    def gpu_elements(self):
        name, count = self.regs
        return REG_BYTES[name] * count // self.dtype.itemsize

    def __repr__(self):
        layout = f", {self.matrix_layout}" if self.matrix_layout else ""
        return f"wmma.fragment({self.use}, {self.m}x{self.n}x{self.k}, {self.kind}{layout})"


def precision(fc, value, loc):
    if isinstance(value, Static) and value.value == "tf32":
        return "tf32"
    dtype = fc.static_dtype(value, loc)
    if T.is_bfloat16_dtype(dtype):
        return "bf16"
    names = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "s8", "uint8": "u8",
             "int32": "s32"}
    if dtype.name not in names:
        fc.fail(loc, f"wmma fragments hold float16, bfloat16, 'tf32', float32, float64, int8, "
                f"uint8 or int32, got {dtype}")
    return names[dtype.name]


def _args(fc, args, kwargs, names, loc, name):
    return bind(fc, args, kwargs, names, loc, f"wmma.{name}")


def _layout(fc, value, loc, what):
    layout = fc.static(value, what, loc)
    if layout not in ("row", "col"):
        fc.fail(loc, f"{what} must be 'row' or 'col', got {layout!r}")
    return layout


def _fragment_build(fc, args, kwargs, loc):
    use, m, n, k, dtype, layout = _args(fc, args, kwargs, [
        ("use", None), ("m", None), ("n", None), ("k", None), ("dtype", None),
        ("layout", Static(None))], loc, "fragment")
    use = fc.static(use, "the fragment's use", loc)
    if use not in USES:
        fc.fail(loc, f"a fragment's use is 'matrix_a', 'matrix_b' or 'accumulator', got {use!r}")
    shape = tuple(fc.constant_int(v, "the fragment's shape", loc) for v in (m, n, k))
    kind = precision(fc, dtype, loc)
    if shape not in SHAPES:
        fc.fail(loc, f"wmma has no {shape[0]}x{shape[1]}x{shape[2]} shape; simt has "
                f"{', '.join('x'.join(map(str, s)) for s in SHAPES)}")
    table = SHAPES[shape]
    valid = sorted(set(table) if USES[use] != "c" else {c for cs in table.values() for c in cs})
    if kind not in valid:
        fc.fail(loc, f"a {use} fragment of shape m{shape[0]}n{shape[1]}k{shape[2]} holds "
                f"{' or '.join(valid)}, not {kind}")
    layout = layout.value if isinstance(layout, Static) else fc.static(layout, "layout", loc)
    if USES[use] == "c":
        if layout is not None:
            fc.fail(loc, "an accumulator fragment has no layout; give it to load_matrix_sync "
                    "and store_matrix_sync instead")
    elif layout is None:
        fc.fail(loc, f"a {use} fragment needs layout='row' or 'col'")
    else:
        layout = _layout(fc, Static(layout), loc, "a matrix_a/matrix_b fragment's layout")
    frag = Fragment(USES[use], *shape, kind, layout)
    decl = ir.MemoryDecl(fc.pending_name(), "local", (frag.tile,), frag.dtype)
    return ir.ArrayRef(frag, loc, decl)


def _fragment_arg(fc, value, loc, name, what="fragment"):
    v = fc.expr(value, loc)
    if not isinstance(v.type, Fragment):
        fc.fail(loc, f"wmma.{name} needs a wmma.fragment as its {what}, got {v.type}")
    return v


def _memory_arg(fc, value, frag, loc, name):
    array = fc.expr(value, loc)
    t = array.type
    if not isinstance(t, T.Array) or isinstance(t, Fragment) or t.space not in ("global",
                                                                                 "shared"):
        fc.fail(loc, f"wmma.{name} reads and writes global or shared arrays, got {t}")
    if t.layout != "C" and t.ndim != 1:
        fc.fail(loc, f"wmma.{name} needs a C-contiguous array ({fc.label_of(value)} is {t})")
    same = T.is_bfloat16_dtype(t.dtype) if frag.kind == "bf16" else t.dtype == frag.dtype
    if not same:
        fc.fail(loc, f"a {frag.kind} fragment moves {STORAGE[frag.kind]} data; "
                f"{fc.label_of(value)} holds {t.dtype}")
    return array


def _load_build(fc, args, kwargs, loc):
    frag, array, offset, ldm, layout = _args(fc, args, kwargs, [
        ("frag", None), ("a", None), ("offset", None), ("ldm", None),
        ("layout", Static(None))], loc, "load_matrix_sync")
    f = _fragment_arg(fc, frag, loc, "load_matrix_sync")
    t = f.type
    layout = layout.value if isinstance(layout, Static) else fc.static(layout, "layout", loc)
    if t.use == "c":
        if layout is None:
            fc.fail(loc, "loading an accumulator needs its layout: "
                    "wmma.load_matrix_sync(frag, a, offset, ldm, 'row' or 'col')")
        layout = _layout(fc, Static(layout), loc, "the layout")
    elif layout is not None:
        fc.fail(loc, "a matrix_a/matrix_b fragment has its layout already; "
                "load_matrix_sync takes none for it")
    else:
        layout = t.matrix_layout
    mem = _memory_arg(fc, array, t, loc, "load_matrix_sync")
    operands = [f, mem, fc.index(fc.expr(offset, loc), loc),
                fc.cast(fc.expr(ldm, loc), T.INT32, loc)]
    return load_matrix_sync.node(T.VOID, loc, operands,
                                 {"layout": layout, "label": fc.label_of(array)})


def _store_build(fc, args, kwargs, loc):
    array, offset, frag, ldm, layout = _args(fc, args, kwargs, [
        ("a", None), ("offset", None), ("frag", None), ("ldm", None), ("layout", None)], loc,
        "store_matrix_sync")
    f = _fragment_arg(fc, frag, loc, "store_matrix_sync")
    if f.type.use != "c":
        fc.fail(loc, "wmma.store_matrix_sync stores accumulator fragments only")
    layout = _layout(fc, layout, loc, "the layout")
    mem = _memory_arg(fc, array, f.type, loc, "store_matrix_sync")
    # every lane has done its earlier loads before any lane stores (the CPU runs lanes in turn)
    warp = fc.warp()
    fc.hoist(ir.WarpOp(loc, None, "syncwarp", [ir.Const(warp.mask, loc, warp.full_mask)], T.VOID))
    operands = [mem, fc.index(fc.expr(offset, loc), loc), f,
                fc.cast(fc.expr(ldm, loc), T.INT32, loc)]
    return store_matrix_sync.node(T.VOID, loc, operands,
                                  {"layout": layout, "label": fc.label_of(array)})


def _fill_build(fc, args, kwargs, loc):
    frag, value = _args(fc, args, kwargs, [("frag", None), ("v", None)], loc, "fill_fragment")
    f = _fragment_arg(fc, frag, loc, "fill_fragment")
    element = T.Scalar(np.float32) if f.type.kind == "bf16" else f.type.element
    return fill_fragment.node(T.VOID, loc, [f, fc.cast(fc.expr(value, loc), element, loc)])


def _mma_build(fc, args, kwargs, loc):
    names = ("d", "a", "b", "c")
    d, a, b, c = (_fragment_arg(fc, v, loc, "mma_sync", n) for v, n in zip(
        _args(fc, args, kwargs, [(n, None) for n in names], loc, "mma_sync"), names))
    for frag, use, name in ((d, "c", "d"), (a, "a", "a"), (b, "b", "b"), (c, "c", "c")):
        if frag.type.use != use:
            wanted = {"a": "matrix_a", "b": "matrix_b", "c": "accumulator"}[use]
            fc.fail(loc, f"wmma.mma_sync(d, a, b, c): {name} must be a {wanted} fragment, "
                    f"got {frag.type}")
    shapes = {(f.type.m, f.type.n, f.type.k) for f in (d, a, b, c)}
    if len(shapes) > 1 or a.type.kind != b.type.kind:
        fc.fail(loc, "wmma.mma_sync needs fragments of one shape and a, b of one precision; "
                f"got {d.type}, {a.type}, {b.type}, {c.type}")
    accs = SHAPES[shapes.pop()][a.type.kind]
    for frag in (c, d):
        if frag.type.kind not in accs:
            fc.fail(loc, f"{a.type.kind} products accumulate in {' or '.join(accs)}, "
                    f"not {frag.type.kind}")
    return mma_sync.node(T.VOID, loc, [d, a, b, c])


load_matrix_sync = Intrinsic(
    "wmma.load_matrix_sync", "wmma.load_matrix_sync(frag, a, offset, ldm, layout=None): load "
    "the warp's tile starting at element offset of a (global or shared, C-contiguous), rows "
    "(or columns, for 'col') ldm elements apart; an accumulator needs layout 'row' or 'col'. "
    "Every lane of the warp makes the same call.", _load_build, writes=True)
store_matrix_sync = Intrinsic(
    "wmma.store_matrix_sync", "wmma.store_matrix_sync(a, offset, frag, ldm, layout): store an "
    "accumulator tile at element offset of a, rows (layout 'row') or columns ('col') ldm "
    "elements apart.", _store_build, writes=True)
fill_fragment = Intrinsic(
    "wmma.fill_fragment", "wmma.fill_fragment(frag, v): every element of frag set to v.",
    _fill_build, writes=True)
mma_sync = Intrinsic(
    "wmma.mma_sync", "wmma.mma_sync(d, a, b, c): d = a @ b + c on the warp's tiles (tensor "
    "cores); d may be c.", _mma_build, writes=True)
fragment = Intrinsic(
    "wmma.fragment", "wmma.fragment(use, m, n, k, dtype, layout=None): a fragment, per-warp "
    "tile storage: use 'matrix_a' (m x k), 'matrix_b' (k x n) or 'accumulator' (m x n); "
    "shapes 16x16x16, 32x8x16 and 8x32x16 (float16 -> float32 or float16, simt.bfloat16 -> "
    "float32, int8 and uint8 -> int32), 16x16x8 ('tf32' -> float32), 8x8x4 (float64). matrix_a and matrix_b need "
    "layout 'row' or 'col'. Elements: frag[i] for i < frag.num_elements, for element-wise "
    "operations only (which element a thread holds is unspecified).", _fragment_build,
    lowered_as=(ir.ArrayRef,))
num_elements = Intrinsic(
    "wmma.num_elements", "frag.num_elements: how many elements of the fragment this thread "
    "holds (the GPU's count; the whole tile on the CPU device).", public=False)


def num_elements_of(frag, loc):
    """``frag.num_elements``: a constant of each target."""
    return num_elements.node(T.INT32, loc, [], {"fragment": frag.type})
