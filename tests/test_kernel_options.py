"""Kernel options (docs/kernel-options.md): launch_bounds, maxnreg and lineinfo are checked
at the decorator, are part of the cache key, reach the PTX as .maxntid / .minnctapersm /
.maxnreg and .file / .loc (made here without a GPU), and a launch above launch_bounds is
refused on every device."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.compiler.options import CompileOptions
from conftest import poison, random_array

SIG = "void(float32, float32[:], float32[:], float32[:])"


@simt.device
def scaled(a, x):
    return a * x / (x * x + a)                      # LINE: scaled


def axpy_source(a, x, y, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = scaled(a, x[i]) + y[i]             # LINE: store


def line_of(tag):
    with open(__file__) as f:
        return next(n for n, text in enumerate(f, 1) if text.rstrip().endswith(f"# LINE: {tag}"))


def test_launch_bounds_and_maxnreg_reach_the_ptx():
    plain = simt.kernel(axpy_source).inspect_ptx(SIG)
    assert ".maxntid" not in plain and ".maxnreg" not in plain
    ptx = simt.kernel(launch_bounds=(256, 2), maxnreg=40)(axpy_source).inspect_ptx(SIG)
    assert re.search(r"^\.maxntid 256\b", ptx, re.M)
    assert re.search(r"^\.minnctapersm 2\b", ptx, re.M)
    assert re.search(r"^\.maxnreg 40\b", ptx, re.M)
    alone = simt.kernel(launch_bounds=128)(axpy_source).inspect_ptx(SIG)
    assert re.search(r"^\.maxntid 128\b", alone, re.M) and ".minnctapersm" not in alone


def test_lineinfo_maps_the_ptx_to_the_python_lines():
    assert ".loc" not in simt.kernel(axpy_source).inspect_ptx(SIG)
    ptx = simt.kernel(lineinfo=True)(axpy_source).inspect_ptx(SIG)
    files = dict(re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', ptx, re.M))
    assert any(path.endswith("test_kernel_options.py") for path in files.values()), files
    this = next(n for n, path in files.items() if path.endswith("test_kernel_options.py"))
    lines = {int(n) for f, n in re.findall(r"^\s*\.loc\s+(\d+)\s+(\d+)", ptx, re.M) if f == this}
    # the device function is inlined: its line shows up too, under the same file
    assert {line_of("store"), line_of("scaled")} <= lines
    assert "div.rn.f32" in ptx


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_option_ptx_assembles(tmp_path):
    ptx = simt.kernel(launch_bounds=(256, 2), maxnreg=40,
                      lineinfo=True)(axpy_source).inspect_ptx(SIG)
    (tmp_path / "k.ptx").write_text(ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90", "-v", str(tmp_path / "k.ptx"), "-o",
                           str(tmp_path / "k.cubin")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_options_are_part_of_the_cache_key():
    keys = {CompileOptions().key(), CompileOptions(launch_bounds=(256, 0)).key(),
            CompileOptions(launch_bounds=(256, 2)).key(), CompileOptions(maxnreg=32).key(),
            CompileOptions(lineinfo=True).key()}
    assert len(keys) == 5
    # two spellings of one bound are one option value
    k1 = simt.kernel(launch_bounds=256)(axpy_source)
    k2 = simt.kernel(launch_bounds=(256,))(axpy_source)
    assert k1.options_for("cuda") == k2.options_for("cuda")
    assert k1.options_for("cuda").launch_bounds == (256, 0)


def test_cluster_dims_is_part_of_the_cache_key():
    """cluster_dims changes the PTX (.reqnctapercluster): a key of its own, normalized as a
    dim3; kernels without it keep the keys they had."""
    assert "cluster_dims" not in CompileOptions().key()
    assert CompileOptions(cluster_dims=(2, 1, 1)).key() != CompileOptions().key()
    k1 = simt.kernel(cluster_dims=2)(axpy_source)
    k2 = simt.kernel(cluster_dims=(2, 1, 1))(axpy_source)
    assert k1.options_for("cuda") == k2.options_for("cuda")
    assert k1.options_for("cuda").cluster_dims == (2, 1, 1)


def test_launch_within_bounds_runs(device, rng):
    k = simt.kernel(launch_bounds=(128, 1), maxnreg=64, lineinfo=True)(axpy_source)
    n = 1000
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    out = poison(n, np.float32)
    k[(n + 127) // 128, 128](np.float32(1.5), x, y, out)
    a = np.float32(1.5)
    np.testing.assert_allclose(out, a * x / (x * x + a) + y, rtol=1e-5, atol=1e-6)


def test_launch_above_bounds_is_refused(device, rng):
    k = simt.kernel(launch_bounds=(64, 2))(axpy_source)
    x, y = random_array(rng, 256, np.float32), random_array(rng, 256, np.float32)
    out = poison(256, np.float32)
    with pytest.raises(simt.InvalidConfiguration,
                       match=r"'axpy_source'.*\(16, 8, 1\) has 128 threads.*max_threads of 64"):
        k[2, (16, 8)](np.float32(2), x, y, out)
    assert np.isnan(out).all()
    with pytest.raises(simt.InvalidConfiguration, match="max_threads of 64"):
        k.launch_cooperative(1, 128, (np.float32(2), x, y, out))


@pytest.mark.parametrize("options, error, text", [
    (dict(launch_bounds=0), ValueError, "max_threads is 0; it must be 1 to 1024"),
    (dict(launch_bounds=2048), ValueError, "max_threads is 2048"),
    (dict(launch_bounds=(256, 0)), ValueError, "min_blocks is 0; it must be at least 1"),
    (dict(launch_bounds=(256, 2, 1)), TypeError, r"launch_bounds is \(max_threads, min_blocks\)"),
    (dict(launch_bounds=256.0), TypeError, "launch_bounds is"),
    (dict(maxnreg=0), ValueError, "maxnreg is 0; it must be 1 to 255"),
    (dict(maxnreg=300), ValueError, "maxnreg is 300"),
    (dict(maxnreg="32"), TypeError, "maxnreg is an int"),
    (dict(lineinfo=1), TypeError, "lineinfo is True or False"),
    (dict(boundscheck="yes"), TypeError, "boundscheck is True or False"),
])
def test_bad_option_values_are_refused(options, error, text):
    with pytest.raises(error, match=f"@simt.kernel 'axpy_source': .*{text}"):
        simt.kernel(**options)(axpy_source)


def test_unknown_option_lists_the_valid_ones():
    with pytest.raises(TypeError, match="has no option max_threads; its options: boundscheck, "
                       "checks, fastmath, launch_bounds, maxnreg, lineinfo"):
        simt.kernel(max_threads=256)(axpy_source)
