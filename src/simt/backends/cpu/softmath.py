"""The CUDA math functions the C library (libm) lacks, as LLVM IR for the CPU device:
sinpi, cospi, rsqrt, rcbrt, rhypot, norm3d/4d and their reciprocals, erfinv, erfcinv,
erfcx, normcdf, normcdfinv, cyl_bessel_i0/i1.

Each is written in float64 with Python operators on ``Num`` values (one LLVM instruction
each, branch-free: both sides of a choice are computed and one selected), calling libm for
what it has (sin, erfc, exp ...). The float32 versions compute in float64 and round once.
docs/math.md gives the method of each and the ULP bounds tests/test_math_ulp.py checks."""
import math
from fractions import Fraction

from llvmlite import ir as ll

from ...compiler.lltypes import I32, const, function

D = ll.DoubleType()
PI_HI = math.pi
PI_LO = float(Fraction("3.14159265358979323846264338327950288419716939937510582097494459")
              - Fraction(math.pi))
RSQRT2_HI = 1 / math.sqrt(2)
RSQRT2_LO = float(Fraction("0.70710678118654752440084436210484903928483593768847403658833987")
                  - Fraction(RSQRT2_HI))
SQRT_PI_2 = math.sqrt(math.pi) / 2


class Num:
    """A float64 LLVM value with arithmetic operators; comparisons give i1 values."""

    def __init__(self, m, value):
        self.m, self.v = m, value

    def _lift(self, other):
        return other.v if isinstance(other, Num) else const(D, float(other))

    def _op(self, name, other, swap=False):
        a, b = self.v, self._lift(other)
        if swap:
            a, b = b, a
        return Num(self.m, getattr(self.m.b, name)(a, b))

    def __add__(self, o): return self._op("fadd", o)
    def __radd__(self, o): return self._op("fadd", o, True)
    def __sub__(self, o): return self._op("fsub", o)
    def __rsub__(self, o): return self._op("fsub", o, True)
    def __mul__(self, o): return self._op("fmul", o)
    def __rmul__(self, o): return self._op("fmul", o, True)
    def __truediv__(self, o): return self._op("fdiv", o)
    def __rtruediv__(self, o): return self._op("fdiv", o, True)
    def __neg__(self): return Num(self.m, self.m.b.fneg(self.v))

    def _cmp(self, op, o):
        return self.m.b.fcmp_ordered(op, self.v, self._lift(o))

    def __lt__(self, o): return self._cmp("<", o)
    def __le__(self, o): return self._cmp("<=", o)
    def __gt__(self, o): return self._cmp(">", o)
    def __ge__(self, o): return self._cmp(">=", o)
    def eq(self, o): return self._cmp("==", o)


class Math:
    """Builds formulas in one builder: constants, libm and LLVM intrinsic calls, selects."""

    def __init__(self, b):
        self.b = b

    def num(self, value):
        return Num(self, value if isinstance(value, ll.Value) else const(D, float(value)))

    def libm(self, name, *args, ret=D):
        values = [a.v if isinstance(a, Num) else a for a in args]
        fn = function(self.b.module, name, ll.FunctionType(ret, [v.type for v in values]))
        result = self.b.call(fn, values)
        return Num(self, result) if ret == D else result

    def intrinsic(self, name, *args):
        fn = self.b.module.declare_intrinsic("llvm." + name, [D],
                                             ll.FunctionType(D, [D] * len(args)))
        return Num(self, self.b.call(fn, [a.v for a in args]))

    def fma(self, a, b, c):
        return self.intrinsic("fma", a, self.num(b) if not isinstance(b, Num) else b,
                              c if isinstance(c, Num) else self.num(c))

    def select(self, cond, a, b):
        a, b = (x if isinstance(x, Num) else self.num(x) for x in (a, b))
        return Num(self, self.b.select(cond, a.v, b.v))

    def either(self, *conds):
        out = conds[0]
        for c in conds[1:]:
            out = self.b.or_(out, c)
        return out

    def isnan(self, x):
        return self.b.fcmp_unordered("uno", x.v, x.v)

    def poly(self, x, coeffs):
        """sum(c * x**k): Horner, highest degree first."""
        s = self.num(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            s = self.fma(s, x, self.num(c))
        return s

    def ldexp(self, x, n):
        return self.libm("ldexp", x, n)


# ---------------------------------------------------------------- sinpi, cospi
def sincospi(m, x):
    """(sin(pi x), cos(pi x)): r = x - 2*rint(x/2) in [-1, 1] and t = r - q/2 in
    [-1/4, 1/4] are exact; pi*t is a double-double, sin and cos of it from libm plus the
    first-order term of the low part; the quadrant q picks and signs them."""
    rint = lambda v: m.intrinsic("rint", v)       # noqa: E731
    r = x - 2.0 * rint(x * 0.5)
    q = rint(r * 2.0)
    t = r - q * 0.5
    ph = t * PI_HI
    pl = m.fma(t, PI_HI, -ph) + t * PI_LO
    sh, ch = m.libm("sin", ph), m.libm("cos", ph)
    s, c = sh + ch * pl, ch - sh * pl
    k = m.b.and_(m.b.fptosi(q.v, I32), const(I32, 3))
    pick = lambda i: m.b.icmp_unsigned("==", k, const(I32, i))      # noqa: E731
    sin = m.select(pick(0), s, m.select(pick(1), c, m.select(pick(2), -s, -c)))
    cos = m.select(pick(0), c, m.select(pick(1), -s, m.select(pick(2), -c, s)))
    zero = sin.eq(0.0)
    sin = m.select(zero, m.intrinsic("copysign", m.num(0.0), x), sin)
    return sin, cos + 0.0                       # cospi(n + 1/2) is +0


LN10_HI = math.log(10)
LN10_LO = float(Fraction("2.30258509299404568401799145468436420760110148862877297603332790")
                - Fraction(LN10_HI))


def exp10(m, x):
    """exp(x * ln 10) with x * ln 10 as a double-double: exp(hi) + exp(hi) * lo (glibc's
    exp10 is up to 2 ulps off)."""
    hi = x * LN10_HI
    lo = m.fma(x, LN10_HI, -hi) + x * LN10_LO
    e = m.libm("exp", hi)
    value = m.fma(e, lo, e)
    return m.select(m.b.or_(m.isnan(lo), e.eq(math.inf)), e, value)


# ---------------------------------------------------------------- roots and norms
def rsqrt(m, x):
    """1/sqrt(x), then one Newton step with x*r*r - 1 from fma (r*r as a double-double)."""
    r = 1.0 / m.intrinsic("sqrt", x)
    r2 = r * r
    r2l = m.fma(r, r, -r2)
    e = m.fma(x, r2, -1.0) + x * r2l
    refined = r - r * e * 0.5
    return m.select(m.b.and_(x > 1e-300, x < 1e300), refined, r)


def _cube_root(m, x, reciprocal):
    """cbrt(x) or 1/cbrt(x): x scaled by 2**(-3k) into [1/8, 8] (exact), libm's cbrt (up
    to 4 ulps in glibc) or its reciprocal, one Newton step with the cube as a double-double
    (c**3 - x, or x*r**3 - 1), scaled back by 2**k or 2**-k. 0, inf and NaN go to libm."""
    k = m.b.sdiv(m.libm("ilogb", x, ret=I32), const(I32, 3))
    xs = m.ldexp(x, m.b.mul(k, const(I32, -3)))
    c = m.libm("cbrt", xs)
    if reciprocal:
        c = 1.0 / c
    c2 = c * c
    c2l = m.fma(c, c, -c2)
    c3 = c2 * c
    c3l = m.fma(c2, c, -c3) + c2l * c
    if reciprocal:
        e = m.fma(xs, c3, -1.0) + xs * c3l
        refined = m.ldexp(c - c * e * (1.0 / 3.0), m.b.neg(k))
    else:
        refined = m.ldexp(c - ((c3 - xs) + c3l) / (3.0 * c2), k)
    plain = m.libm("cbrt", x)
    plain = 1.0 / plain if reciprocal else plain
    ax = m.intrinsic("fabs", x)
    return m.select(m.b.and_(ax > 0.0, ax < math.inf), refined, plain)


def _norm(m, args, reciprocal):
    """sqrt(sum a*a) or its reciprocal: scaled by a power of two (exact), the sum of the
    squares as a double-double, the root corrected by one Newton step. An infinite
    argument gives inf (reciprocal 0) even beside a NaN, as hypot does."""
    fabs = [m.intrinsic("fabs", a) for a in args]
    biggest = fabs[0]
    for a in fabs[1:]:
        biggest = m.intrinsic("maxnum", biggest, a)
    e = m.libm("ilogb", biggest, ret=I32)
    neg_e = m.b.neg(e)
    hi, lo = m.num(0.0), m.num(0.0)
    for a in args:
        s = m.ldexp(a, neg_e)
        p = s * s
        pe = m.fma(s, s, -p)
        total = hi + p
        bb = total - hi
        lo = lo + ((hi - (total - bb)) + (p - bb)) + pe
        hi = total
    h = hi + lo
    lo = lo - (h - hi)
    if reciprocal:
        y = 1.0 / m.intrinsic("sqrt", h)
        y2 = y * y
        y2l = m.fma(y, y, -y2)
        err = m.fma(h, y2, -1.0) + h * y2l + lo * y2
        value = m.ldexp(y - y * err * 0.5, neg_e)
        at_inf, at_zero = 0.0, math.inf
    else:
        r = m.intrinsic("sqrt", h)
        value = m.ldexp(r + (m.fma(-r, r, h) + lo) / (2.0 * r), e)
        at_inf, at_zero = math.inf, 0.0
    nan = m.either(*[m.isnan(a) for a in args])
    value = m.select(nan, math.nan, m.select(biggest.eq(0.0), at_zero, value))
    return m.select(biggest.eq(math.inf), at_inf, value)


# ---------------------------------------------------------------- error function family
def _halley(m, x, residual, steps):
    """Halley steps for erf(x) = y or erfc(x) = z: delta = residual(x) * sqrt(pi)/2 *
    exp(x*x) (as two halves, so no overflow), x -= delta / (1 + x*delta)."""
    for _ in range(steps):
        half = m.libm("exp", x * x * 0.5)
        delta = residual(x) * half * SQRT_PI_2 * half
        x = x - delta / (1.0 + x * delta)
    return x


def _erfinv_small(m, y):
    """erfinv for |y| <= 1/2: from its series' first terms, Halley on erf."""
    x0 = y * SQRT_PI_2 * (1.0 + y * y * (math.pi / 12))
    return _halley(m, x0, lambda x: m.libm("erf", x) - y, 4)


def _erfcinv_small(m, z):
    """erfcinv for 0 < z < 1/2: from the asymptotic erfc(x) ~ exp(-x*x)/(x sqrt(pi)),
    Newton on log(erfcx(x)) - x*x = log(z), whose derivative is -2/(sqrt(pi) erfcx(x)):
    a relative residual, exact even where erfc(x) = z is subnormal."""
    log_z = m.libm("log", z)
    t = -log_z
    x = m.intrinsic("sqrt", t - 0.5 * m.libm("log", t * math.pi))
    x = m.intrinsic("maxnum", x, m.num(0.4))
    for _ in range(7):
        scaled = erfcx(m, x)
        xx = x * x
        h = (m.libm("log", scaled) - log_z) - (xx + m.fma(x, x, -xx))
        x = x + h * scaled * SQRT_PI_2
    return x


def erfinv(m, y):
    ay = m.intrinsic("fabs", y)
    big = m.intrinsic("copysign", _erfcinv_small(m, 1.0 - ay), y)
    value = m.select(ay <= 0.5, _erfinv_small(m, y), big)
    value = m.select(ay.eq(1.0), m.intrinsic("copysign", m.num(math.inf), y), value)
    return m.select(ay > 1.0, math.nan, value)


def erfcinv(m, z):
    middle = _erfinv_small(m, 1.0 - z)
    low = _erfcinv_small(m, z)
    high = -_erfcinv_small(m, 2.0 - z)
    value = m.select(z < 0.5, low, m.select(z > 1.5, high, middle))
    value = m.select(z.eq(0.0), math.inf, m.select(z.eq(2.0), -math.inf, value))
    return m.select(m.b.or_(z < 0.0, z > 2.0), math.nan, value)


def normcdfinv(m, p):
    return erfcinv(m, p * 2.0) * -math.sqrt(2)


def normcdf(m, x):
    """erfc(-x/sqrt(2))/2 with -x/sqrt(2) as a double-double: erfc(th + tl) = erfc(th)
    - tl * 2/sqrt(pi) * exp(-th*th) to first order (the rounding of x/sqrt(2) alone would
    cost hundreds of ulps in the far tail)."""
    th = x * -RSQRT2_HI
    tl = m.fma(-x, RSQRT2_HI, -th) + x * -RSQRT2_LO
    plain = m.libm("erfc", th)
    value = plain - tl * (1.0 / SQRT_PI_2) * m.libm("exp", -(th * th))
    return m.select(m.isnan(tl), plain, value) * 0.5


ERFCX_TERMS = [float(Fraction((-1) ** k * math.prod(range(1, 2 * k, 2)), 2 ** k))
               for k in range(16)]


def erfcx(m, x):
    """exp(x*x) * erfc(x) with x*x as a double-double below 12; above, the asymptotic
    series 1/(x sqrt(pi)) * sum (-1)**k (2k-1)!! / (2x*x)**k (16 terms)."""
    h = x * x
    near = m.libm("exp", h) * (1.0 + m.fma(x, x, -h)) * m.libm("erfc", x)
    u = 1.0 / h
    far = m.poly(u, ERFCX_TERMS) / (x * math.sqrt(math.pi))
    return m.select(x < 12.0, m.select(x < -27.0, math.inf, near), far)


# ---------------------------------------------------------------- modified Bessel
SERIES = 48
I0_SERIES = [1 / math.factorial(k) ** 2 for k in range(SERIES)]
I1_SERIES = [1 / (math.factorial(k) * math.factorial(k + 1)) for k in range(SERIES)]


def _asymptotic(nu, terms=30):
    """Coefficients of u**k in I_nu(x) * sqrt(2 pi x) / exp(x), u = 1/x."""
    out, c = [], Fraction(1)
    for k in range(terms):
        out.append(float(c))
        c = c * -(4 * nu * nu - (2 * k + 1) ** 2) / ((k + 1) * 8)
    return out


I0_ASYMPTOTIC, I1_ASYMPTOTIC = _asymptotic(0), _asymptotic(1)


def _bessel_i(m, x, series, asymptotic, odd):
    """Below 25: the power series in q = x*x/4 (Horner, with q as a double-double so its
    rounding does not grow with the power); above: the asymptotic series, times
    exp(x/2)**2 / sqrt(2 pi x) in two halves so it overflows only where I does."""
    ax = m.intrinsic("fabs", x)
    h = ax * ax
    qh, ql = h * 0.25, m.fma(ax, ax, -h) * 0.25
    s = m.num(series[-1])
    for c in reversed(series[:-1]):
        s = m.fma(s, qh, m.fma(s, ql, m.num(c)))
    small = s * (ax * 0.5) if odd else s
    half = m.libm("exp", ax * 0.5)
    large = m.poly(1.0 / ax, asymptotic) * (half / m.intrinsic("sqrt", ax * (2 * math.pi))) * half
    value = m.select(ax < 25.0, small, m.select(ax.eq(math.inf), math.inf, large))
    return m.intrinsic("copysign", value, x) if odd else value


def cyl_bessel_i0(m, x):
    return _bessel_i(m, x, I0_SERIES, I0_ASYMPTOTIC, False)


def cyl_bessel_i1(m, x):
    return _bessel_i(m, x, I1_SERIES, I1_ASYMPTOTIC, True)


# ---------------------------------------------------------------- the table
FUNCTIONS = {
    "sinpi": lambda m, x: sincospi(m, x)[0], "cospi": lambda m, x: sincospi(m, x)[1],
    "sincospi": sincospi, "rsqrt": rsqrt, "exp10": exp10,
    "cbrt": lambda m, x: _cube_root(m, x, False), "rcbrt": lambda m, x: _cube_root(m, x, True),
    "rhypot": lambda m, x, y: _norm(m, [x, y], True),
    "norm3d": lambda m, *a: _norm(m, list(a), False),
    "rnorm3d": lambda m, *a: _norm(m, list(a), True),
    "norm4d": lambda m, *a: _norm(m, list(a), False),
    "rnorm4d": lambda m, *a: _norm(m, list(a), True),
    "erfinv": erfinv, "erfcinv": erfcinv, "erfcx": erfcx, "normcdf": normcdf,
    "normcdfinv": normcdfinv, "cyl_bessel_i0": cyl_bessel_i0, "cyl_bessel_i1": cyl_bessel_i1,
}


def _rsqrt_float32(b, x):
    """rsqrtf as C's 1.f / sqrtf(x): two correctly rounded float32 operations, under
    1.5 ulps (CUDA's bound is 2), vectorized as wide as C's (float64 halves the lanes:
    the n-body kernel ran at half the C twin's speed)."""
    sqrt = b.module.declare_intrinsic("llvm.sqrt", [x.type])
    return b.fdiv(ll.Constant(x.type, 1.0), b.call(sqrt, [x]))


NARROW = {"rsqrt": _rsqrt_float32}      # float32 forms that need no float64


def emit(b, name, args):
    """Function ``name`` of float32 or float64 ``args``: its value, or a list of values
    (sincospi); float32 computes in float64 and rounds once, except the NARROW forms."""
    m = Math(b)
    narrow = args[0].type != D
    if narrow and name in NARROW:
        return NARROW[name](b, *args)
    values = [m.num(b.fpext(a, D) if narrow else a) for a in args]
    result = FUNCTIONS[name](m, *values)
    results = list(result) if isinstance(result, tuple) else [result]
    out = [b.fptrunc(r.v, args[0].type) if narrow else r.v for r in results]
    return out if isinstance(result, tuple) else out[0]
