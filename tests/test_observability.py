"""What simt lets a user see: SIMT_DUMP's stages, the 'simt' logger, why no GPU is listed."""
import os
import subprocess
import sys
import textwrap

import simt
from simt.runtime import devices

PROGRAM = textwrap.dedent("""
    import numpy as np, simt
    @simt.kernel
    def scale(a, s):
        i = simt.threadIdx.x
        a[i] = a[i] * s
    x = np.arange(1.0, 5.0)
    scale[1, 4](x, 2.0)
    scale[1, 4](x.astype(np.float32), np.float32(2))
    print(x.tolist())
""")


def run_program(tmp_path, **env):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, SIMT_DEVICE="cpu",
                                                SIMT_CACHE_DIR=str(tmp_path / "cache"), **env))


def test_dump_to_a_folder_writes_every_stage_of_every_compile(tmp_path):
    out = run_program(tmp_path, SIMT_DUMP=str(tmp_path / "dump"))
    assert out.returncode == 0, out.stderr
    files = sorted(os.listdir(tmp_path / "dump"))
    for stem in ("scale", "scale-2"):               # two signatures: two compiles
        assert f"{stem}.typed_ir.simt" in files and f"{stem}.llvm_ir.ll" in files
        assert f"{stem}.object.o" in files
    assert "define" in (tmp_path / "dump" / "scale.llvm_ir.ll").read_text()
    assert (tmp_path / "dump" / "scale-2.typed_ir.simt").read_text().count("float32")


def test_log_level_shows_compiles_and_cache_hits(tmp_path):
    first = run_program(tmp_path, SIMT_LOG_LEVEL="debug")
    assert first.returncode == 0, first.stderr
    assert "simt INFO: scale: compiled for (" in first.stderr
    assert "not in the disk cache" in first.stderr
    second = run_program(tmp_path, SIMT_LOG_LEVEL="debug")
    assert "loaded from the disk cache" in second.stderr
    quiet = run_program(tmp_path)
    assert "simt" not in quiet.stderr


TWO_KERNELS = textwrap.dedent("""
    import numpy as np, simt
    @simt.kernel
    def reverse(a):
        s = simt.shared.array(4, np.float32)
        i = simt.threadIdx.x
        s[i] = a[i]
        simt.syncthreads()
        a[i] = s[3 - i]
    @simt.kernel
    def plain(a):
        i = simt.threadIdx.x
        a[i] = a[i] + 1
    x = np.arange(1.0, 5.0, dtype=np.float32)
    reverse[1, 4](x)
    plain[1, 4](x)
    print(x.tolist())
""")


def test_each_cache_miss_is_logged_once(tmp_path):
    """Issue 36: a launch looks for the entry made for its block shape and for the one made
    for any shape before it compiles, and each look logged "not in the disk cache": three
    lines per compile; a second process logged a miss before its hit."""
    (tmp_path / "prog.py").write_text(TWO_KERNELS)
    env = dict(os.environ, SIMT_DEVICE="cpu", SIMT_CACHE_DIR=str(tmp_path / "cache"),
               SIMT_LOG_LEVEL="debug")
    runs = [subprocess.run([sys.executable, str(tmp_path / "prog.py")], capture_output=True,
                           text=True, timeout=120, env=env) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0 and run.stdout.strip() == "[5.0, 4.0, 3.0, 2.0]", run.stderr
    first, second = (run.stderr.splitlines() for run in runs)
    for name in ("reverse", "plain"):
        assert [line for line in first if line.startswith(f"simt DEBUG: {name}: ")] == \
            [f"simt DEBUG: {name}: not in the disk cache for (float32[:] (C, global))"]
        assert sum(line.startswith(f"simt INFO: {name}: compiled for") for line in first) == 1
        mine = [line for line in second if f" {name}: " in line]
        assert len(mine) == 1 and "loaded from the disk cache" in mine[0], second


def test_a_bad_log_level_names_the_valid_ones(tmp_path):
    out = run_program(tmp_path, SIMT_LOG_LEVEL="loud")
    assert out.returncode != 0 and "debug, info, warning, error" in out.stderr


def test_why_no_gpu_is_said():
    reason = devices.why_none("cuda")
    if any(d.kind == "cuda" for d in simt.devices()):
        assert reason is None
    else:
        assert reason and isinstance(reason, str)
        from simt.cli import info
        import io
        text = io.StringIO()
        info(text)
        assert f"No cuda device listed: {reason}" in text.getvalue()


def test_libdevice_is_found_in_nvidia_wheels(tmp_path):
    """A pip-only install ('.[cu13]': the nvidia-nvvm wheel) has libdevice under
    site-packages/nvidia/cu13/nvvm/libdevice, with no toolkit on the machine."""
    folder = tmp_path / "nvidia" / "cu13" / "nvvm" / "libdevice"
    folder.mkdir(parents=True)
    (folder / "libdevice.10.bc").write_bytes(b"BC")
    code = ("from simt.backends.cuda import module\n"
            "print(*module._pip_libdevice_dirs(), sep='\\n')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                             [str(tmp_path)] + sys.path)))
    assert str(folder) in out.stdout.splitlines(), out.stderr
