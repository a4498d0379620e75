"""FP8 (lang/float8.py): simt.float8_e4m3 / simt.float8_e5m2 arrays read and written by kernels,
the conversions' rounding, saturation and NaN rules bit for bit on every device (the host's
software conversion is checked against ml_dtypes first), and the GPU's PTX."""
import shutil
import subprocess

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

import simt  # noqa: E402
from simt.backends.cuda.device import CudaBackend  # noqa: E402
from simt.compiler.options import CompileOptions  # noqa: E402
from simt.ir import types as T  # noqa: E402
from simt.lang import float8  # noqa: E402
from conftest import poison  # noqa: E402

FORMATS = [("float8_e4m3", ml_dtypes.float8_e4m3fn, 448.0),
           ("float8_e5m2", ml_dtypes.float8_e5m2, 57344.0)]
EDGES = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 448, 464, 464.00003, 480, 57344,
                  61439.996, 61440, 1e30, -1e30, 2.0 ** -6, 2.0 ** -9, 2.0 ** -10,
                  2.0 ** -10 * 1.00001, 3 * 2.0 ** -11, 2.0 ** -14, 2.0 ** -16, 2.0 ** -17,
                  3 * 2.0 ** -18, 1.0625, 1.1875, 1.125, 1.375, np.finfo(np.float32).max,
                  np.finfo(np.float32).tiny, 2.0 ** -149], np.float32)


def _inputs(rng, n):
    """float32 values over every FP8 range: every float16, then random magnitudes, the edges."""
    every_half = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
    scale = np.float32(2.0) ** rng.integers(-26, 20, n).astype(np.float32)
    return np.concatenate([every_half, rng.standard_normal(n).astype(np.float32) * scale,
                           EDGES, -EDGES])


def _same_as_ml_dtypes(codes, x, name, host):
    want = x.astype(host)
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(float8.decode(codes, name)), nan)
    np.testing.assert_array_equal(codes[~nan], want.view(np.uint8)[~nan])


@pytest.mark.parametrize("name,host,largest", FORMATS)
def test_host_conversion_matches_ml_dtypes(rng, name, host, largest):
    """Round to nearest even, subnormals, overflow to NaN (e4m3) or inf (e5m2) without
    saturation, to the largest finite value with it; every float16 and 10**6 float32 values."""
    x = _inputs(rng, 10 ** 6)
    _same_as_ml_dtypes(float8.encode(x, name, saturate=False), x, name, host)
    codes = float8.encode(x, name, saturate=True)
    _same_as_ml_dtypes(codes, np.clip(x, -largest, largest), name, host)
    assert (codes[np.isnan(x)] == 0x7F).all()                 # NaN: CUDA's canonical code
    x64 = rng.standard_normal(10 ** 5) * 2.0 ** rng.integers(-20, 18, 10 ** 5)
    _same_as_ml_dtypes(float8.encode(x64, name, saturate=False), x64, name, host)
    every = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(float8.decode(every, name), every.view(host).astype(np.float32))


def test_host_names_are_ml_dtypes_types():
    assert simt.float8_e4m3 is ml_dtypes.float8_e4m3fn and simt.float8_e5m2 is ml_dtypes.float8_e5m2
    assert T.Scalar(np.dtype(simt.float8_e4m3)) == T.FLOAT8_E4M3
    assert repr(T.FLOAT8_E5M2) == "float8_e5m2"
    assert T.promote(T.FLOAT8_E4M3, T.FLOAT8_E5M2) == T.FLOAT32
    assert T.promote(T.FLOAT8_E4M3, T.FLOAT64) == T.FLOAT64
    assert T.Scalar(np.dtype(ml_dtypes.float8_e4m3)).float8 is None    # IEEE-like e4m3: not CUDA's


def test_without_ml_dtypes_the_names_say_what_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "ml_dtypes", None)
    with pytest.raises(ImportError, match="pip install ml_dtypes"):
        float8.__getattr__("float8_e4m3")


@simt.kernel
def convert(x, d, a, b, a_nosat, b_nosat, d_a, d_b, out):
    i = simt.grid(1)
    if i < x.size:
        a[i] = x[i]                                     # a store saturates
        b[i] = x[i]
        a_nosat[i] = simt.float8_e4m3(x[i], saturate=False)
        b_nosat[i] = simt.float8_e5m2(x[i], saturate=False)
        d_a[i] = simt.float8_e4m3(d[i])                 # float64: rounded once
        d_b[i] = simt.float8_e5m2(d[i], saturate=True)
        out[0, i] = a[i] * 2.0 - b[i]                   # float32 arithmetic
        out[1, i] = -a_nosat[i] if b_nosat[i] < 1 else float(b_nosat[i])


def _fp8_poison(n, host):
    return poison(n, np.uint8).view(host)


def test_kernels_convert_as_the_host(device, rng):
    """Every device's conversions are the host's, bit for bit (on a GPU: its cvt instructions)."""
    n = 4096 if device.kind == "sim" else 10 ** 5
    x = _inputs(rng, n)
    if device.kind == "sim":                            # a sample of the float16 values
        x = np.concatenate([x[rng.integers(0, 65536, 4096)], x[65536:]])
    d = rng.standard_normal(x.size) * 2.0 ** rng.integers(-20, 18, x.size)
    d[:EDGES.size] = EDGES
    m = x.size
    outs = [_fp8_poison(m, h) for h in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2) * 3]
    out = poison((2, m), np.float32)
    convert[(m + 255) // 256, 256](x, d, *outs, out)
    want = [float8.encode(v, f, s) for v, f, s in (
        (x, "float8_e4m3", True), (x, "float8_e5m2", True), (x, "float8_e4m3", False),
        (x, "float8_e5m2", False), (d, "float8_e4m3", True), (d, "float8_e5m2", True))]
    for got, expect in zip(outs, want):
        np.testing.assert_array_equal(got.view(np.uint8), expect)
    a, b = float8.decode(want[0], "float8_e4m3"), float8.decode(want[1], "float8_e5m2")
    an, bn = float8.decode(want[2], "float8_e4m3"), float8.decode(want[3], "float8_e5m2")
    np.testing.assert_array_equal(out[0], a * np.float32(2) - b)
    np.testing.assert_array_equal(out[1], np.where(bn < 1, -an, bn))


@simt.kernel
def widen(a, b, out):
    i = simt.grid(1)
    if i < a.size:
        out[0, i] = a[i]
        out[1, i] = np.float32(b[i])


def test_every_code_reads_exactly(device):
    every = np.arange(256, dtype=np.uint8)
    out = poison((2, 256), np.float32)
    widen[1, 256](every.view(simt.float8_e4m3), every.view(simt.float8_e5m2), out)
    np.testing.assert_array_equal(out[0], float8.decode(every, "float8_e4m3"))
    np.testing.assert_array_equal(out[1], float8.decode(every, "float8_e5m2"))


@simt.kernel
def builtins_of_codes(a, b, out):
    i = simt.grid(1)
    if i < a.size:
        out[0, i] = abs(a[i])
        out[1, i] = abs(b[i])
        out[2, i] = round(a[i])


def test_abs_and_round_take_the_value_of_the_code(device):
    """abs() and round() of FP8 values are of the float32 they convert to, as in CUDA (the
    CPU device called llvm.fabs on the i8 code, the sim device took the code's abs)."""
    every = np.arange(256, dtype=np.uint8)
    finite = every[~np.isnan(float8.decode(every, "float8_e4m3"))]       # round(): no NaN
    out = poison((3, finite.size), np.float32)
    builtins_of_codes[1, 256](finite.view(simt.float8_e4m3),
                              every[finite].view(simt.float8_e5m2), out)
    a, b = float8.decode(finite, "float8_e4m3"), float8.decode(every[finite], "float8_e5m2")
    np.testing.assert_array_equal(out, [np.abs(a), np.abs(b), np.round(a)])


def test_wrong_arguments_are_compile_errors(device):
    @simt.kernel
    def bad(a, x):
        a[0] = simt.float8_e4m3(x[0], saturate=x[1] > 0)

    with pytest.raises(simt.CompileError, match="saturate must be a compile-time constant"):
        bad[1, 1](np.zeros(2, simt.float8_e4m3), np.ones(2, np.float32))

    @simt.kernel
    def bad_complex(a, z):
        a[0] = simt.float8_e5m2(z[0])

    with pytest.raises(simt.CompileError, match="cannot convert complex128 to float8_e5m2"):
        bad_complex[1, 1](np.zeros(2, simt.float8_e5m2), np.ones(2, np.complex128))


def _ptx(arch):
    types = [T.Array(T.FLOAT32, 1, "C"), T.Array(T.FLOAT64, 1, "C")] + \
        [T.Array(t, 1, "C") for t in (T.FLOAT8_E4M3, T.FLOAT8_E5M2) * 3] + \
        [T.Array(T.FLOAT32, 2, "C")]
    return CudaBackend.compile_for(convert.typed_ir(types), CompileOptions(boundscheck=False),
                                   arch).ptx


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_ptx_assembles(tmp_path, arch):
    """sm_90: the cvt instructions; older GPUs: the software conversion (no GPU needed)."""
    ptx = _ptx(arch)
    cvts = {"cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32", "cvt.rn.f16x2.e4m3x2",
            "cvt.rn.f16x2.e5m2x2"}
    assert all((c in ptx) == (arch == "sm_90") for c in cvts), arch
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas is not installed")
    (tmp_path / "k.ptx").write_text(ptx)
    done = subprocess.run(["ptxas", f"-arch={arch}", str(tmp_path / "k.ptx"), "-o", "/dev/null"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
