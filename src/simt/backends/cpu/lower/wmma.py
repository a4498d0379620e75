"""The warp matrix functions (lang/wmma.py) on the CPU device: every lane holds the whole
tile, row-major, and computes loads and products itself; lane 0 stores (LLVM loops)."""
from contextlib import contextmanager

from ....compiler.flat import counted_loop, flat_address
from ....compiler.lltypes import F16, F32, F64, I32, I64, i32, i64, memory
from ....compiler.wmma import fill
from ....lang import bfloat16
from ....lang.registry import declare_target, lowering
from ....lang.wmma import fill_fragment, load_matrix_sync, mma_sync, num_elements, \
    store_matrix_sync

TARGET = declare_target("cpu")


@lowering(fill_fragment, target=TARGET)
def _fill_cpu(em, e):
    fill(em, e, e.args[0].type.tile)


@lowering(num_elements, target=TARGET)
def _num_cpu(em, e):
    return i32(e.attrs["fragment"].tile)


def _for(em, count):
    """``for i in range(count)`` as an LLVM loop (i an i64): ``with _for(em, count) as i:``."""
    return counted_loop(em, i64(count))


@contextmanager
def _tile_loop(em, rows, cols):
    """Every element of a rows x cols tile: ``with _tile_loop(em, rows, cols) as (r, c):``
    (r, c i64)."""
    with _for(em, rows) as r, _for(em, cols) as c:
        yield r, c


def _memory_index(b, r, c, ldm, layout):
    ldm = b.sext(ldm, I64)
    return b.add(b.mul(r, ldm), c) if layout == "row" else b.add(b.mul(c, ldm), r)


@lowering(load_matrix_sync, target=TARGET)
def _load_cpu(em, e):
    frag, array_node, offset_node, ldm_node = e.args
    f = frag.type
    rows, cols = f.rows_cols
    array, offset, ldm = em.expr(array_node), em.expr(offset_node), em.expr(ldm_node)
    data = em.expr(frag).data
    elem = memory(f.element)

    with _tile_loop(em, rows, cols) as (r, c):
        b = em.builder
        index = b.add(offset, _memory_index(b, r, c, ldm, e.attrs["layout"]))
        value = b.load(flat_address(em, array, index, e.attrs["label"], e.loc), typ=elem)
        b = em.builder
        slot = b.add(b.mul(r, i64(cols)), c)
        b.store(value, b.gep(data, [slot], source_etype=elem))


@lowering(store_matrix_sync, target=TARGET)
def _store_cpu(em, e):
    array_node, offset_node, frag, ldm_node = e.args
    f = frag.type
    rows, cols = f.rows_cols
    array, offset, ldm = em.expr(array_node), em.expr(offset_node), em.expr(ldm_node)
    data = em.expr(frag).data
    elem = memory(f.element)

    # lane 0 stores for the warp (all lanes hold the tile): a lane's writes after the call
    # are never overwritten by a later lane's copy of the store, as on the GPU
    b = em.builder
    first = b.icmp_unsigned("==", b.and_(em.flat_tid, i64(31)), i64(0))
    store, done = em.new_block("wmma_store"), em.new_block("wmma_stored")
    b.cbranch(first, store, done)
    b.position_at_end(store)
    with _tile_loop(em, rows, cols) as (r, c):
        b = em.builder
        value = b.load(b.gep(data, [b.add(b.mul(r, i64(cols)), c)], source_etype=elem), typ=elem)
        index = b.add(offset, _memory_index(b, r, c, ldm, e.attrs["layout"]))
        address = flat_address(em, array, index, e.attrs["label"], e.loc)
        em.builder.store(value, address)
    em.builder.branch(done)
    em.builder.position_at_end(done)


def _widen(b, value, kind):
    """A multiplicand element in the accumulation's type: exactly as the tensor core sees it."""
    if kind == "f16":
        return b.fpext(value, F32)
    if kind == "bf16":
        return bfloat16.widen(b, value)
    if kind == "tf32":              # the tensor core reads 10 bits of mantissa: the rest is 0
        bits = b.and_(b.bitcast(value, I32), i32(-0x2000))
        return b.bitcast(bits, F32)
    if kind == "s8":
        return b.sext(value, I32)
    if kind == "u8":
        return b.zext(value, I32)
    return value                    # f64


def _acc_in(b, value, kind):
    return b.fpext(value, F32) if kind == "f16" else value


def _acc_out(b, value, kind):
    return b.fptrunc(value, F16) if kind == "f16" else value


@lowering(mma_sync, target=TARGET)
def _mma_cpu(em, e):
    d, a, bb, c = (em.expr(x).data for x in e.args)
    fd, fa, fb, fc = (x.type for x in e.args)
    m, n, k = fa.m, fa.n, fa.k
    ta, tc, td = memory(fa.element), memory(fc.element), memory(fd.element)
    integer = fa.kind in ("s8", "u8")
    acc_type = I32 if integer else (F64 if fa.kind == "f64" else F32)
    acc = em.alloca(acc_type, name="wmma_acc")

    with _tile_loop(em, m, n) as (r, col):
        b = em.builder
        b.store(_acc_in(b, b.load(b.gep(c, [b.add(b.mul(r, i64(n)), col)], source_etype=tc),
                                  typ=tc), fc.kind), acc)
        with _for(em, k) as kk:
            b = em.builder
            x = _widen(b, b.load(b.gep(a, [b.add(b.mul(r, i64(k)), kk)], source_etype=ta),
                                 typ=ta), fa.kind)
            y = _widen(b, b.load(b.gep(bb, [b.add(b.mul(kk, i64(n)), col)], source_etype=ta),
                                 typ=ta), fb.kind)
            total = b.load(acc, typ=acc_type)
            b.store(b.add(total, b.mul(x, y)) if integer else b.fadd(total, b.fmul(x, y)), acc)
        b = em.builder
        out = _acc_out(b, b.load(acc, typ=acc_type), fd.kind)
        b.store(out, b.gep(d, [b.add(b.mul(r, i64(n)), col)], source_etype=td))
