"""cuda_fp8 in kernels: ``simt.float8_e4m3`` and ``simt.float8_e5m2`` (CUDA's __nv_fp8_e4m3,
__nv_fp8_e5m2; ml_dtypes' float8_e4m3fn and float8_e5m2 on the host).

FP8 is a storage type: code holds a value as its 8 bits, arithmetic on it computes in
float32 (ir/types.py promotes it as float32, as CUDA's types convert to float), and a value
stored into an FP8 array element is rounded to nearest even and saturated to the largest
finite value, as CUDA's constructors do (__NV_SATFINITE). ``simt.float8_e4m3(x,
saturate=False)`` converts without saturating: e4m3, which has no infinities, then gives NaN
for a value past 464, and e5m2 gives infinity from 61440 up. NaN stays NaN (0x7f).

The conversions are entries, one lowering per device: the GPU's cvt instructions on sm_90
and up (backends/cuda/lower/float8.py), the exact software conversion here in LLVM IR for
the CPU (and older GPUs), and in Python for the sim device and the host, bit for bit the
same. float64 values are rounded to float32 to odd first, so that they are rounded once.
"""
import numpy as np

from ..ir import types as T
from .bfloat16 import round_to_odd_f32
from .registry import Intrinsic, lazy_module

ll = lazy_module("llvmlite.ir")


class Format:
    """One FP8 format: ``mbits`` mantissa bits, exponent ``bias``, the code of its largest
    finite value, what an overflow gives without saturation, and the float32 bits of the
    largest magnitude that does not overflow when rounded."""

    def __init__(self, name, host_name, mbits, bias, maxnorm, overflow, last_ok):
        self.name, self.host_name = name, host_name
        self.mbits, self.bias, self.maxnorm, self.overflow = mbits, bias, maxnorm, overflow
        self.last_ok = last_ok
        self.min_normal = 2.0 ** (1 - bias)
        self.type = T.Scalar(T.F8E4M3_STORAGE if mbits == 3 else T.F8E5M2_STORAGE)
        self.table = _decode_table(mbits, bias)


def _decode_table(mbits, bias):
    """The float32 value of each of the 256 codes."""
    codes = np.arange(256)
    exp, man = (codes & 0x7F) >> mbits, codes & ((1 << mbits) - 1)
    top = (1 << (7 - mbits)) - 1
    value = np.where(exp == 0, man * 2.0 ** (1 - bias - mbits),
                     (1 + man / (1 << mbits)) * 2.0 ** (exp - bias))
    if mbits == 3:                                        # e4m3fn: no infinities, one NaN
        value = np.where((codes & 0x7F) == 0x7F, np.nan, value)
    else:
        value = np.where(exp == top, np.where(man == 0, np.inf, np.nan), value)
    return np.where(codes & 0x80, -value, value).astype(np.float32)


NAN_CODE = 0x7F
# 464 rounds to 448 (to even), 61440 to infinity: the largest float32 below each overflows not
E4M3 = Format("float8_e4m3", "float8_e4m3fn", 3, 7, 0x7E, 0x7F, 0x43E80000)
E5M2 = Format("float8_e5m2", "float8_e5m2", 2, 15, 0x7B, 0x7C, 0x476FFFFF)
FORMATS = {f.name: f for f in (E4M3, E5M2)}


def format_of(t):
    return FORMATS[t.float8]


# ------------------------------------------------------------------ host
def __getattr__(name):
    """``simt.float8_e4m3`` / ``simt.float8_e5m2``: ml_dtypes' types, imported at first use."""
    if name not in FORMATS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        import ml_dtypes
    except ImportError:
        raise ImportError(f"simt.{name} is ml_dtypes' {FORMATS[name].host_name}: install it "
                          "with pip install ml_dtypes") from None
    return getattr(ml_dtypes, FORMATS[name].host_name)


def encode(x, fmt, saturate=True):
    """The FP8 codes (uint8) of float values, as the GPU converts them: rounded to nearest
    even; past the largest finite value the largest finite value (``saturate``) or NaN
    (e4m3) / infinity (e5m2); NaN gives 0x7f. Exact for float32 and float64 inputs (CUDA's
    __nv_cvt_double_to_fp8 with NaN made canonical, as __nv_cvt_float_to_fp8 does)."""
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    with np.errstate(all="ignore"):
        x = np.asarray(x, np.float64)
    bits = x.view(np.uint64).astype(np.int64) if x.ndim else \
        np.array([x]).view(np.uint64).astype(np.int64)[0]
    sign = ((bits >> 63) & 1) << 7
    absx = bits & 0x7FFFFFFFFFFFFFFF
    m = fmt.mbits
    half = 1 << (52 - m - 1)                           # half a unit of the FP8 mantissa
    exp = ((bits >> 52) & 0x7FF) - 1023 + fmt.bias
    man = (bits >> (52 - m)) & ((1 << m) - 1)
    rest = bits & (2 * half - 1)
    normal = (exp << m | man) + ((rest > half) | ((rest == half) & (man & 1) == 1))
    shift = np.clip(1 - exp, 1, m + 2)         # more: below half the smallest subnormal
    sub = (man | 1 << m) >> shift
    rest = (bits & ((1 << 52) - 1) | (1 << 52)) & ((half << (shift + 1)) - 1)
    sub = sub + ((rest > half << shift) | ((rest == half << shift) & (sub & 1) == 1))
    tiny = absx < np.float64(fmt.min_normal).view(np.uint64).astype(np.int64)
    code = np.where(tiny, sub, normal)
    smallest = np.float64(2.0 ** (-fmt.bias - m)).view(np.uint64).astype(np.int64)
    code = np.where(absx <= smallest, 0, code)           # rounds to zero (a tie: to even)
    last_ok = np.float64(np.uint32(fmt.last_ok).view(np.float32)).view(np.uint64)
    code = np.where(absx > np.int64(last_ok), fmt.maxnorm if saturate else fmt.overflow, code)
    code = np.where(absx > 0x7FF0000000000000, NAN_CODE, code | sign)
    return code.astype(np.uint8)


def decode(codes, fmt):
    """float32 values of FP8 codes (uint8 data, or ml_dtypes' arrays), exactly."""
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    a = np.asarray(codes)
    return fmt.table[a.view(np.uint8) if a.dtype.itemsize == 1 and a.dtype.kind != "u"
                     else a.astype(np.uint8)]


def encode_value(x, fmt, saturate):
    """One Python float's code, as ``encode`` (the sim device's conversion)."""
    return int(encode(float(x), fmt, saturate))


def decode_value(code, fmt):
    """One code's value as a Python float (the sim device's conversion)."""
    return float(FORMATS[fmt].table[code & 0xFF])


# ------------------------------------------------------------------ typing
def _build_narrow(fmt):
    def build(fc, args, kwargs, loc):
        unknown = set(kwargs) - {"saturate"}
        if unknown:
            fc.fail(loc, f"simt.{fmt.name}() takes saturate=, not {', '.join(sorted(unknown))}")
        saturate = fc.static(kwargs["saturate"], "saturate", loc) if "saturate" in kwargs \
            else True
        if not isinstance(saturate, bool):
            fc.fail(loc, f"saturate must be True or False, got {saturate!r}")
        value = fc.expr(fc.one_arg(args, f"simt.{fmt.name}()", loc), loc)
        return narrow(fc, value, fmt, loc, saturate)
    return build


def narrow(fc, value, fmt, loc, saturate=True):
    """value (a real scalar) as FP8 format ``fmt``."""
    t = value.type
    if not isinstance(t, T.Scalar) or t.kind not in "biuf":
        fc.fail(loc, f"cannot convert {t} to {fmt.name}",
                "take .real first" if isinstance(t, T.Scalar) and t.kind == "c" else None)
    if t.float8 == fmt.name:
        return value
    wide = T.FLOAT64 if t.kind == "f" and t.bits == 64 else T.FLOAT32
    return NARROW[fmt.name].node(fmt.type, loc, [fc.cast(value, wide, loc)],
                                 {"saturate": saturate})


def convert(fc, value, t, loc):
    """The language's implicit conversions to and from FP8 (compiler/calls.py's cast):
    from FP8 exactly through float32, to FP8 saturating."""
    if value.type.float8:
        value = WIDEN[value.type.float8].node(T.FLOAT32, loc, [value])
        return value if t == T.FLOAT32 else fc.cast(value, t, loc)
    return narrow(fc, value, format_of(t), loc)


_NARROW_DOC = """simt.{name}(x, saturate=True): x (a number) as {cuda}, rounded to nearest even.
saturate=True, as CUDA's constructor (__NV_SATFINITE): a value past the largest finite one
({max:g}), infinities included, gives that value with x's sign; saturate=False
(__NV_NOSAT): {nosat}. NaN gives NaN. Arithmetic on the result computes in float32; storing
a float into an array of {name} converts as saturate=True. The host type is ml_dtypes'
{host}."""

NARROW = {f.name: Intrinsic(f"{f.name}", _NARROW_DOC.format(
    name=f.name, cuda="__nv_fp8_" + f.name.split("_")[1], max=float(f.table[f.maxnorm]),
    host=f.host_name, nosat="NaN (e4m3 has no infinities)" if f is E4M3 else "infinity"),
    _build_narrow(f)) for f in (E4M3, E5M2)}
WIDEN = {f.name: Intrinsic(f"{f.name}.to_float32", f"an {f.name} value as float32, exactly",
                           public=False) for f in (E4M3, E5M2)}
ENTRIES = [*NARROW.values(), *WIDEN.values()]


# ------------------------------------------------------------------ LLVM IR (cpu; GPUs before sm_90)
def _i32(value):
    return ll.Constant(ll.IntType(32), value)


def round_to_float32(b, value):
    """A float32 or float64 operand as float32, the double rounded to odd (then rounding
    it to FP8 rounds once: 24 bits >= 2 * 4 + 2)."""
    if value.type == ll.DoubleType():
        return round_to_odd_f32(b, value)
    return value


def encode_ir(b, x, fmt, saturate):
    """float32 x -> FP8 code (i8) in integer arithmetic, as ``encode``."""
    bits = b.bitcast(x, ll.IntType(32))
    sign = b.and_(b.lshr(bits, _i32(24)), _i32(0x80))
    absb = b.and_(bits, _i32(0x7FFFFFFF))
    shift = 23 - fmt.mbits
    odd = b.and_(b.lshr(absb, _i32(shift)), _i32(1))
    rounded = b.add(b.add(absb, _i32((1 << (shift - 1)) - 1)), odd)
    normal = b.sub(b.lshr(rounded, _i32(shift)), _i32((127 - fmt.bias) << fmt.mbits))
    # below the smallest normal: adding 2**e whose float32 ulp is the smallest FP8
    # subnormal rounds |x| to a multiple of it, to nearest even
    magic = ll.Constant(ll.FloatType(), 2.0 ** (24 - fmt.bias - fmt.mbits))
    fabs = b.module.declare_intrinsic("llvm.fabs", [ll.FloatType()])
    summed = b.bitcast(b.fadd(b.call(fabs, [x]), magic), ll.IntType(32))
    sub = b.sub(summed, b.bitcast(magic, ll.IntType(32)))
    min_normal = int(np.float32(fmt.min_normal).view(np.uint32))
    code = b.select(b.icmp_unsigned("<", absb, _i32(min_normal)), sub, normal)
    code = b.select(b.icmp_unsigned(">", absb, _i32(fmt.last_ok)),
                    _i32(fmt.maxnorm if saturate else fmt.overflow), code)
    code = b.select(b.icmp_unsigned(">", absb, _i32(0x7F800000)), _i32(NAN_CODE),
                    b.or_(code, sign))
    return b.trunc(code, ll.IntType(8))


def decode_ir(b, code, fmt):
    """FP8 code (i8) -> float32, exactly, through float16: e5m2 is float16's upper byte;
    e4m3's magnitude bits as float16's are its value / 256 (exponent biases 7 and 15)."""
    wide = b.zext(code, ll.IntType(16))
    if fmt is E5M2:
        return b.fpext(b.bitcast(b.shl(wide, ll.Constant(wide.type, 8)), ll.HalfType()),
                       ll.FloatType())
    mag = b.and_(wide, ll.Constant(wide.type, 0x7F))
    half = b.bitcast(b.shl(mag, ll.Constant(wide.type, 7)), ll.HalfType())
    value = b.fmul(b.fpext(half, ll.FloatType()), ll.Constant(ll.FloatType(), 256.0))
    bits = b.bitcast(value, ll.IntType(32))
    signed = b.or_(bits, b.shl(b.zext(b.and_(wide, ll.Constant(wide.type, 0x80)), bits.type),
                               _i32(24)))
    nan = b.icmp_unsigned("==", mag, ll.Constant(wide.type, 0x7F))
    return b.select(nan, ll.Constant(ll.FloatType(), float("nan")),
                    b.bitcast(signed, ll.FloatType()))


def _lower_narrow(fmt):
    def lower(em, e):
        x = round_to_float32(em.builder, em.expr(e.args[0]))
        return encode_ir(em.builder, x, fmt, e.attrs["saturate"])
    return lower


for _fmt in (E4M3, E5M2):
    NARROW[_fmt.name].lowering()(_lower_narrow(_fmt))
    WIDEN[_fmt.name].lowering()(lambda em, e, fmt=_fmt: decode_ir(em.builder, em.expr(e.args[0]),
                                                                   fmt))
