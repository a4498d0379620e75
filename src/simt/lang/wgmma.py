"""Warpgroup matrix multiply-accumulate (PTX ``wgmma``, sm_90a): the 128 threads of a
warpgroup (4 consecutive warps, the first a multiple of 4) multiply a 64 x K tile of A by a
K x N tile of B, B read from shared memory through a 64-bit matrix descriptor and A through
one too or from registers (a fragment), into an accumulator held in registers (N/2 float32,
or int32 for 8-bit integers, per thread).

``wgmma.descriptor(shared_array, swizzle)`` describes a K-major tile: the array is 2-D,
(rows, K) with K contiguous (A: rows are M; B is held transposed, rows are N), stored in the
layout of the swizzle mode (docs/hopper.md). Its value is the descriptor's 64 bits on the
GPU; its simt type also carries the element type and the layout, so ``mma_async`` knows the
instruction and the CPU device knows where each element lies. ``wgmma.accumulator(64, n)``
is a zeroed local array of the thread's registers in the PTX ISA's order: register i of
thread t holds row ``16*(t%128//32) + (t%32)//4 + 8*(i%4//2)``, column
``8*(i//4) + 2*(t%4) + i%2``. A register fragment of A is a plain 1-D ``simt.local.array``
of 4 32-bit registers' elements, as ``simt.mma.sync``'s are (``fragment_place``). On the CPU
device each thread computes its own registers from the shared tiles when it reaches
``mma_async`` (a fragment's elements from its warp's lanes, through the ``exchange`` warp
operation lang/mma.py hoists); fence, commit and wait are no-ops there.
"""
import numpy as np

from .arguments import bind
from ..ir import nodes as ir
from ..ir import types as T
from .groups import flat_rank
from .mma import exchange
from .registry import Intrinsic, Static

M = 64
# operand precision (PTX's type name) -> (K of one instruction, element bytes)
KINDS = {"f16": (16, 2), "bf16": (16, 2), "tf32": (8, 4), "e4m3": (32, 1), "e5m2": (32, 1),
         "s8": (32, 1), "u8": (32, 1)}
STORAGE = {"f16": np.dtype(np.float16), "bf16": T.BF16_STORAGE, "tf32": np.dtype(np.float32),
           "e4m3": T.F8E4M3_STORAGE, "e5m2": T.F8E5M2_STORAGE, "s8": np.dtype(np.int8),
           "u8": np.dtype(np.uint8)}
# A and B of one instruction are of one family (the PTX ISA pairs e4m3 with e5m2 and s8
# with u8 either way round); the family fixes the accumulator's dtype
FAMILIES = {"f16": "f16", "bf16": "bf16", "tf32": "tf32", "e4m3": "fp8", "e5m2": "fp8",
            "s8": "int8", "u8": "int8"}
INTEGER = ("s8", "u8")
INTEGER_NS = (8, 16, 24) + tuple(range(32, 257, 16))   # the n of the .s32 shapes
FRAGMENT_BYTES = 16      # A in registers: 4 x 32 bits per thread
SWIZZLES = {None: 0, "128B": 128, "64B": 64, "32B": 32}
MODE_BITS = {None: 0, "128B": 1, "64B": 2, "32B": 3}     # the descriptor's bits 62-63
CORE_BYTES = 16          # a core matrix is 8 rows of 16 bytes


class Descriptor(T.Scalar):
    """A shared-memory matrix descriptor: a uint64 whose type records the tile's element
    type (``precision``), swizzle mode and its byte offsets (``lbo`` along K, ``sbo`` from one
    8-row group to the next)."""

    def __init__(self, kind, swizzle, lbo, sbo, major="k"):
        super().__init__(np.uint64)
        self.precision, self.swizzle, self.lbo, self.sbo = kind, swizzle, lbo, sbo
        self.major = major            # "k": K contiguous; "mn": M (or N) contiguous

    def key(self):
        return super().key() + ("wgmma.descriptor", self.precision, self.swizzle, self.lbo,
                                self.sbo, self.major)

    @property
    def row_bytes(self):
        """Bytes from one row of an 8-row group to the next."""
        return SWIZZLES[self.swizzle] or CORE_BYTES

    @property
    def element_bytes(self):
        return KINDS[self.precision][1]

    def __repr__(self):
        major = ", major='mn'" if self.major == "mn" else ""
        return f"wgmma.descriptor({self.precision}, swizzle={self.swizzle}{major})"


class Accumulator(T.Array):
    """A wgmma accumulator: a 1-D local float32 (or int32) array of the thread's n/2
    registers."""

    def __init__(self, m, n, dtype=np.float32):
        self.m, self.n = m, n
        super().__init__(dtype, 1, "C", "local")

    def key(self):
        return super().key() + ("wgmma", self.m, self.n)

    @property
    def registers(self):
        return self.m * self.n // 128

    @property
    def integer(self):
        return self.dtype.kind == "i"

    def __repr__(self):
        return f"wgmma.accumulator(m={self.m}, n={self.n}, {self.dtype.name})"


def _args(fc, args, kwargs, names, loc, name):
    return bind(fc, args, kwargs, names, loc, f"wgmma.{name}")


OPERAND_TYPES = "float16, bfloat16, float32 (as tf32), float8_e4m3, float8_e5m2, int8 or uint8"


def precision_of(dtype):
    """The wgmma precision of elements of dtype, or None."""
    if T.is_bfloat16_dtype(dtype):
        return "bf16"
    fp8 = T.float8_storage(dtype)
    if fp8 is not None:
        return {"float8_e4m3": "e4m3", "float8_e5m2": "e5m2"}[fp8.names[0]]
    return {"float16": "f16", "float32": "tf32", "int8": "s8", "uint8": "u8"}.get(dtype.name)


def operand_kind(fc, dtype, loc, what="tiles"):
    """The wgmma precision of a shared tile's (or a fragment's) elements."""
    kind = precision_of(dtype)
    if kind is None:
        name = T.Scalar(dtype) if dtype.names else dtype
        fc.fail(loc, f"wgmma reads {OPERAND_TYPES} {what}, got {name}")
    return kind


def fragment_size(kind):
    """The elements of A a thread holds in its register fragment (one instruction's K)."""
    return FRAGMENT_BYTES // KINDS[kind][1]


def fragment_place(i, lane, kind):
    """(row of the warp's 16, k) of element i of a lane's register fragment of A: the PTX
    ISA's A fragment of wgmma .m64nNk*, which is mma.m16n8k*'s A for each warp's 16 rows:
    element i is in 32-bit register i // p (p = 4 / element bytes) and the registers go
    (row g, k), (row g + 8, k), (row g, k + 4p), (row g + 8, k + 4p), with g = lane // 4
    and k = p * (lane % 4) + i % p."""
    per = 4 // KINDS[kind][1]
    register = i // per
    return lane // 4 + 8 * (register % 2), per * (lane % 4) + i % per + 4 * per * (register // 2)


def fragment_source(row, k, kind):
    """(lane, element) of the register fragment that holds A's (row, k), row of the warp's 16:
    the inverse of fragment_place."""
    per = 4 // KINDS[kind][1]
    lane = 4 * (row % 8) + (k % (4 * per)) // per
    return lane, per * (2 * (k // (4 * per)) + row // 8) + k % per


def _tile(fc, value, loc):
    """The declared 2-D shared array a descriptor describes."""
    array = fc.expr(value, loc)
    t = array.type
    if not isinstance(t, T.Array) or t.space != "shared" or not isinstance(array, ir.ArrayRef):
        fc.fail(loc, f"wgmma.descriptor needs a shared array (simt.shared.array) holding the "
                f"tile, got {fc.label_of(value)}: {t}")
    if t.ndim != 2 or array.decl.space != "shared":
        fc.fail(loc, f"wgmma.descriptor needs a 2-d simt.shared.array((rows, k), dtype) (the "
                f"tile, K contiguous), got {fc.label_of(value)}: {t}")
    return array


def _layout(fc, array, kind, swizzle, loc):
    """(lbo, sbo) of the documented layout of this tile, after checking its shape."""
    rows, cols = array.decl.shape
    size = KINDS[kind][1]
    width = SWIZZLES[swizzle]
    if rows % 8:
        fc.fail(loc, f"a wgmma tile has a multiple of 8 rows, got {rows}")
    if width:
        if cols * size != width:
            fc.fail(loc, f"a tile with swizzle='{swizzle}' has rows of {width} bytes: shape "
                    f"(rows, {width // size}) for {array.type.dtype}, got {array.decl.shape}")
        # the swizzle is a function of the address: the tile starts on its pattern's period
        array.decl.align = max(array.decl.align, 8 * width)
        return CORE_BYTES, 8 * width
    step = KINDS[kind][0] * size
    if cols * size % step:
        fc.fail(loc, f"an unswizzled wgmma tile's rows hold whole K steps of {step} bytes "
                f"({KINDS[kind][0]} elements), got {cols} elements")
    return 8 * CORE_BYTES, 8 * cols * size


def _mn_layout(fc, array, kind, swizzle, chunk_rows, loc):
    """(lbo, sbo) of an M- or N-major tile: rows of the swizzle's width holding consecutive
    M (N) elements, K running down the rows, the next M (N) chunk ``chunk_rows`` rows on."""
    rows, cols = array.decl.shape
    size = KINDS[kind][1]
    width = SWIZZLES[swizzle]
    if kind not in ("f16", "bf16"):
        fc.fail(loc, f"an M- or N-major wgmma tile (major='mn') holds float16 or bfloat16, "
                f"as the PTX ISA's transposed operands do; got {array.type.dtype}")
    if not width:
        fc.fail(loc, "an M- or N-major wgmma tile (major='mn') is swizzled: give swizzle="
                "'32B', '64B' or '128B'")
    if cols * size != width:
        fc.fail(loc, f"a major='mn' tile with swizzle='{swizzle}' has rows of {width} bytes: "
                f"shape (rows, {width // size}) for {array.type.dtype}, got {array.decl.shape}")
    chunk_rows = rows if chunk_rows is None else chunk_rows
    if chunk_rows % 8 or chunk_rows <= 0:
        fc.fail(loc, f"wgmma.descriptor's chunk_rows is a positive multiple of 8, got "
                f"{chunk_rows}")
    array.decl.align = max(array.decl.align, 8 * width)
    return chunk_rows * width, 8 * width


def _descriptor_build(fc, args, kwargs, loc):
    value, swizzle, row, k, major, chunk_rows = _args(fc, args, kwargs, [
        ("array", None), ("swizzle", Static(None)), ("row", Static(0)), ("k", Static(0)),
        ("major", Static("k")), ("chunk_rows", Static(None))], loc, "descriptor")
    array = _tile(fc, value, loc)
    kind = operand_kind(fc, array.type.dtype, loc)
    swizzle = fc.static(swizzle, "the swizzle mode", loc)
    if swizzle not in SWIZZLES:
        fc.fail(loc, f"swizzle is None, '32B', '64B' or '128B', got {swizzle!r}")
    major = fc.static(major, "the major mode", loc)
    if major not in ("k", "mn"):
        fc.fail(loc, f"wgmma.descriptor's major is 'k' (K contiguous) or 'mn' (M or N "
                f"contiguous), got {major!r}")
    chunk_rows = fc.static(chunk_rows, "chunk_rows", loc)
    if major == "mn":
        lbo, sbo = _mn_layout(fc, array, kind, swizzle, chunk_rows, loc)
    elif chunk_rows is not None:
        fc.fail(loc, "wgmma.descriptor's chunk_rows is for major='mn' tiles")
    else:
        lbo, sbo = _layout(fc, array, kind, swizzle, loc)
    row, k = (fc.cast(fc.expr(v, loc), T.INT64, loc) for v in (row, k))
    step = KINDS[kind][0]
    for v, unit, what in ((row, 8, "row"), (k, step, "k")):
        if isinstance(v, ir.Const) and v.value % unit:
            fc.fail(loc, f"wgmma.descriptor's {what} is a multiple of {unit}, got {v.value}")
    return descriptor.node(Descriptor(kind, swizzle, lbo, sbo, major), loc, [array, row, k])


def _accumulator_build(fc, args, kwargs, loc):
    m, n, dtype = _args(fc, args, kwargs, [("m", None), ("n", None),
                                           ("dtype", Static(np.float32))], loc, "accumulator")
    m = fc.constant_int(m, "the accumulator's m", loc)
    n = fc.constant_int(n, "the accumulator's n", loc)
    if m != M:
        fc.fail(loc, f"wgmma tiles have m=64, got m={m}")
    if n % 8 or not 8 <= n <= 256:
        fc.fail(loc, f"wgmma's n is a multiple of 8 from 8 to 256, got n={n}")
    given, dtype = dtype, np.dtype(fc.static_dtype(dtype, loc))
    if dtype not in (np.float32, np.int32):
        fc.fail(loc, f"simt's wgmma accumulators are float32 (or int32, for int8 and uint8 "
                f"products), got {fc.static(given, '', loc)}")
    if dtype == np.int32 and n not in INTEGER_NS:
        fc.fail(loc, f"wgmma's int32 accumulators have n 8, 16, 24 or a multiple of 16 from 32 "
                f"to 256 (the PTX ISA's .s32 shapes), got n={n}")
    acc = Accumulator(m, n, dtype)
    decl = ir.MemoryDecl(fc.pending_name(), "local", (acc.registers,), acc.dtype)
    decl.wgmma = acc
    ref = ir.ArrayRef(acc, loc, decl)
    fc.hoist(ir.ExprStmt(loc, zero.node(T.VOID, loc, [ref])))
    return ir.ArrayRef(acc, loc, decl)


def _accumulator_arg(fc, value, loc, name):
    acc = fc.expr(value, loc)
    if not isinstance(acc.type, Accumulator):
        fc.fail(loc, f"wgmma.{name} needs a wgmma.accumulator, got {acc.type}")
    return acc


def _descriptor_arg(fc, v, loc, what):
    if not isinstance(v.type, Descriptor):
        fc.fail(loc, f"wgmma.mma_async's {what} is a wgmma.descriptor, got {v.type}")
    return v


def _fragment_arg(fc, v, loc):
    """A register fragment of A: (the local array, its precision, the exchange's types)."""
    t = v.type
    if not (isinstance(v, ir.ArrayRef) and v.decl.space == "local" and
            len(v.decl.shape) == 1 and type(t) is T.Array):
        fc.fail(loc, f"wgmma.mma_async's a is a wgmma.descriptor or a register fragment (a "
                f"1-d simt.local.array of A's elements in the PTX ISA's order), got {t}")
    kind = operand_kind(fc, t.dtype, loc, "fragments")
    size = fragment_size(kind)
    if v.decl.shape[0] != size:
        fc.fail(loc, f"a register fragment of A holds {size} {T.Scalar(t.dtype)} elements per "
                f"thread (4 32-bit registers), got a local array of {v.decl.shape[0]}")
    v.decl.wgmma_fragment = True          # the GPU's fence ties its registers (backends/cuda)
    values = [fc.subscript(v, ir.Const(T.INT64, loc, i), loc, "a") for i in range(size)]
    return v, kind, exchange(fc, values, loc)


def _check_accumulator(fc, acc, kinds, loc):
    integer = kinds[0] in INTEGER
    if acc.type.integer != integer:
        want = "int32" if integer else "float32"
        fc.fail(loc, f"wgmma.mma_async: {kinds[0]} x {kinds[1]} products accumulate in {want}, "
                f"and acc holds {acc.type.dtype.name}",
                f"wgmma.accumulator(64, n, dtype=np.{want})")


def _mma_build(fc, args, kwargs, loc):
    acc, a, b, scale_d = _args(fc, args, kwargs, [
        ("acc", None), ("a", None), ("b", None), ("scale_d", Static(1))], loc, "mma_async")
    acc = _accumulator_arg(fc, acc, loc, "mma_async")
    a = fc.expr(a, loc)
    if isinstance(a.type, Descriptor):
        a_kind, types = a.type.precision, None
    else:
        a, a_kind, types = _fragment_arg(fc, a, loc)
    b = _descriptor_arg(fc, fc.expr(b, loc), loc, "b")
    kinds = (a_kind, b.type.precision)
    if FAMILIES[kinds[0]] != FAMILIES[kinds[1]]:
        fc.fail(loc, f"wgmma.mma_async multiplies a and b of one precision (e4m3 with e5m2 and "
                f"s8 with u8 may mix), got a: {kinds[0]}, b: {kinds[1]}")
    _check_accumulator(fc, acc, kinds, loc)
    scale = fc.expr(scale_d, loc)
    if not isinstance(scale.type, T.Scalar) or scale.type.kind not in "biu":
        fc.fail(loc, f"scale_d is 1 (acc += a @ b) or 0 (acc = a @ b), got {scale.type}")
    return mma_async.node(T.VOID, loc, [acc, a, b, fc.cast(scale, T.INT32, loc),
                                        flat_rank(fc, loc)],
                          {"kinds": kinds, "exchange": types})


def _no_args_build(entry, name):
    def build(fc, args, kwargs, loc):
        if args or kwargs:
            fc.fail(loc, f"wgmma.{name}() takes no arguments")
        return entry().node(T.VOID, loc, [])
    return build


def _wait_build(fc, args, kwargs, loc):
    (n,) = _args(fc, args, kwargs, [("n", None)], loc, "wait_group")
    n = fc.constant_int(n, "wgmma.wait_group's n", loc)
    if not 0 <= n <= 7:
        fc.fail(loc, f"wgmma.wait_group(n) takes n from 0 to 7, got {n}")
    return wait_group.node(T.VOID, loc, [], {"n": n})


class StoreMethod:
    """``acc.store(array, offset, ldm)``, bound to its accumulator."""

    kernel_callable = True
    python_name = "acc.store"

    def __init__(self, acc):
        self.acc = acc

    def build(self, fc, args, kwargs, loc):
        array, offset, ldm = _args(fc, args, kwargs, [
            ("array", None), ("offset", None), ("ldm", None)], loc, "accumulator.store")
        out = fc.expr(array, loc)
        t = out.type
        if not isinstance(t, T.Array) or t.space not in ("global", "shared") or (
                t.layout != "C" and t.ndim != 1):
            fc.fail(loc, f"acc.store writes a C-contiguous global or shared array, got {t}")
        if self.acc.type.integer and t.dtype != np.int32:
            fc.fail(loc, f"acc.store of an int32 accumulator writes int32, got {T.Scalar(t.dtype)}")
        if not self.acc.type.integer and not (
                t.dtype in (np.float32, np.float16) or T.is_bfloat16_dtype(t.dtype)):
            fc.fail(loc, f"acc.store writes float32, float16 or bfloat16, got {T.Scalar(t.dtype)}")
        operands = [out, fc.index(fc.expr(offset, loc), loc),
                    fc.cast(fc.expr(ldm, loc), T.INT64, loc), self.acc, flat_rank(fc, loc)]
        return store.node(T.VOID, loc, operands, {"label": fc.label_of(array)})

    def __call__(self, *args):
        raise RuntimeError("acc.store() can only be called inside a kernel")


def register_of(i, lane, warp):
    """(row, column) of accumulator register i of a thread (its lane, and its warp in the
    warpgroup): the PTX ISA's D fragment of wgmma .m64nNk*, f32."""
    return 16 * warp + lane // 4 + 8 * (i % 4 // 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2


descriptor = Intrinsic(
    "wgmma.descriptor", "wgmma.descriptor(array, swizzle=None, row=0, k=0): the 64-bit "
    "shared-memory matrix descriptor of the K-major tile in array, a 2-d simt.shared.array "
    "(rows, k) of float16, bfloat16, float32 (read as tf32), float8_e4m3, float8_e5m2, int8 "
    "or uint8, stored in the layout of the swizzle mode (None, '32B', '64B', '128B'; "
    "docs/hopper.md); row (a multiple of 8) and k (a multiple of one instruction's K: 16, 8 "
    "for tf32, 32 for the 8-bit types) pick where the operand starts. For A the rows are M; "
    "B is held transposed (rows are N). major='mn' (float16 and bfloat16, swizzled): the "
    "tile is M- or N-major instead, rows of the swizzle's width holding consecutive M (N) "
    "elements with K running down the rows (B as a row-major K x N array stores it, A as a "
    "column-major one); row and k are both rows of the array (the operand starts at row + "
    "k), and the next M (N) chunk lies chunk_rows rows on (default: the array's rows).",
    _descriptor_build)
accumulator = Intrinsic(
    "wgmma.accumulator", "wgmma.accumulator(m=64, n, dtype=np.float32): a zeroed accumulator "
    "of a 64 x n tile (n a multiple of 8 up to 256), n/2 float32 registers per thread of the "
    "warpgroup (dtype=np.int32 for int8/uint8 products: n 8, 16, 24 or a multiple of 16); "
    "acc[i] is the register i of the PTX ISA's layout (docs/hopper.md), "
    "acc.store(array, offset, ldm) writes the tile.", _accumulator_build,
    lowered_as=(ir.ArrayRef,))
mma_async = Intrinsic(
    "wgmma.mma_async", "wgmma.mma_async(acc, a, b, scale_d=1): acc += a @ b (acc = a @ b "
    "when scale_d is 0) on the warpgroup's 64 x n tile. b is a descriptor; a a descriptor or "
    "a register fragment: a 1-d simt.local.array of 16 bytes of A's elements per thread (8 "
    "float16/bfloat16, 4 float32, 16 of the 8-bit types) in the PTX ISA's order, each warp "
    "holding its 16 rows as mma.sync's a does (docs/hopper.md). Precisions: float16 or "
    "bfloat16 (K=16), tf32 (K=8), float8_e4m3/float8_e5m2 in any mix (K=32) into float32; "
    "int8/uint8 in any mix (K=32) into an int32 accumulator. Asynchronous: issue after "
    "wgmma.fence(), then wgmma.commit_group() and wgmma.wait_group(n) before reading acc. "
    "Every thread of the warpgroup makes the same call. sm_90a.", _mma_build, writes=True)
fence = Intrinsic(
    "wgmma.fence", "wgmma.fence(): orders the thread's earlier accumulator, register-fragment "
    "and shared-memory writes before the wgmma.mma_async calls that follow "
    "(fence.proxy.async.shared::cta, "
    "wgmma.fence.sync.aligned): write the tiles, wgmma.fence(), simt.syncthreads(), then "
    "mma_async. Every thread of the warpgroup makes the call.",
    _no_args_build(lambda: fence, "fence"))
commit_group = Intrinsic(
    "wgmma.commit_group", "wgmma.commit_group(): groups the wgmma.mma_async calls issued "
    "since the last commit (wgmma.commit_group.sync.aligned).",
    _no_args_build(lambda: commit_group, "commit_group"))
wait_group = Intrinsic(
    "wgmma.wait_group", "wgmma.wait_group(n): waits until at most n committed groups are "
    "pending (n a constant, 0 to 7); then acc may be read (wgmma.wait_group.sync.aligned).",
    _wait_build)
store = Intrinsic(
    "wgmma.store", "acc.store(array, offset, ldm): writes the accumulator's 64 x n tile to "
    "array (global or shared, float32, or converted to float16 or bfloat16; int32 for an "
    "int32 accumulator), row-major from "
    "element offset, rows ldm elements apart; each thread writes its own registers.",
    public=False, writes=True)
zero = Intrinsic("wgmma.zero", "Zeroes an accumulator (built by wgmma.accumulator).",
                 public=False)
