"""Texture fetches and surface accesses (lang/textures.py) as calls of sim/textures.py,
bound as ``_k_tx``."""
from ....lang import textures as tx
from .rules import rule

_LAYERED = {tx.tex1DLayered, tx.tex2DLayered}


@rule(tx.tex1D, tx.tex2D, tx.tex3D, tx.tex1DLayered, tx.tex2DLayered)
def _sample(g, e, args):
    if e.entry in _LAYERED:
        return f"_k_tx.sample({args[0]}, ({''.join(a + ', ' for a in args[1:-1])}), {args[-1]})"
    return f"_k_tx.sample({args[0]}, ({''.join(a + ', ' for a in args[1:])}))"


rule(tx.texCubemap)(lambda g, e, a: f"_k_tx.cube({a[0]}, ({a[1]}, {a[2]}, {a[3]}))")
rule(tx.texCubemapLayered)(
    lambda g, e, a: f"_k_tx.cube({a[0]}, ({a[1]}, {a[2]}, {a[3]}), {a[4]})")
rule(tx.tex1DLod, tx.tex2DLod, tx.tex3DLod)(
    lambda g, e, a: f"_k_tx.lod({a[0]}, ({''.join(x + ', ' for x in a[1:-1])}), {a[-1]})")
rule(tx.tex2DGrad)(
    lambda g, e, a: f"_k_tx.grad({a[0]}, ({a[1]}, {a[2]}), ({a[3]}, {a[4]}), ({a[5]}, {a[6]}))")
rule(tx.fetch)(lambda g, e, a: f"_k_tx.fetch({a[0]}, {a[1]})")
rule(tx.tex2Dgather)(lambda g, e, a: f"_k_tx.gather({a[0]}, {a[1]}, {a[2]}, {e.attrs['comp']})")


@rule(*tx._SURF_READ.values())
def _surf_read(g, e, args):
    site = g.site(e.loc, e.attrs.get("label", "surface"))
    return (f"_k_tx.surf_read(_k_L, {site}, {args[0]}, {e.attrs['boundary']!r}, "
            f"({''.join(a + ', ' for a in args[1:])}))")


@rule(*tx._SURF_WRITE.values())
def _surf_write(g, e, args):
    site = g.site(e.loc, e.attrs.get("label", "surface"))
    t = e.args[0].type
    ncoords = t.ndim + (t.layered or t.cubemap)      # the layer or face follows x, y
    coords, values = args[1:1 + ncoords], args[1 + ncoords:]
    return (f"_k_tx.surf_write(_k_L, {site}, {args[0]}, {e.attrs['boundary']!r}, "
            f"({''.join(a + ', ' for a in coords)}), ({''.join(v + ', ' for v in values)}))")
