"""``simt.printf(fmt, *values)``: C's printf in kernels (guide B.29).

The format is checked at compile time against the values' types by C's
rules, and each value converted to what its conversion reads (a C varargs
call: float32 and float16 promoted to double, small ints to int). On the GPU
the values go, laid out as a struct with C's alignment, to the CUDA runtime's
``vprintf(fmt, args)``; on the CPU the C library's ``snprintf`` formats the
line and one write hands it to Python's ``sys.stdout`` (backends/hostjit.py),
so each call's output stays whole. Lowerings: backends/*/lower/printf.py.
"""
import re

from ..ir import types as T
from .registry import Intrinsic, Static, lazy_module

ll = lazy_module("llvmlite.ir")

SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d*))?"
                  r"(?P<length>hh|h|ll|l|j|z|t|L)?(?P<conv>.?)", re.S)
INTEGER, FLOATING = "diouxXc", "fFeEgGaA"
LONG = {"l", "ll", "j", "z", "t"}          # 64-bit on LP64 hosts and on the GPU
MAX_VALUES = 32                            # the guide's limit (B.29.2)


def _conversions(fc, fmt, loc):
    """What each value of ``fmt`` must be, in order: 'int' (32-bit: '*' and plain
    integer conversions), 'long', 'double' or 'str', with the spec text for messages and
    where its conversion letter is (None for a '*')."""
    wanted = []
    for m in SPEC.finditer(fmt):
        spec, conv, length = m.group(0), m.group("conv"), m.group("length")
        if conv == "%" and spec == "%%":
            continue
        for part in ("width", "precision"):
            if m.group(part) == "*":
                wanted.append(("int", f"{spec!r} (its '*')", None))
        if not conv:
            fc.fail(loc, f"simt.printf: the format ends inside the conversion {spec!r}",
                    "write %% for a percent sign")
        if conv in INTEGER and length != "L":
            letter = m.start("conv") if length is None and conv != "c" else None
            wanted.append(("long" if length in LONG else "int", repr(spec), letter))
        elif conv in FLOATING and length in (None, "l"):
            wanted.append(("double", repr(spec), None))
        elif conv == "s" and length is None:
            wanted.append(("str", repr(spec), None))
        else:
            fc.fail(loc, f"simt.printf: {spec!r} is not a conversion simt.printf supports",
                    "use %d %i %u %o %x %X %c (with h, hh, l, ll), %f %e %g %a (with l), "
                    "%s with a string literal, or %%")
    return wanted


def _value(fc, arg, want, spec, letter, loc):
    """The IR value (or Static string) the conversion ``spec`` reads from ``arg``; a
    64-bit integer under a plain %d, %u, %x... (``letter``: where its conversion letter
    is) is passed whole, and the format is widened to %lld for it: simt.grid(1) and
    Python ints are 64-bit, and C would print a truncated value."""
    if want == "str":
        if not (isinstance(arg, Static) and isinstance(arg.value, str)):
            fc.fail(loc, f"simt.printf: {spec} needs a string literal")
        return arg, False
    if isinstance(arg, Static) and isinstance(arg.value, str):
        fc.fail(loc, f"simt.printf: {spec} cannot print the string {arg.value!r}", "use %s")
    v = fc.expr(arg, loc)
    t = v.type
    if not isinstance(t, T.Scalar) or t.kind == "c":
        fc.fail(loc, f"simt.printf: {spec} cannot print a {t}",
                "print the real and imaginary parts with two %f" if getattr(t, "kind", "") == "c"
                else "print its elements")
    if want == "double":
        if t.kind != "f":
            fc.fail(loc, f"simt.printf: {spec} needs a float, got {t}",
                    "use %d for integers, or convert with float(...)")
        return fc.cast(v, T.FLOAT64, loc), False
    if t.kind == "f":
        fc.fail(loc, f"simt.printf: {spec} needs an integer, got {t}",
                "use %f, %e or %g for floats, or convert with int(...)")
    if want == "int" and t.kind != "b" and t.bits == 64 and not t.weak:
        if letter is None:
            fc.fail(loc, f"simt.printf: {spec} reads a 32-bit int, got {t}",
                    "convert it with np.int32(...)")
        want = "long"
    signed = t.kind == "i" or t.kind == "b" or t.weak
    if want == "int":
        return fc.cast(v, T.INT32 if signed else T.UINT32, loc), False
    return fc.cast(v, T.INT64 if signed else T.UINT64, loc), letter is not None


def _build(fc, args, kwargs, loc):
    if kwargs:
        fc.fail(loc, "simt.printf takes no keywords", "write the values after the format")
    if not args or not (isinstance(args[0], Static) and isinstance(args[0].value, str)):
        fc.fail(loc, "simt.printf needs a string literal as its format")
    fmt, values = args[0].value, args[1:]
    wanted = _conversions(fc, fmt, loc)
    if len(values) != len(wanted):
        fc.fail(loc, f"simt.printf: the format {fmt!r} has {len(wanted)} conversions, "
                f"given {len(values)} values")
    if len(values) > MAX_VALUES:
        fc.fail(loc, f"simt.printf takes at most {MAX_VALUES} values (guide B.29.2), "
                f"given {len(values)}", "split the line into several calls")
    slots, exprs, widen = [], [], []
    for arg, (want, spec, letter) in zip(values, wanted):
        value, widened = _value(fc, arg, want, spec, letter, loc)
        if widened and want == "int":
            widen.append(letter)
        if isinstance(value, Static):
            slots.append(("str", value.value))
        else:
            slots.append(("value", None))
            exprs.append(value)
    for letter in reversed(widen):            # %d -> %lld where a 64-bit value goes
        fmt = fmt[:letter] + "ll" + fmt[letter:]
    return printf.node(T.INT32, loc, exprs, {"format": fmt, "slots": tuple(slots)})


printf = Intrinsic("printf", "simt.printf(fmt, *values): C's printf from each thread that "
                   "calls it (CUDA's printf, guide B.29): %d %i %u %o %x %X %c with h, hh, l, "
                   "ll; %f %F %e %E %g %G %a %A; %s with a string literal; flags, width and "
                   "precision ('*' too). The format is checked against the values at compile "
                   "time (a 64-bit int under %d, %u or %x is printed whole, as %lld; floats are "
                   "passed as double). "
                   "Returns the number of values, as CUDA's. GPU output appears at the next "
                   "synchronization; the CPU writes each call's line at once.", _build)


# ------------------------------------------------------------ shared by the targets' lowerings
def arguments(em, e):
    """The varargs: the values in order, string literals as pointers to constants."""
    values = iter(em.expr(a) for a in e.args)
    return [next(values) if kind == "value" else em.target.string_constant(em, text)
            for kind, text in e.attrs["slots"]]


def function(module, name, fnty):
    """The module's function ``name``, declared on first use."""
    return module.globals.get(name) or ll.Function(module, fnty, name)


def count_of(e):
    """printf's result: the number of values, as CUDA's."""
    return ll.Constant(ll.IntType(32), len(e.attrs["slots"]))
