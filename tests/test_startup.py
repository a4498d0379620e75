"""What `import simt` loads: the errors only; every other name at its first use (PEP 562),
so a program pays for the runtime and the compiler when it uses them, and not before."""
import os
import subprocess
import sys

SRC = os.path.join(os.path.dirname(__file__), os.pardir, "src")


def _modules(code):
    env = dict(os.environ, PYTHONPATH=SRC)
    env.pop("SIMT_LOG_LEVEL", None)
    done = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sorted("
                           "m for m in sys.modules if m.startswith(('simt', 'numpy', "
                           "'llvmlite')))))"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_import_simt_loads_only_the_errors():
    assert _modules("import simt") == {"simt", "simt.version", "simt.errors"}


def test_names_load_their_modules_at_first_use():
    loaded = _modules("import simt\nsimt.kernel\nsimt.to_device")
    assert {"simt.runtime.kernel", "simt.runtime.arrays"} <= loaded
    assert not any(m.startswith(("simt.lang", "simt.compiler.frontend", "llvmlite"))
                   for m in loaded), sorted(loaded)


def test_a_cached_gpu_kernel_needs_no_compiler_to_load():
    """The GPU's binary and launch path: no llvmlite, no kernel language, no IR nodes."""
    loaded = _modules("import simt.backends.cuda.kernels, simt.backends.cuda.binary\n"
                      "import simt.runtime.kernel, simt.runtime.cache")
    assert not any(m.startswith(("llvmlite", "simt.lang", "simt.ir.nodes",
                                 "simt.compiler.frontend")) for m in loaded), sorted(loaded)


def test_every_public_name_is_there():
    import simt
    assert len(simt.__all__) > 300
    missing = [n for n in simt.__all__ if getattr(simt, n, None) is None]
    assert not missing
    assert "float4" in dir(simt) and "make_float4" in simt.__all__


_LAUNCH_AND_EXIT = '''
import numpy as np, simt
simt.set_device("sim")

@simt.kernel
def ones(y):
    y[simt.grid(1)] = 1.0

y = simt.to_device(np.zeros(4))
ones[1, 4](y)
'''


def test_exit_right_after_a_first_launch_does_not_hang(tmp_path):
    """A process that ends right after its first launch: its arrays are freed at exit while
    the launch binder is imported on a thread of its own. That thread was a daemon, frozen
    at exit holding the import system's locks, and the sim device's release of an array
    imported a module: 1 to 9 exits of 10 hung (issue 33 item 7). 20 runs, 4 at a time."""
    script = tmp_path / "launch_and_exit.py"
    script.write_text(_LAUNCH_AND_EXIT)
    env = dict(os.environ, PYTHONPATH=SRC)
    hung = []
    for _ in range(5):
        runs = [subprocess.Popen([sys.executable, str(script)], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                for _ in range(4)]
        for run in runs:
            try:
                _, err = run.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                run.kill()
                run.communicate()
                hung.append(run)
                continue
            assert run.returncode == 0, err.decode()[-2000:]
    assert not hung, f"{len(hung)} of 20 processes hung at exit"
