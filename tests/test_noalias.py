"""@simt.kernel(noalias=True) (issue 35 item 4): array parameters are __restrict__. The GPU's
kernel marks their pointers ``noalias`` (PTX: read-only arrays through ``ld.global.nc``), the
CPU's accesses carry LLVM's scoped alias metadata; checked mode (the CPU with checks=True,
and the sim device) refuses a launch that passes overlapping arrays, one of them written,
naming both parameters."""
import numpy as np
import pytest

import simt
from conftest import poison

SIG = "void(float32[::1], float32[::1], float32[::1])"


def add_twice(a, b, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]             # LINE: first store
        out[i] += a[i] * b[i]


def test_noalias_results(device, rng):
    a, b = (rng.uniform(-2, 2, 1000).astype(np.float32) for _ in range(2))
    out = poison(1000, np.float32)
    simt.kernel(noalias=True)(add_twice)[8, 128](a, b, out)
    want = (a + b) + a * b
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)   # a*b may fuse


def test_ptx_marks_parameters_noalias():
    plain = simt.kernel(add_twice).inspect_ptx(SIG)
    restrict = simt.kernel(noalias=True)(add_twice).inspect_ptx(SIG)
    assert "ld.global.nc" not in plain and "ld.global.nc" in restrict
    # a and b are loaded once, and out stored once: nothing can change them in between
    assert restrict.count("ld.global.nc") == 2 and restrict.count("st.global") == 1
    assert plain.count("st.global") == 2


def test_cpu_accesses_carry_alias_scopes():
    with simt.use_device("cpu"):
        plain = str(simt.kernel(add_twice, cache=False).compile(SIG).binary.stages["optimized"])
        restrict = str(simt.kernel(noalias=True, cache=False)(add_twice).compile(SIG)
                       .binary.stages["optimized"])
    assert "!alias.scope" not in plain
    assert "!alias.scope" in restrict and "!noalias" in restrict
    loads = lambda text: text.count(" load float")            # noqa: E731
    assert loads(restrict) < loads(plain)      # a[i], b[i] not read again after the store


def line_of(tag):
    with open(__file__) as f:
        return next(n for n, text in enumerate(f, 1) if text.rstrip().endswith(f"# LINE: {tag}"))


@pytest.fixture(params=["cpu-checked", "sim"])
def checked_device(request):
    spec = ("cpu", {"checks": True}) if request.param == "cpu-checked" else ("sim", {})
    with simt.use_device(spec[0], **spec[1]) as current:
        yield current


def test_overlapping_arguments_are_refused(checked_device):
    kernel = simt.kernel(noalias=True)(add_twice)
    data = simt.to_device(np.arange(300, dtype=np.float32))
    with pytest.raises(simt.LaunchError, match=(
            r"kernel 'add_twice' is declared noalias=True \(__restrict__\), and its array "
            r"arguments 'b' and 'out' overlap in memory while it writes 'out' \(.*"
            rf"test_noalias.py, line {line_of('first store')}\)")):
        kernel[2, 128](simt.to_device(np.ones(200, np.float32)), data[:200], data[100:])
    with pytest.raises(simt.LaunchError, match="arguments 'a' and 'out' overlap"):
        kernel[2, 128](data, simt.to_device(np.ones(300, np.float32)), data)


def test_read_only_and_interleaved_arguments_may_share_memory(checked_device):
    """Two arrays only read may overlap (C's restrict allows it); a[::2] and a[1::2] share
    no element."""
    kernel = simt.kernel(noalias=True)(add_twice)
    host = np.arange(400, dtype=np.float32)
    x = simt.to_device(host[:200])
    out = simt.to_device(poison(400, np.float32))
    kernel[2, 128](x, x, out[::2])
    kernel[2, 128](x, x, out[1::2])
    np.testing.assert_allclose(out.copy_to_host()[::2], host[:200] * 2 + host[:200] ** 2)
    np.testing.assert_allclose(out.copy_to_host()[1::2], host[:200] * 2 + host[:200] ** 2)


def test_without_noalias_overlap_is_not_refused(checked_device):
    """The same launch of a kernel without noalias runs, with C's aliasing semantics: out
    is b, so the second statement reads the first one's result."""
    a = np.linspace(-1, 1, 200, dtype=np.float32)
    data = simt.to_device(np.arange(200, dtype=np.float32))
    simt.kernel(add_twice)[2, 128](simt.to_device(a), data, data)
    first = a + np.arange(200, dtype=np.float32)
    np.testing.assert_allclose(data.copy_to_host(), first + a * first, rtol=1e-6, atol=1e-5)


def test_bad_noalias_value_is_refused():
    with pytest.raises(TypeError, match="@simt.kernel 'add_twice': noalias is True or False"):
        simt.kernel(noalias="yes")(add_twice)
