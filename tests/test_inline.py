"""@simt.device(inline='always' | 'never') (issue 35 item 4): CUDA's __forceinline__ and
__noinline__. 'never' keeps the device function a function of its own (an LLVM call on the
CPU, a PTX ``.func`` and ``call`` on GPUs); 'always' and the default inline it. The sim
device interprets kernels and has no inlining: the results are the same there."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from conftest import poison

SIG = "void(float32, float32[:], float32[:])"


def make_kernel(inline):
    """A kernel calling a device function with the given inline option (None: default)."""
    decorate = simt.device if inline is None else simt.device(inline=inline)

    @decorate
    def scaled(a, x):
        return a * x / (x * x + a)

    @simt.kernel(cache=False)          # compiled here: the tests read its stages
    def axpy(a, x, out):
        i = simt.grid(1)
        if i < out.shape[0]:
            out[i] = scaled(a, x[i]) + 1.0
    return axpy


@pytest.mark.parametrize("inline", [None, "always", "never"])
def test_inline_options_compute_the_same(device, rng, inline):
    kernel = make_kernel(inline)
    x = rng.uniform(0.5, 2.0, 300).astype(np.float32)
    out = poison(300, np.float32)
    kernel[3, 128](np.float32(2.0), x, out)
    want = 2.0 * x / (x * x + 2.0) + 1.0
    np.testing.assert_allclose(out, want, rtol=1e-6)


def calls_in(text):
    return [line for line in text.splitlines() if " call " in line and "simt.device" in line]


def test_never_keeps_a_call_on_the_cpu():
    """The optimized LLVM IR of the CPU device: 'never' leaves the call, 'always' none."""
    with simt.use_device("cpu"):
        never = make_kernel("never").compile(SIG).binary.stages["optimized"]
        always = make_kernel("always").compile(SIG).binary.stages["optimized"]
    assert calls_in(str(never)) and "noinline" in str(never)
    assert not calls_in(str(always))


def test_never_is_a_ptx_function():
    never = make_kernel("never").inspect_ptx(SIG)
    always = make_kernel("always").inspect_ptx(SIG)
    assert ".func" in never and "call.uni" in never
    assert ".func" not in always and "call" not in always


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_noinline_ptx_assembles(tmp_path):
    path = tmp_path / "never.ptx"
    path.write_text(make_kernel("never").inspect_ptx(SIG))
    subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "never.cubin")],
                   check=True, capture_output=True)


@pytest.mark.parametrize("value", ["sometimes", True, 1])
def test_bad_inline_value_is_refused(value):
    with pytest.raises(ValueError, match=r"@simt.device 'f': inline is 'always' or 'never'"):
        @simt.device(inline=value)
        def f(x):
            return x


def test_unknown_device_option_is_refused():
    with pytest.raises(TypeError, match="@simt.device has no option inlined; its options: "
                                        "inline"):
        @simt.device(inlined="never")
        def f(x):
            return x
