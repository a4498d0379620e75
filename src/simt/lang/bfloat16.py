"""bfloat16 as code holds it: its 16 bits (an i16, or a vector of them), widened to
float32 exactly and narrowed from float32 rounding to nearest even, as CUDA's
__float2bfloat16_rn does. Every bfloat16 operation computes in float32 and rounds once:
float32's 24 bits are at least 2 * 8 + 2, so + - * / and sqrt give the correctly rounded
bfloat16 result, as the GPU's native bfloat16 instructions do. Also the host's conversions."""
import numpy as np

from ..ir import types as T
from .registry import lazy_module

ll = lazy_module("llvmlite.ir")


def _const(t, value):
    if isinstance(t, ll.VectorType):
        return ll.Constant(t, [ll.Constant(t.element, value)] * t.count)
    return ll.Constant(t, value)


def _like(t, element):
    return ll.VectorType(element, t.count) if isinstance(t, ll.VectorType) else element


def widen(b, x):
    """bfloat16 bits (i16 or <n x i16>) -> float32, exactly."""
    i32 = _like(x.type, ll.IntType(32))
    wide = b.shl(b.zext(x, i32), _const(i32, 16))
    return b.bitcast(wide, _like(x.type, ll.FloatType()))


class _BFloat(ll.Type):
    """LLVM's ``bfloat`` (llvmlite has no class for it): on the GPU a conversion to it is
    one ``cvt.rn.bf16.f32`` (two values: ``cvt.rn.bf16x2.f32``) from sm_80 on; LLVM
    writes the integer sequence below for older GPUs."""

    def _to_string(self):
        return "bfloat"


def narrow(b, x):
    """float32 (or <n x float>) -> bfloat16 bits, rounded to nearest even; NaN stays a
    (quiet) NaN."""
    if b.module.triple.startswith("nvptx"):
        return b.bitcast(b.fptrunc(x, _like(x.type, _BFloat())),
                         _like(x.type, ll.IntType(16)))
    i32 = _like(x.type, ll.IntType(32))
    bits = b.bitcast(x, i32)
    odd = b.and_(b.lshr(bits, _const(i32, 16)), _const(i32, 1))
    rounded = b.lshr(b.add(b.add(bits, _const(i32, 0x7FFF)), odd), _const(i32, 16))
    quiet = b.or_(b.lshr(bits, _const(i32, 16)), _const(i32, 0x40))
    value = b.select(b.fcmp_unordered("uno", x, x), quiet, rounded)
    return b.trunc(value, _like(x.type, ll.IntType(16)))


def round_to_odd_f32(b, value):
    """float64 -> float32 rounded to odd, so that rounding that to float16 rounds the double
    once (24 bits >= 2 * 11 + 2). A direct fptrunc to half is a __truncdfhf2 call, which the
    CPU JIT cannot resolve (it crashed the process)."""
    f32 = ll.FloatType()
    r = b.fptrunc(value, f32)
    back = b.fpext(r, value.type)
    fabs = b.module.declare_intrinsic("llvm.fabs", [value.type])
    away = b.fcmp_ordered(">", b.call(fabs, [back]), b.call(fabs, [value]))
    bits = b.bitcast(r, ll.IntType(32))
    bits = b.select(away, b.sub(bits, ll.Constant(bits.type, 1)), bits)   # toward zero
    inexact = b.fcmp_unordered("!=", back, value)
    return b.bitcast(b.select(inexact, b.or_(bits, ll.Constant(bits.type, 1)), bits), f32)


# ------------------------------------------------------------------ host
def bits(value):
    """The bfloat16 bits (uint16 array or int) of a number or array: float32 values rounded
    to nearest even; bfloat16 values (ml_dtypes', or simt's storage struct) as they are."""
    a = np.asarray(value)
    if a.dtype.itemsize == 2 and (a.dtype.names == ("bfloat16",) or a.dtype.name == "bfloat16"):
        out = a.view(np.uint16)
    else:
        with np.errstate(all="ignore"):
            b = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
        rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
        out = np.where(np.isnan(a.astype(np.float32)), (b >> 16) | 0x40, rounded).astype(np.uint16)
    return int(out) if out.ndim == 0 else out


def to_float32(value):
    """float32 values of bfloat16 data (ml_dtypes' arrays, simt's storage struct, or
    integers holding the bits)."""
    a = np.asarray(value)
    a = a.astype(np.uint16) if a.dtype.kind in "iu" else a
    return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def to_float(b, x, t):
    """A 16-bit float value (or vector) of simt type ``t``, float16 or bfloat16, as float32."""
    if t.element.is_bfloat16 if isinstance(t, T.Vector) else t.is_bfloat16:
        return widen(b, x)
    return b.fpext(x, _like(x.type, ll.FloatType()))


def from_float(b, x, t):
    """float32 (or a vector of them) rounded to simt type ``t``, float16 or bfloat16."""
    if t.element.is_bfloat16 if isinstance(t, T.Vector) else t.is_bfloat16:
        return narrow(b, x)
    return b.fptrunc(x, _like(x.type, ll.HalfType()))
