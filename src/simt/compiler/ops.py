"""Lowering of scalar arithmetic, comparisons and conversions to LLVM IR,
with CUDA's semantics: wrapping ints, Python's // and %, saturating float to
int conversion, no traps on division by zero."""
import numpy as np
from llvmlite import ir as ll

from ..ir import types as T
from ..lang import bfloat16
from ..lang.bfloat16 import round_to_odd_f32
from .lltypes import I1, I64, scalar, const

# no "contract": which a*b+c become one fma is decided in the typed IR (compiler/contract.py),
# the same for every device; LLVM must not fuse others on its own
FP_FLAGS = ()
# fastmath=True (docs/math.md): reassociation, approximate division and functions; no
# assumptions about NaN or infinities
FAST_FLAGS = ("reassoc", "nsz", "arcp", "contract", "afn")
APPROXIMATE = ("arcp", "afn")  # what makes NVPTX choose div.approx.f32 and sqrt.approx.f32


def arith_flags(options):
    """The fast-math flags of float +, - and * under CompileOptions ``options``: fastmath's
    set or ``contract`` alone, without ``contract`` under fmad=False (each operation rounded
    on its own: NVPTX then writes ``mul.rn``/``add.rn``, which ptxas does not fuse)."""
    flags = FAST_FLAGS if options.fastmath else FP_FLAGS
    return flags if options.math().fmad else tuple(f for f in flags if f != "contract")


def div_flags(options, t):
    """The flags of a float division of type ``t``: float32 approximate (``arcp afn``:
    ``div.approx`` on GPUs) exactly when prec_div is off; other types as fastmath says."""
    flags = arith_flags(options) if options.fastmath else ()
    if t.dtype != np.float32:
        return flags
    wanted = set(flags) - set(APPROXIMATE) if options.math().prec_div else \
        set(flags) | set(APPROXIMATE)
    return tuple(f for f in FAST_FLAGS if f in wanted)


def sqrt_flags(options, t):
    """The flags of a square root of type ``t``: ``afn`` (``sqrt.approx`` on GPUs) for
    float32 when prec_sqrt is off, and for other types under fastmath."""
    if t.dtype == np.float32:
        return () if options.math().prec_sqrt else ("afn",)
    return ("afn",) if options.fastmath else ()


def is_signed(t):
    return t.kind == "i"


def cast(b, value, src, dst):
    """Convert an LLVM value from simt scalar type src to dst."""
    if src.dtype == dst.dtype:
        return value
    if src.is_bfloat16 or dst.is_bfloat16:
        return _cast_bfloat16(b, value, src, dst)
    sk, dk = src.kind, dst.kind
    dt = scalar(dst)
    if dk == "b":
        if sk == "c":
            re, im = b.extract_value(value, 0), b.extract_value(value, 1)
            zero = const(re.type, 0.0)
            return b.or_(b.fcmp_unordered("!=", re, zero), b.fcmp_unordered("!=", im, zero))
        if sk == "f":
            return b.fcmp_unordered("!=", value, const(value.type, 0.0))
        return b.icmp_unsigned("!=", value, const(value.type, 0))
    if sk == "c":
        if dk != "c":
            return cast(b, b.extract_value(value, 0), _part(src), dst)
        re = cast(b, b.extract_value(value, 0), _part(src), _part(dst))
        im = cast(b, b.extract_value(value, 1), _part(src), _part(dst))
        return make_complex(b, dt, re, im)
    if dk == "c":
        re = cast(b, value, src, _part(dst))
        return make_complex(b, dt, re, const(re.type, 0.0))
    if sk == "b":
        return b.zext(value, dt) if dk in "iu" else b.uitofp(value, dt)
    if sk in "iu" and dk in "iu":
        if src.bits > dst.bits:
            return b.trunc(value, dt)
        if src.bits < dst.bits:
            return b.sext(value, dt) if sk == "i" else b.zext(value, dt)
        return value
    if sk in "iu" and dk == "f":
        return b.sitofp(value, dt) if sk == "i" else b.uitofp(value, dt)
    if sk == "f" and dk in "iu":
        # llvmlite's declare_intrinsic does not know the saturating conversions: declare by hand
        name = f"llvm.fpto{'s' if dk == 'i' else 'u'}i.sat.i{dst.bits}.f{src.bits}"
        fn = b.module.globals.get(name) or ll.Function(b.module, ll.FunctionType(dt, [value.type]),
                                                       name)
        return b.call(fn, [value])
    if sk == "f" and dk == "f":
        if src.bits == 64 and dst.dtype == np.float16:
            return b.fptrunc(round_to_odd_f32(b, value), dt)
        return b.fpext(value, dt) if src.bits < dst.bits else b.fptrunc(value, dt)
    raise TypeError(f"cannot convert {src} to {dst}")


def _cast_bfloat16(b, value, src, dst):
    """To and from bfloat16 through float32 (exact from bfloat16); float64 and wide ints
    reach float32 rounded to odd, so that the value is rounded once."""
    if src.is_bfloat16:
        return cast(b, bfloat16.widen(b, value), T.FLOAT32, dst)
    if src.kind == "c" or (src.kind in "iu" and src.bits > 16):
        value, src = cast(b, value, src, T.FLOAT64), T.FLOAT64
    if src.bits == 64:
        return bfloat16.narrow(b, round_to_odd_f32(b, value))
    return bfloat16.narrow(b, cast(b, value, src, T.FLOAT32))


def _part(t):
    return T.FLOAT32 if t.dtype.itemsize == 8 else T.FLOAT64


def make_complex(b, t, re, im):
    value = ll.Constant(t, ll.Undefined)
    return b.insert_value(b.insert_value(value, re, 0), im, 1)


def binop(b, op, lhs, rhs, t, math_call, flags=FP_FLAGS, division=None):
    """lhs op rhs in type t. ``math_call(name, type, args)`` calls a libm-style function;
    ``flags``: LLVM fast-math flags of float arithmetic (``arith_flags``), ``division``
    those of a float ``/`` (``div_flags``; None: ``flags`` less ``contract``)."""
    if t.kind == "c":
        return _complex_binop(b, op, lhs, rhs, t, math_call)
    if t.kind == "f":
        if division is None:
            division = flags if flags != FP_FLAGS else ()
        return _float_binop(b, op, lhs, rhs, t, math_call, flags, division)
    if t.kind == "b" and op in ("and", "or", "xor", "min", "max", "add"):
        return {"and": b.and_, "or": b.or_, "xor": b.xor, "min": b.and_, "max": b.or_,
                "add": b.or_}[op](lhs, rhs)
    return _int_binop(b, op, lhs, rhs, t)


# x*y + y*x + c, as in a complex square's imaginary part: LLVM merges the two products and
# writes 2*t as t + t, which no longer contracts with + c (three dependent operations where
# gcc gives fma(t, 2, c): julia on the CPU was 1.2x its C twin for it). t + t is exact, so
# fma(t, 2, c) rounds as (t + t) + c does (overflow of t + t aside, which contraction allows).
def _doubled_plus(b, op, x, y, flags):
    """fmuladd(t, 2, y) for x = t + t (or t + the same product in the other order), x + y
    or x - y (then with -y), y + x; None for anything else."""
    if not isinstance(x.type, (ll.FloatType, ll.DoubleType)):
        return None
    for doubled, other in ((x, y), (y, x)) if op == "add" else ((x, y),):
        t = _doubled(b, doubled)
        if t is not None:
            if op == "sub":
                other = b.fneg(other)
            fn = b.module.declare_intrinsic("llvm.fmuladd", [t.type],
                                            ll.FunctionType(t.type, [t.type] * 3))
            return b.call(fn, [t, ll.Constant(t.type, 2.0), other], fastmath=flags)
    return None


def _doubled(b, v):
    """t where ``v`` is fadd(t, t') with t and t' the same value (two loads of one local, or
    products of the same two values in either order, count), else None."""
    if not (isinstance(v, ll.Instruction) and v.opname == "fadd" and "contract" in v.flags):
        return None
    t, u = v.operands
    if _same(b, t, u):
        return t
    if not all(isinstance(p, ll.Instruction) and p.opname == "fmul" for p in (t, u)):
        return None
    (a, c), (d, e) = t.operands, u.operands
    if (_same(b, a, d) and _same(b, c, e)) or (_same(b, a, e) and _same(b, c, d)):
        return t
    return None


def _same(b, p, q):
    """p and q hold the same value: one value, or loads of one local variable (an alloca)
    in the block being built with nothing between them that may write memory."""
    if p is q:
        return True
    if not (isinstance(p, ll.LoadInstr) and isinstance(q, ll.LoadInstr)):
        return False
    where = p.operands[0]
    if where is not q.operands[0] or not isinstance(where, ll.AllocaInstr):
        return False
    body = b.block.instructions
    try:
        i, j = sorted((body.index(p), body.index(q)))
    except ValueError:
        return False
    return not any(isinstance(k, _WRITES) for k in body[i + 1:j])


# what may write memory between two loads (InvokeInstr is a CallInstr)
_WRITES = (ll.StoreInstr, ll.StoreAtomicInstr, ll.CallInstr, ll.AtomicRMW, ll.CmpXchg)


def _float_binop(b, op, x, y, t, math_call, flags, division):
    if op in ("add", "sub") and "contract" in flags:
        fused = _doubled_plus(b, op, x, y, flags)
        if fused is not None:
            return fused
    if op == "add":
        return b.fadd(x, y, flags=flags)
    if op == "sub":
        return b.fsub(x, y, flags=flags)
    if op == "mul":
        return b.fmul(x, y, flags=flags)
    if op == "truediv":
        return b.fdiv(x, y, flags=division)
    if op == "pow":
        return math_call("pow", t, [x, y])
    if op in ("floordiv", "mod"):
        r = math_call("fmod", t, [x, y])
        zero = const(x.type, 0.0)
        fix = b.and_(b.fcmp_ordered("!=", r, zero),
                     b.xor(b.fcmp_ordered("<", r, zero), b.fcmp_ordered("<", y, zero)))
        if op == "mod":
            fixed = b.select(fix, b.fadd(r, y), r)
            return b.select(b.fcmp_ordered("==", fixed, zero), math_call("copysign", t, [zero, y]), fixed)
        q = b.fdiv(b.fsub(x, r), y)
        return _floor_quotient(b, x, y, b.select(fix, b.fsub(q, const(x.type, 1.0)), q), t,
                               math_call)
    if op == "min":
        return b.select(b.fcmp_ordered("<", y, x), y, x)
    if op == "max":
        return b.select(b.fcmp_ordered(">", y, x), y, x)
    raise TypeError(f"operator {op} on {t}")


def _floor_quotient(b, x, y, q, t, math_call):
    """NumPy's npy_divmod after (x - fmod(x, y)) / y: that quotient can round off a whole
    number, so floor it and round up from past .5; a zero quotient takes the sign of x / y;
    y == 0 gives x / y."""
    zero, half = const(x.type, 0.0), const(x.type, 0.5)
    floor = b.module.declare_intrinsic("llvm.floor", [x.type], ll.FunctionType(x.type, [x.type]))
    fl = b.call(floor, [q])
    up = b.fcmp_ordered(">", b.fsub(q, fl), half)
    fl = b.select(up, b.fadd(fl, const(x.type, 1.0)), fl)
    signed_zero = math_call("copysign", t, [zero, b.fdiv(x, y)])
    result = b.select(b.fcmp_unordered("!=", q, zero), fl, signed_zero)
    return b.select(b.fcmp_ordered("==", y, zero), b.fdiv(x, y), result)


def _int_binop(b, op, x, y, t):
    signed = is_signed(t)
    simple = {"add": b.add, "sub": b.sub, "mul": b.mul, "and": b.and_, "or": b.or_, "xor": b.xor}
    if op in simple:
        return simple[op](x, y)
    if op in ("floordiv", "mod"):
        return _int_divmod(b, op, x, y, signed)
    if op in ("lshift", "rshift"):
        bits = const(x.type, x.type.width)
        big = b.icmp_unsigned(">=", y, bits)
        if op == "lshift":
            return b.select(big, const(x.type, 0), b.shl(x, b.select(big, const(x.type, 0), y)))
        amount = b.select(big, const(x.type, x.type.width - 1 if signed else 0), y)
        shifted = b.ashr(x, amount) if signed else b.lshr(x, amount)
        return shifted if signed else b.select(big, const(x.type, 0), shifted)
    if op in ("min", "max"):
        cmp = b.icmp_signed if signed else b.icmp_unsigned
        return b.select(cmp("<" if op == "min" else ">", y, x), y, x)
    if op == "pow":
        return _int_pow(b, x, y, signed)
    raise TypeError(f"operator {op} on {t}")


def _int_divmod(b, op, x, y, signed):
    """Python floor division and modulo; x // 0 is -1 and x % 0 is x (no trap),
    MIN // -1 wraps."""
    ty = x.type
    zero, one, minus1 = const(ty, 0), const(ty, 1), const(ty, -1)
    by_zero = b.icmp_unsigned("==", y, zero)
    if not signed:
        safe = b.select(by_zero, one, y)
        if op == "floordiv":
            return b.select(by_zero, minus1, b.udiv(x, safe))
        return b.select(by_zero, x, b.urem(x, safe))
    by_minus1 = b.icmp_signed("==", y, minus1)
    safe = b.select(b.or_(by_zero, by_minus1), one, y)
    q, r = b.sdiv(x, safe), b.srem(x, safe)
    fix = b.and_(b.icmp_signed("!=", r, zero),
                 b.xor(b.icmp_signed("<", r, zero), b.icmp_signed("<", y, zero)))
    if op == "floordiv":
        q = b.select(fix, b.sub(q, one), q)
        q = b.select(by_minus1, b.sub(zero, x), q)
        return b.select(by_zero, minus1, q)
    r = b.select(fix, b.add(r, y), r)
    r = b.select(by_minus1, zero, r)
    return b.select(by_zero, x, r)


def _int_pow(b, base, exp, signed):
    """Exponentiation by squaring; a negative exponent gives 0 (1 for base 1, ±1 for -1)."""
    fn = _ipow_function(b.module, base.type, signed)
    return b.call(fn, [base, exp])


def _ipow_function(module, ty, signed):
    name = f"simt.ipow.{'s' if signed else 'u'}{ty.width}"
    if name in module.globals:
        return module.globals[name]
    fn = ll.Function(module, ll.FunctionType(ty, [ty, ty]), name)
    fn.linkage = "internal"
    base, exp = fn.args
    entry, loop, body, done = (fn.append_basic_block(n) for n in ("entry", "loop", "body", "done"))
    b = ll.IRBuilder(entry)
    one, minus1 = const(ty, 1), const(ty, -1)
    special = b.select(b.icmp_signed("==", base, one), one,   # the result for exp < 0
                       b.select(b.icmp_signed("==", base, minus1),
                                b.select(b.trunc(exp, I1), minus1, one), const(ty, 0)))
    neg = b.icmp_signed("<", exp, const(ty, 0)) if signed else const(I1, 0)
    b.cbranch(neg, done, loop)
    b.position_at_end(loop)
    acc = b.phi(ty)
    cur = b.phi(ty)
    e = b.phi(ty)
    acc.add_incoming(const(ty, 1), entry)
    cur.add_incoming(base, entry)
    e.add_incoming(exp, entry)
    b.cbranch(b.icmp_unsigned("==", e, const(ty, 0)), done, body)
    b.position_at_end(body)
    odd = b.trunc(e, I1)
    acc2 = b.select(odd, b.mul(acc, cur), acc)
    cur2 = b.mul(cur, cur)
    e2 = b.lshr(e, const(ty, 1))
    acc.add_incoming(acc2, body)
    cur.add_incoming(cur2, body)
    e.add_incoming(e2, body)
    b.branch(loop)
    b.position_at_end(done)
    result = b.phi(ty)
    result.add_incoming(acc, loop)
    result.add_incoming(special, entry)
    b.ret(result)
    return fn


def _complex_binop(b, op, x, y, t, math_call):
    xr, xi = b.extract_value(x, 0), b.extract_value(x, 1)
    yr, yi = b.extract_value(y, 0), b.extract_value(y, 1)
    if op in ("add", "sub"):
        f = b.fadd if op == "add" else b.fsub
        return make_complex(b, x.type, f(xr, yr), f(xi, yi))
    if op == "mul":
        return make_complex(b, x.type, b.fsub(b.fmul(xr, yr), b.fmul(xi, yi)),
                            b.fadd(b.fmul(xr, yi), b.fmul(xi, yr)))
    if op == "truediv":
        den = b.fadd(b.fmul(yr, yr), b.fmul(yi, yi))
        re = b.fdiv(b.fadd(b.fmul(xr, yr), b.fmul(xi, yi)), den)
        im = b.fdiv(b.fsub(b.fmul(xi, yr), b.fmul(xr, yi)), den)
        return make_complex(b, x.type, re, im)
    if op == "pow":
        return _complex_pow(b, x.type, xr, xi, yr, yi, _part(t), math_call)
    raise TypeError(f"operator {op} is not supported on complex numbers in kernels")


def _complex_pow(b, lltype, xr, xi, yr, yi, ft, math_call):
    """x ** y = exp(y * log(x)), log(x) = log|x| + i arg(x), in float64 (complex64's parts
    rounded once at the end); 0 ** y is 1 for y == 0 and 0 otherwise
    (sim/values.complex_pow computes the same)."""
    narrow = ft != T.FLOAT64
    if narrow:
        xr, xi, yr, yi = (b.fpext(v, ll.DoubleType()) for v in (xr, xi, yr, yi))
        ft = T.FLOAT64
    lr = math_call("log", ft, [math_call("hypot", ft, [xr, xi])])
    li = math_call("atan2", ft, [xi, xr])
    er = b.fsub(b.fmul(yr, lr), b.fmul(yi, li))
    ei = b.fadd(b.fmul(yr, li), b.fmul(yi, lr))
    mag = math_call("exp", ft, [er])
    re = b.fmul(mag, math_call("cos", ft, [ei]))
    im = b.fmul(mag, math_call("sin", ft, [ei]))
    zero, one = ll.Constant(xr.type, 0.0), ll.Constant(xr.type, 1.0)

    def is_zero(r, i):
        return b.and_(b.fcmp_ordered("==", r, zero), b.fcmp_ordered("==", i, zero))

    x0, y0 = is_zero(xr, xi), is_zero(yr, yi)
    re = b.select(x0, b.select(y0, one, zero), re)
    im = b.select(x0, zero, im)
    if narrow:
        re, im = b.fptrunc(re, ll.FloatType()), b.fptrunc(im, ll.FloatType())
    return make_complex(b, lltype, re, im)


def compare(b, op, x, y, t):
    sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
    if t.kind == "c":
        re = compare(b, op, b.extract_value(x, 0), b.extract_value(y, 0), _part(t))
        im = compare(b, op, b.extract_value(x, 1), b.extract_value(y, 1), _part(t))
        return b.and_(re, im) if op == "eq" else b.or_(re, im)
    if t.kind == "f":
        return b.fcmp_unordered(sym, x, y) if op == "ne" else b.fcmp_ordered(sym, x, y)
    if t.kind == "i":
        return b.icmp_signed(sym, x, y)
    return b.icmp_unsigned(sym, x, y)


def mixed_sign_compare(b, op, x, xt, y):
    """An int64 and a uint64 (either order; ``xt`` is x's type) compared exactly, as NumPy
    2 does: both widened to i128, where each keeps its value."""
    wide = ll.IntType(128)
    x, y = (b.sext(x, wide), b.zext(y, wide)) if xt.kind == "i" else \
        (b.zext(x, wide), b.sext(y, wide))
    sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
    return b.icmp_signed(sym, x, y)


def unary(b, op, x, t):
    if op == "not":
        return b.xor(x, const(I1, 1))
    if op == "invert":
        return b.xor(x, const(x.type, -1 if x.type.width > 1 else 1))
    if t.kind == "c":
        return make_complex(b, x.type, b.fneg(b.extract_value(x, 0)), b.fneg(b.extract_value(x, 1)))
    if t.kind == "f":
        return b.fneg(x)
    if t.kind == "b":
        return b.sub(const(I64, 0), b.zext(x, I64))
    return b.sub(const(x.type, 0), x)
