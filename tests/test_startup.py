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
