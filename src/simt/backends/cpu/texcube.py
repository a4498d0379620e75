"""Cubemap fetches on the CPU device: the face and the coordinates on it (guide
3.2.12.1.5, table 2). The face is that of the coordinate of largest magnitude m (ties: x
before y before z, a choice the guide leaves open), and the face is read as a 2D texture
at the normalized coordinates ((s/m + 1) / 2, (t/m + 1) / 2), in float32. A cubemap
array is a layered 2D array of 6 faces per cubemap (texmem.py), so the face is a layer.
"""
from ...compiler.lltypes import F32, I64, const, i64

# face: (axis of m, sign of the axis, (axis, sign) of s, (axis, sign) of t)
FACES = ((0, 1, (2, -1), (1, -1)), (0, -1, (2, 1), (1, -1)),
         (1, 1, (0, 1), (2, 1)), (1, -1, (0, 1), (2, -1)),
         (2, 1, (0, 1), (1, -1)), (2, -1, (0, -1), (1, -1)))


def face_coords(em, desc, args):
    """([u, v] float32 face coordinates, the i64 layer index: face, or 6 * cubemap + face)
    for texCubemap(x, y, z) and texCubemapLayered(x, y, z, layer)."""
    b = em.builder
    xyz = args[:3]
    fabs = b.module.declare_intrinsic("llvm.fabs", [F32])
    mag = [b.call(fabs, [v]) for v in xyz]
    x_major = b.and_(b.fcmp_ordered(">=", mag[0], mag[1]), b.fcmp_ordered(">=", mag[0], mag[2]))
    y_major = b.fcmp_ordered(">=", mag[1], mag[2])
    axis = b.select(x_major, i64(0), b.select(y_major, i64(1), i64(2)))
    negative = [b.fcmp_ordered("<", v, const(F32, 0.0)) for v in xyz]
    face = b.add(b.mul(axis, i64(2)), b.zext(_pick(b, axis, negative), I64))
    s_val, t_val, m_val = const(F32, 0.0), const(F32, 0.0), const(F32, 1.0)
    for f, (ax, sign, (sa, ss), (ta, ts)) in enumerate(FACES):
        here = b.icmp_signed("==", face, i64(f))
        m = xyz[ax] if sign > 0 else b.fneg(xyz[ax])
        s = xyz[sa] if ss > 0 else b.fneg(xyz[sa])
        t = xyz[ta] if ts > 0 else b.fneg(xyz[ta])
        m_val, s_val, t_val = (b.select(here, new, old) for new, old in
                               ((m, m_val), (s, s_val), (t, t_val)))
    half, one = const(F32, 0.5), const(F32, 1.0)
    u = b.fmul(b.fadd(b.fdiv(s_val, m_val), one), half)
    v = b.fmul(b.fadd(b.fdiv(t_val, m_val), one), half)
    if len(args) == 3:
        return [u, v], face
    cubes = b.sdiv(desc.extent[3], i64(6))
    layer = b.zext(args[3], I64)                 # unsigned: -1 is the last cubemap
    last = b.sub(cubes, i64(1))
    layer = b.select(b.icmp_unsigned(">", layer, last), last, layer)
    return [u, v], b.add(b.mul(layer, i64(6)), face)


def _pick(b, axis, flags):
    """flags[axis] for an i64 axis in 0..2."""
    return b.select(b.icmp_signed("==", axis, i64(0)), flags[0],
                    b.select(b.icmp_signed("==", axis, i64(1)), flags[1], flags[2]))

