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


def test_two_ranks_exchange_device_arrays(device):
    pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install 'simt[mpi]')")
    mpiexec = _mpiexec()
    if mpiexec is None:
        pytest.skip("no mpiexec beside Python or on PATH (pip install 'simt[mpi]' brings MPICH's)")
    env = dict(os.environ, SIMT_DEVICE=device.name)
    worker = os.path.join(os.path.dirname(__file__), "mpi_ranks.py")
    out = subprocess.run([mpiexec, "-n", "2", sys.executable, worker], env=env,
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    for rank in (0, 1):
        assert f"rank {rank}: allreduce ok" in out.stdout, out.stdout + out.stderr
        assert f"rank {rank}: sendrecv ok" in out.stdout, out.stdout + out.stderr
    assert "rank 0: jacobi bit-identical" in out.stdout, out.stdout + out.stderr
