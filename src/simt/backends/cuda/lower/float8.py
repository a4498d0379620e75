"""FP8 conversions (lang/float8.py) with the GPU's instructions (sm_90 and up here):
``cvt.rn.satfinite.e4m3x2.f32`` / ``e5m2x2`` to FP8 and ``cvt.rn.f16x2.e4m3x2`` / ``e5m2x2``
back (then float16 to float32, exact). Older GPUs (sm_89 included: its PTX needs ISA 8.1)
get the shared software conversion, bit for bit the same. The PTX conversion to FP8 always saturates; saturate=False puts back
what an overflow gives without it (NaN for e4m3, infinity for e5m2), as CUDA's
__nv_cvt_float_to_fp8 does in software."""
from llvmlite import ir as ll

from ....compiler.lltypes import I32, const
from ....lang import float8
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cuda")
I8, I16 = ll.IntType(8), ll.IntType(16)


def _has_fp8(em):
    """sm_89 has the instructions from PTX ISA 8.1, above the 8.0 simt writes (binary.py);
    sm_90's are in PTX 7.8."""
    digits = em.target.arch.removeprefix("sm_").rstrip("af")
    return int(digits) >= 90


def _narrow(fmt):
    shared = float8.NARROW[fmt.name].lowerings[None]
    asm = ll.InlineAsm(ll.FunctionType(I16, [ll.FloatType()] * 2),
                       f"cvt.rn.satfinite.{fmt.name[7:]}x2.f32 $0, $2, $1;", "=h,f,f")

    def lower(em, e):
        if not _has_fp8(em):
            return shared(em, e)
        b = em.builder
        x = float8.round_to_float32(b, em.expr(e.args[0]))
        code = b.trunc(b.call(asm, [x, ll.Constant(ll.FloatType(), 0.0)]), I8)  # low byte: x
        if e.attrs["saturate"]:
            return code
        fabs = b.module.declare_intrinsic("llvm.fabs", [ll.FloatType()])
        bits = b.bitcast(x, I32)
        sign = b.trunc(b.and_(b.lshr(bits, const(I32, 24)), const(I32, 0x80)), I8)
        last_ok = b.bitcast(const(I32, fmt.last_ok), ll.FloatType())
        over = b.fcmp_ordered(">", b.call(fabs, [x]), last_ok)      # NaN: not over
        return b.select(over, b.or_(const(I8, fmt.overflow), sign), code)
    return lower


def _widen(fmt):
    shared = float8.WIDEN[fmt.name].lowerings[None]
    asm = ll.InlineAsm(ll.FunctionType(I32, [I16]), f"cvt.rn.f16x2.{fmt.name[7:]}x2 $0, $1;",
                       "=r,h")

    def lower(em, e):
        if not _has_fp8(em):
            return shared(em, e)
        b = em.builder
        pair = b.call(asm, [b.zext(em.expr(e.args[0]), I16)])
        half = b.bitcast(b.trunc(pair, I16), ll.HalfType())
        return b.fpext(half, ll.FloatType())
    return lower


for _fmt in (float8.E4M3, float8.E5M2):
    lowering(float8.NARROW[_fmt.name], target=TARGET)(_narrow(_fmt))
    lowering(float8.WIDEN[_fmt.name], target=TARGET)(_widen(_fmt))
