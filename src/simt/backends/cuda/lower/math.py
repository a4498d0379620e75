"""The math intrinsics the GPU has instructions of its own for: rounding-mode arithmetic and
conversions (libdevice's ``__nv_fadd_rz`` ...), the integer intrinsics with a libdevice
function (one PTX instruction each: prmt, sad, hadd) or an NVVM intrinsic LLVM would not
pick by itself (dp4a, dp2a), fns.b32, and the half fma (fma.rn.f16, fma.rn.f16x2)."""
from llvmlite import ir as ll

from ....compiler.lltypes import I1, I32, const
from ....compiler.mathlower import register_rounding
from ....lang import half
from ....lang.intrinsics_int import BY_NAME as INT
from ....lang.registry import declare_target, lowering
from ..mathcalls import call, convert, rounded

TARGET = declare_target("cuda")

LIBDEVICE_INTEGER = {"byte_perm": "__nv_byte_perm", "sad": "__nv_sad", "usad": "__nv_usad",
                     "hadd": "__nv_hadd", "rhadd": "__nv_rhadd", "uhadd": "__nv_uhadd",
                     "urhadd": "__nv_urhadd"}

register_rounding(rounded, convert, TARGET)

for _name, _fname in LIBDEVICE_INTEGER.items():
    lowering(INT[_name], target=TARGET)(
        lambda em, e, fname=_fname: call(em, fname, [em.expr(a) for a in e.args], I32))


@lowering(INT["dp4a"], INT["dp2a_lo"], INT["dp2a_hi"], target=TARGET)
def _dot(em, e):
    args = [em.expr(a) for a in e.args]
    sign = "u" if e.type.kind == "u" else "s"
    if e.entry is INT["dp4a"]:
        return call(em, f"llvm.nvvm.idp4a.{sign}.{sign}", args, I32)
    a, b, c = args
    hi = const(I1, e.entry is INT["dp2a_hi"])
    return call(em, f"llvm.nvvm.idp2a.{sign}.{sign}", [a, b, hi, c], I32)


@lowering(INT["fns"], target=TARGET)
def _fns(em, e):
    """One instruction (libdevice has no __nv_fns)."""
    asm = ll.InlineAsm(ll.FunctionType(I32, [I32] * 3), "fns.b32 $0, $1, $2, $3;", "=r,r,r,r")
    return em.builder.call(asm, [em.expr(a) for a in e.args])


@lowering(half.ENTRIES["hfma"], half.ENTRIES["hfma2"], target=TARGET)
def _half_fma(em, e):
    """float16 (and half2) fma is an instruction here; bfloat16 computes in float32."""
    return half.fma(em, e, native=half.is_float16(e.type))
