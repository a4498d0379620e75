"""Texture fetches and surface accesses on NVIDIA GPUs: PTX ``tex``, ``tld4``, ``suld``
and ``sust`` instructions on the 64-bit texture/surface object a kernel receives.

They are emitted as inline PTX, which states the instruction exactly (geometry,
vector width, result and coordinate types, boundary mode) independent of which
``llvm.nvvm.tex.*`` intrinsic names the LLVM version at hand knows.
"""
from llvmlite import ir as ll

from ...ir import types as T
from ...compiler.lltypes import F32, I32, I64, result_of, scalar

I16 = ll.IntType(16)

# kind -> (PTX geometry, positions of the coordinate vector: 'L' layer, 'x', 'y', 'z')
_GEOMETRY = {"fetch": ("1d", "x"), "1d": ("1d", "x"), "2d": ("2d", "xy"), "3d": ("3d", "xyzz"),
             "1dlayered": ("a1d", "Lx"), "2dlayered": ("a2d", "Lxyy")}
# kind -> (PTX geometry, coordinates, what follows them: a level or two 2D gradients)
_LEVEL_GEOMETRY = {"1dlod": ("1d", "x", "level"), "2dlod": ("2d", "xy", "level"),
                   "3dlod": ("3d", "xyzz", "level"), "2dgrad": ("2d", "xy", "grad")}
_SURF_COORDS = {"1d": ("1d", "x"), "2d": ("2d", "xy"), "3d": ("3d", "xyzz"),
                "2dlayered": ("a2d", "Lxyy"), "cube": ("a2d", "Lxyy"),
                "cubelayered": ("a2d", "Lxyy")}


def texture_op(em, e):
    family, kind = e.op.split(".")
    if family == "surf":
        return _surface(em, e, kind)
    t = e.args[0].type
    handle = em.expr(e.args[0])
    args = [em.expr(a) for a in e.args[1:]]
    float_result = t.read_mode == "normalized_float" or t.dtype.kind == "f"
    dt = "f32" if float_result else ("s32" if t.dtype.kind == "i" else "u32")
    out_type = F32 if float_result else I32
    if kind == "gather":
        asm = f"tld4.{'rgba'[e.attrs['comp']]}.2d.v4.{dt}.f32 {{$0, $1, $2, $3}}, [$4, {{$5, $6}}];"
        values = _call(em, asm, out_type, [handle] + args)
        return result_of(em.builder, e.type, [_narrow(em, v, t, float_result) for v in values])
    if kind in _LEVEL_GEOMETRY or kind in ("cube", "acube"):
        values = _level_or_cube(em, kind, dt, out_type, handle, args)[:t.channels]
        return result_of(em.builder, e.type, [_narrow(em, v, t, float_result) for v in values])
    geometry, order = _GEOMETRY[kind]
    named = {"x": args[0]}
    if kind in ("2d", "3d", "2dlayered"):
        named["y"] = args[1]
    if kind == "3d":
        named["z"] = args[2]
    if "layered" in kind:
        named["L"] = args[-1]
    operands = [named[c] for c in order]
    coord_type = "s32" if kind == "fetch" else "f32"
    vector = ", ".join(f"${5 + k}" for k in range(len(operands)))
    asm = f"tex.{geometry}.v4.{dt}.{coord_type} {{$0, $1, $2, $3}}, [$4, {{{vector}}}];"
    values = _call(em, asm, out_type, [handle] + operands)[:t.channels]
    return result_of(em.builder, e.type, [_narrow(em, v, t, float_result) for v in values])


def _level_or_cube(em, kind, dt, out_type, handle, args):
    """tex.level (tex1D/2D/3DLod), tex.grad (tex2DGrad), tex.cube (texCubemap) and
    tex.acube (texCubemapLayered: the cubemap index first, as a .u32)."""
    if kind == "cube":
        x, y, z = args
        asm = f"tex.cube.v4.{dt}.f32 {{$0, $1, $2, $3}}, [$4, {{$5, $6, $7, $8}}];"
        return _call(em, asm, out_type, [handle, x, y, z, z])
    if kind == "acube":
        x, y, z, layer = args
        asm = f"tex.acube.v4.{dt}.f32 {{$0, $1, $2, $3}}, [$4, {{$5, $6, $7, $8}}];"
        return _call(em, asm, out_type, [handle, layer, x, y, z])
    geometry, order, extra = _LEVEL_GEOMETRY[kind]
    n = len(set(order))
    named = dict(zip("xyz", args[:n]))
    coords = [named[c] for c in order]
    vector = ", ".join(f"${5 + k}" for k in range(len(coords)))
    after = 5 + len(coords)
    if extra == "level":
        tail = f"${after}"
        op = "level"
    else:
        tail = f"{{${after}, ${after + 1}}}, {{${after + 2}, ${after + 3}}}"
        op = "grad"
    asm = (f"tex.{op}.{geometry}.v4.{dt}.f32 {{$0, $1, $2, $3}}, [$4, {{{vector}}}], "
           f"{tail};")
    return _call(em, asm, out_type, [handle] + coords + list(args[n:]))


def _call(em, asm, out_type, inputs, nout=4, side_effect=False):
    """Run ``asm`` with nout outputs of out_type; inputs are LLVM values."""
    b = em.builder
    ret = ll.LiteralStructType([out_type] * nout)
    constraints = [("=f" if out_type == F32 else "=h" if out_type == I16 else "=r")] * nout
    constraints += [_constraint(v.type) for v in inputs]
    fn = ll.InlineAsm(ll.FunctionType(ret, [v.type for v in inputs]), asm, ",".join(constraints),
                      side_effect=side_effect)
    result = b.call(fn, inputs)
    return [b.extract_value(result, i) for i in range(nout)]


def _constraint(lltype):
    if lltype == I64:
        return "l"
    if lltype == F32:
        return "f"
    if lltype == I16:
        return "h"
    return "r"


def _narrow(em, value, t, float_result):
    """An integer fetch result (32 bits in PTX) at the element's width."""
    if float_result or t.dtype.itemsize == 4:
        return value
    return em.builder.trunc(value, ll.IntType(8 * t.dtype.itemsize))


# ------------------------------------------------------------------ surfaces
def _surface(em, e, kind):
    """suld/sust; the layered and cubemap forms are a2d accesses whose layer is the layer,
    the face or 6 * layer + face (guide 3.2.12.2.3-4)."""
    b = em.builder
    t = e.args[0].type
    shape = kind[4:] if kind.startswith("read") else kind[5:]
    geometry, order = _SURF_COORDS[shape]
    ncoords = len(set(order))
    handle = em.expr(e.args[0])
    coords = [em.expr(a) for a in e.args[1:1 + ncoords]]
    named = dict(zip("xyL" if "L" in order else "xyz", coords))
    operands = [named[c] for c in order]
    bits = 8 * t.dtype.itemsize
    vec = {1: "", 2: ".v2", 4: ".v4"}[t.channels]
    mode = e.attrs["boundary"]
    reg = I16 if bits <= 16 else I32
    n = t.channels
    if kind.startswith("read"):
        outs = ", ".join(f"${k}" for k in range(n))
        vector = ", ".join(f"${n + 1 + k}" for k in range(len(operands)))
        outs = outs if n == 1 else "{" + outs + "}"
        asm = f"suld.b.{geometry}{vec}.b{bits}.{mode} {outs}, [${n}, {{{vector}}}];"
        raw = _call(em, asm, reg, [handle] + operands, nout=n, side_effect=True) if n > 1 else \
            [_call_one(em, asm, reg, [handle] + operands)]
        elem = scalar(T.Scalar(t.dtype))
        values = [_from_bits(b, v, elem) for v in raw]
        return result_of(em.builder, e.type, values)
    values = [_to_bits(b, em.expr(a), reg) for a in e.args[1 + ncoords:]]
    vector = ", ".join(f"${1 + k}" for k in range(len(operands)))
    data = ", ".join(f"${1 + len(operands) + k}" for k in range(n))
    data = data if n == 1 else "{" + data + "}"
    asm = f"sust.b.{geometry}{vec}.b{bits}.{mode} [$0, {{{vector}}}], {data};"
    inputs = [handle] + operands + values
    fn = ll.InlineAsm(ll.FunctionType(ll.VoidType(), [v.type for v in inputs]), asm,
                      ",".join(_constraint(v.type) for v in inputs), side_effect=True)
    b.call(fn, inputs)
    return None


def _call_one(em, asm, out_type, inputs):
    constraint = ("=h" if out_type == I16 else "=r")
    fn = ll.InlineAsm(ll.FunctionType(out_type, [v.type for v in inputs]), asm,
                      ",".join([constraint] + [_constraint(v.type) for v in inputs]),
                      side_effect=True)
    return em.builder.call(fn, inputs)


def _from_bits(b, value, elem):
    if isinstance(elem, ll.IntType):
        return b.trunc(value, elem) if elem.width < value.type.width else value
    return b.bitcast(value, elem)                 # half from 16 bits, float from 32


def _to_bits(b, value, reg):
    if isinstance(value.type, ll.IntType):
        return b.zext(value, reg) if value.type.width < reg.width else value
    return b.bitcast(value, reg)
