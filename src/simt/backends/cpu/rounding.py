"""Arithmetic and conversions in a chosen rounding mode on the CPU (__fadd_rz,
__int2float_ru, ...), exact as the GPU's instructions are.

Round-to-nearest needs nothing: it is the FPU's mode. Each other rounding is a small
function that sets the FPU's rounding mode (``llvm.set.rounding``), does the one operation
as an LLVM constrained intrinsic that names that rounding, and sets round-to-nearest back;
the function is ``strictfp`` and ``noinline``, so LLVM neither moves the operation out of
the mode nor folds it at compile time. Float to int rounds with floor/ceil/trunc/rint and
converts saturating, as the GPU's cvt does; __frsqrt_rn has an exact algorithm of its own."""
from llvmlite import ir as ll

from ...compiler.lltypes import I32, const, function, scalar
from ...compiler.mathlower import llvm_intrinsic

# mode -> (llvm.set.rounding argument, constrained-intrinsic rounding name)
MODES = {"rn": (1, "round.tonearest"), "rz": (0, "round.towardzero"),
         "ru": (2, "round.upward"), "rd": (3, "round.downward")}
ROUND_TO_INT = {"rn": "llvm.rint", "rz": "llvm.trunc", "ru": "llvm.ceil", "rd": "llvm.floor"}


def rounded(em, op, mode, t, args):
    b = em.builder
    ft = scalar(t)
    if op == "rcp":
        op, args = "div", [const(ft, 1.0)] + args
    if op == "rsqrt":
        return _rsqrt_rn(b, args[0])
    if mode == "rn":
        return _nearest(b, op, args)
    name = {"add": "fadd", "sub": "fsub", "mul": "fmul", "div": "fdiv", "fma": "fma",
            "sqrt": "sqrt"}[op]
    return b.call(_helper(b.module, name, mode, [a.type for a in args], ft), args)


def convert(em, name, mode, src, dst, value):
    b = em.builder
    to = scalar(dst)
    if dst.kind in "iu":                                 # float -> int: round, then saturate
        whole = llvm_intrinsic(b, ROUND_TO_INT[mode], [value])
        sat = f"llvm.fpto{'s' if dst.kind == 'i' else 'u'}i.sat.{_type_name(to)}." \
              f"{_type_name(value.type)}"
        result = b.call(function(b.module, sat, ll.FunctionType(to, [value.type])), [whole])
        if to.width == 64 or (src.dtype.itemsize == 8 and dst.kind == "i"):
            # as the H100's cvt: NaN -> the sign bit alone (0x80000000, 0x8000000000000000)
            # for 64-bit results and from double to int; 0 from float to 32 bits
            nan = b.fcmp_unordered("uno", value, value)
            result = b.select(nan, ll.Constant(to, 1 << (to.width - 1)), result)
        return result
    if src.kind == "f":
        op = "fptrunc"
    else:
        op = "sitofp" if src.kind == "i" else "uitofp"
    if mode == "rn":
        return getattr(b, op)(value, to)
    return b.call(_helper(b.module, op, mode, [value.type], to), [value])


def _nearest(b, op, args):
    if op in ("sqrt", "fma"):
        return llvm_intrinsic(b, "llvm." + op, args)
    return getattr(b, "f" + op)(*args)                   # no flags: never contracted


def _type_name(t):
    return "f32" if t == ll.FloatType() else "f64" if t == ll.DoubleType() else f"i{t.width}"


def _helper(module, op, mode, arg_types, ret):
    """The strictfp function doing ``op`` rounded by ``mode`` (one per module and kind)."""
    suffix = ".".join(_type_name(t) for t in [ret] + arg_types[:1])
    name = f"simt.rounded.{op}.{mode}.{suffix}"
    if name in module.globals:
        return module.globals[name]
    fn = ll.Function(module, ll.FunctionType(ret, arg_types), name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    _strictfp(fn)
    b = ll.IRBuilder(fn.append_basic_block())
    set_rounding = function(module, "llvm.set.rounding", ll.FunctionType(ll.VoidType(), [I32]))
    code, rounding = MODES[mode]
    _strictfp(b.call(set_rounding, [const(I32, code)]))
    meta = [ll.MetaDataString(module, rounding), ll.MetaDataString(module, "fpexcept.ignore")]
    if op in ("fptrunc", "sitofp", "uitofp"):
        intrinsic = f"llvm.experimental.constrained.{op}.{_type_name(ret)}." \
                    f"{_type_name(arg_types[0])}"
    else:
        intrinsic = f"llvm.experimental.constrained.{op}.{_type_name(ret)}"
    fnty = ll.FunctionType(ret, arg_types + [ll.MetaDataType()] * 2)
    value = _strictfp(b.call(function(module, intrinsic, fnty), list(fn.args) + meta))
    _strictfp(b.call(set_rounding, [const(I32, 1)]))
    b.ret(value)
    return fn


def _strictfp(value):
    """Mark a function or call ``strictfp`` (llvmlite's attribute list lacks the name)."""
    set.add(value.attributes, "strictfp")
    return value


def _rsqrt_rn(b, x):
    """__frsqrt_rn: 1/sqrt(x) in float32, correctly rounded. The float64 value r is within
    2**-52 of the truth; of the float f nearest r and its neighbour g on r's side, the
    answer is the one on the truth's side of their midpoint m, and 1/sqrt(x) > m exactly
    when x*m*m < 1, which one fma decides (m*m is exact in float64; no midpoint is ever
    the exact answer)."""
    d = ll.DoubleType()
    xd = b.fpext(x, d)
    r = b.fdiv(const(d, 1.0), llvm_intrinsic(b, "llvm.sqrt", [xd]))
    f = b.fptrunc(r, x.type)
    fd = b.fpext(f, d)
    up = b.fcmp_ordered(">", r, fd)
    bits = b.bitcast(f, I32)
    g = b.bitcast(b.add(bits, b.select(up, const(I32, 1), const(I32, -1))), x.type)
    m = b.fmul(b.fadd(fd, b.fpext(g, d)), const(d, 0.5))
    beyond = llvm_intrinsic(b, "llvm.fma", [xd, b.fmul(m, m), const(d, -1.0)])
    take_g = b.select(up, b.fcmp_ordered("<", beyond, const(d, 0.0)),
                      b.fcmp_ordered(">", beyond, const(d, 0.0)))
    result = b.select(take_g, g, f)
    finite = b.and_(b.fcmp_ordered(">", x, const(x.type, 0.0)),
                    b.fcmp_ordered("<", x, const(x.type, float("inf"))))
    return b.select(finite, result, f)

