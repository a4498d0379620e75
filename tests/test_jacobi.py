"""The Jacobi example: one device against NumPy, and split into parts against one device."""
import math

import numpy as np
import pytest

from simt.examples import jacobi


def test_chunks_cover_the_interior_rows_as_nvidia_splits_them():
    assert jacobi.chunks(12, 3) == [(1, 3), (4, 3), (7, 4)]
    assert jacobi.chunks(10, 1) == [(1, 8)]
    assert sum(rows for _, rows in jacobi.chunks(1026, 7)) == 1024
    with pytest.raises(ValueError, match="3 interior rows cannot be split over 4 parts"):
        jacobi.chunks(5, 4)


def test_one_device_matches_numpy_bit_for_bit(device):
    nx, ny, iterations = 70, 45, 17
    (domain,) = jacobi.make_domains(nx, ny, [device])
    start = domain.a.copy_to_host()
    y = np.arange(ny)
    np.testing.assert_allclose(start[:, 0], np.sin(2 * np.pi * y / (ny - 1)), atol=1e-15)
    np.testing.assert_array_equal(start[:, -1], start[:, 0])
    assert not start[:, 1:-1].any()
    norms = jacobi.solve([domain], iterations, nccheck=4)
    expected = jacobi.reference(start, iterations)
    np.testing.assert_array_equal(domain.a.copy_to_host()[1:-1], expected[1:-1])
    assert [i for i, _ in norms] == [0, 4, 8, 12, 16]
    # the last norm: the change made by the last sweep
    before = jacobi.reference(start, iterations - 1)
    assert math.isclose(norms[-1][1], np.sqrt(((expected - before)[1:-1, 1:-1] ** 2).sum()),
                        rel_tol=1e-12)


def test_parts_on_one_device_are_bit_identical_to_one_part(device):
    nx, ny, iterations = 64, 40, 12
    single = jacobi.make_domains(nx, ny, [device])
    norms1 = jacobi.solve(single, iterations, nccheck=5)
    parts = jacobi.make_domains(nx, ny, [device] * 3)      # 38 rows: 12, 13, 13
    assert [d.rows for d in parts] == [12, 13, 13]
    norms3 = jacobi.solve(parts, iterations, nccheck=5)
    np.testing.assert_array_equal(jacobi.gather(parts), jacobi.gather(single))
    for (i, a), (j, b) in zip(norms1, norms3):
        assert i == j and math.isclose(a, b, rel_tol=1e-12)


def test_the_example_runs_and_checks_itself(device, capsys):
    assert jacobi.main(nx=48, ny=34, iterations=6, nccheck=3)
    out = capsys.readouterr().out
    assert "bit-identical" in out and "6 iterations on 34 x 48 mesh" in out


def test_gpu_sweep_ptx_has_the_block_sum_and_one_double_atomic():
    """Made here without a GPU: the sweep's PTX sums the block in shared memory between
    barriers and adds it to the norm with one float64 atomic."""
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions
    from simt.ir import types as T
    sig = T.parse_signature("void(float64[:, ::1], float64[:, ::1], float64[::1], int64, int64, int32)")
    text = compile_kernel(jacobi.jacobi_kernel.typed_ir(sig), CompileOptions(), "sm_90").ptx
    assert text.count("atom.global.add.f64") + text.count("red.global.add.f64") == 1
    assert "bar.sync" in text and "st.shared.b64" in text and "ld.shared.b64" in text
