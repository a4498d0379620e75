"""simt.arch() (issue 35 item 8): CUDA's __CUDA_ARCH__ as a compile-time constant, (major,
minor) of the GPU target, (0, 0) on the cpu and sim devices; a test on it compiles one branch
only, so one kernel source specialises per device. @simt.kernel(arch=...) picks the GPU
target (PTX made here without a GPU)."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from conftest import poison

SIG = "void(int32[:], int32[:], int32[:])"


@simt.device
def gpu_only_add(x, y):
    """x + y through inline PTX, which the CPU and sim devices cannot run (no fallback)."""
    return simt.asm("add.s32 $0, $1, $2;", "=r,r,r", x, y, result=np.int32)


@simt.kernel
def specialised(x, y, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        if simt.arch() >= (8, 0):
            out[i] = gpu_only_add(x[i], y[i])        # never compiled on the cpu and sim
        elif simt.arch() == (0, 0):
            out[i] = x[i] + y[i]
        else:
            out[i] = x[i] - y[i]
        code = simt.arch()[0] * 10 + simt.arch()[1]
        out[i] += 0 if code >= 0 else 1               # a folded expression: a constant


def test_one_source_runs_on_every_device(device, rng):
    x, y = (rng.integers(-1000, 1000, 300).astype(np.int32) for _ in range(2))
    out = poison(300, np.int32)
    specialised[3, 128](x, y, out)
    np.testing.assert_array_equal(out, x + y)


def test_arch_is_the_gpu_target():
    ptx = specialised.inspect_ptx(SIG)
    assert ".target sm_90" in ptx and "add.s32" in ptx and "sub.s32" not in ptx
    old = specialised.inspect_ptx(SIG, arch="sm_70")
    assert ".target sm_70" in old and "sub.s32" in old


def arch_value(out):
    out[0] = simt.arch()[0]
    out[1] = simt.arch()[1]
    out[2] = 1 if simt.arch() > (8, 6) else 0


@pytest.mark.parametrize("arch, want", [("sm_80", (8, 0)), ((8, 6), (8, 6)),
                                        ("sm_90a", (9, 0))])
def test_kernel_arch_option(arch, want):
    kernel = simt.kernel(arch=arch)(arch_value)
    ptx = kernel.inspect_ptx("void(int32[:])")
    target = arch if isinstance(arch, str) else f"sm_{arch[0]}{arch[1]}"
    assert f".target {target}" in ptx
    stores = [line.split(",")[-1].strip(" ;") for line in ptx.splitlines() if "st.global" in line]
    assert stores == [str(want[0]), str(want[1]), str(int(want > (8, 6)))], stores


def test_arch_is_zero_on_the_host(device):
    """arch= is for GPU code only: on the cpu and sim devices simt.arch() stays (0, 0); on a
    GPU (compute capability 8.0 or newer) the kernel is compiled for sm_80: (8, 0)."""
    out = poison(3, np.int32)
    simt.kernel(arch="sm_80")(arch_value)[1, 1](out)
    want = [8, 0, 0] if device.kind == "cuda" else [0, 0, 0]
    np.testing.assert_array_equal(out, want)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_arch_ptx_assembles(tmp_path):
    for arch in ("sm_80", "sm_90"):
        path = tmp_path / f"{arch}.ptx"
        path.write_text(simt.kernel(arch=arch)(specialised.pyfunc).inspect_ptx(SIG))
        subprocess.run(["ptxas", f"-arch={arch}", str(path), "-o", str(tmp_path / "k.cubin")],
                       check=True, capture_output=True)


def test_dead_branch_is_not_compiled_in_device_functions(device, rng):
    @simt.device
    def pick(x, y):
        return gpu_only_add(x, y) if simt.arch() >= (7, 0) else x * y

    @simt.kernel
    def k(x, y, out):
        i = simt.grid(1)
        if i < out.shape[0]:
            out[i] = pick(x[i], y[i])
    x, y = (rng.integers(-100, 100, 64).astype(np.int32) for _ in range(2))
    out = poison(64, np.int32)
    k[1, 64](x, y, out)
    # on a GPU (cc >= 7.0) the other branch is the one compiled: gpu_only_add
    want = x + y if device.kind == "cuda" else x * y
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("value, error, text", [
    ("sm_8", TypeError, "arch is a GPU target such as 'sm_80'"),
    ("compute_80", TypeError, "arch is a GPU target"),
    (80, TypeError, "arch is a GPU target"),
    ("sm_30", ValueError, "compute capability 3.0; simt compiles for 5.0 to 12.x"),
])
def test_bad_arch_values_are_refused(value, error, text):
    with pytest.raises(error, match=text):
        simt.kernel(arch=value)(arch_value)


def test_arch_takes_no_arguments():
    @simt.kernel
    def k(out):
        out[0] = simt.arch(1)[0]
    with pytest.raises(simt.CompileError, match=r"simt.arch\(\) takes no arguments"):
        k[1, 1](np.zeros(1, np.int32))
