"""The math library on NVIDIA GPUs: libdevice (``__nv_*``) names for the library, the fast
intrinsics, rounding-mode arithmetic and conversions (lower/math.py registers these)."""
from llvmlite import ir as ll

from ...compiler.lltypes import I32, function, scalar

LIBDEVICE = {"exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin", "acos",
             "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma",
             "tgamma", "cbrt", "exp2", "exp10", "atan2", "pow", "hypot", "fmod", "fdim",
             "remainder", "copysign", "rsqrt", "sqrt", "fabs", "floor", "ceil", "trunc", "rint",
             "round", "fma", "fmin", "fmax", "sinpi", "cospi", "erfinv", "erfcinv", "rcbrt",
             "logb", "j0", "j1", "y0", "y1", "nearbyint", "erfcx", "normcdf", "normcdfinv",
             "cyl_bessel_i0", "cyl_bessel_i1", "rhypot", "norm3d", "rnorm3d", "norm4d",
             "rnorm4d", "jn", "yn", "ilogb", "nextafter", "ldexp", "scalbn", "lrint", "llrint",
             "lround", "llround", "sincos", "sincospi", "modf", "frexp", "remquo"}
ALIASES = {"lrint": "llrint", "lround": "llround"}     # long is 64-bit: libdevice has ll only
FAST = {"exp": "__nv_fast_expf", "exp10": "__nv_fast_exp10f", "log": "__nv_fast_logf",
        "log2": "__nv_fast_log2f", "log10": "__nv_fast_log10f", "sin": "__nv_fast_sinf",
        "cos": "__nv_fast_cosf", "tan": "__nv_fast_tanf", "pow": "__nv_fast_powf",
        "div": "__nv_fast_fdividef", "sincos": "__nv_fast_sincosf"}
# rounded arithmetic: (op, float32?) -> libdevice name before _<mode>
ROUNDED = {("add", True): "fadd", ("sub", True): "fsub", ("mul", True): "fmul",
           ("div", True): "fdiv", ("fma", True): "fmaf", ("rcp", True): "frcp",
           ("sqrt", True): "fsqrt", ("rsqrt", True): "frsqrt", ("add", False): "dadd",
           ("sub", False): "dsub", ("mul", False): "dmul", ("div", False): "ddiv",
           ("fma", False): "fma", ("rcp", False): "drcp", ("sqrt", False): "dsqrt"}
def call(em, name, args, ret):
    fnty = ll.FunctionType(ret, [a.type for a in args])
    return em.builder.call(function(em.module, name, fnty), args)


def rounded(em, op, mode, t, args):
    name = f"__nv_{ROUNDED[op, t.bits == 32]}_{mode}"
    return call(em, name, args, scalar(t))


def convert(em, name, mode, src, dst, value):
    return call(em, f"__nv_{name}_{mode}", [value], scalar(dst))


def flush_denormals(module):
    """ftz=True (or fastmath=True): float32 denormals flush to zero, as nvcc's -ftz=true: the NVPTX
    back end's ``.ftz`` instructions (a function attribute on every function we emit) and
    libdevice's FTZ paths (the ``nvvm-reflect-ftz`` module flag NVVMReflect reads)."""
    flag = module.add_metadata([ll.Constant(I32, 4), "nvvm-reflect-ftz", ll.Constant(I32, 1)])
    module.add_named_metadata("llvm.module.flags", flag)
    for fn in module.functions:
        if not fn.is_declaration:
            # llvmlite's attribute list has no key="value" attributes: added as printed
            set.add(fn.attributes, '"denormal-fp-math-f32"="preserve-sign,preserve-sign"')
