"""The command line and the package's behaviour in fresh processes: `simt --version`,
`cache info|clear`, `run NAME --help`, "did you mean", a closed pipe, XDG_CACHE_HOME and
kernels defined in `python -c`."""
import os
import re
import subprocess
import sys
import textwrap

import pytest


def simt_cli(*args, env=None, **kwargs):
    return subprocess.run([sys.executable, "-m", "simt", *args], capture_output=True,
                          text=True, timeout=120, env=env, **kwargs)


def test_version():
    import simt
    out = simt_cli("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"simt {simt.__version__}"


def test_no_command_prints_the_help():
    """Issue 36: `python -m simt` alone printed argparse's one-line error ("the following
    arguments are required: command"); it prints the help, every command with what it
    does, as a usage error (status 2, on stderr)."""
    out = simt_cli()
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("usage: python -m simt")
    for command in ("info", "examples", "run", "cache"):
        assert re.search(rf"^    {command} +\S", out.stderr, re.M), out.stderr
    assert "required" not in out.stderr


def test_unknown_example_suggests_the_closest():
    out = simt_cli("run", "julai")
    assert out.returncode == 2
    assert "did you mean julia?" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("name, offered", [
    ("ray", "did you mean ray_const or ray_noconst?"),
    ("hist", "did you mean hist_cpu, hist_gmem_atomics or hist_shmem_atomics?"),
    ("JULIA", "did you mean julia or julia_cpu?"),
    ("stream", "did you mean basic_double_stream, basic_double_stream_correct or "
               "basic_single_stream?"),
])
def test_an_unknown_example_is_offered_the_names_it_begins(name, offered):
    """Issue 36: difflib alone offered nothing for a module's name (ray, stream), one of three
    for hist, and nothing for a name in capitals."""
    out = simt_cli("run", name)
    assert out.returncode == 2
    assert out.stderr == (f"simt: no example {name!r}; {offered} `python -m simt examples` "
                          "lists them all\n")


def test_an_example_given_as_the_command_says_how_to_run_it():
    out = simt_cli("julia")
    assert out.returncode == 2
    assert out.stderr == "simt: 'julia' is an example, not a command: python -m simt run julia\n"


def test_run_name_help_says_what_it_does_and_runs_nothing():
    out = simt_cli("run", "julia", "--help")
    assert out.returncode == 0
    assert "Julia set" in out.stdout and "--device" in out.stdout
    assert "running" not in out.stderr


def test_cache_info_and_clear(tmp_path):
    env = dict(os.environ, SIMT_CACHE_DIR=str(tmp_path))
    (tmp_path / "k-1-2.simtc").write_bytes(b"x" * 10)
    (tmp_path / "notes.txt").write_text("not simt's")
    info = simt_cli("cache", "info", env=env)
    assert info.returncode == 0 and str(tmp_path) in info.stdout
    assert "1 compiled kernels" in info.stdout
    clear = simt_cli("cache", "clear", env=env)
    assert clear.returncode == 0 and "removed 1" in clear.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_closed_pipe_is_not_an_error():
    """`python -m simt examples | head -1`: the reader has gone before simt writes."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        out = subprocess.run([sys.executable, "-m", "simt", "examples"], stdout=write_end,
                             stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert "BrokenPipeError" not in out.stderr and "Traceback" not in out.stderr
    assert out.returncode == 0


def test_xdg_cache_home_is_honoured(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SIMT_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", "from simt.config import config; print(config.cache_dir)"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.stdout.strip() == str(tmp_path / "simt")


def test_a_kernel_defined_in_python_c_compiles():
    code = textwrap.dedent("""
        import numpy as np, simt
        @simt.kernel
        def twice(a):
            i = simt.threadIdx.x
            a[i] = 2 * a[i]
        x = np.arange(1.0, 9.0)
        twice[1, 8](x)
        print(x.tolist())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, SIMT_DEVICE="cpu"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str([2.0 * v for v in range(1, 9)])


def test_a_kernel_without_source_says_where_to_define_it():
    code = "import simt\nns = {}\nexec('def k(a):\\n    a[0] = 1\\n', {'simt': simt}, ns)\n" \
           "try:\n    simt.kernel(ns['k'])[1, 1](__import__('numpy').zeros(1))\n" \
           "except simt.CompileError as e:\n    print('CompileError:', e)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, SIMT_DEVICE="cpu"))
    assert out.returncode == 0, out.stderr
    assert "CompileError:" in out.stdout and "define" in out.stdout


def test_run_a_known_example_whose_module_cannot_import_names_the_cause():
    """Issue 33: with the example module's import failing (Pillow or NumPy missing), `run
    julia` said "no example 'julia'"; it names the import error, and a misspelt name of such
    an example is still suggested."""
    code = textwrap.dedent("""
        import importlib.abc, sys
        class Missing(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "simt.examples.julia":
                    raise ModuleNotFoundError("No module named 'PIL'", name="PIL")
        sys.meta_path.insert(0, Missing())
        from simt.cli import main
        print("status", main(["run", "julia"]), main(["run", "julia_cpu"]),
              main(["run", "julai_cpu"]), flush=True)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert "status 1 1 2" in out.stdout, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 3 and "Traceback" not in out.stderr
    for name, line in zip(("julia", "julia_cpu"), lines):
        assert line.startswith(f"simt: example '{name}' cannot run: its module "
                               "simt.examples.julia failed to import: ModuleNotFoundError: "
                               "No module named 'PIL' (the module 'PIL' is not installed)"), line
    assert "no example 'julai_cpu'; did you mean julia_cpu?" in lines[2]
