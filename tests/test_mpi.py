"""simt arrays through MPI: two ranks (mpiexec from the pip-installed MPI, the 'mpi' extra)
run tests/mpi_ranks.py on the device under test: an Allreduce and a Sendrecv of device
arrays, and the Jacobi example's halo exchange against a one-device solve."""
import os
import shutil
import subprocess
import sys

import pytest


def _mpiexec():
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return beside if os.access(beside, os.X_OK) else shutil.which("mpiexec")


_PROBE = "from mpi4py import MPI; print(MPI.COMM_WORLD.Get_size())"
_working = {}


def _mpi_works(mpiexec, ranks):
    """Whether this machine's mpiexec and mpi4py start ``ranks`` ranks that see each other
    (not, say, MPICH's mpiexec over an Open MPI build of mpi4py: ranks of one each), and
    what went wrong if not. simt is not under test here: the MPI installation is."""
    if ranks not in _working:
        try:
            out = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, "-c", _PROBE],
                                 capture_output=True, text=True, timeout=60)
            sizes = out.stdout.split()
            _working[ranks] = (sizes == [str(ranks)] * ranks,
                               f"exit {out.returncode}, sizes {sizes}: {out.stderr[-300:]}")
        except subprocess.TimeoutExpired:
            _working[ranks] = (False, "timed out")
    return _working[ranks]


def _run(device, ranks, *command):
    pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install '.[mpi]')")
    mpiexec = _mpiexec()
    if mpiexec is None:
        pytest.skip("no mpiexec beside Python or on PATH (pip install '.[mpi]' brings MPICH's)")
    works, why = _mpi_works(mpiexec, ranks)
    if not works:
        pytest.skip(f"{mpiexec} with mpi4py does not start {ranks} ranks that see each other "
                    f"on this machine ({why}); see docs/scaling-out.md (MPI4PY_MPIABI)")
    env = dict(os.environ, SIMT_DEVICE=device.name)
    out = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, *command], env=env,
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    return out


def test_two_ranks_exchange_device_arrays(device):
    out = _run(device, 2, os.path.join(os.path.dirname(__file__), "mpi_ranks.py"))
    for rank in (0, 1):
        assert f"rank {rank}: allreduce ok" in out.stdout, out.stdout + out.stderr
        assert f"rank {rank}: sendrecv ok" in out.stdout, out.stdout + out.stderr
    assert "rank 0: jacobi bit-identical" in out.stdout, out.stdout + out.stderr


def test_three_ranks_solve_as_one_device(device):
    """Three ranks: the rank above and the rank below differ (with two they are the same)."""
    out = _run(device, 3, "-m", "simt.examples.jacobi_mpi", "--check", "--nx", "40", "--ny",
               "35", "--iterations", "12", "--nccheck", "4", "--halo-repeats", "2")
    assert "solution bit-identical to the one-device solve" in out.stdout, out.stdout
    assert "12 iterations on 35 x 40 mesh, 3 ranks (mpi)" in out.stdout


def test_a_launcher_mismatch_is_an_error(monkeypatch):
    """mpiexec of one MPI with mpi4py on another: every rank sees a world of one. That
    stops with the advice, instead of N ranks each solving the whole problem."""
    from simt.examples import jacobi_mpi

    class WorldOfOne:
        def Get_size(self):
            return 1
    monkeypatch.setenv("PMI_SIZE", "2")
    with pytest.raises(SystemExit, match="MPI4PY_MPIABI"):
        jacobi_mpi.pick_device(WorldOfOne())
    monkeypatch.setenv("PMI_SIZE", "1")
    jacobi_mpi.check_launcher(WorldOfOne())
