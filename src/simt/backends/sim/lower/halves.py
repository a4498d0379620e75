"""The sim device's lowerings of the float16/bfloat16 intrinsics (lang/half.py) and of
the vector types' functions (lang/vectors.py): Python text calling lanes.py (``_k_h``).
A vector is a tuple; a pair intrinsic (hfma2, h2sqrt ...) applies its scalar form lane
by lane."""
from ....ir import nodes as ir
from ....ir import types as T
from ....lang import half, vectors
from ....lang.registry import lowering
from ..scalars import binop, round_fn, wrap, wrap_fn
from .rules import TARGET, rule


def _is_bf16(t):
    return (t.element if isinstance(t, T.Vector) else t).is_bfloat16


def _lanewise(call, e, args):
    """``call`` (text with {0}, {1} ... for the operands) on scalars, or lane by lane on
    pairs (each operand evaluated once)."""
    if not isinstance(e.type, T.Vector):
        return call.format(*args)
    names = [f"_k_l{i}" for i in range(len(args))]
    return (f"tuple({call.format(*names)} for {', '.join(names)}, in "
            f"zip({', '.join(args)}))")


def _half_rule(names, call):
    """Register ``call`` (its ``{bf}``: whether the type is bfloat16) for h<name> and the
    pair form of each name."""
    for name in names:
        @rule(half.ENTRIES[name])
        def lower(g, e, args, call=call, name=name):
            bf16 = _is_bf16(e.args[0].type)
            return _lanewise(call.replace("{bf}", str(bf16)).replace("{name}", name), e, args)


_half_rule(("hfma", "hfma2"), "_k_h.hfma({0}, {1}, {2}, {bf})")
_half_rule(("hneg", "hneg2"), "_k_h.hneg({0}, {bf})")
_half_rule(("habs", "habs2"), "_k_h.habs({0}, {bf})")
for _pair, _one in (("hmax", "hmax"), ("hmin", "hmin"), ("hmax2", "hmax"), ("hmin2", "hmin")):
    _half_rule((_pair,), f"_k_h.hminmax({_one!r}, {{0}}, {{1}}, {{bf}})")
for _fname in half.MATH:
    _half_rule((f"h{_fname}", f"h2{_fname}"), f"_k_h.hmath({_fname!r}, {{0}}, {{bf}})")
_half_rule(("hisnan",), "_k_h.hisnan({0}, {bf})")
_half_rule(("hisinf",), "_k_h.hisinf({0}, {bf})")


def _bitcast_text(name, x):
    """The 16 bits as the other type: float16 <-> its bits; bfloat16 is its bits already."""
    source, _, target = name.partition("_as_")
    if source == "half":
        x = f"_k_h.half_bits({x})"
    elif target == "half":
        return f"_k_h.half_from_bits({x})"
    return f"_k_h.as_short({x})" if target == "short" else f"(({x}) & 0xFFFF)"


for _h in ("half", "bfloat16"):
    for _i in ("ushort", "short"):
        for _name in (f"{_h}_as_{_i}", f"{_i}_as_{_h}"):
            rule(half.ENTRIES[_name])(lambda g, e, a, name=_name: _bitcast_text(name, a[0]))


# ---------------------------------------------------------------- vector types
def _rounding(element):
    return round_fn(element) or "_k_h.identity"


rule(vectors.make_entry)(lambda g, e, a: "(" + "".join(x + ", " for x in a) + ")")


def _component(g, e):
    """``v.x``; of an element in memory (``a[i].x``) that component alone is read, so that
    its checks do not see the other components (which other threads may write)."""
    v, j = e.args[0], e.attrs["index"]
    if isinstance(v, ir.Load) and isinstance(v.type, T.Vector):
        idx = ", ".join(g.expr(x) for x in v.indices)
        return f"{g.expr(v.array)}.ld_part({g.site(v.loc, v.label)}, {j}, {idx})"
    return f"({g.expr(v)})[{j}]"


lowering(vectors.component, target=TARGET)(_component)
rule(vectors.with_component)(
    lambda g, e, a: f"_k_h.with_component({a[0]}, {e.attrs['index']}, {a[1]})")


@rule(vectors.arith)
def _arith(g, e, args):
    op, element = e.attrs["op"], e.type.element
    if element.is_bfloat16:
        return f"_k_h.bf16_arith({op!r}, {args[0]}, {args[1]})"
    lane = binop(op, "_k_l0", "_k_l1", element, None)
    return f"tuple({lane} for _k_l0, _k_l1 in zip({args[0]}, {args[1]}))"


@rule(vectors.negate)
def _negate(g, e, args):
    element = e.type.element
    if element.is_bfloat16:
        lane = "_k_l0 ^ 0x8000"
    elif element.kind in "iu":
        lane = wrap("-_k_l0", element)
    else:
        lane = "-_k_l0"
    return f"tuple({lane} for _k_l0 in {args[0]})"


@rule(vectors.dot)
def _dot(g, e, args):
    element = e.args[0].type.element
    if element.kind in "iu":
        return f"_k_h.idot({args[0]}, {args[1]}, {wrap_fn(element)})"
    return f"_k_h.fdot({args[0]}, {args[1]}, {_rounding(element)})"


rule(vectors.length)(lambda g, e, a: f"_k_h.length({a[0]}, {_rounding(e.type)})")
rule(vectors.normalize)(
    lambda g, e, a: f"_k_h.normalize({a[0]}, {_rounding(e.type.element)})")
rule(vectors.cross)(lambda g, e, a: f"_k_h.cross({a[0]}, {a[1]}, {_rounding(e.type.element)})")
