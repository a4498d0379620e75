"""Texture fetches and surface accesses on the CPU device, as LLVM IR.

A texture or surface argument is a descriptor (``TEX_STRUCT``): the texel data,
extents (x, y, z, layer) and byte strides (x, y, z, layer); see
runtime/textures.py for how it is filled. Fetches follow the guide's appendix H
and section 3.2.12.1 with the arithmetic measured on an H200 (docs/textures.md, "The H200's
arithmetic"; tests/texture_model.py is the NumPy statement of the same rules): coordinates
become fixed point with 8 fractional bits, linear filtering uses integer weights out of 256
rounded as the GPU rounds them and sums float texels aligned to a shared exponent, and each
texel index is remapped by the address mode (clamp, wrap, mirror, border).
"""
import itertools

from llvmlite import ir as ll

from ...ir import types as T
import simt.fault as fault
from ...compiler.lltypes import F32, F64, I64, const, i64, memory, ptr, result_of
from . import texcube as cube, texmip as mipmaps

TEX_STRUCT = ll.LiteralStructType([ptr(), ll.ArrayType(I64, 4), ll.ArrayType(I64, 4)])
FRACTION_BITS = 8                      # appendix H: 8 fractional bits of coordinates and weights
COORD_BITS = 21                        # fractional bits of a normalized coordinate (H200)
GUARD_BITS = 4                         # bits kept below a float texel's precision when filtered
_NORM_SCALE = {("u", 1): 255.0, ("i", 1): 127.0, ("u", 2): 65535.0, ("i", 2): 32767.0}


class _Descriptor:
    """A texture/surface descriptor unpacked into LLVM values (data, extent[4], stride[4]).
    For a texture over a mipmapped array, data is the table of the levels' descriptors
    (texmem.HostMipmap), extent level 0's, and stride (levels, then the float32 bits of the
    level bias, the min and the max level clamps)."""

    def __init__(self, b, value=None, parts=None):
        if parts is not None:
            self.data, self.extent, self.stride = parts
            return
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
        return result_of(em.builder, e.type, _fetch_linear(em, t, desc, args[0]))
    if kind == "gather":
        return result_of(em.builder, e.type, _gather(em, t, desc, args, e.attrs["comp"]))
    lod, layer_index = None, None
    if kind in ("cube", "acube"):
        args, layer_index = cube.face_coords(em, desc, args)
    elif kind.endswith("lod"):
        lod = args.pop()
    elif kind == "2dgrad":
        lod = mipmaps.gradient_lod(em, desc, args[2:4], args[4:6])
        args = args[:2]
    elif "layered" in kind:
        layer_index = _layer_index(em, desc, args.pop())
    if t.source == "mipmap":
        lod = const(F32, 0.0) if lod is None else lod
        return result_of(em.builder, e.type, mipmaps.sample(em, t, desc, args, lod, _sample))
    return result_of(em.builder, e.type, _sample(em, t, desc, args, layer_index))


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


def _fixed_point(em, t, x, n, linear, mode):
    """The coordinate in texel units as fixed point with 8 fractional bits (an i64):
    a normalized coordinate is first made fixed point with COORD_BITS fractional bits
    (floor) and multiplied by the extent exactly; linear filtering subtracts 0.5 and rounds
    to nearest (ties up), nearest-point sampling takes floor; linear filtering with the
    clamp mode clamps to [0, n - 1] (as measured on an H200, docs/textures.md)."""
    b = em.builder
    floor = b.module.declare_intrinsic("llvm.floor", [F64])
    if t.normalized_coords:
        # |x| <= 1024 keeps every product below 2^63 (and maxnum(NaN, lo) is lo)
        limit = float(1024 << COORD_BITS)
        scaled = b.fmul(b.fpext(x, F64), const(F64, float(1 << COORD_BITS)))
        scaled = _minnum(b, _maxnum(b, scaled, const(F64, -limit)), const(F64, limit))
        u = b.mul(b.fptosi(b.call(floor, [scaled]), I64), n)
        u = b.shl(u, i64(FRACTION_BITS))
        if linear:
            u = b.sub(u, i64(255 << (COORD_BITS - 1)))          # - 0.5 + 1/512: ties up
        q = b.ashr(u, i64(COORD_BITS))
    else:
        scaled = b.fmul(b.fpext(x, F64), const(F64, float(1 << FRACTION_BITS)))
        scaled = _minnum(b, _maxnum(b, scaled, const(F64, -2.0 ** 50)), const(F64, 2.0 ** 50))
        if linear:
            scaled = b.fsub(scaled, const(F64, 127.5))
        q = b.fptosi(b.call(floor, [scaled]), I64)
    if linear and mode == "clamp":
        last = b.shl(b.sub(n, i64(1)), i64(FRACTION_BITS))
        q = b.select(b.icmp_signed("<", q, i64(0)), i64(0), q)
        q = b.select(b.icmp_signed(">", q, last), last, q)
    return q


def _taps(em, t, x, n, linear, mode=None):
    """[(texel index, weight numerator out of 256 or None)] along one dimension."""
    b = em.builder
    q = _fixed_point(em, t, x, n, linear, mode)
    i = b.ashr(q, i64(FRACTION_BITS))
    if not linear:
        return [(i, None)]
    frac = b.and_(q, i64((1 << FRACTION_BITS) - 1))
    return [(i, b.sub(i64(1 << FRACTION_BITS), frac)), (b.add(i, i64(1)), frac)]


def _layer_index(em, desc, layer):
    """The layer as an unsigned number clamped to the last layer (-1 is the last)."""
    b = em.builder
    index = b.zext(layer, I64)
    last = b.sub(desc.extent[3], i64(1))
    return b.select(b.icmp_unsigned(">", index, last), last, index)


def _weights(em, fracs):
    """{corner: i64 weight out of 256}, the H200's rounding of the products (see
    tests/texture_model.py): z slices share 256 exactly, each is split by x with the x1
    part rounded half up, and each x part by y with its 'diagonal' child rounded half up."""
    b = em.builder
    one = i64(1 << FRACTION_BITS)

    def hu(v):                                   # v / 256 rounded half up
        return b.ashr(b.add(v, i64(1 << (FRACTION_BITS - 1))), i64(FRACTION_BITS))

    if len(fracs) == 1:
        return {(0,): b.sub(one, fracs[0]), (1,): fracs[0]}
    a, c_y = fracs[0], fracs[1]
    shares = [(one, ())] if len(fracs) == 2 else \
        [(b.sub(one, fracs[2]), (0,)), (fracs[2], (1,))]
    out = {}
    for p, k in shares:
        x1 = hu(b.mul(p, a))
        x0 = b.sub(p, x1)
        w00 = hu(b.mul(x0, b.sub(one, c_y)))
        w11 = hu(b.mul(x1, c_y))
        out[(0, 0) + k], out[(0, 1) + k] = w00, b.sub(x0, w00)
        out[(1, 0) + k], out[(1, 1) + k] = b.sub(x1, w11), w11
    return out


def _sample(em, t, desc, coords, layer_index):
    """tex1D/2D/3D, the layered forms (``layer_index`` an i64, or None) and one level
    of a mipmapped texture: nearest-point or linear filtering."""
    b = em.builder
    linear = t.filter == "linear"
    per_dim = [_taps(em, t, x, desc.extent[d], linear, t.address[d])
               for d, x in enumerate(coords)]
    raw = linear and t.dtype.kind in "iu"        # normalized integers filter the raw texels
    texels = {}
    for corner in itertools.product(range(len(per_dim[0])), repeat=len(coords)):
        index, valid = [None] * 4, None
        for d, tap in enumerate(corner):
            index[d], ok = _address(em, t.address[d], per_dim[d][tap][0], desc.extent[d])
            if ok is not None:
                valid = ok if valid is None else b.and_(valid, ok)
        index[3] = layer_index
        texels[corner] = _raw_texels(em, t, desc, index, valid) if raw else \
            _texels(em, t, desc, index, valid)
    if not linear:
        return next(iter(texels.values()))
    weights = _weights(em, [per_dim[d][1][1] for d in range(len(coords))])
    filt = _filter_normalized if raw else _filter_float
    return [filt(em, t, {c: (weights[c], texels[c][ch]) for c in texels})
            for ch in range(t.channels)]


def _raw_texels(em, t, desc, index, valid):
    """The stored integer channels at ``index`` as i64; zero where ``valid`` is false."""
    b = em.builder
    index = [None if i is None else b.select(valid, i, i64(0)) for i in index] \
        if valid is not None else index
    extend = b.sext if t.dtype.kind == "i" else b.zext
    values = [extend(v, I64) for v in _texel(em, t, desc, index)]
    if valid is not None:
        values = [b.select(valid, v, i64(0)) for v in values]
    return values


def _pow2(b, exponent):
    """2.0 ** exponent as a double, for an i64 exponent in the normal range."""
    return b.bitcast(b.shl(b.add(exponent, i64(1023)), i64(52)), F64)


def _filter_float(em, t, terms):
    """Linear filtering of float texels as the H200 does it: in each z slice the texels
    of non-zero weight are aligned to the largest exponent among them and truncated toward
    zero to GUARD_BITS bits below their precision; the weighted sum is exact (each slice
    fits a double; slices are added in double) and rounded once, to nearest with ties away
    from zero, to float32 (float16 precision for float16 texels)."""
    b = em.builder
    bits = 11 if t.dtype.itemsize == 2 else 24
    slices = {}
    for corner, term in terms.items():
        slices.setdefault(corner[2:], []).append(term)
    total = None
    for members in slices.values():
        fields = []
        for w, v in members:
            field = b.and_(b.lshr(b.bitcast(v, ll.IntType(32)), ll.Constant(ll.IntType(32), 23)),
                           ll.Constant(ll.IntType(32), 0xFF))
            field = b.zext(field, I64)
            field = b.select(b.icmp_unsigned("<", field, i64(1)), i64(1), field)   # subnormal
            used = b.and_(b.icmp_signed("!=", w, i64(0)), b.fcmp_unordered("!=", v, _zero(F32)))
            fields.append(b.select(used, field, i64(0)))
        top = fields[0]
        for f in fields[1:]:
            top = b.select(b.icmp_signed(">", f, top), f, top)
        # step = 2^(E - bits - GUARD_BITS) with E = field - 126, the frexp exponent
        shift = i64(126 + bits + GUARD_BITS)
        step, inverse = _pow2(b, b.sub(top, shift)), _pow2(b, b.sub(shift, top))
        trunc = b.module.declare_intrinsic("llvm.trunc", [F64])
        for w, v in members:
            q = b.fmul(b.call(trunc, [b.fmul(b.fpext(v, F64), inverse)]), step)
            term = b.fmul(b.sitofp(w, F64), q)
            total = term if total is None else b.fadd(total, term)
    total = b.fmul(total, const(F64, 2.0 ** -FRACTION_BITS))
    return b.fptrunc(_round_away(em, total, bits, -24 if bits == 11 else -149), F32)


def _round_away(em, v, bits, min_exp):
    """A double rounded to ``bits`` significant bits, ties away from zero, on a grid no
    finer than 2^min_exp (the target format's subnormals)."""
    b = em.builder
    drop = 53 - bits
    as_int = b.bitcast(v, I64)
    rounded = b.and_(b.add(as_int, i64(1 << (drop - 1))), i64(~((1 << drop) - 1)))
    normal = b.bitcast(rounded, F64)             # sign-magnitude: adding rounds away from 0
    fabs = b.module.declare_intrinsic("llvm.fabs", [F64])
    floor = b.module.declare_intrinsic("llvm.floor", [F64])
    magnitude = b.call(fabs, [v])
    tiny = b.fmul(b.call(floor, [b.fadd(b.fmul(magnitude, const(F64, 2.0 ** -min_exp)),
                                        const(F64, 0.5))]), const(F64, 2.0 ** min_exp))
    tiny = _binary(b, "llvm.copysign", tiny, v)
    is_tiny = b.fcmp_ordered("<", magnitude, const(F64, 2.0 ** (min_exp + bits - 1)))
    result = b.select(is_tiny, tiny, normal)
    return b.select(b.fcmp_ordered("==", v, _zero(F64)), _zero(F64), result)


def _filter_normalized(em, t, terms):
    """Linear filtering of 8/16-bit normalized integers: a 16-bit fixed-point filter.
    Unsigned: texels widened to 16 bits (v * 257 for 8-bit), the sum rounded half up to K,
    the result K / 65535. Signed: S, the weighted sum of the raw texels (-128 and -32768
    included), is scaled to 16 bits as the H200 does it, for int8 by 33025/32768 (close to
    32767/32512) with truncated partial products, 256 S + 32 floor(S / 16) + floor(S / 128);
    then rounded half up to K, clamped at -32767, and the result is K / 32767. Both bit for bit
    on an H200 (docs/textures.md)."""
    b = em.builder
    size = t.dtype.itemsize
    total = None
    for w, v in terms.values():
        if t.dtype.kind == "u" and size == 1:
            v = b.mul(v, i64(257))
        term = b.mul(w, v)
        total = term if total is None else b.add(total, term)
    if t.dtype.kind == "i" and size == 1:
        total = b.add(b.add(b.shl(total, i64(8)), b.shl(b.ashr(total, i64(4)), i64(5))),
                      b.ashr(total, i64(7)))
    k = b.ashr(b.add(total, i64(1 << (FRACTION_BITS - 1))), i64(FRACTION_BITS))
    if t.dtype.kind == "u":
        return b.fdiv(b.sitofp(k, F32), const(F32, 65535.0))
    k = b.select(b.icmp_signed("<", k, i64(-32767)), i64(-32767), k)
    return b.fdiv(b.sitofp(k, F32), const(F32, 32767.0))


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
    """surf{1,2,3}D, surf2DLayered, surfCubemap and surfCubemapLayered reads and writes:
    the layered and cubemap forms address (x, y, layer), the layer a face (6 per cubemap)."""
    b = em.builder
    t = e.args[0].type
    shape = kind[4:] if kind.startswith("read") else kind[5:]
    ndim = 2 if shape.startswith(("2d", "cube")) else int(shape[0])
    layered = shape not in ("1d", "2d", "3d")
    desc = _Descriptor(b, em.expr(e.args[0]))
    ncoords = ndim + layered
    coords = [b.sext(em.expr(a), I64) for a in e.args[1:1 + ncoords]]
    texel_bytes = i64(t.dtype.itemsize * t.channels)
    extents = [b.mul(desc.extent[0], texel_bytes)] + desc.extent[1:ndim] + \
        ([desc.extent[3]] if layered else [])
    mode = e.attrs["boundary"]
    valid = None
    if mode == "trap":
        label = em.target.label_id(e.attrs.get("label", "surface"))
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
    layer = index.pop() if layered else None
    index += [None] * (3 - ndim) + [layer]
    if kind.startswith("read"):
        return result_of(em.builder, e.type, _surface_read(em, t, desc, index, valid))
    values = [em.expr(a) for a in e.args[1 + ncoords:]]
    _surface_write(em, t, desc, index, valid, values)
    return None


def _trap_unless(em, ok, loc, label, dim, index, extent):
    b = em.builder
    ok_bb, fail_bb = em.new_block("surf_in_range"), em.new_block("surf_out_of_range")
    b.cbranch(ok, ok_bb, fail_bb)
    b.position_at_end(fail_bb)
    em.target.emit_error(em, fault.OUT_OF_BOUNDS, loc, array=label, dim=dim, index=index,
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
