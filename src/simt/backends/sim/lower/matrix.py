"""The sim device's lowerings of the matrix instructions: warp-level ``mma.sync``,
``ldmatrix``, ``stmatrix`` (lang/mma.py) and the warpgroup MMA (lang/wgmma.py). Each is a
call of backends/sim/matrix.py (``_k_mx``); the warp-level ones read ``_k_x``, every lane's
operands, which the ``exchange`` warp operation hoisted before the call gave this lane
(codegen.py binds it)."""
from ....lang import mma, wgmma
from .rules import rule


def _site(g, e, label=None):
    return g.site(e.loc, e.attrs.get("label", "") if label is None else label)


@rule(mma.ldmatrix)
def _ldmatrix(g, e, args):
    frag, array, _ = args
    return (f"_k_mx.ldmatrix({frag}, {array}, _k_x, _k_t.lane, {e.attrs['n']}, "
            f"{e.attrs['trans']}, {_site(g, e)}, {_site(g, e, e.args[0].decl.name)})")


@rule(mma.stmatrix)
def _stmatrix(g, e, args):
    array, _, frag = args
    return (f"_k_mx.stmatrix({array}, {frag}, _k_x, _k_t.lane, {e.attrs['n']}, "
            f"{e.attrs['trans']}, {_site(g, e)}, {_site(g, e, e.args[2].decl.name)})")


@rule(mma.sync)
def _mma_sync(g, e, args):
    d, _, _, c = args
    shape = e.attrs["shape"]
    na = mma.SHAPES[shape][0]              # b's registers follow a's in the exchange
    return (f"_k_mx.mma_sync({d}, {c}, _k_x, _k_t.lane, {shape[2]}, {na}, "
            f"{e.attrs['kind']!r}, {_site(g, e, 'mma.sync')})")


def _layout(t):
    """What a descriptor's type says of its tile: (precision, swizzle, lbo, sbo, major)."""
    return f"({t.precision!r}, {t.swizzle!r}, {t.lbo}, {t.sbo}, {t.major!r})"


@rule(wgmma.descriptor)
def _descriptor(g, e, args):
    tile, row, k = args
    t = e.type
    return (f"_k_mx.descriptor({tile}, {row}, {k}, {t.precision!r}, {t.swizzle!r}, {t.lbo}, "
            f"{t.sbo}, {t.major!r})")


def _tile_site(g, e, desc):
    """The site of a descriptor's reads, named for its tile where the call shows it."""
    array = desc.args[0] if getattr(desc, "entry", None) is wgmma.descriptor else None
    return _site(g, e, array.decl.name if hasattr(array, "decl") else "wgmma tile")


@rule(wgmma.mma_async)
def _mma_async(g, e, args):
    """A descriptor's layout, or a fragment (its kind; the lanes' elements in ``_k_x``)."""
    acc, a, b, keep, rank = args
    if e.attrs.get("exchange") is not None:
        a, ta, a_site = "_k_x", repr(e.attrs["kinds"][0]), "None"
    else:
        ta, a_site = _layout(e.args[1].type), _tile_site(g, e, e.args[1])
    return (f"_k_mx.wgmma({acc}, {a}, {b}, {keep}, {rank}, {ta}, "
            f"{_layout(e.args[2].type)}, {a_site}, "
            f"{_tile_site(g, e, e.args[2])}, {_site(g, e, e.args[0].decl.name)})")


@rule(wgmma.fence, wgmma.commit_group, wgmma.wait_group)
def _ordering(g, e, args):
    """Nothing to order: each mma_async has finished when it returns."""
    return "None"


@rule(wgmma.zero)
def _zero(g, e, args):
    return f"_k_mx.zero({args[0]}, {_site(g, e, e.args[0].decl.name)})"


@rule(wgmma.store)
def _store(g, e, args):
    out, offset, ldm, acc, rank = args
    return (f"_k_mx.store({out}, {offset}, {ldm}, {acc}, {rank}, {_site(g, e)}, "
            f"{_site(g, e, e.args[3].decl.name)})")
