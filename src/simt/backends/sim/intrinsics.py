"""The sim device's lowerings of registry entries: each turns an ``ir.Intrinsic`` into a
Python expression (the registry's own lowerings make LLVM IR, for the compiled devices).
An entry with none here raises NotSupportedError naming it."""
from ...errors import NotSupportedError
from ...ir import types as T
from .scalars import cast, rounded, wrap, wrap_fn

_AXES = {"threadIdx": "_k_t.tid", "blockIdx": "_k_bid", "blockDim": "_k_bdim",
         "gridDim": "_k_gdim"}


def lower(g, e):
    op = e.entry.op if e.entry is not None else e.op
    family, _, name = op.partition(".")
    args = [g.expr(a) for a in e.args]
    if family in _AXES and name in "xyz":
        return f"{_AXES[family]}[{'xyz'.index(name)}]"
    rule = _RULES.get(op) or _FAMILIES.get(family)
    if rule is None:
        where = f" ({e.loc.filename}:{e.loc.line})" if e.loc else ""
        raise NotSupportedError(f"{e.entry.python_name if e.entry else op} is not supported on "
                                f"the sim device{where}: use the 'cpu' device")
    return rule(g, e, name, args)


def _math(g, e, name, args):
    if name in ("isnan", "isinf", "isfinite", "signbit"):
        return f"_k_math[{name!r}]({args[0]})"
    return rounded(f"_k_math[{name!r}]({', '.join(args)})", e.type)


def _int(g, e, name, args):
    t = e.args[0].type
    bits, w = t.bits, wrap_fn(t)
    if name == "abs":
        return args[0] if t.kind in "ub" else wrap(f"abs({args[0]})", t)
    if name in ("popc", "clz", "ffs"):
        return f"_k_v.{name}({args[0]}, {bits})"
    if name == "brev":
        return f"_k_v.brev({args[0]}, {bits}, {w})"
    if name in ("mulhi", "umulhi"):
        return f"_k_v.mulhi({args[0]}, {args[1]}, {bits}, {w})"
    if name in ("mul24", "umul24"):
        return f"_k_v.mul24({args[0]}, {args[1]}, {name == 'mul24'}, {w})"
    raise NotSupportedError(f"simt.{e.op} on the sim device")


def _pymath(g, e, name, args):
    return cast(f"_k_math[{name!r}]({args[0]})", T.FLOAT64, e.type)


def _bitcast(g, e, name, args):
    return f"_k_v.bitcast({args[0]}, {e.args[0].type.dtype.str!r}, {e.type.dtype.str!r})"


def _complex(g, e, name, args):
    z = args[0]
    if name == "real":
        return f"({z}).real"
    if name == "imag":
        return f"({z}).imag"
    if name == "conj":
        return f"({z}).conjugate()"
    if name == "make":
        return rounded(f"complex({args[0]}, {args[1]})", T.Scalar("complex64") if
                       e.type.dtype.itemsize == 8 else T.Scalar("complex128"))
    return rounded(f"_k_math['hypot'](({z}).real, ({z}).imag)", e.type)


def _atomic(g, e, name, args):
    kind = e.attrs.get("op", name)             # atomic.load and atomic.store: by name
    nvalues = {"cas": 2, "load": 0}.get(kind, 1)
    site = g.site(e.loc, e.attrs.get("label", ""))
    values = "".join(a + ", " for a in args[1:1 + nvalues])
    idx = ", ".join(args[1 + nvalues:])
    return f"{args[0]}.atomic({site}, {kind!r}, ({values}), {idx})"


def _load(g, e, name, args):
    """volatile_load, __ldg and the other cache hints: a plain load here."""
    return f"{args[0]}.ld({g.site(e.loc, e.attrs.get('label', ''))}, {', '.join(args[1:])})"


def _store(g, e, name, args):
    site = g.site(e.loc, e.attrs.get("label", ""))
    return f"{args[0]}.st({site}, {args[1]}, {', '.join(args[2:])})"


def _printf(g, e, name, args):
    values = "".join(a + ", " for a in args)
    return f"_k_v.cprintf({e.attrs['format']!r}, {e.attrs['slots']!r}, ({values}))"


def _trap(g, e, name, args):
    return f"_k_L.trap(_k_t, {g.site(e.loc)})"


def _none(g, e, name, args):
    return "None"


def _clock(g, e, name, args):
    t = e.type
    return wrap("_k_ns()", t) if isinstance(t, T.Scalar) and t.kind in "iu" else "None"


def _breakpoint(g, e, name, args):
    return "breakpoint()"


_FAMILIES = {"math": _math, "fast": _math, "int": _int, "pymath": _pymath,
             "bitcast": _bitcast, "complex": _complex, "atomic": _atomic}
_RULES = {
    "warpSize": lambda g, e, n, a: str(g.warp.size),
    "laneid": lambda g, e, n, a: "_k_t.lane",
    "fns": lambda g, e, n, a: f"_k_v.fns({a[0]}, {a[1]})",
    "threadfence": _none, "threadfence_block": _none, "threadfence_system": _none,
    "clock": _clock, "clock64": _clock, "globaltimer": _clock, "nanosleep": _none,
    "builtin.breakpoint": _breakpoint, "printf": _printf, "trap": _trap,
    "volatile_load": _load, "volatile_store": _store,
    **{op: _load for op in ("ldg", "ldcg", "ldca", "ldcs", "ldlu", "ldcv")},
    **{op: _store for op in ("stwb", "stcg", "stcs", "stwt")},
}
