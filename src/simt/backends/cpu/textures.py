"""Texture fetches and surface accesses on the CPU device, as LLVM IR.

A texture or surface argument is a descriptor (``TEX_STRUCT``): the texel data,
extents (x, y, z, layer) and byte strides (x, y, z, layer); see
runtime/textures.py for how it is filled. Fetches follow the guide's appendix H
and section 3.2.12.1 as the GPU computes them: coordinates become fixed point with
8 fractional bits (rounded to nearest, ties up), nearest-point sampling takes the
texel the coordinate falls in, linear filtering weights texels by 9-bit fixed-point weights,
and each texel index is remapped by the address mode (clamp, wrap, mirror, border).
"""
import itertools

from llvmlite import ir as ll

from ...compiler import types as T
from ...compiler.codegen import ERR_OUT_OF_BOUNDS
from ...compiler.lltypes import F32, F64, I64, const, i64, memory, ptr

TEX_STRUCT = ll.LiteralStructType([ptr(), ll.ArrayType(I64, 4), ll.ArrayType(I64, 4)])
FRACTION_BITS = 8                      # appendix H: 8 fractional bits of coordinates and weights
_NORM_SCALE = {("u", 1): 255.0, ("i", 1): 127.0, ("u", 2): 65535.0, ("i", 2): 32767.0}


class _Descriptor:
    """A texture/surface descriptor unpacked into LLVM values."""

    def __init__(self, b, value):
        self.data = b.extract_value(value, 0)
        self.extent = [b.extract_value(value, [1, d]) for d in range(4)]
        self.stride = [b.extract_value(value, [2, d]) for d in range(4)]


def texture_op(em, e):
    """Lower a tex.* or surf.* intrinsic for the CPU target."""
    family, kind = e.op.split(".")
    if family == "surf":
        return _surface(em, e, kind)
    t = e.args[0].type
    desc = _Descriptor(em.builder, em.expr(e.args[0]))
    args = [em.expr(a) for a in e.args[1:]]
    if kind == "fetch":
        return _pack(em, e.type, _fetch_linear(em, t, desc, args[0]))
    if kind == "gather":
        return _pack(em, e.type, _gather(em, t, desc, args, e.attrs["comp"]))
    layer = args.pop() if "layered" in kind else None
    return _pack(em, e.type, _sample(em, t, desc, args, layer))


def _pack(em, result_type, values):
    if not isinstance(result_type, T.Tuple):
        return values[0]
    b = em.builder
    struct = ll.Constant(ll.LiteralStructType([v.type for v in values]), ll.Undefined)
    for i, v in enumerate(values):
        struct = b.insert_value(struct, v, i)
    return struct


# ------------------------------------------------------------------ texels
def _texel(em, t, desc, index):
    """The raw channels of the texel at ``index`` ([x, y, z, layer] i64 values or None)."""
    b = em.builder
    offset = None
    for d, i in enumerate(index):
        if i is not None:
            term = b.mul(i, desc.stride[d])
            offset = term if offset is None else b.add(offset, term)
    address = b.gep(desc.data, [offset if offset is not None else i64(0)], source_etype=ll.IntType(8))
    elem = memory(T.Scalar(t.dtype))
    size = t.dtype.itemsize
    return [b.load(b.gep(address, [i64(c * size)], source_etype=ll.IntType(8)), typ=elem)
            for c in range(t.channels)]


def _convert(em, t, raw):
    """One channel as the fetch returns it: normalized float, float32, or the integer."""
    b = em.builder
    kind = t.dtype.kind
    if t.read_mode == "normalized_float" and kind in "iu":
        value = (b.sitofp if kind == "i" else b.uitofp)(raw, F32)
        value = b.fdiv(value, const(F32, _NORM_SCALE[(kind, t.dtype.itemsize)]))
        if kind == "i":               # -128 / 127 would be below -1: CUDA clamps to -1
            value = _maxnum(b, value, const(F32, -1.0))
        return value
    if kind == "f" and t.dtype.itemsize == 2:
        return b.fpext(raw, F32)
    return raw


def _zero(value_type):
    return const(value_type, 0.0 if isinstance(value_type, (ll.FloatType, ll.HalfType)) else 0)


def _maxnum(b, x, y):
    return _binary(b, "llvm.maxnum", x, y)


def _minnum(b, x, y):
    return _binary(b, "llvm.minnum", x, y)


def _binary(b, name, x, y):
    # explicit fnty: llvmlite would declare a one-argument minnum/maxnum
    fn = b.module.declare_intrinsic(name, [x.type], ll.FunctionType(x.type, [x.type, x.type]))
    return b.call(fn, [x, y])


def _texels(em, t, desc, index, valid):
    """Converted channels at ``index``; zero where ``valid`` (an i1 or None) is false."""
    b = em.builder
    if valid is not None:
        index = [None if i is None else b.select(valid, i, i64(0)) for i in index]
    values = [_convert(em, t, raw) for raw in _texel(em, t, desc, index)]
    if valid is not None:
        values = [b.select(valid, v, _zero(v.type)) for v in values]
    return values


# ------------------------------------------------------------------ addressing
def _address(em, mode, i, n):
    """(index in [0, n), valid flag or None) for texel index ``i`` under an address mode."""
    b = em.builder
    if mode == "border":
        ok = b.icmp_unsigned("<", i, n)         # a negative index is a huge unsigned one
        return i, ok
    if mode == "wrap":
        r = b.srem(i, n)
        return b.select(b.icmp_signed("<", r, i64(0)), b.add(r, n), r), None
    if mode == "mirror":
        period = b.add(n, n)
        r = b.srem(i, period)
        r = b.select(b.icmp_signed("<", r, i64(0)), b.add(r, period), r)
        back = b.sub(b.sub(period, i64(1)), r)
        return b.select(b.icmp_signed("<", r, n), r, back), None
    low = b.select(b.icmp_signed("<", i, i64(0)), i64(0), i)
    last = b.sub(n, i64(1))
    return b.select(b.icmp_signed(">", low, last), last, low), None


def _fixed_point(em, t, x, n, linear):
    """The coordinate in texel units as fixed point with 8 fractional bits (an i64)."""
    b = em.builder
    u = x
    if t.normalized_coords:
        u = b.fmul(u, b.sitofp(n, F32))
    if linear:
        u = b.fsub(u, const(F32, 0.5))
    scaled = b.fmul(b.fpext(u, F64), const(F64, float(1 << FRACTION_BITS)))
    # keep the conversion defined for huge and NaN coordinates (maxnum(NaN, lo) is lo)
    scaled = _minnum(b, _maxnum(b, scaled, const(F64, -2.0 ** 50)), const(F64, 2.0 ** 50))
    # linear filtering rounds to the nearest 1/256 (ties up, as measured on an H200);
    # nearest-point sampling takes the cell the coordinate lies in (floor)
    if linear:
        scaled = b.fadd(scaled, const(F64, 0.5))
    floor = b.module.declare_intrinsic("llvm.floor", [F64])
    return b.fptosi(b.call(floor, [scaled]), I64)


def _taps(em, t, x, n, linear):
    """[(texel index, weight numerator out of 256 or None)] along one dimension."""
    b = em.builder
    q = _fixed_point(em, t, x, n, linear)
    i = b.ashr(q, i64(FRACTION_BITS))
    if not linear:
        return [(i, None)]
    frac = b.and_(q, i64((1 << FRACTION_BITS) - 1))
    return [(i, b.sub(i64(1 << FRACTION_BITS), frac)), (b.add(i, i64(1)), frac)]


def _layer_index(em, desc, layer):
    b = em.builder
    index, _ = _address(em, "clamp", b.sext(layer, I64), desc.extent[3])
    return index


def _sample(em, t, desc, coords, layer):
    """tex1D/2D/3D and the layered forms: nearest-point or linear filtering."""
    linear = t.filter == "linear"
    per_dim = [_taps(em, t, x, desc.extent[d], linear) for d, x in enumerate(coords)]
    layer_index = _layer_index(em, desc, layer) if layer is not None else None
    terms = []
    for combo in itertools.product(*per_dim):
        index, valid = [None] * 4, None
        for d, (i, _) in enumerate(combo):
            index[d], ok = _address(em, t.address[d], i, desc.extent[d])
            if ok is not None:
                valid = ok if valid is None else em.builder.and_(valid, ok)
        index[3] = layer_index
        weights = [w for _, w in combo]
        terms.append((weights, _texels(em, t, desc, index, valid)))
    if not linear:
        return terms[0][1]
    return [_filter(em, [(w, values[c]) for w, values in terms]) for c in range(t.channels)]


def _filter(em, terms):
    """sum(w_x * w_y * w_z * T) / 256^d: the weights are exact 9-bit numbers, so every
    product is exact in double precision; the sum is rounded once to float32."""
    b = em.builder
    total = None
    for weights, value in terms:
        w = weights[0]
        for other in weights[1:]:
            w = b.mul(w, other)
        scale = 2.0 ** (-FRACTION_BITS * len(weights))
        term = b.fmul(b.fmul(b.sitofp(w, F64), const(F64, scale)), b.fpext(value, F64))
        total = term if total is None else b.fadd(total, term)
    return b.fptrunc(total, F32)


def _gather(em, t, desc, coords, comp):
    """tex2Dgather: channel ``comp`` of the four bilinear texels, in CUDA's order."""
    per_dim = [_taps(em, t, x, desc.extent[d], True) for d, x in enumerate(coords)]
    (i0, _), (i1, _) = per_dim[0]
    (j0, _), (j1, _) = per_dim[1]
    out = []
    for i, j in ((i0, j1), (i1, j1), (i1, j0), (i0, j0)):
        xi, xok = _address(em, t.address[0], i, desc.extent[0])
        yi, yok = _address(em, t.address[1], j, desc.extent[1])
        valid = xok if yok is None else (yok if xok is None else em.builder.and_(xok, yok))
        out.append(_texels(em, t, desc, [xi, yi, None, None], valid)[comp])
    return out


def _fetch_linear(em, t, desc, index):
    """tex1Dfetch: the texel at an integer index, zero outside [0, n)."""
    b = em.builder
    i = b.sext(index, I64)
    return _texels(em, t, desc, [i, None, None, None], b.icmp_unsigned("<", i, desc.extent[0]))


# ------------------------------------------------------------------ surfaces
def _surface(em, e, kind):
    b = em.builder
    t = e.args[0].type
    ndim = int(kind[-2])
    desc = _Descriptor(b, em.expr(e.args[0]))
    coords = [b.sext(em.expr(a), I64) for a in e.args[1:1 + ndim]]
    texel_bytes = i64(t.dtype.itemsize * t.channels)
    extents = [b.mul(desc.extent[0], texel_bytes)] + desc.extent[1:ndim]
    mode = e.attrs["boundary"]
    valid = None
    if mode == "trap":
        label = em.label_id(e.attrs.get("label", "surface"))
        for d, (c, n) in enumerate(zip(coords, extents)):
            _trap_unless(em, b.icmp_unsigned("<", c, n), e.loc, label, d, c, n)
            b = em.builder
    elif mode == "zero":
        for c, n in zip(coords, extents):
            ok = b.icmp_unsigned("<", c, n)
            valid = ok if valid is None else b.and_(valid, ok)
    index = []
    for d, c in enumerate(coords):
        if mode == "clamp" or mode == "zero":
            c, _ = _address(em, "clamp", c, extents[d])
        index.append(b.sdiv(c, texel_bytes) if d == 0 else c)
    index += [None] * (4 - ndim)
    if kind.startswith("read"):
        return _pack(em, e.type, _surface_read(em, t, desc, index, valid))
    values = [em.expr(a) for a in e.args[1 + ndim:]]
    _surface_write(em, t, desc, index, valid, values)
    return None


def _trap_unless(em, ok, loc, label, dim, index, extent):
    b = em.builder
    ok_bb, fail_bb = em.new_block("surf_in_range"), em.new_block("surf_out_of_range")
    b.cbranch(ok, ok_bb, fail_bb)
    b.position_at_end(fail_bb)
    em.target.emit_error(em, ERR_OUT_OF_BOUNDS, loc, array=label, dim=dim, index=index,
                         extent=extent)
    em.builder.position_at_end(ok_bb)


def _surface_read(em, t, desc, index, valid):
    b = em.builder
    values = _texel(em, t, desc, index)
    values = [b.trunc(v, ll.IntType(1)) if t.dtype.kind == "b" else v for v in values]
    if valid is not None:
        values = [b.select(valid, v, _zero(v.type)) for v in values]
    return values


def _surface_write(em, t, desc, index, valid, values):
    b = em.builder
    if valid is not None:
        store_bb, done = em.new_block("surf_store"), em.new_block("surf_stored")
        b.cbranch(valid, store_bb, done)
        b.position_at_end(store_bb)
    size = t.dtype.itemsize
    offset = None
    for d, i in enumerate(index):
        if i is not None:
            term = b.mul(i, desc.stride[d])
            offset = term if offset is None else b.add(offset, term)
    address = b.gep(desc.data, [offset], source_etype=ll.IntType(8))
    for c, v in enumerate(values):
        b.store(v, b.gep(address, [i64(c * size)], source_etype=ll.IntType(8)))
    if valid is not None:
        b.branch(done)
        b.position_at_end(done)
