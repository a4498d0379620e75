"""Mipmapped texture fetches on the CPU device: the level of detail and the levels it
reads (guide 3.2.12.1, cudaTextureDesc's mipmap fields).

The level of detail is lod + bias, clamped to [min clamp, max clamp] and then to
[0, levels - 1] (a NaN lod reads level 0). tex2DGrad's lod is log2 of the longer
gradient in texels of level 0, max(|dx * (w, h)|, |dy * (w, h)|). mipmap_filter 'point'
reads level floor(lod + 1/2); 'linear' splits the lod as fixed point with 8 fractional
bits (floor) into level l and fraction f, filters levels l and l + 1 (the last level
alone at the end) and blends them (256 - f) / 256 and f / 256, rounded once to float32.
The rounding of the level choice and of the blend are this module's choice, not measured
on a GPU (docs/textures.md, Mipmaps).
"""
from llvmlite import ir as ll

from ...compiler.lltypes import F32, F64, I64, const, i64, ptr

LEVEL_FRACTION_BITS = 8
ROW_BYTES = 72                 # one level's (address, extent[4], strides[4]) as int64s


class _Level:
    """One level's descriptor (the attributes textures._sample reads)."""

    def __init__(self, data, extent, stride):
        self.data, self.extent, self.stride = data, extent, stride


def _level(em, desc, index):
    """The descriptor of level ``index`` (an i64) from the texture's level table."""
    b = em.builder
    row = b.gep(desc.data, [b.mul(index, i64(ROW_BYTES))], source_etype=ll.IntType(8))

    def word(k):
        return b.load(b.gep(row, [i64(8 * k)], source_etype=ll.IntType(8)), typ=I64)

    data = b.inttoptr(word(0), ptr())
    return _Level(data, [word(1 + d) for d in range(4)], [word(5 + d) for d in range(4)])


def _f32_field(b, value):
    return b.bitcast(b.trunc(value, ll.IntType(32)), F32)


def _binary(b, name, x, y):
    fn = b.module.declare_intrinsic(name, [x.type], ll.FunctionType(x.type, [x.type, x.type]))
    return b.call(fn, [x, y])


def _clamped_lod(em, desc, lod):
    """lod + bias clamped to the texture's clamps and to the levels there are (float32)."""
    b = em.builder
    bias, low, high = (_f32_field(b, desc.stride[k]) for k in (1, 2, 3))
    lod = b.fadd(lod, bias)
    lod = _binary(b, "llvm.minnum", _binary(b, "llvm.maxnum", lod, low), high)
    last = b.sitofp(b.sub(desc.stride[0], i64(1)), F32)
    return _binary(b, "llvm.minnum", _binary(b, "llvm.maxnum", lod, const(F32, 0.0)), last)


def sample(em, t, desc, coords, lod, sample_level):
    """A fetch from a mipmapped texture at level of detail ``lod`` (float32); ``sample_level``
    is textures._sample, called with one level's descriptor."""
    b = em.builder
    lod = _clamped_lod(em, desc, lod)
    floor = b.module.declare_intrinsic("llvm.floor", [F64])
    wide = b.fpext(lod, F64)
    if t.mipmap_filter == "point":
        index = b.fptosi(b.call(floor, [b.fadd(wide, const(F64, 0.5))]), I64)
        return sample_level(em, t, _level(em, desc, index), coords, None)
    q = b.fptosi(b.call(floor, [b.fmul(wide, const(F64, float(1 << LEVEL_FRACTION_BITS)))]),
                 I64)
    first = b.ashr(q, i64(LEVEL_FRACTION_BITS))
    frac = b.and_(q, i64((1 << LEVEL_FRACTION_BITS) - 1))
    last = b.sub(desc.stride[0], i64(1))
    second = b.select(b.icmp_signed("<", first, last), b.add(first, i64(1)), last)
    low = sample_level(em, t, _level(em, desc, first), coords, None)
    high = sample_level(em, t, _level(em, desc, second), coords, None)
    w_high = b.sitofp(frac, F64)
    w_low = b.sitofp(b.sub(i64(1 << LEVEL_FRACTION_BITS), frac), F64)
    scale = const(F64, 2.0 ** -LEVEL_FRACTION_BITS)
    out = []
    for v0, v1 in zip(low, high):
        total = b.fadd(b.fmul(w_low, b.fpext(v0, F64)), b.fmul(w_high, b.fpext(v1, F64)))
        out.append(b.fptrunc(b.fmul(total, scale), F32))
    return out


def gradient_lod(em, desc, dx, dy):
    """tex2DGrad's level of detail: log2 of the longer gradient in texels of level 0,
    0.5 log2(max(|dx * (w, h)|^2, |dy * (w, h)|^2)), computed in double, as float32."""
    b = em.builder
    size = [b.sitofp(desc.extent[d], F64) for d in (0, 1)]

    def length2(g):
        parts = [b.fmul(b.fpext(g[d], F64), size[d]) for d in (0, 1)]
        return b.fadd(b.fmul(parts[0], parts[0]), b.fmul(parts[1], parts[1]))

    rho2 = _binary(b, "llvm.maxnum", length2(dx), length2(dy))
    log2 = b.module.declare_intrinsic("llvm.log2", [F64])
    return b.fptrunc(b.fmul(b.call(log2, [rho2]), const(F64, 0.5)), F32)
