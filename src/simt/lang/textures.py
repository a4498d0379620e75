"""Texture and surface functions (guide B.8, B.9) as kernels call them.

A texture or surface reaches a kernel as an argument (runtime/textures.py); its
type (ir/types.py ``Texture``/``Surface``) carries everything that changes
the code: texel dtype and channels, dimensions, filter, address mode, read mode.
A fetch is an ``ir.Intrinsic`` with op ``tex.<kind>`` or ``surf.<kind>``; the
lowering is per target (backends/cpu/textures.py, backends/cuda/texlower.py).
"""
import numpy as np

from ..ir import nodes as ir
from ..ir import types as T
from .vectors import as_tuple
from .registry import Intrinsic, Static

BOUNDARY = ("trap", "clamp", "zero")

# kind -> (float coordinates, dimensions of the texture it reads, layered)
_TEX_KINDS = {"1d": (1, 1, False), "2d": (2, 2, False), "3d": (3, 3, False),
              "1dlayered": (1, 1, True), "2dlayered": (2, 2, True)}


def texel_type(t):
    """The scalar type one channel of a fetch from texture type ``t`` returns."""
    if t.read_mode == "normalized_float" or t.dtype.kind == "f":
        return T.FLOAT32
    return T.Scalar(t.dtype)


def _result(scalar, count):
    """One channel's scalar, or CUDA's vector type of the channels (float4, uchar2 ...)."""
    return scalar if count == 1 else T.Vector(scalar.dtype, count)


def _texture_arg(fc, value, name, loc):
    if not isinstance(value.type, T.Texture):
        fc.fail(loc, f"{name} needs a texture (a simt.Texture argument) first, got {value.type}")
    return value


def _fail_kind(fc, t, name, loc, wanted):
    fc.fail(loc, f"{name} reads {wanted}, but this texture is {_describe(t)}",
            "use the fetch function that matches the texture: tex.fetch(i) for linear memory, "
            "tex1D/tex2D/tex3D (and the Lod and Grad forms) for CUDA arrays, mipmapped arrays "
            "and pitched 2D memory, the Layered forms for layered arrays, texCubemap and "
            "texCubemapLayered for cubemaps")


def _describe(t):
    layered = "layered " if t.layered else ""
    where = {"linear": "over linear memory", "pitch2d": "over pitched 2D memory",
             "array": "over a CUDA array", "mipmap": "over a mipmapped array"}[t.source]
    if t.cubemap:
        return f"a {layered}cubemap texture {where}"
    return f"a {t.ndim}D {layered}texture {where}"


def _tex_builder(kind):
    ncoords, ndim, layered = _TEX_KINDS[kind]
    name = "simt.tex" + {"1d": "1D", "2d": "2D", "3d": "3D", "1dlayered": "1DLayered",
                         "2dlayered": "2DLayered"}[kind]

    def build(fc, args, kwargs, loc):
        nargs = 1 + ncoords + layered
        if len(args) != nargs or kwargs:
            fc.fail(loc, f"{name}(tex, {', '.join('xyz'[:ncoords])}{', layer' if layered else ''}) "
                    f"takes {nargs} arguments, got {len(args) + len(kwargs)}")
        values = [fc.expr(a, loc) for a in args]
        tex = _texture_arg(fc, values[0], name, loc)
        t = tex.type
        if t.source == "linear" or t.ndim != ndim or t.layered != layered or t.cubemap:
            _fail_kind(fc, t, name, loc, f"a {ndim}D {'layered ' if layered else ''}texture")
        coords = [_float(fc, v, loc) for v in values[1:1 + ncoords]]
        extra = [_int(fc, values[-1], loc)] if layered else []
        return _TEX[kind].node(_result(texel_type(t), t.channels), loc, [tex] + coords + extra)
    return build


def _float(fc, value, loc):
    if not isinstance(value.type, T.Scalar) or value.type.kind not in "iuf":
        fc.fail(loc, f"texture coordinates are numbers, got {value.type}")
    return fc.cast(value, T.FLOAT32, loc)


def _int(fc, value, loc):
    if not isinstance(value.type, T.Scalar) or value.type.kind not in "iub":
        fc.fail(loc, f"this index must be an integer, got {value.type}", "convert with int(...)")
    return fc.cast(value, T.INT32, loc)


def _fetch_build(fc, args, kwargs, loc):
    if len(args) != 2 or kwargs:
        fc.fail(loc, "tex.fetch(i) (tex1Dfetch) takes one index")
    tex, index = (fc.expr(a, loc) for a in args)
    t = _texture_arg(fc, tex, "tex.fetch", loc).type
    if t.source != "linear":
        _fail_kind(fc, t, "tex.fetch (tex1Dfetch)", loc, "a texture over linear memory")
    return fetch.node(_result(texel_type(t), t.channels), loc, [tex, _int(fc, index, loc)])


def _gather_build(fc, args, kwargs, loc):
    if not 3 <= len(args) <= 4:
        fc.fail(loc, "simt.tex2Dgather(tex, x, y, comp=0) takes 3 or 4 arguments")
    values = [fc.expr(a, loc) for a in args[:3]]
    comp = args[3] if len(args) == 4 else kwargs.get("comp")
    comp = 0 if comp is None else fc.constant_int(comp, "comp of tex2Dgather", loc)
    t = _texture_arg(fc, values[0], "simt.tex2Dgather", loc).type
    if t.source != "array" or t.ndim != 2 or t.layered:
        _fail_kind(fc, t, "simt.tex2Dgather", loc, "a 2D texture over a CUDA array")
    if not 0 <= comp < t.channels:
        fc.fail(loc, f"tex2Dgather comp={comp}, but the texels have {t.channels} channel(s)")
    return tex2Dgather.node(_result(texel_type(t), 4), loc,
                            [values[0], _float(fc, values[1], loc), _float(fc, values[2], loc)],
                            {"comp": comp})


# (kind: name, coordinates, dimensions, what follows the coordinates)
_LEVEL_KINDS = {"1dlod": ("simt.tex1DLod", 1, "level"), "2dlod": ("simt.tex2DLod", 2, "level"),
                "3dlod": ("simt.tex3DLod", 3, "level"), "2dgrad": ("simt.tex2DGrad", 2, "grad")}


def _level_builder(kind):
    """tex1DLod/2DLod/3DLod(tex, x[, y[, z]], level) and tex2DGrad(tex, x, y, dx, dy)."""
    name, ndim, extra = _LEVEL_KINDS[kind]
    coords = ", ".join("xyz"[:ndim])
    usage = f"{name}(tex, {coords}, level)" if extra == "level" else \
        f"{name}(tex, {coords}, dx, dy) with dx and dy float2 gradients"

    def build(fc, args, kwargs, loc):
        nargs = 1 + ndim + (1 if extra == "level" else 2)
        if len(args) != nargs or kwargs:
            fc.fail(loc, f"{usage} takes {nargs} arguments, got {len(args) + len(kwargs)}")
        values = [fc.expr(a, loc) for a in args]
        t = _texture_arg(fc, values[0], name, loc).type
        if t.source not in ("array", "mipmap") or t.ndim != ndim or t.layered or t.cubemap:
            _fail_kind(fc, t, name, loc, f"a {ndim}D texture over a CUDA or mipmapped array")
        operands = [_float(fc, v, loc) for v in values[1:1 + ndim]]
        if extra == "level":
            operands.append(_float(fc, values[-1], loc))
        else:
            for g in values[-2:]:
                operands += _gradient(fc, g, loc)
        return _LEVEL[kind].node(_result(texel_type(t), t.channels), loc, [values[0]] + operands)
    return build


def _gradient(fc, value, loc):
    """The two float32 parts of a tex2DGrad gradient (a float2, or a tuple of two)."""
    if isinstance(value.type, T.Vector) and value.type.n == 2:
        value = as_tuple(fc, value, loc)
    if not isinstance(value.type, T.Tuple) or len(value.type.items) != 2:
        fc.fail(loc, f"simt.tex2DGrad gradients are float2 values (dx = (dx/dx, dy/dx)), "
                f"got {value.type}", "pass simt.make_float2(a, b) or a tuple (a, b)")
    return [_float(fc, ir.TupleGet(it, loc, value, i), loc)
            for i, it in enumerate(value.type.items)]


def _cube_builder(layered):
    name = "simt.texCubemapLayered" if layered else "simt.texCubemap"

    def build(fc, args, kwargs, loc):
        nargs = 4 + layered
        if len(args) != nargs or kwargs:
            fc.fail(loc, f"{name}(tex, x, y, z{', layer' if layered else ''}) takes {nargs} "
                    f"arguments (x, y, z: a direction), got {len(args) + len(kwargs)}")
        values = [fc.expr(a, loc) for a in args]
        t = _texture_arg(fc, values[0], name, loc).type
        if not t.cubemap or t.layered != layered:
            _fail_kind(fc, t, name, loc, f"a {'layered ' if layered else ''}cubemap texture")
        operands = [_float(fc, v, loc) for v in values[1:4]]
        if layered:
            operands.append(_int(fc, values[4], loc))
        op = texCubemapLayered if layered else texCubemap
        return op.node(_result(texel_type(t), t.channels), loc, [values[0]] + operands)
    return build


# ------------------------------------------------------------------ surfaces
def _boundary(fc, kwargs, name, loc):
    mode = kwargs.pop("boundary", None)
    mode = "trap" if mode is None else fc.static(mode, "boundary", loc)
    if mode not in BOUNDARY:
        fc.fail(loc, f"{name}: boundary={mode!r} is not a surface boundary mode",
                "use 'trap' (the default), 'clamp' or 'zero'")
    if kwargs:
        fc.fail(loc, f"{name} got unexpected keyword arguments {sorted(kwargs)}")
    return mode


# shape -> (name's middle, the surface it needs: layered, cubemap; the layer's name)
_SURF_SHAPES = {None: ("{n}D", False, False, None), "layered": ("2DLayered", True, False, "layer"),
                "cube": ("Cubemap", False, True, "face"),
                "cubelayered": ("CubemapLayered", True, True, "layerFace")}


def _surface_arg(fc, value, name, ndim, shape, loc):
    if not isinstance(value.type, T.Surface):
        fc.fail(loc, f"{name} needs a surface (a simt.Surface argument), got {value.type}")
    t = value.type
    _, layered, cubemap, _ = _SURF_SHAPES[shape]
    if t.ndim != ndim or t.layered != layered or t.cubemap != cubemap:
        fc.fail(loc, f"{name} needs a {_surface_kind(ndim, layered, cubemap)} surface, but "
                f"this one is {_surface_kind(t.ndim, t.layered, t.cubemap)}",
                f"use simt.surf{_surface_name(t)}read/write")
    return value


def _surface_kind(ndim, layered, cubemap):
    return ("layered " if layered else "") + ("cubemap" if cubemap else f"{ndim}D")


def _surface_name(t):
    for shape, (middle, layered, cubemap, _) in _SURF_SHAPES.items():
        if (layered, cubemap) == (t.layered, t.cubemap):
            return middle.format(n=t.ndim)
    return f"{t.ndim}D"


def _surf_names(ndim, shape, what):
    middle, _, _, layer = _SURF_SHAPES[shape]
    coords = ", ".join(list("xyz"[:ndim]) + ([layer] if layer else []))
    return f"simt.surf{middle.format(n=ndim)}{what}", coords, ndim + bool(layer)


def _surf_read_builder(ndim, shape=None):
    name, coords, ncoords = _surf_names(ndim, shape, "read")

    def build(fc, args, kwargs, loc):
        kwargs = dict(kwargs)
        mode = _boundary(fc, kwargs, name, loc)
        if len(args) != 1 + ncoords:
            fc.fail(loc, f"{name}(surf, {coords}) takes {1 + ncoords} arguments "
                    "(x is a byte offset, as in CUDA)")
        values = [fc.expr(a, loc) for a in args]
        surf = _surface_arg(fc, values[0], name, ndim, shape, loc)
        indices = [_int(fc, v, loc) for v in values[1:]]
        t = surf.type
        return _SURF_READ[(ndim, shape)].node(_result(T.Scalar(t.dtype), t.channels), loc,
                                              [surf] + indices,
                                              {"boundary": mode, "label": fc.label_of(args[0])})
    return build


def _surf_write_builder(ndim, shape=None):
    name, coords, ncoords = _surf_names(ndim, shape, "write")

    def build(fc, args, kwargs, loc):
        kwargs = dict(kwargs)
        mode = _boundary(fc, kwargs, name, loc)
        if len(args) != 2 + ncoords:
            fc.fail(loc, f"{name}(value, surf, {coords}) takes {2 + ncoords} "
                    "arguments (x is a byte offset, as in CUDA)")
        values = [fc.expr(a, loc) for a in args]
        surf = _surface_arg(fc, values[1], name, ndim, shape, loc)
        t = surf.type
        value = values[0]
        if t.channels == 1:
            parts = [fc.cast(value, T.Scalar(t.dtype), loc)]
        else:
            if isinstance(value.type, T.Vector) and value.type.n == t.channels:
                value = as_tuple(fc, value, loc)
            if not isinstance(value.type, T.Tuple) or len(value.type.items) != t.channels:
                fc.fail(loc, f"{name}: the surface has {t.channels} channels; write a vector "
                        f"or tuple of {t.channels} values, got {value.type}")
            parts = [fc.cast(ir.TupleGet(it, loc, value, i), T.Scalar(t.dtype), loc)
                     for i, it in enumerate(value.type.items)]
        indices = [_int(fc, v, loc) for v in values[2:]]
        return _SURF_WRITE[(ndim, shape)].node(T.VOID, loc, [surf] + indices + parts,
                                               {"boundary": mode, "label": fc.label_of(args[1])})
    return build


# ------------------------------------------------------------------ tex.fetch as a method
class _BoundFetch:
    """``tex.fetch`` of one texture value: the registry entry with the texture bound."""

    kernel_callable = True
    python_name = "tex.fetch"

    def __init__(self, tex):
        self.tex = tex

    def build(self, fc, args, kwargs, loc):
        return _fetch_build(fc, [self.tex] + list(args), kwargs, loc)


def attribute(fc, value, attr, node):
    """``tex.fetch`` (tex1Dfetch) and the static facts of texture and surface arguments."""
    t = value.type
    if isinstance(t, T.Texture) and attr == "fetch":
        return Static(_BoundFetch(value))
    if attr in ("channels", "ndim"):
        return Static(getattr(t, attr))
    if attr == "dtype":
        return Static(t.dtype)
    fc.fail(node, f"a {t} has no attribute '{attr}' in kernels",
            "textures offer tex.fetch(i); use simt.tex1D/2D/3D and simt.surf*D* functions")


fetch = Intrinsic("tex.fetch", "tex.fetch(i): tex1Dfetch, the texel at integer index i of a "
                  "texture over linear memory; 0 outside [0, n).", _fetch_build,
                  python_name="tex.fetch")
tex1D = Intrinsic("tex.1d", "simt.tex1D(tex, x): fetch from a 1D texture at float coordinate x "
                  "(appendix H filtering and addressing).", _tex_builder("1d"),
                  python_name="simt.tex1D")
tex2D = Intrinsic("tex.2d", "simt.tex2D(tex, x, y): fetch from a 2D texture; x follows the last "
                  "axis of the array.", _tex_builder("2d"), python_name="simt.tex2D")
tex3D = Intrinsic("tex.3d", "simt.tex3D(tex, x, y, z): fetch from a 3D texture.",
                  _tex_builder("3d"), python_name="simt.tex3D")
tex1DLayered = Intrinsic("tex.1dlayered", "simt.tex1DLayered(tex, x, layer): fetch from one layer "
                         "of a layered 1D texture (no filtering across layers).",
                         _tex_builder("1dlayered"), python_name="simt.tex1DLayered")
tex2DLayered = Intrinsic("tex.2dlayered", "simt.tex2DLayered(tex, x, y, layer): fetch from one "
                         "layer of a layered 2D texture.", _tex_builder("2dlayered"),
                         python_name="simt.tex2DLayered")
tex2Dgather = Intrinsic("tex.gather", "simt.tex2Dgather(tex, x, y, comp=0): channel comp of the "
                        "four texels bilinear filtering would use, as a 4-tuple in CUDA's order "
                        "(T[i, j+1], T[i+1, j+1], T[i+1, j], T[i, j]) with T[x, y].",
                        _gather_build, python_name="simt.tex2Dgather")

tex1DLod = Intrinsic("tex.1dlod", "simt.tex1DLod(tex, x, level): fetch from a 1D texture at "
                     "level of detail `level` (a mipmapped array: the level's bias, clamps and "
                     "mipmap filter apply; level 0 of a plain array).", _level_builder("1dlod"),
                     python_name="simt.tex1DLod")
tex2DLod = Intrinsic("tex.2dlod", "simt.tex2DLod(tex, x, y, level): fetch from a 2D texture at "
                     "level of detail `level`.", _level_builder("2dlod"),
                     python_name="simt.tex2DLod")
tex3DLod = Intrinsic("tex.3dlod", "simt.tex3DLod(tex, x, y, z, level): fetch from a 3D texture "
                     "at level of detail `level`.", _level_builder("3dlod"),
                     python_name="simt.tex3DLod")
tex2DGrad = Intrinsic("tex.2dgrad", "simt.tex2DGrad(tex, x, y, dx, dy): fetch from a 2D "
                      "texture at the level of detail of the float2 gradients dx and dy: "
                      "log2 of the longer one in texels of level 0.", _level_builder("2dgrad"),
                      python_name="simt.tex2DGrad")
texCubemap = Intrinsic("tex.cube", "simt.texCubemap(tex, x, y, z): fetch from a cubemap "
                       "texture in direction (x, y, z): the face of the major axis, at "
                       "((s/m + 1)/2, (t/m + 1)/2) on it (guide 3.2.12.1.5, table 2).",
                       _cube_builder(False), python_name="simt.texCubemap")
texCubemapLayered = Intrinsic("tex.acube", "simt.texCubemapLayered(tex, x, y, z, layer): fetch "
                              "from cubemap `layer` of a cubemap layered texture.",
                              _cube_builder(True), python_name="simt.texCubemapLayered")

_SURF_DOC = ("x is a byte offset (as in CUDA); boundary='trap' (default: an out-of-range access "
             "fails the launch), 'clamp' or 'zero'.")
surf1Dread = Intrinsic("surf.read1d", "simt.surf1Dread(surf, x, boundary='trap'): " + _SURF_DOC,
                       _surf_read_builder(1), python_name="simt.surf1Dread")
surf2Dread = Intrinsic("surf.read2d", "simt.surf2Dread(surf, x, y, boundary='trap'): " + _SURF_DOC,
                       _surf_read_builder(2), python_name="simt.surf2Dread")
surf3Dread = Intrinsic("surf.read3d", "simt.surf3Dread(surf, x, y, z, boundary='trap'): "
                       + _SURF_DOC, _surf_read_builder(3), python_name="simt.surf3Dread")
surf1Dwrite = Intrinsic("surf.write1d", "simt.surf1Dwrite(value, surf, x, boundary='trap'): "
                        + _SURF_DOC, _surf_write_builder(1), python_name="simt.surf1Dwrite")
surf2Dwrite = Intrinsic("surf.write2d", "simt.surf2Dwrite(value, surf, x, y, boundary='trap'): "
                        + _SURF_DOC, _surf_write_builder(2), python_name="simt.surf2Dwrite")
surf3Dwrite = Intrinsic("surf.write3d", "simt.surf3Dwrite(value, surf, x, y, z, "
                        "boundary='trap'): " + _SURF_DOC, _surf_write_builder(3),
                        python_name="simt.surf3Dwrite")

_LAYER_DOC = ("x is a byte offset; {layer} selects the {what}; boundary='trap' (default), "
              "'clamp' or 'zero' as for surf2Dread.")
surf2DLayeredread = Intrinsic(
    "surf.read2dlayered", "simt.surf2DLayeredread(surf, x, y, layer, boundary='trap'): "
    + _LAYER_DOC.format(layer="layer", what="layer of a 2D layered surface"),
    _surf_read_builder(2, "layered"), python_name="simt.surf2DLayeredread")
surf2DLayeredwrite = Intrinsic(
    "surf.write2dlayered", "simt.surf2DLayeredwrite(value, surf, x, y, layer, boundary='trap'): "
    + _LAYER_DOC.format(layer="layer", what="layer of a 2D layered surface"),
    _surf_write_builder(2, "layered"), python_name="simt.surf2DLayeredwrite")
surfCubemapread = Intrinsic(
    "surf.readcube", "simt.surfCubemapread(surf, x, y, face, boundary='trap'): "
    + _LAYER_DOC.format(layer="face", what="face (+x, -x, +y, -y, +z, -z) of a cubemap surface"),
    _surf_read_builder(2, "cube"), python_name="simt.surfCubemapread")
surfCubemapwrite = Intrinsic(
    "surf.writecube", "simt.surfCubemapwrite(value, surf, x, y, face, boundary='trap'): "
    + _LAYER_DOC.format(layer="face", what="face (+x, -x, +y, -y, +z, -z) of a cubemap surface"),
    _surf_write_builder(2, "cube"), python_name="simt.surfCubemapwrite")
surfCubemapLayeredread = Intrinsic(
    "surf.readcubelayered", "simt.surfCubemapLayeredread(surf, x, y, layerFace, "
    "boundary='trap'): " + _LAYER_DOC.format(layer="layerFace = 6 * layer + face",
                                             what="face of a cubemap layered surface"),
    _surf_read_builder(2, "cubelayered"), python_name="simt.surfCubemapLayeredread")
surfCubemapLayeredwrite = Intrinsic(
    "surf.writecubelayered", "simt.surfCubemapLayeredwrite(value, surf, x, y, layerFace, "
    "boundary='trap'): " + _LAYER_DOC.format(layer="layerFace = 6 * layer + face",
                                             what="face of a cubemap layered surface"),
    _surf_write_builder(2, "cubelayered"), python_name="simt.surfCubemapLayeredwrite")

_TEX = {"1d": tex1D, "2d": tex2D, "3d": tex3D, "1dlayered": tex1DLayered,
        "2dlayered": tex2DLayered}
_LEVEL = {"1dlod": tex1DLod, "2dlod": tex2DLod, "3dlod": tex3DLod, "2dgrad": tex2DGrad}
_SURF_READ = {(1, None): surf1Dread, (2, None): surf2Dread, (3, None): surf3Dread,
              (2, "layered"): surf2DLayeredread, (2, "cube"): surfCubemapread,
              (2, "cubelayered"): surfCubemapLayeredread}
_SURF_WRITE = {(1, None): surf1Dwrite, (2, None): surf2Dwrite, (3, None): surf3Dwrite,
               (2, "layered"): surf2DLayeredwrite, (2, "cube"): surfCubemapwrite,
               (2, "cubelayered"): surfCubemapLayeredwrite}

TEXEL_DTYPES = tuple(np.dtype(d) for d in (np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                           np.uint32, np.float16, np.float32))
