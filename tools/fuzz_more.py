"""The fuzzer's newer statement kinds, each with its renderer and its evaluator:

- ``pwarp``: warp functions under a partial mask, the pattern of warp-aggregated code:
  ``m = ballot_sync(FULL, p)``, then only the lanes with ``p`` call ``reduce_*_sync(m, x)``,
  ``ballot/any/all/match_any_sync(m, ...)`` or ``shfl_sync(m, x, simt.math.ffs(m) - 1)`` (a broadcast
  from the mask's first lane);
- ``scoped``: read-modify-write atomics with ``scope=`` and ``order=`` (block scope only where
  one block touches the element: a shared array, a thread's own element);
- ``ordered``: ``simt.atomic.load`` of an input and ``simt.atomic.store`` to the thread's own
  output element, with orders and scopes;
- ``lowp``: bfloat16 and FP8 (e4m3, e5m2) values made from exact float32 ones (FP8 saturating,
  as CUDA's constructors), one operation, back to float32 (ml_dtypes is the reference);
- ``vector``: ``(simt.make_float2(a, b) op simt.make_float2(c, d)).y`` and the same for
  double2 and int2;
- ``record``: a field of an element of a structured (record) input array, by attribute or
  by name.

Graphs (a launch captured on a stream, or a graph built with ``add_kernel``, against the
direct launch the evaluator models) are a launch mode: ``Program.launch_mode``, fuzz_check.py.
"""
import numpy as np

import fuzz_ast
import fuzz_ref as ref
from fuzz_ast import FULL, np_name, render_expr

try:
    import ml_dtypes
except ImportError:                       # the lowp kind needs it (simt's fp8 extra)
    ml_dtypes = None

INT32, UINT32 = np.dtype("int32"), np.dtype("uint32")
RMW_ORDERS = ["relaxed", "acquire", "release", "acq_rel", "seq_cst"]
LOAD_ORDERS, STORE_ORDERS = ["relaxed", "acquire", "seq_cst"], ["relaxed", "release", "seq_cst"]
ORDERED_DTYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"]
FIELD_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "float32",
                "float64", "bool"]
VECTORS = {"float2": np.dtype("float32"), "double2": np.dtype("float64"),
           "int2": np.dtype("int32")}
LOWP = {"bf16": ("simt.float2bfloat16", None), "e4m3": ("simt.float8_e4m3", 448.0),
        "e5m2": ("simt.float8_e5m2", 57344.0)}
KINDS = {"pwarp", "scoped", "ordered", "lowp", "vector", "record"}
TOP_WEIGHTS = {"pwarp": 1.5}
ANY_WEIGHTS = {"scoped": 0.5, "ordered": 0.5, "lowp": 0.5, "vector": 0.6, "record": 0.6}


class MoreStatements:
    """Generator methods for the kinds above (mixed into fuzz_gen.Generator)."""

    def stmt_pwarp(self, depth):
        pred, var = self.condition(), self.fresh("v")
        kind = self.rng.choice(["reduce_add", "reduce_min", "reduce_max", "reduce_and",
                                "reduce_or", "reduce_xor", "ballot", "any", "all",
                                "match_any", "shfl"])
        if kind.startswith("reduce_"):
            dtype = self.rng.choice([INT32, UINT32])
            arg = self.typed(dtype)
        elif kind in ("ballot", "any", "all"):
            arg, dtype = self.condition(), UINT32 if kind == "ballot" else INT32
        elif kind == "match_any":
            arg, dtype = self.typed(np.dtype(self.rng.choice(["int32", "int64", "uint32"]))), \
                UINT32
        else:
            arg = self.expr()
            dtype = arg.dtype
        names = (self.fresh("p"), self.fresh("m"), var)
        self.declare(names[0], pred.dtype)      # a condition may be an int's truth
        self.declare(names[1], UINT32)
        self.declare(var, dtype, arg.flags if kind == "shfl" else frozenset())
        return ("pwarp", names, kind, pred, arg, dtype.name)

    def stmt_scoped(self, depth):
        """An atomic of stmt_own, stmt_atomic or (top level) stmt_satomic with keywords."""
        pick = self.rng.random()
        if pick < 0.3 and depth == 0 and not self.returned:
            inner, scopes = self.stmt_satomic(depth), ["block", "device", "system"]
        elif pick < 0.6:
            inner, scopes = self.stmt_atomic(depth), ["device", "system"]
        else:
            inner, scopes = self.stmt_own(depth), ["block", "device", "system"]
        if inner[0] not in ("satomic", "atomic", "own"):
            return inner                          # stmt_own gave up
        words = [f"scope={self.rng.choice(scopes)!r}"] if self.rng.random() < 0.8 else []
        if self.rng.random() < 0.7:
            words.append(f"order={self.rng.choice(RMW_ORDERS)!r}")
        return ("scoped", ", ".join(words), inner)

    def stmt_ordered(self, depth):
        dtname = self.rng.choice(ORDERED_DTYPES)
        scope = self.rng.choice(["block", "device", "system"])
        if self.rng.random() < 0.5:
            arr = self.param("in", dtname, self.values_of(dtname, self.n))
            var = self.fresh("v")
            self.declare(var, np.dtype(dtname))
            return ("oload", var, arr, self.rng.choice([0, 1, 33]), self.n,
                    f"order={self.rng.choice(LOAD_ORDERS)!r}, scope={scope!r}")
        value = self.typed(np.dtype(dtname))
        arr = self.param("out", dtname, self.values_of(dtname, self.n))
        self.exact[arr] = value.exact
        return ("ostore", arr, value, f"order={self.rng.choice(STORE_ORDERS)!r}, scope={scope!r}")

    def stmt_lowp(self, depth):
        fmt = self.rng.choice(list(LOWP) if ml_dtypes is not None else [])
        f32 = np.dtype("float32")
        x, y = self.typed(f32), self.typed(f32)
        if not (x.exact and y.exact):
            return self.stmt_assign(depth)
        sym = self.rng.choice(["+", "-", "*"])
        var = self.fresh("v")
        self.declare(var, f32, frozenset({"mul" if sym == "*" else "add"}))
        return ("lowp", var, fmt, sym, x, y)

    def stmt_vector(self, depth):
        kind = self.rng.choice(list(VECTORS))
        comp = VECTORS[kind]
        parts = [self.typed(comp) for _ in range(4)]
        sym = self.rng.choice(["+", "-", "*"])
        flags = frozenset().union(*(p.flags for p in parts))
        if comp.kind == "f":
            flags |= {"mul" if sym == "*" else "add"}
        else:
            flags = frozenset()
        var = self.fresh("v")
        self.declare(var, comp, flags)
        return ("vector", var, kind, sym, parts, self.rng.choice("xy"))

    def stmt_record(self, depth):
        records = [p for p in self.params if p[1] == "rec"]
        if not records or self.rng.random() < 0.3:
            names = [f"f{k}" for k in range(self.rng.randint(1, 3))]
            dtype = np.dtype([(f, self.rng.choice(FIELD_DTYPES)) for f in names], align=True)
            value = np.zeros(self.n, dtype)
            for f in names:
                value[f] = self.values_of(dtype[f].name, self.n)
            name = f"rec{len(self.params)}"      # "r": uloop variables
            self.params.append((name, "rec", "record"))
            self.values.append(value)
            records = [(name, "rec", "record")]
        name = self.rng.choice(records)[0]
        dtype = self.values[[p[0] for p in self.params].index(name)].dtype
        field = self.rng.choice(dtype.names)
        var = self.fresh("v")
        self.declare(var, dtype[field])
        return ("record", var, name, field, self.rng.choice([0, 1, 5]), self.n,
                self.rng.random() < 0.5)


# rendering ---------------------------------------------------------------------------

def _pwarp(s, pad, ind):
    (p, m, var), kind, pred, arg, dtname = s[1:]
    if kind == "shfl":
        call = f"simt.shfl_sync({m}, {render_expr(arg)}, simt.math.ffs({m}) - 1)"
    else:
        call = f"simt.{kind}_sync({m}, {render_expr(arg)})"
    return [f"{pad}{p} = {render_expr(pred)}", f"{pad}{m} = simt.ballot_sync({FULL:#x}, {p})",
            f"{pad}{var} = np.{np_name(dtname)}(0)", f"{pad}if {p}:", f"{pad}    {var} = {call}"]


def _scoped(s, pad, ind):
    lines = fuzz_ast.render_stmt(s[2], ind)
    k = next(k for k, line in enumerate(lines) if "simt.atomic." in line)
    if s[1]:
        lines[k] = lines[k][:lines[k].rindex(")")] + f", {s[1]})"
    return lines


def _oload(s, pad, ind):
    _, var, arr, offset, n, words = s
    return [f"{pad}{var} = simt.atomic.load({arr}, (gid + {offset}) % {n}, {words})"]


def _ostore(s, pad, ind):
    return [f"{pad}simt.atomic.store({s[1]}, gid, {render_expr(s[2])}, {s[3]})"]


def _lowp(s, pad, ind):
    _, var, fmt, sym, x, y = s
    make = LOWP[fmt][0]
    pair = f"{make}({render_expr(x)}) {sym} {make}({render_expr(y)})"
    if fmt == "bf16":
        return [f"{pad}{var} = simt.bfloat162float({pair})"]
    return [f"{pad}{var} = np.float32({pair})"]


def _vector(s, pad, ind):
    _, var, kind, sym, parts, comp = s
    a, b = (", ".join(render_expr(p) for p in pair) for pair in (parts[:2], parts[2:]))
    return [f"{pad}{var} = (simt.make_{kind}({a}) {sym} simt.make_{kind}({b})).{comp}"]


def _record(s, pad, ind):
    _, var, arr, field, offset, n, by_name = s
    ref_ = f"{arr}[(gid + {offset}) % {n}]"
    return [f"{pad}{var} = {ref_}[{field!r}]" if by_name else f"{pad}{var} = {ref_}.{field}"]


fuzz_ast.RENDER.update({"pwarp": _pwarp, "scoped": _scoped, "oload": _oload,
                        "ostore": _ostore, "lowp": _lowp, "vector": _vector,
                        "record": _record})


# evaluation --------------------------------------------------------------------------

def run_pwarp(s, threads, arrays, mags):
    """Every thread of the block: the mask is the warp's ballot of ``pred``; lanes in it
    take the function over the mask's lanes, the others keep 0."""
    (p, m, var), kind, pred, arg, dtname = s[1:]
    # p keeps the type the kernel gives it: an int's truth stays an int, and ``x or y`` (whose
    # Python value may be x) is a bool
    held = [(ref.apply_cast(pred.dtype.name, value), 0.0)
            for value, _ in (ref.evaluate(pred, th, arrays) for th in threads)]
    preds = [bool(value) for value, _ in held]
    values = [ref.evaluate(arg, th, arrays) if preds[th.tid] else None for th in threads]
    for th in threads:
        base, count = ref.warp_lanes(len(threads), th.tid)
        lanes = [t.tid for t in threads[base:base + count] if preds[t.tid]]
        bits = sum(1 << (t - base) for t in lanes)
        th.env[p], th.env[m] = held[th.tid], (np.uint32(bits), 0.0)
        if not preds[th.tid]:
            th.env[var] = (np.dtype(dtname).type(0), 0.0)
            continue
        mine = values[th.tid][0]
        if kind == "shfl":
            th.env[var] = values[lanes[0]]
            continue
        if kind == "ballot":
            v = np.uint32(sum(1 << (t - base) for t in lanes if values[t][0]))
        elif kind in ("any", "all"):
            v = np.int32((any if kind == "any" else all)(bool(values[t][0]) for t in lanes))
        elif kind == "match_any":
            v = np.uint32(sum(1 << (t - base) for t in lanes if values[t][0] == mine))
        else:
            v = fold(kind, [values[t][0] for t in lanes])
        th.env[var] = (v, 0.0)


def fold(kind, values):
    op = {"reduce_add": np.add, "reduce_min": min, "reduce_max": max,
          "reduce_and": np.bitwise_and, "reduce_or": np.bitwise_or,
          "reduce_xor": np.bitwise_xor}[kind]
    acc = values[0]
    with np.errstate(all="ignore"):
        for x in values[1:]:
            acc = op(acc, x)
    return acc


def run_local(s, th, arrays, mags):
    tag = s[0]
    if tag == "scoped":
        ref.run_local(s[2], th, arrays, mags)
    elif tag == "oload":
        _, var, arr, offset, n, _ = s
        th.env[var] = (arrays[arr][(th.gid + offset) % n], 0.0)
    elif tag == "ostore":
        ref.run_local(("store", s[1], s[2]), th, arrays, mags)
    elif tag == "lowp":
        th.env[s[1]] = low_precision(s, th, arrays)
    elif tag == "vector":
        _, var, kind, sym, parts, comp = s
        k = 0 if comp == "x" else 1
        (x, mx), (y, my) = (ref.evaluate(parts[k + j], th, arrays) for j in (0, 2))
        v = ref.apply_bin(sym, x, y)
        th.env[var] = (v, ref.bin_error(sym, v, x, y, mx, my))
    elif tag == "record":
        _, var, arr, field, offset, n, _ = s
        th.env[var] = (arrays[arr][(th.gid + offset) % n][field], 0.0)
    else:
        return False
    return True


def run_collective(s, threads, arrays, mags):
    if s[0] == "pwarp":
        run_pwarp(s, threads, arrays, mags)
        return True
    if s[0] == "scoped" and s[2][0] == "satomic":
        return ref.run_collective(s[2], threads, arrays, mags)
    return False


def low_precision(s, th, arrays):
    """float32 of (x op y) in bfloat16 (computed in float32, rounded once) or of
    float32(fp8(x)) op float32(fp8(y)); FP8 conversions saturate, as CUDA's do."""
    _, var, fmt, sym, x, y = s
    a, b = (np.float32(ref.evaluate(e, th, arrays)[0]) for e in (x, y))
    if fmt == "bf16":
        t = ml_dtypes.bfloat16
        a, b = np.array([a, b]).astype(t)
        with np.errstate(all="ignore"):
            v = np.float32(np.array(ref.apply_bin(sym, a, b)).astype(np.float32))
    else:
        t = ml_dtypes.float8_e4m3fn if fmt == "e4m3" else ml_dtypes.float8_e5m2
        top = np.float32(LOWP[fmt][1])
        a, b = (np.float32(np.array(np.clip(u, -top, top) if not np.isnan(u) else u)
                           .astype(t).astype(np.float32)) for u in (a, b))
        v = ref.apply_bin(sym, a, b)
    return v, ref.ulp(v)


ref.MORE_LOCAL.append(run_local)
ref.MORE_COLLECTIVE.append(run_collective)
