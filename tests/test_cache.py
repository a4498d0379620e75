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
