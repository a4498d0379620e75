"""PTX rewrites that keep ptxas from misreading integer abs and 16-bit negation, and the
later PTX ISA version a kernel's instructions may need.

ptxas (CUDA 13.0, sm_90; the H100's driver alike) takes the result of ``abs.sN`` to be
non-negative and the result of ``neg.s16`` to fit 16 bits, which the least int breaks:
NumPy wraps, ``abs(int16(-32768))`` and ``-int16(-32768)`` are -32768, ``abs`` of the least
int64 is itself. On the H100 an int16 abs or negation followed by a sign extension gave
+32768 (fuzz seeds 101915, 102844, 106272), and ``min(abs(x), 0)`` of an int64 was folded
to 0 (seed 107135). LLVM makes ``abs`` of any select that computes one, so the fix is
here, on the PTX: negation as a multiply by -1 (ptxas then sign-extends the result, as
nvdisasm shows), and abs as that negation selected where the value is negative.
"""
import re

_NEG16 = re.compile(r"\bneg\.s16(\s+)(%\w+),\s*(%\w+);")
_ABS = re.compile(r"\babs\.s(16|32|64)\s+(%\w+),\s*(%\w+);")
_VERSION = re.compile(r"^\.version (\d+)\.(\d+)$", re.M)


def _abs(match):
    bits, dst, src = match.groups()
    return (f"{{ .reg .s{bits} %abs_t; .reg .pred %abs_p; mul.lo.s{bits} %abs_t, {src}, -1; "
            f"setp.lt.s{bits} %abs_p, {src}, 0; selp.s{bits} {dst}, %abs_t, {src}, %abs_p; }}")


def fix(ptx, isa=None):
    """The PTX with every abs.sN and neg.s16 replaced (see the module's docstring), and its
    ``.version`` raised to ``isa`` ((major, minor)) where that is later: LLVM writes the
    version of its target features (binary.PTX_FEATURES) whatever the kernel's inline PTX
    needs, and a later version reads every earlier one's instructions alike."""
    ptx = _NEG16.sub(r"mul.lo.s16\1\2, \3, -1;", ptx)
    if isa is not None:
        ptx = _VERSION.sub(lambda m: ".version %d.%d" % max(isa, (int(m[1]), int(m[2]))), ptx,
                           count=1)
    return _ABS.sub(_abs, ptx)
