"""The sim device's lowerings of registry entries (lang/): each turns an ``ir.Intrinsic`` into
a Python expression (the LLVM targets' lowerings make LLVM IR instead, so none of theirs is
shared here). An entry the sim device does not run has a stated reason (``refuse``), which
its NotSupportedError carries. Imported by codegen.py."""
from ....errors import NotSupportedError
from ....ir import types as T
from ....lang import atomics_ordered, cachehints, cluster, float8, graphs, groups, heap
from ....lang import python as pylang
from ....lang.atomics import RMW_ENTRIES
from ....lang.indices import blockDim, blockIdx, gridDim, threadIdx, warpSize
from ....lang.intrinsics_fp import BITCASTS, ENTRIES as FP_ENTRIES
from ....lang.intrinsics_int import BY_NAME as INT, SIMD_ENTRIES, int_abs
from ....fault import GRAPH_LABEL
from ....lang.launches import device_launch
from ....lang.mathlib import MATH_FUNCS
from ....lang.printf import printf
from ....lang.sync import threadfence, threadfence_block, threadfence_system
from ....lang.timers import clock, clock64, globaltimer, nanosleep
from ....lang.warp import LANEMASKS, laneid
from ....lang import inline_asm, warpspec
from ..scalars import cast, rounded, wrap, wrap_fn
from ..values import MATH
from .rules import TARGET, rule
from . import exact as exact_casts


def lower_intrinsic(g, e):
    """The Python text of intrinsic node e, by its entry's sim lowering."""
    entry = e.entry
    lower = entry.lowering_for(TARGET)
    if lower is None:
        where = f" ({e.loc.filename}:{e.loc.line})" if e.loc else ""
        why = entry.unsupported.get(TARGET, "it has no lowering for this device")
        name = e.attrs.get("called", entry.python_name)     # declare_device: the function
        raise NotSupportedError(f"{name} is not supported on the sim device: "
                                f"{why}{where}")
    return lower(g, e)


def _name(entry):
    """The function an entry of a math family names (math.sin -> sin)."""
    return entry.op.partition(".")[2]


# ---------------------------------------------------------------- indices and the warp
for _var, _text in ((threadIdx, "_k_t.tid"), (blockIdx, "_k_bid"), (blockDim, "_k_bdim"),
                    (gridDim, "_k_gdim")):
    for _k, _axis in enumerate("xyz"):
        rule(getattr(_var, _axis))(lambda g, e, a, text=f"{_text}[{_k}]": text)
rule(warpSize)(lambda g, e, a: str(g.warp.size))
rule(laneid)(lambda g, e, a: "_k_t.lane")
_LANEMASK_TEXT = {"lt": "(1 << _k_t.lane) - 1", "le": "(2 << _k_t.lane) - 1",
                  "eq": "1 << _k_t.lane", "ge": "0xFFFFFFFF ^ ((1 << _k_t.lane) - 1)",
                  "gt": "0xFFFFFFFF ^ ((2 << _k_t.lane) - 1)"}
for _kind, _entry in LANEMASKS.items():
    rule(_entry)(lambda g, e, a, text=_LANEMASK_TEXT[_kind]: f"({text})")
rule(groups.fns)(lambda g, e, a: f"_k_v.fns({a[0]}, {a[1]})")


@rule(nanosleep)
def _nothing(g, e, args):
    """Threads interleave at statements: nothing to wait for."""
    return "None"


@rule(threadfence, threadfence_block, threadfence_system)
def _fence(g, e, args):
    """Memory is one Python heap: a fence only tells the race check what it orders
    (threadfence_block: within the block)."""
    return f"_k_fence(_k_t, {e.attrs.get('scope', 'device') != 'block'})"


@rule(clock, clock64, globaltimer)
def _clock(g, e, args):
    t = e.type
    return wrap("_k_ns()", t) if isinstance(t, T.Scalar) and t.kind in "iu" else "None"


# ---------------------------------------------------------------- math
def _math(entry):
    name = _name(entry)

    def lower(g, e, args):
        if name in ("isnan", "isinf", "isfinite", "signbit"):
            return f"_k_math[{name!r}]({args[0]})"
        return rounded(f"_k_math[{name!r}]({', '.join(args)})", e.type)
    return lower


for _entry in MATH_FUNCS + [e for e in FP_ENTRIES if e.op.startswith("fast.")]:
    if _name(_entry) not in MATH:                # refusals.py says why
        continue
    if _entry.op.startswith("pymath."):          # Python's int-valued rounding
        rule(_entry)(lambda g, e, a, name=_name(_entry):
                     cast(f"_k_math[{name!r}]({a[0]})", T.FLOAT64, e.type))
    else:
        rule(_entry)(_math(_entry))


@rule(*(e for e in BITCASTS if e.op not in exact_casts.HALVES))
def _bitcast(g, e, args):
    return f"_k_v.bitcast({args[0]}, {e.args[0].type.dtype.str!r}, {e.type.dtype.str!r})"


@rule(int_abs)
def _abs(g, e, args):
    t = e.args[0].type
    return args[0] if t.kind in "ub" else wrap(f"abs({args[0]})", t)


def _bits(helper):
    return lambda g, e, a: f"_k_v.{helper}({a[0]}, {e.args[0].type.bits})"


rule(INT["popc"])(_bits("popc"))
rule(INT["clz"])(_bits("clz"))
rule(INT["ffs"])(_bits("ffs"))
rule(INT["brev"])(lambda g, e, a: f"_k_v.brev({a[0]}, {e.args[0].type.bits}, "
                                  f"{wrap_fn(e.args[0].type)})")
rule(INT["mulhi"], INT["umulhi"])(
    lambda g, e, a: f"_k_v.mulhi({a[0]}, {a[1]}, {e.args[0].type.bits}, "
                    f"{wrap_fn(e.args[0].type)})")
rule(INT["mul24"])(lambda g, e, a: f"_k_v.mul24({a[0]}, {a[1]}, True, "
                                   f"{wrap_fn(e.args[0].type)})")
rule(INT["fns"])(lambda g, e, a: f"_k_v.fns_from({a[0]}, {a[1]}, {a[2]})")
for _entry in SIMD_ENTRIES:
    _simd = _entry.python_name.rsplit(".", 1)[1]
    rule(_entry)(lambda g, e, a, op=_simd[:-1], width=32 // int(_simd[-1]):
                 f"_k_v.simd({op!r}, {width}, {a[0]}, {a[1]})")
rule(INT["umul24"])(lambda g, e, a: f"_k_v.mul24({a[0]}, {a[1]}, False, "
                                    f"{wrap_fn(e.args[0].type)})")


# ---------------------------------------------------------------- complex values
rule(pylang.complex_real)(lambda g, e, a: f"({a[0]}).real")
rule(pylang.complex_imag)(lambda g, e, a: f"({a[0]}).imag")
rule(pylang.complex_conj)(lambda g, e, a: f"({a[0]}).conjugate()")
rule(pylang.complex_make)(
    lambda g, e, a: rounded(f"complex({a[0]}, {a[1]})", T.Scalar(
        "complex64") if e.type.dtype.itemsize == 8 else T.Scalar("complex128")))
rule(pylang.complex_abs)(
    lambda g, e, a: rounded(f"_k_math['hypot'](({a[0]}).real, ({a[0]}).imag)", e.type))


# ---------------------------------------------------------------- memory
@rule(*RMW_ENTRIES, atomics_ordered.load, atomics_ordered.store)
def _atomic(g, e, args):
    kind = e.attrs.get("op", _name(e.entry))    # atomic.load and atomic.store: by name
    nvalues = {"cas": 2, "load": 0}.get(kind, 1)
    site = g.site(e.loc, e.attrs.get("label", ""), e.attrs.get("order", "relaxed"),
                  e.attrs.get("scope", "device"))
    values = "".join(a + ", " for a in args[1:1 + nvalues])
    idx = ", ".join(args[1 + nvalues:])
    return f"{args[0]}.atomic({site}, {kind!r}, ({values}), {idx})"


@rule(*(cachehints.ENTRIES[n] for n in cachehints.LOADS))
def _load(g, e, args):
    """__ldg and the other cache hints: a plain load here."""
    return f"{args[0]}.ld({g.site(e.loc, e.attrs.get('label', ''))}, {', '.join(args[1:])})"


@rule(*(cachehints.ENTRIES[n] for n in cachehints.STORES))
def _store(g, e, args):
    site = g.site(e.loc, e.attrs.get("label", ""))
    return f"{args[0]}.st({site}, {args[1]}, {', '.join(args[2:])})"


@rule(atomics_ordered.volatile_load)
def _volatile_load(g, e, args):
    """A relaxed access of system scope for the race check (memory.Shadow.volatile_read)."""
    site = g.site(e.loc, e.attrs.get("label", ""), scope="system")
    return f"{args[0]}.vld({site}, {', '.join(args[1:])})"


@rule(atomics_ordered.volatile_store)
def _volatile_store(g, e, args):
    site = g.site(e.loc, e.attrs.get("label", ""), scope="system")
    return f"{args[0]}.vst({site}, {args[1]}, {', '.join(args[2:])})"


# ---------------------------------------------------------------- inline PTX, warp specialisation
@rule(inline_asm.asm)
def _asm(g, e, args):
    """The fallback call (the asm's last argument): PTX runs on GPUs only."""
    if not e.attrs["fallback"]:
        from ....compiler.errors import fail_at
        fail_at(e.loc, *inline_asm.no_fallback("sim"))
    return args[-1]


@rule(warpspec.setmaxnreg, warpspec.griddepcontrol_wait,
      warpspec.griddepcontrol_launch_dependents)
def _no_op(g, e, args):
    """The sim device runs a block's warps one statement at a time and launches in order."""
    return "None"


@rule(warpspec.barrier_count)
def _barrier_count(g, e, args):
    """Any count runs here (a count no thread set reaches is reported as a deadlock)."""
    return "None"


@rule(warpspec.barrier_arrive)
def _barrier_arrive(g, e, args):
    """bar.arrive: counted at once, no wait (schedule.Block.arrive)."""
    return f"_k_t.block.arrive({args[0]}, {args[1]}, _k_t, {g.site(e.loc)})"


# ---------------------------------------------------------------- the rest
@rule(printf)
def _printf(g, e, args):
    values = "".join(a + ", " for a in args)
    return f"_k_v.cprintf({e.attrs['format']!r}, {e.attrs['slots']!r}, ({values}))"


@rule(device_launch)
def _device_launch(g, e, args):
    """Checked and queued: the grid's launches run when it has finished (sim/devlaunch.py)."""
    site = g.site(e.loc, e.attrs["name"])
    grid, block, shared = ", ".join(args[0:3]), ", ".join(args[3:6]), args[6]
    values = "".join(a + ", " for a in args[7:])
    return (f"_k_L.device_launch(_k_t, {site}, {e.attrs['index']}, {e.attrs['stream']}, "
            f"({grid}), ({block}), {shared}, ({values}))")


rule(graphs.graph_set_condition)(lambda g, e, a: f"_k_gs({a[0]}, {a[1]})")
rule(graphs.graph_launch)(
    lambda g, e, a: f"_k_L.graph_launch(_k_t, {g.site(e.loc, GRAPH_LABEL)}, {a[0]})")
rule(heap.trap)(lambda g, e, a: f"_k_L.trap(_k_t, {g.site(e.loc)})")


@rule(heap.malloc)
def _malloc(g, e, args):
    """A block of the device's heap as an array of the launch (sim/heap.py)."""
    site = g.site(e.loc, "simt.malloc array")
    return f"_k_L.malloc(_k_t, {site}, {args[0]}, {g.layout(e.type.dtype)}.dtype)"


rule(heap.free)(lambda g, e, a: f"_k_L.free(_k_t, {g.site(e.loc)}, {a[0]})")
rule(pylang.breakpoint_)(lambda g, e, a: "breakpoint()")

# clusters: the launch's shape (clusters of one block when it names none: sim/launch.py)
rule(cluster.block_rank)(lambda g, e, a: "_k_L.cluster_rank(_k_bid)")
rule(cluster.num_blocks)(lambda g, e, a: "_k_L.cluster_size")
rule(cluster.dim_blocks)(lambda g, e, a: f"_k_L.cluster[{'xyz'.index(e.attrs['axis'])}]")
rule(cluster.block_index)(
    lambda g, e, a: f"(_k_bid[{'xyz'.index(e.attrs['axis'])}] % "
                    f"_k_L.cluster[{'xyz'.index(e.attrs['axis'])}])")
rule(cluster.map_shared_rank)(
    lambda g, e, a: f"_k_L.map_shared(_k_t, {g.site(e.loc)}, {a[0]}, {a[1]})")

# FP8 values are their codes (Python ints), converted exactly as the host does (lang/float8.py)
for _fp8 in float8.FORMATS:
    rule(float8.NARROW[_fp8])(
        lambda g, e, a, name=_fp8: f"_k_v.fp8_encode({a[0]}, {name!r}, {e.attrs['saturate']})")
    rule(float8.WIDEN[_fp8])(lambda g, e, a, name=_fp8: f"_k_v.fp8_decode({a[0]}, {name!r})")

from . import asynccopy  # noqa: E402,F401  (arrive/wait barriers, memcpy_async, TMA)
from . import halves    # noqa: E402,F401  (float16/bfloat16 intrinsics, vector types)
from . import matrix    # noqa: E402,F401  (mma.sync, ldmatrix, stmatrix, wgmma)
from . import textures  # noqa: E402,F401  (textures and surfaces: sim/textures.py)
from . import refusals  # noqa: E402,F401  (the reasons for what the sim device does not run)
