"""The Jacobi solver of ``jacobi`` with one MPI rank per part, as NVIDIA's multi-GPU
programming models examples run it (jacobi_mpi, jacobi_nccl):

    mpiexec -n 2 python -m simt.examples.jacobi_mpi [--comm mpi|nccl] [--check]

Each rank takes the GPU of its local rank (ranks on one node share the node's GPUs round
robin), or the CPU device when there is no GPU (one rank per process: the CPU device then
runs each rank's blocks on every core, so ranks on one machine compete for its cores).
simt arrays go to mpi4py directly (DLPack: the memory itself, no copy); GPU memory needs a
CUDA-aware MPI (``--cuda-aware``), otherwise the halo rows are staged through pinned host
buffers. ``--comm nccl`` moves them with nccl4py on the device's default stream instead.
The last line rank 0 prints is a JSON record (bench/jacobi_scaling.py reads it).
"""
import argparse
import importlib
import json
import math
import os
import time

import numpy as np

import simt
from .jacobi import Domain, chunks, gather, make_domains, solve as solve_one_process

LOCAL_RANK_VARIABLES = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                        "SLURM_LOCALID", "PMI_LOCAL_RANK")


def local_rank(comm):
    """This process's rank among the ranks on its node: the launcher's variable if it sets
    one (Open MPI, MPICH/Hydra, MVAPICH, Slurm), else a shared-memory split of ``comm``."""
    for name in LOCAL_RANK_VARIABLES:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    from mpi4py import MPI
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_rank()
    finally:
        node.Free()


LAUNCHER_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "SLURM_NTASKS")


def check_launcher(comm):
    """A launcher that started several ranks while mpi4py's MPI sees one (mpi4py loaded
    another MPI library than the launcher's: every rank then runs alone, as rank 0) is an
    error, not a silent run of N copies of the whole problem."""
    if comm.Get_size() != 1:
        return
    for name in LAUNCHER_SIZE_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 1:
            raise SystemExit(
                f"the launcher started {value} ranks ({name}={value}) but MPI sees 1: mpi4py "
                "loaded another MPI library than the one whose mpiexec ran this (MPICH's "
                "mpiexec with an Open MPI build, or the reverse). Pick mpi4py's library to match: "
                "MPI4PY_MPIABI=mpich (or openmpi), and MPI4PY_LIBMPI=/path/to/libmpi.so.12 if "
                "it is not found; see docs/scaling-out.md")


def pick_device(comm):
    """Make the GPU of this rank's local rank current (local rank modulo the GPUs this
    process sees, after CUDA_VISIBLE_DEVICES); without a current GPU, keep the device."""
    check_launcher(comm)
    current = simt.get_device()
    if current.kind != "cuda":
        return current
    gpus = [d for d in simt.devices() if d.kind == "cuda"]
    device = gpus[local_rank(comm) % len(gpus)]
    simt.set_device(device)
    return device


class MpiHalo:
    """The halo exchange and the norm's sum through MPI (mpi4py) on simt arrays.

    MPI reads the memory as soon as it is called, on no stream: the device is synchronized
    first, so the rows the step wrote are there. With ``cuda_aware`` (or on the CPU device,
    whose memory is host memory) the rows go to MPI as they are; otherwise through pinned
    host buffers."""

    def __init__(self, comm, domain, cuda_aware=False):
        self.comm, self.domain = comm, domain
        rank, size = comm.Get_rank(), comm.Get_size()
        self.top, self.bottom = (rank - 1) % size, (rank + 1) % size
        self.direct = cuda_aware or domain.device.kind != "cuda"
        if not self.direct:
            self.send = simt.pinned_array((2, domain.nx), np.float64)
            self.recv = simt.pinned_array((2, domain.nx), np.float64)
            self.norm = simt.pinned_array(1, np.float64)

    def exchange(self):
        d, comm = self.domain, self.comm
        simt.synchronize()
        if self.direct:
            comm.Sendrecv(d.first_row(), dest=self.top, recvbuf=d.bottom_halo(), source=self.bottom)
            comm.Sendrecv(d.last_row(), dest=self.bottom, recvbuf=d.top_halo(), source=self.top)
            return
        d.first_row().copy_to_host(self.send[0])
        d.last_row().copy_to_host(self.send[1])
        comm.Sendrecv(self.send[0], dest=self.top, recvbuf=self.recv[1], source=self.bottom)
        comm.Sendrecv(self.send[1], dest=self.bottom, recvbuf=self.recv[0], source=self.top)
        d.top_halo().copy_from(self.recv[0])
        d.bottom_halo().copy_from(self.recv[1])

    def norm_sum(self):
        """The sum over ranks of the squared changes (every rank gets it)."""
        from mpi4py import MPI
        simt.synchronize()
        if self.direct:
            self.comm.Allreduce(MPI.IN_PLACE, self.domain.l2, op=MPI.SUM)
            return float(self.domain.l2.copy_to_host()[0])
        self.domain.l2.copy_to_host(self.norm)
        self.comm.Allreduce(MPI.IN_PLACE, self.norm, op=MPI.SUM)
        return float(self.norm[0])


class NcclHalo:
    """The halo exchange and the norm's sum through NCCL (nccl4py): ordered on the legacy
    default stream with the steps, so the host never waits between them."""

    def __init__(self, comm, domain):
        if domain.device.kind != "cuda":
            raise simt.NotSupportedError(
                f"the NCCL halo exchange runs on GPUs only (this rank has {domain.device.name}); "
                f"use --comm mpi on the CPU device")
        try:
            nccl = importlib.import_module("nccl.core")      # optional: nccl4py
        except ImportError as exc:
            raise simt.NotSupportedError(
                "the NCCL halo exchange needs nccl4py: pip install 'nccl4py[cu12]' (or [cu13], "
                f"matching the driver's CUDA major version) ({exc})") from None
        self.nccl_module, self.domain = nccl, domain
        rank, size = comm.Get_rank(), comm.Get_size()
        self.top, self.bottom = (rank - 1) % size, (rank + 1) % size
        unique_id = comm.bcast(nccl.get_unique_id() if rank == 0 else None, root=0)
        self.comm = nccl.Communicator.init(size, rank, unique_id)

    def exchange(self):
        d, comm = self.domain, self.comm
        with self.nccl_module.group():
            comm.send(d.first_row(), self.top)
            comm.recv(d.bottom_halo(), self.bottom)
            comm.send(d.last_row(), self.bottom)
            comm.recv(d.top_halo(), self.top)

    def norm_sum(self):
        self.comm.allreduce(self.domain.l2, self.domain.l2, self.nccl_module.SUM)
        return float(self.domain.l2.copy_to_host()[0])

    def close(self):
        self.comm.destroy()


def make_halo(kind, comm, domain, cuda_aware=False):
    if kind == "mpi":
        return MpiHalo(comm, domain, cuda_aware)
    if kind == "nccl":
        return NcclHalo(comm, domain)
    raise ValueError(f"unknown halo exchange {kind!r} (mpi or nccl)")


def my_domain(comm, nx, ny):
    first, rows = chunks(ny, comm.Get_size())[comm.Get_rank()]
    return Domain(nx, ny, first, rows)


def solve(halo, iterations, nccheck=1):
    """This rank's part of the solve: step, exchange the halos, every ``nccheck`` iterations
    (and at the last) sum the norm over the ranks. Returns [(iteration, norm)]."""
    d, norms = halo.domain, []
    for it in range(iterations):
        check = it % nccheck == 0 or it == iterations - 1
        d.step(check)
        halo.exchange()
        if check:
            norms.append((it, math.sqrt(halo.norm_sum())))
        d.swap()
    simt.synchronize()
    return norms


def time_exchange(comm, halo, repeats):
    """Seconds per halo exchange alone (the slowest rank's), averaged over ``repeats``."""
    from mpi4py import MPI
    simt.synchronize()
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(repeats):
        halo.exchange()
    simt.synchronize()
    return comm.allreduce(time.perf_counter() - start, op=MPI.MAX) / repeats


def gather_to_root(comm, domain):
    """The whole interior on rank 0 (None elsewhere)."""
    parts = comm.gather(domain.interior(), root=0)
    return None if parts is None else np.concatenate(parts)


def check_against_one_device(comm, domain, norms, iterations, nccheck):
    """On rank 0: solve the whole grid on this device alone and compare; True elsewhere."""
    grid = gather_to_root(comm, domain)
    if grid is None:                        # a rank other than 0
        return True
    single = make_domains(domain.nx, domain.ny, [domain.device])
    single_norms = solve_one_process(single, iterations, nccheck)
    same = np.array_equal(grid, gather(single))
    close = [i for i, _ in norms] == [i for i, _ in single_norms] and all(
        math.isclose(a, b, rel_tol=1e-12) for (_, a), (_, b) in zip(norms, single_norms))
    return same and close


def _arguments(argv=None):
    parser = argparse.ArgumentParser(prog="mpiexec -n N python -m simt.examples.jacobi_mpi",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--nx", type=int, default=1024, help="columns (default 1024)")
    parser.add_argument("--ny", type=int, default=1024, help="rows of the whole grid (default 1024)")
    parser.add_argument("--weak", action="store_true",
                        help="--ny is per rank: the grid grows with the ranks (weak scaling)")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--nccheck", type=int, default=50, help="iterations between norms")
    parser.add_argument("--comm", choices=("mpi", "nccl"), default="mpi")
    parser.add_argument("--cuda-aware", action="store_true",
                        help="the MPI library takes GPU memory (else GPU halos go through the host)")
    parser.add_argument("--halo-repeats", type=int, default=20,
                        help="exchanges timed alone for the halo bandwidth (default 20)")
    parser.add_argument("--check", action="store_true",
                        help="rank 0 also solves on one device and compares")
    return parser.parse_args(argv)


def main(argv=None):
    from mpi4py import MPI
    args = _arguments(argv)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    device = pick_device(comm)
    ny = (args.ny - 2) * size + 2 if args.weak else args.ny
    halo = make_halo(args.comm, comm, my_domain(comm, args.nx, ny), args.cuda_aware)
    solve(halo, 1)                                       # compile and connect outside the timing
    halo.domain = domain = my_domain(comm, args.nx, ny)
    comm.Barrier()
    start = time.perf_counter()
    norms = solve(halo, args.iterations, args.nccheck)
    comm.Barrier()
    seconds = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
    per_exchange = time_exchange(comm, halo, args.halo_repeats) if args.halo_repeats else None
    ok = check_against_one_device(comm, domain, norms, args.iterations, args.nccheck) \
        if args.check else None
    close = getattr(halo, "close", None)      # NcclHalo's communicator
    if close is not None:
        close()
    if rank == 0:
        print(f"Jacobi relaxation: {args.iterations} iterations on {ny} x {args.nx} mesh, "
              f"{size} ranks ({args.comm}) on {device.name}")
        for it, norm in norms:
            print(f"{it:5d}, {norm:.6f}")
        if ok is not None:
            print("solution bit-identical to the one-device solve" if ok else
                  "MISMATCH against the one-device solve")
        sent = 2 * args.nx * 8                           # two rows out (and two in) per rank
        print(json.dumps({"ranks": size, "comm": args.comm, "device": device.name, "nx": args.nx,
                          "ny": ny, "weak": args.weak, "iterations": args.iterations,
                          "seconds": seconds, "exchange_seconds": per_exchange,
                          "halo_bytes_sent_per_rank": sent, "check": ok}))
    return 0 if ok in (None, True) else 1


if __name__ == "__main__":
    raise SystemExit(main())
