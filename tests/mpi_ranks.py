"""One rank of tests/test_mpi.py (run under mpiexec -n 2): device arrays handed to mpi4py
as they are. On a GPU that needs a CUDA-aware MPI; set SIMT_MPI_CUDA_AWARE=1 when the MPI
library is one, else the GPU arrays go through host copies and this says so."""
import os
import sys

import numpy as np
from mpi4py import MPI

import simt
from simt.examples import jacobi_mpi

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
device = jacobi_mpi.pick_device(comm)
direct = device.kind != "cuda" or os.environ.get("SIMT_MPI_CUDA_AWARE") == "1"


def fail(what):
    print(f"rank {rank}: {what}", flush=True)
    comm.Abort(1)


def values(r, n=1000):
    return np.random.default_rng(1234 + r).standard_normal(n)


def as_mpi(array):
    """The array MPI is given: the device array itself when MPI can take it."""
    return array if direct else array.copy_to_host()


# Allreduce into a poisoned device array, then in place on one row of a 2-D array
x = simt.to_device(values(rank))
y = simt.to_device(np.full(1000, np.nan))
simt.synchronize()                                # the copies are done before MPI reads
out = as_mpi(y)
comm.Allreduce(as_mpi(x), out, op=MPI.SUM)
expected = sum(values(r) for r in range(size))
got = out.copy_to_host() if direct else out
if not np.array_equal(got, expected):
    fail("allreduce wrong")
grid = simt.to_device(np.stack([values(rank, 50) * (i + 1) for i in range(3)]))
simt.synchronize()
if direct:
    comm.Allreduce(MPI.IN_PLACE, grid[1], op=MPI.SUM)
    result = grid.copy_to_host()
    if not (np.array_equal(result[1], sum(values(r, 50) * 2 for r in range(size)))
            and np.array_equal(result[0], values(rank, 50))
            and np.array_equal(result[2], values(rank, 50) * 3)):
        fail("allreduce in place on a row wrong")
print(f"rank {rank}: allreduce ok ({'device arrays' if direct else 'host copies'} on {device.name})",
      flush=True)

# Sendrecv: each rank's row goes to the other one's poisoned row
mine = simt.to_device(values(rank, 64))
theirs = simt.to_device(np.full(64, np.nan))
simt.synchronize()
other = (rank + 1) % size
received = as_mpi(theirs)
comm.Sendrecv(as_mpi(mine), dest=other, recvbuf=received, source=other)
if not np.array_equal(received.copy_to_host() if direct else received, values(other, 64)):
    fail("sendrecv wrong")
print(f"rank {rank}: sendrecv ok", flush=True)

# the Jacobi example's halo exchange (odd row count: the parts differ in size)
domain = jacobi_mpi.my_domain(comm, 40, 33)
halo = jacobi_mpi.make_halo("mpi", comm, domain, cuda_aware=direct and device.kind == "cuda")
norms = jacobi_mpi.solve(halo, 15, nccheck=4)
if not jacobi_mpi.check_against_one_device(comm, domain, norms, 15, 4):
    fail("jacobi differs from the one-device solve")
if rank == 0:
    print("rank 0: jacobi bit-identical to one device", flush=True)
sys.exit(0)
