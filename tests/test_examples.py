"""The runnable examples give the right answers on the device under test."""
import sys

import numpy as np
import pytest

import simt
from simt.examples import dot, julia, vectoradd


def test_vectoradd(device):
    a, b, c = vectoradd.run(n=5000, seed=3)
    np.testing.assert_array_equal(c, a + b)


def test_dot(device):
    result, exact = dot.run()
    assert abs(result - exact) <= 1e-5 * exact


def test_julia_matches_numpy(device):
    if device.kind == "sim":
        pytest.skip("a 1000x1000 image takes minutes on the sim device")
    image = julia.render()
    inside = image[..., 0] > 0
    reference = julia.reference()
    # float32 iteration is chaotic at the set's edge: a fused multiply-add (CUDA's
    # default contraction) may flip a few boundary pixels relative to NumPy
    assert (inside != reference).mean() < 0.005
    assert np.all(image[..., 3] == 255) and np.all(image[..., 1] == 0)


def test_julia_writes_png(device, tmp_path):
    if device.kind == "sim":
        pytest.skip("a 1000x1000 image takes minutes on the sim device")
    path = julia.main(out_dir=str(tmp_path))
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_pngs_are_written_without_pillow(tmp_path, monkeypatch):
    """README: julia (and every still picture) needs no Pillow; without it save_png writes the
    PNG itself. Pillow, where installed, reads it back pixel for pixel."""
    from simt.examples._common import save_png
    image = np.random.default_rng(36).integers(0, 256, (7, 5, 4), dtype=np.uint8)
    monkeypatch.setitem(sys.modules, "PIL", None)          # `from PIL import ...` fails
    path = save_png(str(tmp_path / "x.png"), image)
    monkeypatch.delitem(sys.modules, "PIL")
    Image = pytest.importorskip("PIL.Image")
    with Image.open(path) as png:
        np.testing.assert_array_equal(np.asarray(png.convert("RGBA")), image)


def test_cli_runs_an_example(tmp_path):
    import subprocess, sys
    out = subprocess.run([sys.executable, "-m", "simt", "run", "vectoradd", "--device", "cpu"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "correct" in out.stdout


def _example_names():
    from simt.cli import find_examples
    return sorted(find_examples())


@pytest.mark.parametrize("name", _example_names())
def test_every_example_runs_at_its_default_size_on_the_gpu(device, name, tmp_path):
    """`simt run NAME` as a user types it, at the example's default size, on every GPU under
    test (on the CPU device the default sizes take minutes: their results are tested above and
    in test_book_examples.py at small sizes)."""
    if device.kind != "cuda":
        pytest.skip("the default sizes are for GPUs; other devices run the examples smaller")
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-m", "simt", "run", name, "--device", device.name,
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=300,
                         env=env)
    if name.endswith("_gl") and out.returncode == 1 and "NotSupportedError" in out.stderr:
        pytest.skip(out.stderr.strip().splitlines()[-1])   # no EGL here (tests/test_gl.py)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
