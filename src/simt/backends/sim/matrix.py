"""The matrix instructions on the sim device, with the GPU's registers in every thread: the
warp-level ones (lang/mma.py: ldmatrix, stmatrix, mma.sync) and the warpgroup MMA
(lang/wgmma.py). Generated code calls these as ``_k_mx.*``.

A warp-level call follows an ``exchange`` warp operation: the scheduler hands every lane
the operands each lane left there (``lanes``: per lane a tuple, None for a lane that did
not take part, whose place the calling lane's own operands take, as shuffles do), and each
lane computes its own part as the PTX ISA's layouts say. A wgmma descriptor is
(tile, byte offset of the operand); at ``mma_async`` each thread computes its own
accumulator registers from the shared tile, reading each element where the layout and the
swizzle put it (docs/hopper.md), and a register fragment of A from the lanes of its warp
that hold its rows (the exchange's, as mma.sync's). Every element goes through the arrays'
checked accesses (bounds, races, uninitialized reads). Products are exact and summed in
float32 in k order, as the CPU device sums them, so both give the same bits (int32 sums of
8-bit integers wrap, as on the CPU device)."""
import struct

import numpy as np

from ...lang.wgmma import INTEGER, KINDS, SWIZZLES, fragment_source
from .values import bf16_decode, bf16_encode, f16, f32, fp8_decode

_U32, _F32 = struct.Struct("<I"), struct.Struct("<f")


# ---------------------------------------------------------------- multiplicands
def _tf32(x):
    """What the tensor core reads of a float32: the low 13 bits of its mantissa are 0."""
    return _F32.unpack(_U32.pack(_U32.unpack(_F32.pack(x))[0] & 0xFFFFE000))[0]


WIDEN = {"f16": float, "bf16": bf16_decode, "tf32": _tf32}
WIDEN_WGMMA = dict(WIDEN, e4m3=lambda code: fp8_decode(code, "float8_e4m3"),
                   e5m2=lambda code: fp8_decode(code, "float8_e5m2"))


def narrow(x, dtype):
    """A float32 result stored into an array of dtype (float32, float16 or bfloat16)."""
    if dtype.itemsize == 4:
        return x
    return f16(x) if dtype.kind == "f" else bf16_encode(x)


def _flat(array, site, f):
    """The index tuple of flat element f of a C-contiguous array (checked by its ld/st)."""
    idx = []
    for n in reversed(array.shape[1:]):
        f, i = divmod(f, n)
        idx.append(i)
    return (f,) + tuple(reversed(idx))


# ---------------------------------------------------------------- ldmatrix, stmatrix
def _places(lanes, lane, n, trans, width):
    """Flat index of each fragment element 2j+i of this lane in the shared array: row g,
    column 2t+i of matrix j (trans: row 2t+i, column g), matrix j's row r supplied by lane
    8j + r at its own offset (lang/mma.py)."""
    g, t = lane >> 2, lane & 3
    own = lanes[lane]
    places = []
    for j in range(n):
        for i in range(2):
            row_lane, column = (8 * j + 2 * t + i, g) if trans else (8 * j + g, 2 * t + i)
            offset = (lanes[row_lane] or own)[0]
            places.append(offset + (row_lane & 15) * width + 8 * (row_lane >> 4) + column)
    return places


def ldmatrix(frag, array, lanes, lane, n, trans, site, frag_site):
    for index, place in enumerate(_places(lanes, lane, n, trans, array.shape[1])):
        frag.st(frag_site, array.ld(site, *_flat(array, site, place)), index)


def stmatrix(array, frag, lanes, lane, n, trans, site, frag_site):
    for index, place in enumerate(_places(lanes, lane, n, trans, array.shape[1])):
        array.st(site, frag.ld(frag_site, index), *_flat(array, site, place))


def mma_sync(d, c, lanes, lane, k, na, kind, site):
    """This lane's 4 elements of d = a @ b + c: row g + 8*(i//2), column 2t + i%2."""
    widen = WIDEN[kind]
    own = lanes[lane]
    g, t = lane >> 2, lane & 3
    out = []
    for i in range(4):
        total = float(c.ld(site, i))
        column = 2 * t + i % 2
        for kk in range(k):
            # A[row][kk]: lane 4g + (kk%8)//2, a[kk%2 + 2*(i//2) + 4*(kk//8)];
            # B[kk][column]: lane 4*column + (kk%8)//2, b[kk%2 + 2*(kk//8)]
            x = (lanes[4 * g + (kk % 8) // 2] or own)[kk % 2 + 2 * (i // 2) + 4 * (kk // 8)]
            y = (lanes[4 * column + (kk % 8) // 2] or own)[na + kk % 2 + 2 * (kk // 8)]
            total = f32(total + f32(widen(x) * widen(y)))
        out.append(total)
    for i, value in enumerate(out):               # d may be c: written after all are read
        d.st(site, narrow(value, d.dtype), i)


# ---------------------------------------------------------------- wgmma
def descriptor(tile, row, k, kind, swizzle, lbo, sbo, major):
    """(tile, byte offset of the operand at (row, k)): compiler/wgmma.operand_offset."""
    size = KINDS[kind][1]
    if major == "mn":
        return tile, (row + k) * SWIZZLES[swizzle]
    return tile, (row >> 3) * sbo + k * size * (1 if swizzle else lbo // 16)


def _multiplicands(kind, values):
    """Elements as the tensor core multiplies them: float32, or int64 for 8-bit integers."""
    if kind in INTEGER:
        return np.array(values, np.int64)
    widen = WIDEN_WGMMA[kind]
    return np.array([widen(v) for v in values], np.float32)


def _elements(desc, kind, swizzle, lbo, sbo, major, rows, site):
    """The operand's elements (rows, k) for the given rows (M or N indices) and k in one
    instruction's K, as the tensor core multiplies them: a (len(rows), K) NumPy array."""
    tile, start = desc
    steps, size = KINDS[kind]
    r = np.asarray(rows, np.int64)[:, None]
    width = SWIZZLES[swizzle]
    if major == "mn":         # K down the rows, M (N) contiguous in chunks lbo apart
        k = np.arange(steps, dtype=np.int64)[None, :]
        per_row = width // size
        offset = start + (r // per_row) * lbo + (r % per_row) * size + (k >> 3) * sbo + \
            (k & 7) * width
        offset ^= ((offset >> 7) & (width // 16 - 1)) << 4
    elif swizzle:             # contiguous along the row, then the address's XOR
        offset = start + (r >> 3) * sbo + (r & 7) * width + \
            np.arange(steps, dtype=np.int64)[None, :] * size
        offset ^= ((offset >> 7) & (width // 16 - 1)) << 4
    else:                     # 16-byte core-matrix rows, lbo apart along k
        along = np.arange(steps, dtype=np.int64)[None, :] * size
        offset = start + (r >> 3) * sbo + (r & 7) * 16 + (along >> 4) * lbo + (along & 15)
    ld, cols = tile.ld, tile.shape[1]
    values = [ld(site, f // cols, f % cols) for f in (offset // size).ravel().tolist()]
    return _multiplicands(kind, values).reshape(offset.shape)


def _fragment_rows(lanes, kind, lane):
    """This lane's rows g and g + 8 of A from its warp's register fragments (the lanes'
    elements the exchange before the call gathered): a (2, K) NumPy array."""
    own, quad = lanes[lane], lane & ~3
    values = []
    for half in range(2):
        for k in range(KINDS[kind][0]):
            source, index = fragment_source(8 * half, k, kind)
            values.append((lanes[quad + source] or own)[index])
    return _multiplicands(kind, values).reshape(2, -1)


def _place(rank):
    """(first row, first column) of a thread's registers (lang/wgmma.register_of)."""
    lane, warp = rank & 31, (rank >> 5) & 3
    return 16 * warp + lane // 4, 2 * (lane % 4)


def wgmma(acc, a, b, keep, rank, ta, tb, a_site, b_site, acc_site):
    """acc = a @ b + (acc if keep else 0) for this thread's registers; ta and tb: (precision,
    swizzle, lbo, sbo, major) of the descriptors' types; for a register fragment of A, ta is its
    precision and a every lane's elements (the exchange's)."""
    regs = acc.shape[0]
    row0, col0 = _place(rank)
    if isinstance(ta, str):
        x = _fragment_rows(a, ta, rank & 31)                            # (2, K)
    else:
        x = _elements(a, *ta, [row0, row0 + 8], a_site)                 # (2, K)
    cols = [8 * (j // 2) + col0 + j % 2 for j in range(regs // 2)]    # registers 4c+{0,1}
    y = _elements(b, *tb, cols, b_site)                                 # (regs/2, K)
    rows = np.array([i % 4 // 2 for i in range(regs)])
    columns = np.array([i // 4 * 2 + i % 2 for i in range(regs)])
    products = x[rows] * y[columns]               # exact (<= 11-bit significands, or ints)
    if products.dtype.kind == "i":                # int32, wrapping as the sums go
        total = sum(products[:, kk] for kk in range(products.shape[1]))
        old = np.array([acc.ld(acc_site, i) if keep else 0 for i in range(regs)], np.int64)
        total = ((old + total + 2 ** 31) % 2 ** 32 - 2 ** 31).tolist()
    else:
        total = np.array([acc.ld(acc_site, i) if keep else 0.0 for i in range(regs)],
                         np.float32)
        for kk in range(products.shape[1]):       # summed in k order, rounded each step
            total = total + products[:, kk]
        total = total.tolist()
    for i, value in enumerate(total):
        acc.st(acc_site, value, i)


def zero(acc, site):
    value = 0 if acc.dtype.kind == "i" else 0.0
    for i in range(acc.shape[0]):
        acc.st(site, value, i)


def store(out, offset, ldm, acc, rank, site, acc_site):
    """Register i at out[offset + row * ldm + column], converted to out's dtype."""
    row0, col0 = _place(rank)
    for i in range(acc.shape[0]):
        row = row0 + 8 * (i % 4 // 2)
        f = offset + row * ldm + col0 + 8 * (i // 4) + i % 2
        out.st(site, narrow(acc.ld(acc_site, i), out.dtype), *_flat(out, site, f))
