"""Compilation as named stages (compiler/pipeline.py): every stage kept on the binary
and read back by ``kernel.inspect_*`` without compiling again, SIMT_DUMP printing each,
and one CompileOptions value (compiler/options.py) with one default per device."""
import types

import numpy as np
import pytest

import simt
from simt.compiler import pipeline
from simt.compiler.options import CompileOptions
from simt.config import config
from simt.ir import types as T
from simt.runtime import cache

SIG = "void(float32[::1], float32)"
TABLE = simt.Constant(np.arange(4, dtype=np.float32))


@simt.device
def scaled(x, s):
    return x * s + TABLE[1]


def make_kernel(**options):
    def axpy(a, s):
        i = simt.grid(1)
        if i < a.shape[0]:
            a[i] = scaled(a[i], s)
    return simt.kernel(axpy, cache=False, **options)


@pytest.fixture
def compiles(monkeypatch):
    """How many times a pipeline ran (each back-end compile runs one)."""
    count = []
    run = pipeline.run
    monkeypatch.setattr(pipeline, "run", lambda *a: count.append(1) or run(*a))
    return count


def test_every_stage_is_kept_on_the_binary():
    with simt.use_device("cpu"):
        binary = make_kernel().compile(SIG).binary
    assert list(binary.stages) == ["typed_ir", "inlined", "llvm_ir", "optimized", "object"]
    assert binary.stages["object"] is binary.object_code
    assert "define" in binary.stage_text("llvm_ir") and "define" in binary.stage_text("optimized")


def test_inspect_reads_the_kept_stages(compiles):
    k = make_kernel()
    with simt.use_device("cpu"):
        first = k.llvm_ir(SIG)
        assert k.llvm_ir(SIG) is first and k.inspect_llvm() is first
        assert "simt_kernel_axpy" in first
        assert "axpy" in k.inspect_types()
    assert len(compiles) == 1


def test_inspect_ptx_without_a_gpu(compiles):
    k = make_kernel()
    with simt.use_device("cpu"):
        ptx = k.inspect_ptx(SIG)
        assert ".target sm_90" in ptx and "simt_kernel_axpy" in ptx
        assert k.ptx(SIG) is ptx and k.inspect_ptx(SIG, arch="sm_90") is ptx
        assert ".target sm_80" in k.inspect_ptx(SIG, arch="sm_80")
    assert len(compiles) == 2


def test_inspect_sass_names_the_gpu():
    with simt.use_device("cpu"):
        with pytest.raises(simt.NotSupportedError, match="GPU"):
            make_kernel().inspect_sass(SIG)


def test_inspect_sass_on_a_gpu(device):
    """The GPU's machine code of a compiled kernel: SASS text with the kernel's name and
    its float32 arithmetic (ptxas/nvdisasm or cuobjdump from CUDA)."""
    if device.kind != "cuda":
        pytest.skip("SASS is a GPU's machine code")
    k = make_kernel()
    k.compile(SIG)
    sass = k.inspect_sass(SIG)
    assert isinstance(sass, str) and "axpy" in sass, sass[:2000]
    assert any(op in sass for op in ("FMUL", "FFMA", "FADD")), sass[:2000]


def test_signature_choice():
    k = make_kernel()
    with simt.use_device("cpu"):
        with pytest.raises(ValueError, match="pass a signature"):
            k.inspect_llvm()
        k.compile(SIG)
        assert isinstance(k.inspect_llvm(), str)
        k.compile("void(float64[::1], float64)")
        texts = k.inspect_llvm()
        assert isinstance(texts, dict) and len(texts) == 2
        assert all("simt_kernel_axpy" in t for t in texts.values())


def test_dump_prints_every_stage(monkeypatch, capsys):
    monkeypatch.setattr(config, "dump", True)
    with simt.use_device("cpu"):
        make_kernel().compile(SIG)
    err = capsys.readouterr().err
    for stage in ("typed_ir", "inlined", "llvm_ir", "optimized", "object"):
        assert f"# simt: {stage} of 'axpy'" in err


def test_options_one_default_per_device():
    k = make_kernel()
    assert k.options_for("cpu") == CompileOptions(boundscheck=True)
    assert k.options_for("cuda") == CompileOptions(boundscheck=False)
    assert make_kernel(boundscheck=False).options_for("cpu").boundscheck is False
    with simt.use_device("cpu", boundscheck=False):
        unchecked = k.llvm_ir(SIG)
    with simt.use_device("cpu"):
        checked = k.llvm_ir(SIG)
    assert checked != unchecked and len(k.compiled) == 2
    assert {key[2].split(";")[0] for key in k.compiled} == {"boundscheck=True",
                                                            "boundscheck=False"}


def test_unknown_kernel_option_lists_the_valid_ones():
    with pytest.raises(TypeError, match="boundscheck"):
        make_kernel(fast=True)




def test_dependencies_come_from_the_front_end():
    k = make_kernel()
    deps = cache.dependencies(k.typed_ir(T.parse_signature(SIG)))
    found = {(path, name): value for path, name, value in deps}
    assert found[((), "scaled")] is scaled
    assert found[(("scaled",), "TABLE")] is TABLE
    with simt.use_device("cpu"):
        assert k.compile(SIG).binary.symbol_objects == [TABLE]


def test_sass_names_the_missing_tools(monkeypatch):
    from simt.backends.cuda import compile as cuda_compile
    monkeypatch.setattr(cuda_compile.shutil, "which",
                        lambda tool: "/usr/bin/ptxas" if tool == "ptxas" else None)
    with simt.use_device("cpu"):
        binary = make_kernel()._ptx_binary(T.parse_signature(SIG), "sm_90")
    with pytest.raises(simt.NotSupportedError, match="nvdisasm or cuobjdump"):
        cuda_compile.sass(binary)


HOLDER = types.SimpleNamespace(TABLE=simt.Constant(np.arange(4, dtype=np.float32) * 2))


@simt.kernel
def read_through_attribute(out):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = HOLDER.TABLE[i]


def test_symbols_travel_with_the_binary(device):
    """The compiler found the Constant (here through an attribute, which no lookup by
    name finds again); the binary carries it to the launch."""
    out = np.zeros(4, np.float32)
    read_through_attribute[1, 4](out)
    np.testing.assert_array_equal(out, HOLDER.TABLE.copy_to_host())
