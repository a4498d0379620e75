"""CUDA by Example chapter 7: the three heat-transfer versions agree with NumPy."""
import numpy as np
import pytest

from simt.examples import heat


@pytest.mark.parametrize("version", ["global", "tex1d", "tex2d"])
def test_heat_matches_numpy(device, version):
    if device.kind == "sim" and version.startswith("tex"):
        pytest.skip("textures are not supported on the sim device")
    sim = heat.Simulation(version, dim=64)
    image = sim.frame(steps=20)
    want = heat.reference(64, frames=1, steps=20)
    # fused multiply-adds (CUDA's default contraction) may round differently from NumPy
    np.testing.assert_allclose(sim.temperatures(), want, rtol=1e-5, atol=1e-6)
    assert image.shape == (64, 64, 4) and np.all(image[..., 3] == 255)
    assert len(np.unique(image[..., 0])) > 3          # a picture, not a flat colour


@pytest.mark.parametrize("version", ["global", "tex1d", "tex2d"])
def test_heat_frames_carry_the_swapped_buffers_on(device, version):
    """Frames of an odd number of steps: each frame starts from the buffers (and the
    textures over them) the last one ended with."""
    if device.kind == "sim" and version.startswith("tex"):
        pytest.skip("textures are not supported on the sim device")
    sim = heat.Simulation(version, dim=64)
    for _ in range(3):
        sim.frame(steps=7)
    want = heat.reference(64, frames=3, steps=7)
    np.testing.assert_allclose(sim.temperatures(), want, rtol=1e-5, atol=1e-6)


def test_heat_example_writes_png(device, tmp_path, capsys):
    if device.kind == "sim":
        pytest.skip("textures are not supported on the sim device")
    path = heat.run("tex2d", frames=1, out_dir=str(tmp_path), dim=128)
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert "Average Time per frame:" in capsys.readouterr().out
