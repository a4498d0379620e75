"""CUDA's floating-point intrinsics (guide F.2): the fast approximate float32 functions
(``__expf`` ...), arithmetic in a chosen rounding mode (``__fadd_rz`` ...), conversions
with a rounding mode (``__float2int_rn`` ...) and bit reinterpretations. Python names drop
the leading underscores; fast ones are ``fast_<name>`` (simt.math.fast_exp is __expf).
Lowerings: compiler/mathlower.py, and the devices' own for the rounding modes
(backends/*/lower/math.py)."""
import numpy as np

from ..ir import types as T
from .mathbase import make, signature_rule

MODES = {"rn": "to nearest, ties to even", "rz": "toward zero", "ru": "up (toward +inf)",
         "rd": "down (toward -inf)"}
# fast name -> (CUDA name, arguments, accurate function it approximates)
FAST = {"fast_exp": ("__expf", 1, "exp"), "fast_exp10": ("__exp10f", 1, "exp10"),
        "fast_log": ("__logf", 1, "log"), "fast_log2": ("__log2f", 1, "log2"),
        "fast_log10": ("__log10f", 1, "log10"), "fast_sin": ("__sinf", 1, "sin"),
        "fast_cos": ("__cosf", 1, "cos"), "fast_tan": ("__tanf", 1, "tan"),
        "fast_pow": ("__powf", 2, "pow"), "fdividef": ("__fdividef", 2, "div"),
        "fast_sincos": ("__sincosf", 1, "sincos")}
# rounded arithmetic: python prefix -> (operation, arguments, float32 or float64, modes)
ROUNDED = {"fadd": ("add", 2, "F", MODES), "fsub": ("sub", 2, "F", MODES),
           "fmul": ("mul", 2, "F", MODES), "fdiv": ("div", 2, "F", MODES),
           "fmaf": ("fma", 3, "F", MODES), "frcp": ("rcp", 1, "F", MODES),
           "fsqrt": ("sqrt", 1, "F", MODES), "frsqrt": ("rsqrt", 1, "F", ("rn",)),
           "dadd": ("add", 2, "D", MODES), "dsub": ("sub", 2, "D", MODES),
           "dmul": ("mul", 2, "D", MODES), "ddiv": ("div", 2, "D", MODES),
           "fma": ("fma", 3, "D", MODES), "drcp": ("rcp", 1, "D", MODES),
           "dsqrt": ("sqrt", 1, "D", MODES)}
# conversions: python prefix -> (source letter, result letter, modes)
NAMES = {"float": "F", "double": "D", "int": "i", "uint": "u", "ll": "l", "ull": "U"}
CONVERSIONS = {f"{src}2{dst}": (NAMES[src], NAMES[dst], ("rn",) if exact else MODES)
               for src, dst, exact in [
                   ("float", "int", False), ("float", "uint", False), ("float", "ll", False),
                   ("float", "ull", False), ("double", "int", False), ("double", "uint", False),
                   ("double", "ll", False), ("double", "ull", False), ("double", "float", False),
                   ("int", "float", False), ("uint", "float", False), ("ll", "float", False),
                   ("ull", "float", False), ("ll", "double", False), ("ull", "double", False),
                   ("int", "double", True), ("uint", "double", True)]}
TYPE_NAMES = {"F": "float32", "D": "float64", "i": "int32", "u": "uint32", "l": "int64",
              "U": "uint64"}


def _fast(entry, nargs):
    entry.arity = nargs

    def build(fc, args, kwargs, loc):
        if len(args) != nargs:
            fc.fail(loc, f"{entry.python_name} takes {nargs} argument"
                    f"{'s' if nargs > 1 else ''}, got {len(args)}")
        values = [fc.cast(fc.expr(a, loc), T.FLOAT32, loc) for a in args]
        t = T.Tuple([T.FLOAT32, T.FLOAT32]) if entry.op == "fast.sincos" else T.FLOAT32
        return entry.node(t, loc, values)
    return build


def _bitcast(entry, src, dst):
    def build(fc, args, kwargs, loc):
        x = fc.cast(fc.expr(fc.one_arg(args, "bit cast", loc), loc), T.Scalar(src), loc)
        return entry.node(T.Scalar(dst), loc, [x])
    return build


def _fast_entries():
    out = []
    for name, (cuda, nargs, base) in FAST.items():
        out.append(make("fast." + base, f"{name}: {cuda}, the fast approximate float32 "
                        f"{base} (hardware approximations on the GPU, with the error bounds "
                        "of docs/math.md; the accurate function on the CPU).", _fast, nargs,
                        python_name="simt.math." + name))
    out.append(make("fast.saturate", "saturatef(x): __saturatef, x clamped to [0, 1] (NaN "
                    "gives 0), in float32.", signature_rule, "saturatef", "F>F",
                    python_name="simt.math.saturatef"))
    return out


ROUNDED_OPS = {}          # rounded-arithmetic entry -> (operation, mode): add, rz ...
CONVERSION_OPS = {}       # conversion entry -> (conversion, mode): float2int, rn ...


def _rounded_entries():
    out = []
    for prefix, (op, nargs, letter, modes) in ROUNDED.items():
        for mode in modes:
            name = f"{prefix}_{mode}"
            out.append(make(f"round.{op}.{mode}.{letter}", f"{name}: __{name}, {op} of "
                            f"{TYPE_NAMES[letter]} values rounded {MODES[mode]} (IEEE-754 "
                            "exact; never contracted into an fma).", signature_rule, name,
                            letter * nargs + ">" + letter, python_name="simt.math." + name))
            ROUNDED_OPS[out[-1]] = (op, mode)
    return out


def _conversion_entries():
    out = []
    for prefix, (src, dst, modes) in CONVERSIONS.items():
        for mode in modes:
            name = f"{prefix}_{mode}"
            doc = (f"{name}: __{name}, a {TYPE_NAMES[src]} converted to {TYPE_NAMES[dst]} "
                   f"rounding {MODES[mode]}")
            if dst in "iulU":
                doc += "; out of range saturates, NaN gives 0"
            out.append(make(f"cvt.{prefix}.{mode}", doc + ".", signature_rule, name,
                            f"{src}>{dst}", python_name="simt.math." + name))
            CONVERSION_OPS[out[-1]] = (prefix, mode)
    return out


ENTRIES = _fast_entries() + _rounded_entries() + _conversion_entries()

def _cast(name, doc, rule, *args):
    return make("bitcast." + name, doc, rule, *args, python_name="simt." + name)


BITCASTS = [
    _cast("float_as_int", "float_as_int(x): __float_as_int, the bits of a float32 as "
         "int32.", _bitcast, np.float32, np.int32),
    _cast("int_as_float", "int_as_float(x): __int_as_float, int32 bits as a float32.",
         _bitcast, np.int32, np.float32),
    _cast("float_as_uint", "float_as_uint(x): __float_as_uint, float32 bits as uint32.",
         _bitcast, np.float32, np.uint32),
    _cast("uint_as_float", "uint_as_float(x): __uint_as_float, uint32 bits as float32.",
         _bitcast, np.uint32, np.float32),
    _cast("double_as_longlong", "double_as_longlong(x): __double_as_longlong, float64 "
         "bits as int64.", _bitcast, np.float64, np.int64),
    _cast("longlong_as_double", "longlong_as_double(x): __longlong_as_double, int64 "
         "bits as float64.", _bitcast, np.int64, np.float64),
    _cast("double2hiint", "double2hiint(x): __double2hiint, the high 32 bits of a "
         "float64 as int32.", signature_rule, "double2hiint", "D>i"),
    _cast("double2loint", "double2loint(x): __double2loint, the low 32 bits of a "
         "float64 as int32.", signature_rule, "double2loint", "D>i"),
    _cast("hiloint2double", "hiloint2double(hi, lo): __hiloint2double, the float64 "
         "whose high and low 32 bits are hi and lo.", signature_rule, "hiloint2double",
         "ii>D"),
]
