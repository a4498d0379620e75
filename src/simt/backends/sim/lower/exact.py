"""The sim device's rounded arithmetic and conversions (__fadd_rz, __float2int_rd ...:
sim/exact.py) and the integer intrinsics beyond values.py's bit counts (sim/intbits.py)."""
from ....lang.intrinsics_fp import BITCASTS, CONVERSION_OPS, CONVERSIONS, \
    ENTRIES as FP_ENTRIES, ROUNDED_OPS
from ....lang.intrinsics_int import BY_NAME as INT
from ....lang.mathlib import MATH_FUNCS
from ..scalars import rounded, wrap_fn
from .rules import rule


def _arith(op, mode, fmt):
    return lambda g, e, a: f"_k_x.arith({op!r}, {mode!r}, {fmt!r}, {', '.join(a)})"


for _entry, (_op, _mode) in ROUNDED_OPS.items():
    rule(_entry)(_arith(_op, _mode, _entry.op.rsplit(".", 1)[1]))


def _convert(name, mode):
    src, dst, _ = CONVERSIONS[name]
    if dst in "iulU":
        bits = 64 if dst in "lU" else 32
        signed = dst in "il"
        nan_sign = bits == 64 or (src == "D" and signed)     # as backends/cpu/rounding.py
        return lambda g, e, a: (f"_k_x.to_int({a[0]}, {mode!r}, {bits}, {signed}, "
                                f"{nan_sign})")
    return lambda g, e, a: f"_k_x.to_float({a[0]}, {mode!r}, {dst!r})"


for _entry, (_name, _mode) in CONVERSION_OPS.items():
    rule(_entry)(_convert(_name, _mode))


# the 64-bit forms: values.py's helpers, by the argument's width
def _bits(helper):
    return lambda g, e, a: f"_k_v.{helper}({a[0]}, {e.args[0].type.bits})"


rule(INT["popcll"])(_bits("popc"))
rule(INT["clzll"])(_bits("clz"))
rule(INT["ffsll"])(_bits("ffs"))
rule(INT["brevll"])(lambda g, e, a: f"_k_v.brev({a[0]}, 64, {wrap_fn(e.type)})")
rule(INT["mul64hi"], INT["umul64hi"])(
    lambda g, e, a: f"_k_v.mulhi({a[0]}, {a[1]}, 64, {wrap_fn(e.type)})")
rule(INT["byte_perm"])(lambda g, e, a: f"_k_ib.byte_perm({', '.join(a)})")
for _name in ("funnelshift_l", "funnelshift_lc", "funnelshift_r", "funnelshift_rc"):
    rule(INT[_name])(lambda g, e, a, name=_name: f"_k_ib.funnelshift({name!r}, {', '.join(a)})")
rule(INT["sad"], INT["usad"])(lambda g, e, a: f"_k_ib.sad({', '.join(a)})")
for _name, (_rounded, _signed) in {"hadd": (0, True), "rhadd": (1, True), "uhadd": (0, False),
                                   "urhadd": (1, False)}.items():
    rule(INT[_name])(lambda g, e, a, r=_rounded, s=_signed:
                     f"_k_ib.halving_add({a[0]}, {a[1]}, {r}, {s})")
for _name in ("dp4a", "dp2a_lo", "dp2a_hi"):
    rule(INT[_name])(lambda g, e, a, name=_name:
                     f"_k_ib.dot({name!r}, {e.type.kind == 'u'}, {', '.join(a)})")

_FP = {e.op: e for e in FP_ENTRIES}
rule(_FP["fast.saturate"])(lambda g, e, a: f"_k_ib.saturate({a[0]})")


# a float64's 32-bit halves (the other bit casts are values.bitcast of one width)
HALVES = ("bitcast.double2hiint", "bitcast.double2loint", "bitcast.hiloint2double")
_CASTS = {e.op: e for e in BITCASTS}
rule(_CASTS["bitcast.double2hiint"])(lambda g, e, a: f"_k_ib.double_half({a[0]}, True)")
rule(_CASTS["bitcast.double2loint"])(lambda g, e, a: f"_k_ib.double_half({a[0]}, False)")
rule(_CASTS["bitcast.hiloint2double"])(lambda g, e, a: f"_k_ib.halves_double({a[0]}, {a[1]})")


# ---------------------------------------------------------------- math functions with exact results
_MATH = {e.op: e for e in MATH_FUNCS}


def _fmt(t):
    return "F" if t.dtype.itemsize == 4 else "D"


rule(_MATH["math.nearbyint"])(lambda g, e, a: f"_k_math['rint']({a[0]})")
rule(_MATH["math.logb"])(lambda g, e, a: f"_k_x.logb({a[0]})")
rule(_MATH["math.ilogb"])(lambda g, e, a: f"_k_x.ilogb({a[0]})")
rule(_MATH["math.lrint"], _MATH["math.llrint"])(lambda g, e, a: f"_k_x.to_int64({a[0]}, 'rn')")
rule(_MATH["math.lround"], _MATH["math.llround"])(
    lambda g, e, a: f"_k_x.to_int64({a[0]}, 'away')")
rule(_MATH["math.nextafter"])(
    lambda g, e, a: f"_k_x.nextafter({a[0]}, {a[1]}, {_fmt(e.type)!r})")
rule(_MATH["math.ldexp"], _MATH["math.scalbn"], _MATH["math.scalbln"])(
    lambda g, e, a: f"_k_x.ldexp({a[0]}, {a[1]}, {_fmt(e.type)!r})")
rule(_MATH["math.modf"])(lambda g, e, a: f"_k_math_modf({a[0]})")
rule(_MATH["math.frexp"])(lambda g, e, a: f"_k_math_frexp({a[0]})")


@rule(_FP["fast.sincos"], _MATH["math.sincos"])
def _sincos(g, e, args):
    """__sincosf as the accurate functions, as on the CPU device."""
    sin, cos = (rounded(f"_k_math[{name!r}]({args[0]})", t)
                for name, t in zip(("sin", "cos"), e.type.items))
    return f"({sin}, {cos})"
