"""simt.printf (issue 15 item 8, guide B.29): C's format rules, checked at compile time,
on every device (output captured from the process's stdout), and vprintf's argument
buffer in the PTX."""
import importlib.util
import re
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.ir import types as T
from conftest import random_array

LINE = "t=%d x=%8.3f y=%-+.4e s=%s u=%u h=%x L=%lld c=%c w=%*d g=%g|\n"


@simt.kernel
def formats(x, y, k, big, out_count):
    i = simt.grid(1)
    if i < x.shape[0]:
        n = simt.printf("t=%d x=%8.3f y=%-+.4e s=%s u=%u h=%x L=%lld c=%c w=%*d g=%g|\n",
                        simt.threadIdx.x, x[i], y[i], "text", np.uint32(k[i]), k[i],
                        big[i], np.int32(65 + i % 26), 6, k[i], x[i] * y[i])
        out_count[i] = n


def reference(i, x, y, k, big):
    """What C's printf writes for thread i (Python's % follows C for these conversions)."""
    fmt = re.sub(r"(\d)?(ll|l)([du])", r"\1\3", LINE).replace("%u", "%d")
    return fmt % (i % 32, x[i], y[i], "text", np.uint32(k[i]), k[i], big[i], chr(65 + i % 26), 6,
                  k[i], float(x[i] * y[i]))


def test_printf_formats_as_c(device, rng, capfd):
    n = 40
    x = random_array(rng, n, np.float32) * 100
    y = random_array(rng, n, np.float64)
    k = rng.integers(1, 1 << 30, n).astype(np.int32)
    big = rng.integers(-(1 << 62), 1 << 62, n).astype(np.int64)
    count = np.zeros(n, np.int32)
    capfd.readouterr()
    formats[2, 32](x, y, k, big, count)
    simt.synchronize()
    lines = capfd.readouterr().out.splitlines(keepends=True)
    assert sorted(lines) == sorted(reference(i, x, y, k, big) for i in range(n))
    assert (count == 11).all()                           # CUDA: the number of values


@simt.kernel
def wide_ints(big, out):
    i = simt.grid(1)                       # int64, as is big[i]: printed whole under %d, %x
    if i < big.shape[0]:
        simt.printf("%d:%d %x|\n", i, big[i], big[i])
        out[i] = 1


def test_64_bit_ints_under_plain_conversions_print_whole(device, rng, capfd):
    big = rng.integers(1 << 40, 1 << 62, 8).astype(np.int64)
    out = np.zeros(8, np.int32)
    capfd.readouterr()
    wide_ints[1, 8](big, out)
    simt.synchronize()
    lines = capfd.readouterr().out.splitlines()
    assert sorted(lines) == sorted(f"{i}:{v} {v:x}|" for i, v in enumerate(big))


@simt.kernel
def long_line(out):
    if simt.grid(1) == 0:
        simt.printf("%s %0900d|\n", "long", 7)
        simt.printf("100%% of %s\n", "it")
        out[0] = 1


def test_long_lines_and_percent_signs(device, capfd):
    capfd.readouterr()
    long_line[1, 4](np.zeros(1))
    simt.synchronize()
    assert capfd.readouterr().out == "long " + "0" * 899 + "7|\n" + "100% of it\n"


# ------------------------------------------------------------------ compile-time checks
def _kernel(tmp_path, source):
    """A kernel k(a, f, b) whose body is ``source``, at line 7 of a file of its own."""
    path = tmp_path / "printf_case.py"
    path.write_text(f"import numpy as np\nimport simt\n\n\n@simt.kernel\ndef k(a, f, b):\n"
                    f"    {source}\n")
    spec = importlib.util.spec_from_file_location("printf_case", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.k, str(path)


@pytest.mark.parametrize("source, message", [
    ('simt.printf("%d\\n", f[0])', r"simt.printf: '%d' needs an integer, got float32"),
    ('simt.printf("%f\\n", a[0])', r"simt.printf: '%f' needs a float, got int32"),
    ('simt.printf("%*d\\n", b[0], a[0])', r"'%\*d' \(its '\*'\) reads a 32-bit int, got int64"),
    ('simt.printf("%d %d\\n", a[0])', r"has 2 conversions, given 1 values"),
    ('simt.printf("%s\\n", a[0])', r"'%s' needs a string literal"),
    ('simt.printf("%d\\n", "x")', r"'%d' cannot print the string 'x'"),
    ('simt.printf("%n\\n", a[0])', r"'%n' is not a conversion simt.printf supports"),
    ('simt.printf("%Lf\\n", f[0])', r"'%Lf' is not a conversion"),
    ('simt.printf("50%")', r"the format ends inside the conversion '%'"),
    ('simt.printf(a[0])', r"simt.printf needs a string literal as its format"),
    ('simt.printf("' + "%d" * 33 + '", ' + ", ".join(["a[0]"] * 33) + ")",
     r"at most 32 values"),
])
def test_format_mismatches_are_compile_errors(tmp_path, source, message):
    kernel, path = _kernel(tmp_path, source)
    types = [T.Array(np.dtype(d), 1, "C") for d in (np.int32, np.float32, np.int64)]
    with pytest.raises(simt.CompileError, match=message) as info:
        kernel.typed_ir(types)
    assert info.value.line == 7 and info.value.filename == path


def test_allowed_promotions(tmp_path):
    """float32/float16 widen to double, small ints and bools to int, 32-bit ints to %ld,
    int literals fit %d: all accepted."""
    kernel, _ = _kernel(tmp_path, 'simt.printf("%f %g %d %d %ld %d %hhd\\n", f[0], np.float16(1), '
                     'np.int8(a[0]), a[0] > 0, a[0], 5, a[0])')
    kernel.typed_ir([T.Array(np.dtype(d), 1, "C") for d in (np.int32, np.float32, np.int64)])


# ------------------------------------------------------------------ the GPU's vprintf
def test_ptx_calls_vprintf_with_a_c_laid_out_buffer():
    text = formats.inspect_ptx("void(float32[::1], float64[::1], int32[::1], int64[::1], "
                               "int32[::1])")
    assert ".extern .func  (.param .b32 func_retval0) vprintf" in text
    assert "call.uni (retval0), vprintf" in text
    # int at 0, doubles and the string pointer at 8, 16, 24; the 64-bit int at 40 (after two
    # ints at 32, 36); the last double at 64 after three ints at 48, 52, 56
    stores = {int(m.group(1) or 0) for m in
              re.finditer(r"st\.local\.(?:v2\.)?b(?:32|64)\s+\[%rd\d+(?:\+(\d+))?\]", text)}
    assert {0, 8, 16, 24, 40, 64} <= stores, sorted(stores)
    if shutil.which("ptxas"):
        done = subprocess.run(["ptxas", "-arch=sm_90", "-", "-o", "/dev/null"], input=text,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
