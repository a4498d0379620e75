"""The disk cache: a second process loads compiled kernels instead of compiling (API.md 1)."""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import logging
    import numpy as np
    import simt

    logging.basicConfig(level=logging.DEBUG, format="%(name)s %(message)s")
    SCALE = {scale}

    @simt.kernel
    def scaled(a, out):
        i = simt.grid(1)
        if i < a.shape[0]:
            out[i] = a[i] * SCALE

    a = np.arange(1, 11, dtype=np.float32)
    out = np.full(10, np.nan, np.float32)
    scaled[1, 32](a, out)
    assert (out == a * SCALE).all(), out
    print("ok")
""")


def run(tmp_path, scale):
    script = tmp_path / "kernel_script.py"
    script.write_text(SCRIPT.format(scale=scale))
    src = os.path.join(os.path.dirname(__file__), os.pardir, "src")
    env = dict(os.environ, SIMT_CACHE_DIR=str(tmp_path / "cache"), SIMT_CACHE="1",
               SIMT_DEVICE="cpu", PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    compiled = "scaled: compiled in" in done.stderr
    loaded = "scaled: loaded from the disk cache" in done.stderr
    assert compiled != loaded, done.stderr
    return "compiled" if compiled else "loaded"


def test_second_process_loads_from_disk(tmp_path):
    assert run(tmp_path, 3) == "compiled"
    assert os.listdir(tmp_path / "cache")
    assert run(tmp_path, 3) == "loaded"


def test_changing_a_module_constant_recompiles(tmp_path):
    assert run(tmp_path, 3) == "compiled"
    assert run(tmp_path, 5) == "compiled"
    assert run(tmp_path, 3) == "loaded"


FACTORY = textwrap.dedent("""
    import logging
    import sys
    import numpy as np
    import simt

    logging.basicConfig(level=logging.DEBUG, format="%(name)s %(message)s")
    TABLE = simt.Constant(np.array([0.0, 0.5], np.float64))

    @simt.device
    def twice(x):
        return x * 2 + TABLE[1]

    @simt.device
    def thrice(x):
        return x * 3 + TABLE[1]

    def make(op, helper, cast):
        @simt.kernel
        def combine(total, a):
            i = simt.grid(1)
            if i < a.shape[0]:
                op(total, 0, helper(cast(a[i])))
        return combine

    VARIANTS = {"add": (simt.atomic.add, twice, np.float64),
                "sub": (simt.atomic.sub, twice, np.float64),
                "thrice": (simt.atomic.add, thrice, np.float64),
                "float32": (simt.atomic.add, twice, np.float32)}
    name = sys.argv[1]
    op, helper, cast = VARIANTS[name]
    a = np.full(4, 0.1, np.float64)
    total = np.zeros(1, np.float64)
    make(op, helper, cast)[1, 32](total, a)
    scale = 3 if helper is thrice else 2
    value = np.float64(cast(0.1)) * scale + 0.5
    expected = -4 * value if op is simt.atomic.sub else 4 * value
    assert np.isclose(total[0], expected, rtol=1e-12, atol=0), (name, total[0], expected)
    print("ok")
""")


def run_variant(tmp_path, name):
    script = tmp_path / "factory_script.py"
    script.write_text(FACTORY)
    src = os.path.join(os.path.dirname(__file__), os.pardir, "src")
    env = dict(os.environ, SIMT_CACHE_DIR=str(tmp_path / "cache"), SIMT_CACHE="1",
               SIMT_DEVICE="cpu", PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(script), name], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    return "compiled" if "combine: compiled in" in done.stderr else "loaded"


def test_factory_kernels_do_not_share_an_entry(tmp_path):
    """One source, different closure values (an intrinsic, a device function, a dtype):
    each its own entry; the device function's module-level Constant is found again
    when its entry is loaded (issue 12: they used to share one, and load the wrong code)."""
    for name in ("add", "sub", "thrice", "float32"):
        assert run_variant(tmp_path, name) == "compiled", name
    for name in ("add", "sub", "thrice", "float32"):
        assert run_variant(tmp_path, name) == "loaded", name
