"""The warp-level matrix instructions (lang/mma.py) on the CPU device, lane by lane, with
the GPU's registers in each lane. Each call follows an ``exchange`` warp operation
(backends/cpu/warp.py): there every lane left the operands the others need in its warp
slots (its row offset; its a and b registers), and here, in the run after it, each lane
reads them from the lanes the PTX ISA's layouts name and computes its own part: the
elements ldmatrix gives it, the elements of its registers stmatrix writes, and the four
accumulator elements of mma.sync it holds. A lane that is absent (a partial warp) gives
nothing: its place is read from the calling lane instead, as shuffles do."""
from types import SimpleNamespace

from ....compiler.flat import flat_address
from ....compiler.lltypes import F16, F32, I32, I64, i32, i64, memory
from ....lang import bfloat16
from ....lang.mma import SHAPES, ldmatrix, stmatrix, sync
from ....lang.registry import declare_target, lowering
from ..warp import Lanes

TARGET = declare_target("cpu")


def _lanes(em, e):
    """This lane's view of the exchange before the call ``e``."""
    op = SimpleNamespace(args=[SimpleNamespace(type=t) for t in e.attrs["exchange"]])
    return Lanes(em, op)


def _source(lanes, lane):
    """``lane`` (i32) if it took part in the exchange, else this lane."""
    b = lanes.em.builder
    return b.select(lanes.present(lane), lane, lanes.lane)


def _row_start(em, lanes, array, lane):
    """The flat element index of the row that ``lane`` supplies (lang/mma.py): its offset,
    plus row lane % 16 and column 8 * (lane // 16) of the tile."""
    b = em.builder
    lane = _source(lanes, lane)
    offset = lanes.arg(1, lane)
    wide = b.zext(lane, I64)
    row = b.mul(b.and_(wide, i64(15)), array.strides[0])
    return b.add(offset, b.add(row, b.mul(b.lshr(wide, i64(4)), i64(8))))


def _places(em, lanes, array, e):
    """For each fragment element 2j+i of this lane: the flat element index of shared_array it
    is loaded from or stored to (the ldmatrix layout, lang/mma.py)."""
    b = em.builder
    g, t = b.lshr(lanes.lane, i32(2)), b.and_(lanes.lane, i32(3))
    places = []
    for j in range(e.attrs["n"]):
        for i in range(2):
            b = em.builder
            if e.attrs["trans"]:            # row 2t+i of column g
                row_lane = b.add(i32(8 * j + i), b.shl(t, i32(1)))
                column = g
            else:                           # row g, column 2t+i
                row_lane = b.add(i32(8 * j), g)
                column = b.add(b.shl(t, i32(1)), i32(i))
            start = _row_start(em, lanes, array, row_lane)
            places.append(em.builder.add(start, em.builder.zext(column, I64)))
    return places


def _element(em, frag, index, access):
    """The address of a fragment's element (checked mode: this lane reads or writes it)."""
    address = em.element_address(em.expr(frag), [i64(index)], frag.decl.name, frag.loc, access)
    return address, memory(frag.type.element)


@lowering(ldmatrix, target=TARGET)
def _ldmatrix(em, e):
    frag, array_node, _ = e.args
    lanes = _lanes(em, e)
    array = em.expr(array_node)
    for index, place in enumerate(_places(em, lanes, array, e)):
        address = flat_address(em, array, place, e.attrs["label"], e.loc, "read")
        pointer, elem = _element(em, frag, index, "write")
        em.builder.store(em.builder.load(address, typ=elem), pointer)


@lowering(stmatrix, target=TARGET)
def _stmatrix(em, e):
    array_node, _, frag = e.args
    lanes = _lanes(em, e)
    array = em.expr(array_node)
    for index, place in enumerate(_places(em, lanes, array, e)):
        pointer, elem = _element(em, frag, index, "read")
        value = em.builder.load(pointer, typ=elem)
        address = flat_address(em, array, place, e.attrs["label"], e.loc, "write")
        em.builder.store(value, address)


def _widen(b, value, kind):
    return b.fpext(value, F32) if kind == "f16" else bfloat16.widen(b, value)


@lowering(sync, target=TARGET)
def _mma(em, e):
    d, _, _, c = e.args
    m, n, k = e.attrs["shape"]
    kind = e.attrs["kind"]
    lanes = _lanes(em, e)
    na = SHAPES[(m, n, k)][0]                  # b's registers follow a's in the exchange
    b = em.builder
    g, t = b.lshr(lanes.lane, i32(2)), b.and_(lanes.lane, i32(3))
    for out in range(4):                        # row g + 8*(out//2), column 2t + out%2
        b = em.builder
        pointer, celem = _element(em, c, out, "read")
        acc = b.load(pointer, typ=celem)
        if celem == F16:
            acc = b.fpext(acc, F32)
        column = b.add(b.shl(t, i32(1)), i32(out % 2))
        for kk in range(k):
            b = em.builder
            # A[row][kk]: lane 4*g + (kk%8)//2, element kk%2 + 2*(out//2) + 4*(kk//8)
            a_lane = _source(lanes, b.add(b.shl(g, i32(2)), i32((kk % 8) // 2)))
            a_index = kk % 2 + 2 * (out // 2) + 4 * (kk // 8)
            # B[kk][column]: lane 4*column + (kk%8)//2, element kk%2 + 2*(kk//8)
            b = em.builder
            b_lane = _source(lanes, b.add(b.shl(column, i32(2)), i32((kk % 8) // 2)))
            b_index = na + kk % 2 + 2 * (kk // 8)
            b = em.builder
            x = _widen(b, lanes.arg(1 + a_index, a_lane), kind)
            y = _widen(b, lanes.arg(1 + b_index, b_lane), kind)
            acc = b.fadd(acc, b.fmul(x, y))
        b = em.builder
        pointer, delem = _element(em, d, out, "write")
        em.builder.store(b.fptrunc(acc, F16) if delem == F16 else acc, pointer)
