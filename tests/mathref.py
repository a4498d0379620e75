"""High-precision references for tests/test_math_ulp.py, with nothing beyond the standard
library: Python's ``decimal`` (exp, ln, sqrt and powers correctly rounded at any
precision) plus series written here (sin, cos, erf, erfc, Bessel functions). Each returns
the float64 nearest the exact value (float(Decimal) rounds correctly)."""
import math
from decimal import Decimal, DecimalException, localcontext

PREC = 50


def _d(x):
    return Decimal(float(x))


_PI = {}


def _pi():
    """pi by Machin's formula at the current precision (made once per precision)."""
    from decimal import getcontext
    prec = getcontext().prec
    if prec not in _PI:
        _PI[prec] = _machin()
    return +_PI[prec]


def _machin():
    from decimal import getcontext
    tiny = Decimal(10) ** (-getcontext().prec - 5)

    def atan_inv(n):
        total, term, k, sign = Decimal(0), Decimal(1) / n, 1, 1
        n2 = n * n
        while term > tiny:
            total += sign * term / k
            term /= n2
            k += 2
            sign = -sign
        return total
    return 4 * (4 * atan_inv(5) - atan_inv(239))


def _exact(fn, extra=0):
    """Decorate a function of Decimals: it runs at PREC + extra digits, gets float
    arguments as exact Decimals and returns the float nearest its result."""
    def wrapped(*args):
        if any(not math.isfinite(a) for a in args):
            return None
        with localcontext() as ctx:
            ctx.prec = PREC + extra
            try:
                value = fn(*[_d(a) for a in args])
            except (DecimalException, OverflowError, ZeroDivisionError):
                return None
        return None if value is None else float(value)
    wrapped.__name__ = fn.__name__
    return wrapped


def _sin_cos(x):
    """(sin x, cos x) by Taylor series after reducing x modulo pi/2 (pi computed with
    enough digits for |x| up to 1e300)."""
    with localcontext() as ctx:
        ctx.prec += 340
        pi = _pi()
        n = (x / (pi / 2)).to_integral_value()
        r = x - n * (pi / 2)
    s, c, term, k = Decimal(0), Decimal(0), Decimal(1), 0
    eps = Decimal(10) ** (-PREC - 20)
    while r:
        if k % 2 == 0:
            c += term if k % 4 == 0 else -term
        else:
            s += term if k % 4 == 1 else -term
        k += 1
        term = term * r / k
        if k > 2 and abs(term) < eps * abs(s) and abs(term) < eps * abs(c):
            break
    if not r:
        s, c = Decimal(0), Decimal(1)
    q = int(n) % 4
    return [(s, c), (c, -s), (-s, -c), (-c, s)][q]


sin = _exact(lambda x: _sin_cos(x)[0], 20)
cos = _exact(lambda x: _sin_cos(x)[1], 20)
tan = _exact(lambda x: (lambda s, c: s / c)(*_sin_cos(x)), 20)


def _pi_times(x):
    """(sin pi x, cos pi x) with x reduced modulo 2 exactly first."""
    r = x % 2
    q = (2 * r).to_integral_value()
    s, c = _sin_cos(_pi() * (r - q / 2))
    return [(s, c), (c, -s), (-s, -c), (-c, s)][int(q) % 4]


sinpi = _exact(lambda x: _pi_times(x)[0], 20)
cospi = _exact(lambda x: _pi_times(x)[1], 20)


def _erf_series(x):
    """2/sqrt(pi) * sum (-1)**n x**(2n+1) / (n! (2n+1)), for |x| <= 7 (digits lost to
    cancellation, at most 22, are covered by the extra precision)."""
    total, term, n = Decimal(0), x, 0
    x2 = x * x
    while True:
        part = term / (2 * n + 1)
        total += part
        if abs(part) < Decimal(10) ** (-PREC - 40):
            break
        n += 1
        term = -term * x2 / n
    return 2 * total / _pi().sqrt()


def _erfc_fraction(x):
    """erfc for x >= 5: exp(-x*x)/sqrt(pi) times the continued fraction
    1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))), evaluated from 400 terms back."""
    f = x
    for k in range(400, 0, -1):
        f = x + Decimal(k) / 2 / f
    return (-x * x).exp() / _pi().sqrt() / f


def _erfc(x):
    if x < 0:
        return 2 - _erfc(-x)
    if x >= 5:
        return _erfc_fraction(x)
    return 1 - _erf_series(x)


erf = _exact(lambda x: -(_erf_series(-x)) if x < 0 else
             (1 - _erfc_fraction(x) if x >= 5 else _erf_series(x)), 40)
erfc = _exact(_erfc, 40)
erfcx = _exact(lambda x: (x * x).exp() * _erfc(x), 40)
normcdf = _exact(lambda x: _erfc(-x / Decimal(2).sqrt()) / 2, 40)


def _inverse(f, target, x0, slope):
    """Newton on a Decimal function from a float64 start (that start is already within
    a few ulps, so a few steps give every digit)."""
    x = Decimal(x0)
    for _ in range(4):
        x = x - (f(x) - target) / slope(x)
    return x


def _erfinv(y, x0):
    two_over_root_pi = 2 / _pi().sqrt()
    if abs(y) <= Decimal("0.5"):
        return _inverse(_erf_series, y, x0, lambda x: two_over_root_pi * (-x * x).exp())
    z = 1 - abs(y)
    x = _inverse(_erfc, z, abs(x0), lambda x: -two_over_root_pi * (-x * x).exp())
    return x if y > 0 else -x


def erfinv_ref(y, guess):
    with localcontext() as ctx:
        ctx.prec = PREC + 40
        return float(_erfinv(_d(y), guess))


def erfcinv_ref(z, guess):
    with localcontext() as ctx:
        ctx.prec = PREC + 40
        two_over_root_pi = 2 / _pi().sqrt()
        x = _inverse(_erfc, _d(z), guess, lambda x: -two_over_root_pi * (-x * x).exp())
        return float(x)


def normcdfinv_ref(p, guess):
    with localcontext() as ctx:
        ctx.prec = PREC + 40
        two_over_root_pi = 2 / _pi().sqrt()
        root2 = Decimal(2).sqrt()
        x = _inverse(_erfc, 2 * _d(p), -_d(guess) / root2,
                     lambda x: -two_over_root_pi * (-x * x).exp())
        return float(-x * root2)


exp = _exact(lambda x: x.exp(), 10)
exp2 = _exact(lambda x: (x * Decimal(2).ln()).exp(), 10)
exp10 = _exact(lambda x: (x * Decimal(10).ln()).exp(), 10)
expm1 = _exact(lambda x: x.exp() - 1, 350)
log = _exact(lambda x: x.ln() if x > 0 else None, 10)
log2 = _exact(lambda x: x.ln() / Decimal(2).ln() if x > 0 else None, 10)
log10 = _exact(lambda x: x.log10() if x > 0 else None, 10)
log1p = _exact(lambda x: (1 + x).ln() if x > -1 else None, 350)
sqrt = _exact(lambda x: x.sqrt() if x >= 0 else None)
rsqrt = _exact(lambda x: 1 / x.sqrt() if x > 0 else None)
cbrt = _exact(lambda x: (abs(x).ln() / 3).exp().copy_sign(x) if x else None, 10)
rcbrt = _exact(lambda x: (-abs(x).ln() / 3).exp().copy_sign(x) if x else None, 10)
sinh = _exact(lambda x: (x.exp() - (-x).exp()) / 2, 350)
cosh = _exact(lambda x: (x.exp() + (-x).exp()) / 2, 10)
tanh = _exact(lambda x: (lambda e: (e - 1) / (e + 1))((2 * x).exp()), 350)
asinh = _exact(lambda x: (abs(x) + (x * x + 1).sqrt()).ln().copy_sign(x) if x else None, 350)
acosh = _exact(lambda x: (x + (x * x - 1).sqrt()).ln() if x >= 1 else None, 10)
atanh = _exact(lambda x: ((1 + x) / (1 - x)).ln() / 2 if abs(x) < 1 else None, 350)
pow = _exact(lambda x, y: (y * x.ln()).exp() if x > 0 else None, 30)


def _norm(*a):
    return sum(v * v for v in a).sqrt() if any(a) else None


hypot = norm3d = norm4d = _exact(_norm)
rhypot = rnorm3d = rnorm4d = _exact(lambda *a: 1 / _norm(*a) if any(a) else None)


def _bessel_j(n, x):
    """J_n(x) = sum (-1)**k (x/2)**(2k+n) / (k! (k+n)!)."""
    h = x / 2
    term = h ** n / math.factorial(n)
    total, k = Decimal(0), 0
    while True:
        total += term
        k += 1
        term = -term * h * h / (k * (k + n))
        if abs(term) < Decimal(10) ** (-PREC - 40) and k > abs(h):
            return total


def _bessel_y01(x):
    """Y0 and Y1 from their series with the harmonic numbers (A&S 9.1.13, 9.1.11)."""
    pi = _pi()
    gamma = Decimal("0.57721566490153286060651209008240243104215933593992359880576723")
    h = x / 2
    log_term = h.ln() + gamma
    y0 = 2 / pi * log_term * _bessel_j(0, x)
    term, harmonic, k, total = Decimal(1), Decimal(0), 0, Decimal(0)
    while True:
        k += 1
        term = -term * h * h / (k * k)
        harmonic += Decimal(1) / k
        total -= term * harmonic
        if abs(term) < Decimal(10) ** (-PREC - 40) and k > h:
            break
    y0 += 2 / pi * total
    # Y1 = -2/(pi x) + 2/pi ln(x/2) J1 - 1/pi sum (-1)**k (psi(k+1) + psi(k+2)) h**(2k+1)/(k!(k+1)!)
    total, term, k = Decimal(0), h, 0
    psi = lambda n: sum(Decimal(1) / j for j in range(1, n)) - gamma     # noqa: E731
    while True:
        total += term * (psi(k + 1) + psi(k + 2))
        k += 1
        term = -term * h * h / (k * (k + 1))
        if abs(term) < Decimal(10) ** (-PREC - 40) and k > h:
            break
    y1 = -2 / (pi * x) + 2 / pi * h.ln() * _bessel_j(1, x) - total / pi
    return y0, y1


def _bessel_y(n, x):
    y0, y1 = _bessel_y01(x)
    if n == 0:
        return y0
    for k in range(1, n):
        y0, y1 = y1, 2 * k / x * y1 - y0
    return y1


j0 = _exact(lambda x: _bessel_j(0, abs(x)), 40)
j1 = _exact(lambda x: -_bessel_j(1, -x) if x < 0 else _bessel_j(1, x), 40)
y0 = _exact(lambda x: _bessel_y(0, x) if x > 0 else None, 40)
y1 = _exact(lambda x: _bessel_y(1, x) if x > 0 else None, 40)
jn = _exact(lambda n, x: _bessel_j(int(n), x), 40)
yn = _exact(lambda n, x: _bessel_y(int(n), x) if x > 0 else None, 40)


def _bessel_i(nu, x):
    h = abs(x) / 2
    term = h ** nu / math.factorial(nu)
    total, k = Decimal(0), 0
    while True:
        total += term
        k += 1
        term = term * h * h / (k * (k + nu))
        if term <= total * Decimal(10) ** (-PREC - 5):
            return total if nu == 0 or x > 0 else -total


cyl_bessel_i0 = _exact(lambda x: _bessel_i(0, x), 5)
cyl_bessel_i1 = _exact(lambda x: _bessel_i(1, x), 5)


def _bernoulli(count):
    """B_2, B_4, ... B_2count as Fractions (Akiyama-Tanigawa)."""
    from fractions import Fraction
    out, a = [], []
    for m in range(2 * count + 1):
        a.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        if m >= 2 and m % 2 == 0:
            out.append(a[0])
    return out


BERNOULLI = _bernoulli(25)


def _lgamma(x):
    """log|gamma(x)|: shifted up to x + n >= 60, Stirling's series with 25 terms there; the
    reflection formula below 1/2."""
    if x <= 0 and x == x.to_integral_value():
        return None
    if x in (1, 2):
        return Decimal(0)
    if x < Decimal("0.5"):
        s = abs(_pi_times(x)[0])
        return (_pi() / s).ln() - _lgamma(1 - x)
    shift = Decimal(0)
    z = x
    while z < 60:
        shift += z.ln()
        z += 1
    total = (z - Decimal("0.5")) * z.ln() - z + (2 * _pi()).ln() / 2
    for k, b in enumerate(BERNOULLI, 1):
        total += Decimal(b.numerator) / Decimal(b.denominator) / (2 * k * (2 * k - 1)
                                                                 * z ** (2 * k - 1))
    return total - shift


lgamma = _exact(_lgamma, 40)


def _tgamma(x):
    value = _lgamma(x)
    if value is None:
        return None
    negative = x < 0 and int(-x.to_integral_value(rounding="ROUND_FLOOR")) % 2 == 1
    return -value.exp() if negative else value.exp()


tgamma = _exact(_tgamma, 40)
