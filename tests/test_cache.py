"""The disk cache: a second process loads compiled kernels instead of compiling (API.md 1)."""

import os
import subprocess
import sys
import textwrap

import pytest

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


def run_script(tmp_path, text, kernel, *args, script=None):
    """(stdout, "compiled" or "loaded", stderr) of ``text`` run in a new process on the
    CPU device, with the disk cache in tmp_path/cache (shared by the runs of a test);
    the script is tmp_path/``script``, by default KERNEL_script.py."""
    script = tmp_path / (script or f"{kernel}_script.py")
    script.write_text(text)
    src = os.path.join(os.path.dirname(__file__), os.pardir, "src")
    env = dict(os.environ, SIMT_CACHE_DIR=str(tmp_path / "cache"), SIMT_CACHE="1",
               SIMT_DEVICE="cpu", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(script), *args], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    compiled = f"{kernel}: compiled for" in done.stderr
    loaded = f"{kernel}: loaded from the disk cache" in done.stderr
    assert compiled != loaded, done.stderr
    return done.stdout.strip(), "compiled" if compiled else "loaded", done.stderr


def run(tmp_path, scale):
    out, how, _ = run_script(tmp_path, SCRIPT.format(scale=scale), "scaled")
    assert out == "ok"
    return how


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
    return "compiled" if "combine: compiled for" in done.stderr else "loaded"


def test_factory_kernels_do_not_share_an_entry(tmp_path):
    """One source, different closure values (an intrinsic, a device function, a dtype):
    each its own entry; the device function's module-level Constant is found again
    when its entry is loaded (issue 12: they used to share one, and load the wrong code)."""
    for name in ("add", "sub", "thrice", "float32"):
        assert run_variant(tmp_path, name) == "compiled", name
    for name in ("add", "sub", "thrice", "float32"):
        assert run_variant(tmp_path, name) == "loaded", name


CFG_SCRIPT = textwrap.dedent("""
    import logging
    import numpy as np
    import simt
    import cfg

    logging.basicConfig(level=logging.DEBUG, format="%(name)s %(message)s")

    @simt.kernel
    def through_module(a, out):
        i = simt.grid(1)
        if i < a.shape[0]:
            out[i] = cfg.sq(a[i]) + cfg.N

    a = np.arange(1, 5, dtype=np.float64)
    out = np.full(4, np.nan)
    through_module[1, 32](a, out)
    print(out.tolist())
""")


def test_editing_a_module_the_kernel_reads_through_recompiles(tmp_path):
    """A constant and a device function read as module attributes (cfg.N, cfg.sq) are in
    the key by value and by source (issue 12: the module was keyed by its name only)."""
    def with_cfg(n, body):
        (tmp_path / "cfg.py").write_text(
            f"import simt\nN = {n}\n\n@simt.device\ndef sq(x):\n    return {body}\n")
        out, how, _ = run_script(tmp_path, CFG_SCRIPT, "through_module")
        assert out == str([eval(body) + n for x in (1.0, 2.0, 3.0, 4.0)]), (n, body, out)
        return how
    assert with_cfg(3, "x * x") == "compiled"
    assert with_cfg(3, "x * x") == "loaded"
    assert with_cfg(4, "x * x") == "compiled"
    assert with_cfg(4, "x * x * x") == "compiled"
    assert with_cfg(3, "x * x") == "loaded"


UNREAD_GLOBAL = textwrap.dedent("""
    import logging
    import numpy as np
    import simt

    logging.basicConfig(level=logging.DEBUG, format="%(name)s %(message)s")
    x = np.random.rand(4_000_000)            # shares a name with threadIdx.x only

    @simt.kernel
    def lanes(out):
        out[simt.threadIdx.x] = simt.threadIdx.x

    out = np.zeros(32, np.int32)
    lanes[1, 32](out)
    assert (out == np.arange(32)).all()
    print("ok")
""")


def test_a_global_the_kernel_does_not_read_is_not_in_the_key(tmp_path):
    """Issue 12: a script's ``x = np.random.rand(n)`` beside ``threadIdx.x`` entered the
    key, so every run compiled again and wrote one more file."""
    assert run_script(tmp_path, UNREAD_GLOBAL, "lanes")[:2] == ("ok", "compiled")
    assert len(os.listdir(tmp_path / "cache")) == 1
    assert run_script(tmp_path, UNREAD_GLOBAL, "lanes")[:2] == ("ok", "loaded")
    assert len(os.listdir(tmp_path / "cache")) == 1


def _truncate(data):
    return data[:len(data) // 2]


def _flip_a_byte(data):
    at = len(data) * 3 // 4
    return data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1:]


def _foreign_pickle(data):
    import pickle
    return pickle.dumps({"not": "a simt entry"})


@pytest.mark.parametrize("damage", [_truncate, _flip_a_byte, _foreign_pickle])
def test_a_damaged_entry_is_discarded_with_a_warning_and_rebuilt(tmp_path, damage):
    """Issue 12: a damaged entry raised a raw pickle exception in every later run, or
    loaded corrupted machine code; each entry now carries a checksum."""
    assert run(tmp_path, 3) == "compiled"
    (entry,) = (tmp_path / "cache").iterdir()
    entry.write_bytes(damage(entry.read_bytes()))
    out, how, err = run_script(tmp_path, SCRIPT.format(scale=3), "scaled")
    assert (out, how) == ("ok", "compiled")
    assert "RuntimeWarning: simt: discarded the disk cache entry" in err and str(entry) in err, err
    assert run(tmp_path, 3) == "loaded"


PARENT_CHILD = textwrap.dedent("""
    import logging
    import numpy as np
    import simt

    logging.basicConfig(level=logging.DEBUG, format="%(name)s %(message)s")
    SCALE = {scale}
    OFFSET = simt.Constant(np.array([{offset}], np.float32))

    @simt.kernel
    def child(a, out):
        i = simt.grid(1)
        if i < a.shape[0]:
            out[i] = a[i] * SCALE + OFFSET[0]

    @simt.kernel
    def parent(a, out):
        if simt.threadIdx.x == 0:
            child[1, 32](a, out)

    a = np.arange(1, 11, dtype=np.float32)
    out = np.full(10, np.nan, np.float32)
    parent[1, 1](a, out)
    assert (out == a * SCALE + np.float32({offset})).all(), out
    print("ok")
""")


def test_a_child_kernels_globals_are_in_its_parents_key(tmp_path):
    """A kernel launched from a kernel is compiled with it; what the child reads (a module
    constant, a Constant symbol placed at launch) keys the parent's entry."""
    def run_parent(scale, offset):
        out, how, _ = run_script(tmp_path, PARENT_CHILD.format(scale=scale, offset=offset),
                                 "parent")
        assert out == "ok"
        return how
    assert run_parent(3, 0.5) == "compiled"
    assert run_parent(3, 0.5) == "loaded"
    assert run_parent(4, 0.5) == "compiled"
    assert run_parent(4, 1.5) == "loaded"        # a Constant's values are placed at launch


CHECKED = """
import logging
import numpy as np
import simt
logging.basicConfig(level=logging.DEBUG, format="%(name)s %(message)s")
{padding}
@simt.kernel
def checked(a):
    i = simt.grid(1)
    if i < a.shape[0]:
        assert a[i] >= 0, "negative input"


try:
    checked[1, 32](np.array([1.0, -1.0]))
    simt.synchronize()
except simt.DeviceAssertError as exc:
    print(exc)
"""


def test_scripts_sharing_a_kernel_text_name_their_own_file_and_line(tmp_path):
    """Issue 33: two scripts with one kernel text shared one entry, so the second script's
    assert failure named the first script's file and line."""
    first, how, _ = run_script(tmp_path, CHECKED.format(padding=""), "checked",
                               script="first.py")
    assert how == "compiled" and "first.py:11" in first, first
    second, how, _ = run_script(tmp_path, CHECKED.format(padding="\n\n\n"), "checked",
                                script="second.py")
    assert how == "compiled" and "second.py:14" in second and "first.py" not in second, second
    again, how, _ = run_script(tmp_path, CHECKED.format(padding="\n\n\n"), "checked",
                               script="second.py")
    assert how == "loaded" and again == second


SWITCHED_OFF = SCRIPT.replace("import simt\n", "import simt\nsimt.config.cache = False\n")


def _files(folder):
    return sorted(os.path.relpath(os.path.join(root, name), folder)
                  for root, _, names in os.walk(folder) for name in names)


def test_config_cache_false_neither_reads_nor_writes_the_disk_cache(tmp_path):
    """Issue 36: ``simt.config.cache = False`` set a module attribute nobody read; the kernel
    was loaded from the disk cache and stored there as before."""
    off = tmp_path / "off"
    off.mkdir()
    out, how, _ = run_script(off, SWITCHED_OFF.format(scale=3), "scaled")
    assert (out, how) == ("ok", "compiled") and _files(off / "cache") == []
    assert run(tmp_path, 3) == "compiled"                    # cache on: an entry is kept
    kept = _files(tmp_path / "cache")
    assert kept
    out, how, _ = run_script(tmp_path, SWITCHED_OFF.format(scale=3), "scaled")
    assert (out, how) == ("ok", "compiled")                  # not read back
    assert _files(tmp_path / "cache") == kept                # nor written


def test_config_settings_are_the_modules_attributes(monkeypatch):
    import simt
    from simt.config import config
    before = config.cpu_threads
    with pytest.MonkeyPatch.context() as patch:     # undone by assignment, on every pytest
        patch.setattr(simt.config, "cpu_threads", before + 3)
        assert config.cpu_threads == before + 3 and simt.config.cpu_threads == before + 3
    assert config.cpu_threads == before
    with pytest.raises(AttributeError, match="no setting 'cahce'; did you mean 'cache'"):
        simt.config.cahce = False
