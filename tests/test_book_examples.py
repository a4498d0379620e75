"""Every CUDA by Example port gives the book's result, checked against NumPy, at sizes
small enough for CI (the CLI runs the book's sizes)."""
import re
import subprocess
import sys

import numpy as np
import pytest

import simt
from simt.examples import (add_loop, ch03, hashtable, hist, interop, julia, lock, multigpu,
                           ray, ripple, shared_bitmap, streams)
from simt.examples.book import float_to_color, float_to_color_reference

def assert_nearly_equal_images(image, expected, max_diff=1, fraction=0.01):
    """Pixel-exact but for rare off-by-one bytes, where float32 math functions of the
    device and of NumPy may round a last bit differently before a byte conversion."""
    diff = np.abs(image.astype(np.int16) - expected.astype(np.int16))
    assert diff.max() <= max_diff, f"{int((diff > max_diff).sum())} bytes differ by more"
    assert (diff > 0).mean() <= fraction


# -- chapter 3 ----------------------------------------------------------------------------


def test_ch03_hello_and_parameters(device, capsys):
    ch03.hello_world()
    ch03.simple_kernel()
    assert ch03.simple_kernel_params() == 9
    assert capsys.readouterr().out == "Hello, World!\nHello, World!\n2 + 7 = 9\n"


def test_ch03_device_query_and_choice(device, capsys):
    count = ch03.enum_gpu()
    out = capsys.readouterr().out
    assert out.count("--- General Information for device") >= 1
    assert f"Name:  {device.properties.name}" in out
    chosen = ch03.set_gpu()
    assert 0 <= chosen < count
    simt.set_device(device)     # set_gpu switched the current device


# -- chapters 4 and 5 ---------------------------------------------------------------------


@pytest.mark.parametrize("program", ["add_loop_cpu", "add_loop_gpu", "add_loop_gpu_threads"])
def test_add_loops(device, capsys, program):
    a, b, c = getattr(add_loop, program)()
    np.testing.assert_array_equal(c, a + b)
    assert capsys.readouterr().out.splitlines()[3] == f"{a[3]} + {b[3]} = {a[3] + b[3]}"


def test_add_loop_long(device, capsys):
    a, b, c = add_loop.add_loop_long(n=5000)
    np.testing.assert_array_equal(c, a + b)
    assert capsys.readouterr().out == "We did it!\n"


def test_julia_cpu(device, tmp_path):
    image = julia.julia_cpu(out_dir=str(tmp_path), dim=100)
    np.testing.assert_array_equal(image[..., 0] > 0, julia.reference(100))
    assert (tmp_path / "julia_cpu.png").exists()


@pytest.mark.parametrize("program", ["ripple", "ripple_interop"])
def test_ripple_frames(device, tmp_path, program):
    frames = 3
    image = getattr(ripple, program)(out_dir=str(tmp_path), dim=64, frames=frames)
    assert_nearly_equal_images(image, ripple.reference(64, frames - 1))
    assert list(tmp_path.iterdir())          # a GIF, or numbered PNGs without Pillow


def test_shared_bitmap(device, tmp_path):
    image = shared_bitmap.shared_bitmap(out_dir=str(tmp_path), dim=64)
    assert_nearly_equal_images(image, shared_bitmap.reference(64))


def test_shared_bitmap_nosync_race_is_reported():
    with simt.use_device("cpu", checks=True):
        with pytest.raises(simt.RaceConditionError):
            shared_bitmap.render(shared_bitmap.kernel_nosync, 32)


# -- chapter 6 ----------------------------------------------------------------------------


@pytest.mark.parametrize("use_const", [False, True], ids=["global", "constant"])
def test_ray_tracer(device, use_const):
    image = ray.render(use_const, dim=128, seed=3).image()
    expected = ray.reference(128, seed=3)
    # a fused multiply-add may move a sphere's edge by one pixel against NumPy
    diff = np.abs(image.astype(np.int16) - expected)
    assert (diff > 1).mean() < 0.002 and (diff > 0).mean() < 0.01


def test_ray_timed_prints_the_book_line(device, tmp_path, capsys):
    ray.ray_const(out_dir=str(tmp_path), dim=64)
    ray.ray_noconst(out_dir=str(tmp_path), dim=64)
    out = capsys.readouterr().out
    assert out.count("Time to generate:  ") == 2 and (tmp_path / "ray_const.png").exists()
    assert len(re.findall(r"Time to generate:  \d+\.\d ms", out)) == 2    # the book's one decimal
    ray.timed(False, out_dir=str(tmp_path), dim=64, digits=4)       # what run_book asks for
    assert re.search(r"Time to generate:  \d+\.\d{4} ms", capsys.readouterr().out)


# -- chapter 8 ----------------------------------------------------------------------------


def test_basic_interop(device, tmp_path):
    image = interop.basic_interop(out_dir=str(tmp_path), dim=64)
    assert_nearly_equal_images(image, interop.reference(64))


def test_float_to_color(device, rng):
    temps = rng.random((32, 32), dtype=np.float32)
    temps[0, :4] = [0, 0.5, 1, 0.25]
    dev_out = simt.device_array(32 * 32 * 4, np.uint8)
    float_to_color[(2, 2), (16, 16)](dev_out, simt.to_device(temps.ravel()))
    image = dev_out.copy_to_host().reshape(32, 32, 4)
    np.testing.assert_array_equal(image, float_to_color_reference(temps))


# -- chapter 9 ----------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", ["histo_kernel_gmem", "histo_kernel_shmem"])
def test_histogram(device, rng, kernel):
    buffer = rng.integers(0, 256, 300_000, dtype=np.uint8)
    histo = hist.histogram(getattr(hist, kernel), buffer)
    np.testing.assert_array_equal(histo, np.bincount(buffer, minlength=256))


def test_histogram_timed(device, capsys):
    hist.hist_shmem_atomics(size=100_000)
    out = capsys.readouterr().out
    assert "Time to generate:  " in out and "Histogram Sum:  100000" in out
    assert "Failure" not in out


# -- chapter 10 ---------------------------------------------------------------------------


@pytest.mark.parametrize("program", ["basic_single_stream", "basic_double_stream",
                                     "basic_double_stream_correct"])
def test_streams(device, capsys, program):
    if device.kind == "sim":
        pytest.skip("three launches of a million threads each take minutes on the sim device")
    host_a, host_b, host_c = getattr(streams, program)(full=2 * streams.N)
    np.testing.assert_array_equal(host_c, streams.reference(host_a, host_b))
    assert "Time taken:  " in capsys.readouterr().out


def test_copy_timed(device, capsys):
    rates = streams.copy_timed(size=1 << 16, copies=3)
    assert len(rates) == 4 and all(rate > 0 for rate in rates.values())
    assert capsys.readouterr().out.count("MB/s during copy") == 4


def test_malloc_array_is_host_memory_copies_fill_and_read(device, rng):
    """copy_timed's stand-in for malloc: zeros until written, and both copies work on it."""
    host = streams.malloc_array(1 << 16)
    assert host.dtype == np.int32 and host.flags.writeable and not host.any()
    values = rng.integers(-2**31, 2**31 - 1, host.size, dtype=np.int32)
    dev = simt.to_device(values)
    dev.copy_to_host(host)
    np.testing.assert_array_equal(host, values)
    other = simt.device_array(host.size, np.int32)
    other.copy_from(host[::-1].copy())
    np.testing.assert_array_equal(other.copy_to_host(), values[::-1])


# -- chapter 11 ---------------------------------------------------------------------------


def test_zero_copy_dot(device):
    n = 1 << 18
    c_malloc, c_mapped = multigpu.zero_copy_dot(size=n)
    assert abs(c_malloc / multigpu.exact(n) - 1) < 1e-5
    assert abs(c_mapped / multigpu.exact(n) - 1) < 1e-5


@pytest.mark.parametrize("program", ["multidevice", "portable_pinned"])
def test_two_devices(device, program):
    n = 1 << 18
    value = getattr(multigpu, program)(size=n)
    assert abs(value / multigpu.exact(n) - 1) < 1e-5


# -- appendix A ---------------------------------------------------------------------------


def test_dot_atomic_lock(device):
    if device.kind == "sim":
        pytest.skip("a lock made of atomics orders the accesses it guards; the sim device's "
                    "race check does not know locks and reports them")
    value, expected = lock.run(1 << 18)
    assert abs(value / expected - 1) < 1e-5


def _check_table(table, keys, capsys):
    assert hashtable.verify_table(table, keys.size) == keys.size
    entries, pool_keys, nexts = hashtable.copy_table_to_host(table)
    np.testing.assert_array_equal(pool_keys, keys)
    out = capsys.readouterr().out
    assert out.endswith(f"All {keys.size} elements found in hash table.\n")
    assert "hashed to" not in out


def test_hashtable_cpu(capsys):
    table = hashtable.hashtable_cpu(elements=20_000)
    _check_table(table, hashtable._inputs(20_000)[0], capsys)


def test_hashtable_gpu(device, capsys):
    if device.kind == "sim":
        pytest.skip("a lock made of atomics orders the accesses it guards; the sim device's "
                    "race check does not know locks and reports them")
    keys, values = hashtable._inputs(50_000)
    table = hashtable.build_on_device(keys, values)
    _check_table(table, keys, capsys)


# -- the command line ---------------------------------------------------------------------


def test_cli_lists_every_port():
    out = subprocess.run([sys.executable, "-m", "simt", "examples"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    names = [line.split()[0] for line in out.stdout.splitlines()]
    for name in ("hello_world", "enum_gpu", "julia", "ripple", "dot", "shared_bitmap",
                 "ray_const", "basic_interop", "hist_shmem_atomics", "basic_single_stream",
                 "zero_copy_dot", "portable_pinned", "dot_atomic_lock", "hashtable_gpu"):
        assert name in names
    assert names.index("hello_world") < names.index("julia") < names.index("hashtable_gpu")


def test_heat_interop(device, tmp_path):
    if device.kind == "sim":
        pytest.skip("textures are not supported on the sim device")
    from simt.examples import heat_interop
    temps, image = heat_interop.heat_interop(out_dir=str(tmp_path), dim=64, frames=2)
    np.testing.assert_allclose(temps, heat_interop.reference(64, 2, heat_interop.STEPS_PER_FRAME), rtol=1e-5, atol=1e-6)
    assert_nearly_equal_images(image, float_to_color_reference(temps))


@pytest.mark.parametrize("program", ["ripple", "ripple_interop", "heat_interop"])
def test_animations_write_pictures_without_out(device, tmp_path, monkeypatch, program):
    """With no --out, an animation's frames go to ./simt-out as every example's do."""
    from simt.examples import heat_interop
    monkeypatch.chdir(tmp_path)
    run = getattr(ripple, program, None) or heat_interop.heat_interop
    run(dim=32, frames=2)
    written = sorted(p.suffix for p in (tmp_path / "simt-out").iterdir())
    assert written and set(written) <= {".gif", ".png"}
