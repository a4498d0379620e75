"""Loads and stores with cache hints (issue 15 item 6, guide B.10-B.12): the values on
every device, bounds checks, read-only arrays, and the PTX cache operators."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.ir import types as T
from conftest import poison, random_array

LOADS = ["ldg", "ldcg", "ldca", "ldcs", "ldlu", "ldcv"]
STORES = ["stwb", "stcg", "stcs", "stwt"]


@simt.kernel
def hinted(a, m, out, out2):
    """Each load kind from a 1-d and a 2-d array, each store kind into a 2-d array."""
    i = simt.grid(1)
    if i < a.shape[0]:
        j = i % m.shape[1]
        out[0, i] = simt.ldg(a, i) + simt.ldg(m, (i, j))
        out[1, i] = simt.ldcg(a, i) + simt.ldcg(m, (i, j))
        out[2, i] = simt.ldca(a, i) + simt.ldca(m, (i, j))
        out[3, i] = simt.ldcs(a, i) + simt.ldcs(m, (i, j))
        out[4, i] = simt.ldlu(a, i) + simt.ldlu(m, (i, j))
        out[5, i] = simt.ldcv(a, i) + simt.ldcv(m, (i, j))
        simt.stwb(out2, (0, i), a[i] * 2)
        simt.stcg(out2, (1, i), a[i] * 3)
        simt.stcs(out2, (2, i), a[i] * 4)
        simt.stwt(out2, (3, i), m[i, j])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.float16],
                         ids=lambda d: d.__name__)
def test_hinted_loads_and_stores_compute_as_plain_ones(device, rng, dtype):
    n = 70
    a, m = random_array(rng, n, dtype), random_array(rng, (n, 3), dtype)
    out, out2 = poison((6, n), dtype), poison((4, n), dtype)
    hinted[3, 32](a, m, out, out2)
    j = np.arange(n) % 3
    with np.errstate(over="ignore"):
        want = a + m[np.arange(n), j]
        np.testing.assert_array_equal(out, np.broadcast_to(want, (6, n)))
        np.testing.assert_array_equal(out2, np.stack([a * dtype(2), a * dtype(3), a * dtype(4),
                                                      m[np.arange(n), j]]))


@simt.kernel
def flip(flags):
    i = simt.grid(1)
    simt.stcs(flags, i, not simt.ldcs(flags, i))


def test_bool_arrays(device, rng):
    flags = rng.random(40) < 0.5
    want = ~flags
    flip[1, 40](flags)
    np.testing.assert_array_equal(flags, want)


@simt.kernel
def past_the_end(a, out):
    out[0] = simt.ldcg(a, a.shape[0])


@simt.kernel
def store_past_the_end(a):
    simt.stwt(a, (0, a.shape[1]), 1.0)


def test_hinted_accesses_are_bounds_checked(device):
    if device.kind != "cpu":
        pytest.skip("bounds checks are the CPU device's")
    with pytest.raises(simt.IllegalAddressError, match=r"index 8 is outside dimension 0 "
                                                       r"\(size 8\) of 'a'"):
        past_the_end[1, 1](np.ones(8), np.zeros(1))
    with pytest.raises(simt.IllegalAddressError, match=r"outside dimension 1 \(size 4\)"):
        store_past_the_end[1, 1](np.zeros((2, 4)))


@simt.kernel
def write_hinted(out, src):
    i = simt.grid(1)
    simt.stwb(out, i, src[i])


def test_a_hinted_store_is_a_write(device):
    frozen = np.zeros(8)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="'write_hinted' writes its parameter 'out'"):
        write_hinted[1, 8](frozen, np.arange(8.0))
    assert not frozen.any()
    readonly = np.arange(8.0)
    readonly.flags.writeable = False
    out = poison(8, np.float64)
    hinted_copy[1, 8](readonly, out)                    # ldg of a read-only array: allowed
    np.testing.assert_array_equal(out, readonly)


@simt.kernel
def hinted_copy(src, out):
    i = simt.grid(1)
    out[i] = simt.ldg(src, i)


@simt.kernel
def ldg_shared(out):
    s = simt.shared.array(4, np.float32)
    s[0] = 1.0
    out[0] = simt.ldg(s, 0)


@simt.kernel
def ldg_wrong_rank(m, out):
    out[0] = simt.ldcg(m, 0)


@pytest.mark.parametrize("kernel, types, message", [
    (ldg_shared, [np.float32], r"simt.ldg reads and writes global memory; s is a shared array"),
    (ldg_wrong_rank, [(np.float32, 2), np.float32],
     r"simt.ldcg on a 2-d array needs 2 indices, got 1"),
])
def test_misuse_is_a_compile_error(kernel, types, message):
    arrays = [T.Array(np.dtype(t[0]), t[1], "C") if isinstance(t, tuple)
              else T.Array(np.dtype(t), 1, "C") for t in types]
    with pytest.raises(simt.CompileError, match=message):
        kernel.typed_ir(arrays)


def test_ptx_cache_operators():
    text = hinted.inspect_ptx("void(float32[::1], float32[:, ::1], float32[:, ::1], "
                              "float32[:, ::1])")
    for name in LOADS:
        op = {"ldg": "nc"}.get(name, name[2:])
        assert len(re.findall(rf"ld\.global\.{op}\.b32", text)) == 2, name
    for name in STORES:
        assert f"st.global.{name[2:]}.b32" in text, name
    small = flip.inspect_ptx("void(bool[::1])")
    assert "ld.global.cs.u8" in small and "st.global.cs.u8" in small
    if shutil.which("ptxas"):
        for code in (text, small):
            done = subprocess.run(["ptxas", "-arch=sm_90", "-", "-o", "/dev/null"],
                                  input=code, capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
