"""nvcc's math flags as kernel options (issue 35 item 4; docs/math.md): ftz, prec_div,
prec_sqrt and fmad, each on its own or overriding what fastmath implies. The PTX is made
without a GPU (and assembled by ptxas where it is installed); the CPU device is checked
against NumPy with tolerances that show the option took effect."""
import math
import shutil
import subprocess

import llvmlite.binding as llvm
import numpy as np
import pytest

import simt
from conftest import poison
from simt.compiler.options import CompileOptions, MathFlags

SIG = "void(float32[:], float32[:], float32[:], float32[:])"


def mixed(x, y, z, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = x[i] * y[i] + z[i] / y[i] + math.sqrt(x[i])


def instructions(ptx):
    """The float32 arithmetic instructions of a PTX text, by opcode."""
    names = set()
    for line in ptx.splitlines():
        parts = line.split()
        if parts and parts[0].endswith(".f32") and parts[0].split(".")[0] in (
                "add", "mul", "fma", "div", "sqrt"):
            names.add(parts[0])
    return names


@pytest.mark.parametrize("options, present, absent", [
    ({}, {"fma.rn.f32", "div.rn.f32", "sqrt.rn.f32"}, {"mul.rn.f32", "div.approx.f32"}),
    ({"fmad": False}, {"mul.rn.f32", "add.rn.f32"}, {"fma.rn.f32"}),
    ({"prec_div": False}, {"div.approx.f32", "sqrt.rn.f32"}, {"div.rn.f32"}),
    ({"prec_sqrt": False}, {"sqrt.approx.f32", "div.rn.f32"}, {"sqrt.rn.f32"}),
    ({"ftz": True}, {"div.rn.ftz.f32", "sqrt.rn.ftz.f32", "fma.rn.ftz.f32"}, {"div.rn.f32"}),
    ({"fastmath": True}, {"div.approx.ftz.f32", "sqrt.approx.ftz.f32"}, {"div.rn.f32"}),
    ({"fastmath": True, "prec_div": True, "prec_sqrt": True, "ftz": False, "fmad": False},
     {"mul.rn.f32", "div.rn.f32", "sqrt.rn.f32"}, {"fma.rn.f32", "div.approx.f32"}),
])
def test_flags_reach_the_ptx(options, present, absent):
    found = instructions(simt.kernel(**options)(mixed).inspect_ptx(SIG))
    assert present <= found, found
    assert not absent & found, found


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
@pytest.mark.parametrize("options", [{"fmad": False, "ftz": True},
                                     {"prec_div": False, "prec_sqrt": False}])
def test_flagged_ptx_assembles(tmp_path, options):
    path = tmp_path / "k.ptx"
    path.write_text(simt.kernel(**options)(mixed).inspect_ptx(SIG))
    subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.cubin")],
                   check=True, capture_output=True)


def fused_multiply_add(x, y, z):
    return (x.astype(np.float64) * y + z).astype(np.float32)    # x*y exact in float64


def host_has_fma():
    features = llvm.get_host_cpu_features()
    return llvm.get_process_triple().startswith("aarch64") or bool(features.get("fma"))


def multiply_add(x, y, z, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = x[i] * y[i] + z[i]


def test_fmad_false_gives_the_unfused_result_bit_exactly(device, rng):
    n = 4096
    x, y, z = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    out = poison(n, np.float32)
    simt.kernel(fmad=False)(multiply_add)[n // 128, 128](x, y, z, out)
    np.testing.assert_array_equal(out, x * y + z)        # NumPy rounds each operation
    assert not np.array_equal(out, fused_multiply_add(x, y, z))


@pytest.mark.skipif(not host_has_fma(), reason="the host CPU has no fused multiply-add")
def test_default_contracts_on_the_cpu(rng):
    n = 4096
    x, y, z = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    out = poison(n, np.float32)
    with simt.use_device("cpu"):
        simt.kernel(multiply_add)[n // 128, 128](x, y, z, out)
    np.testing.assert_array_equal(out, fused_multiply_add(x, y, z))
    assert not np.array_equal(out, x * y + z)


def fma_vectors(x, y, z, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        a = simt.make_float2(x[i], y[i])
        b = a * simt.make_float2(z[i], z[i]) + a
        out[i] = simt.dot(a, a) + b.x


def test_vector_arithmetic_is_never_fused():
    """Which products fuse is decided in the typed IR for scalars (compiler/contract.py);
    vector-type arithmetic is never fused, with or without fmad, on any device."""
    sig = SIG
    plain = instructions(simt.kernel(fma_vectors).inspect_ptx(sig))
    unfused = instructions(simt.kernel(fmad=False)(fma_vectors).inspect_ptx(sig))
    assert "fma.rn.f32" not in plain and "fma.rn.f32" not in unfused
    assert "mul.rn.f32" in unfused or "mul.f32" in unfused


def test_cpu_flags_follow_the_options():
    fmad = simt.kernel(fmad=False, prec_div=False)(mixed)
    with simt.use_device("cpu"):
        text = fmad.inspect_llvm(SIG)
    assert "contract" not in text
    assert "fdiv arcp afn float" in text


def test_prec_div_false_on_the_cpu_stays_close(device, rng):
    n = 256
    x, y, z = (rng.uniform(0.5, 2.0, n).astype(np.float32) for _ in range(3))
    out = poison(n, np.float32)
    kernel = simt.kernel(prec_div=False, prec_sqrt=False)(mixed)
    kernel[2, 128](x, y, z, out)
    d = [v.astype(np.float64) for v in (x, y, z)]
    np.testing.assert_allclose(out, d[0] * d[1] + d[2] / d[1] + np.sqrt(d[0]), rtol=4e-7)


def test_fastmath_implies_and_flags_override():
    assert CompileOptions().math() == MathFlags(ftz=False, prec_div=True, prec_sqrt=True,
                                                fmad=True)
    assert CompileOptions(fastmath=True).math() == MathFlags(True, False, False, True)
    assert CompileOptions(fastmath=True, prec_div=True, ftz=False).math() == \
        MathFlags(False, True, False, True)


def test_unset_flags_keep_the_cache_key():
    key = CompileOptions().key()
    assert "ftz" not in key and "fmad" not in key and "noalias" not in key
    assert CompileOptions(fmad=False).key() != key != CompileOptions(ftz=False).key()


@pytest.mark.parametrize("name", ["ftz", "prec_div", "prec_sqrt", "fmad"])
def test_bad_flag_values_are_refused(name):
    with pytest.raises(TypeError, match=f"@simt.kernel 'mixed': {name} is True or False, or "
                                        "None to follow fastmath; got 'yes'"):
        simt.kernel(**{name: "yes"})(mixed)
