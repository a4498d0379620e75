"""Strong and weak scaling of the Jacobi example (simt.examples.jacobi_mpi) over 1..N ranks,
and its halo exchange bandwidth. Each point is one `mpiexec -n N python -m
simt.examples.jacobi_mpi` run; its last line is the JSON record this reads.

    python bench/jacobi_scaling.py                      # GPUs: 1, 2, 4, ... up to the GPU count
    python bench/jacobi_scaling.py --comm mpi,nccl --ranks 1,2,4,8 --cuda-aware
    python bench/jacobi_scaling.py --device cpu --ranks 1,2 --nx 2048 --ny 2048   # CPU only

Strong scaling: the same grid (--nx x --ny) on N ranks; efficiency T1 / (N * TN).
Weak scaling: --ny-per-rank interior rows per rank; efficiency T1 / TN.
--reference builds bench/cuda/jacobi_nccl.cu (the same solver in CUDA C with MPI and NCCL)
with nvcc, runs it the same way and prints simt / CUDA C per point: it needs mpi.h and
libmpi (--mpi-home: a folder with include/ and lib/, as the mpich wheel installs, or an MPI
installation) and NCCL's header and library (the nvidia-nccl wheel, found through Python).

Halo bandwidth: the bytes each rank sends per exchange (two rows of nx float64) over the
time of one exchange timed alone (the slowest rank's). On the CPU device each rank gets
--cpu-threads (default: the cores over the most ranks) so that the ranks do not compete for
cores, and the figures say so: they measure the decomposition, not GPUs.
"""
import argparse
import json
import os
import subprocess
import sys

import simt


def _mpiexec():
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return beside if os.access(beside, os.X_OK) else "mpiexec"


def run(ranks, comm, args, weak):
    """The JSON record of the fastest of --repeats mpiexec runs (a shared machine's noise
    only ever slows a run down)."""
    return min((run_once(ranks, comm, args, weak) for _ in range(args.repeats)),
               key=lambda record: record["seconds"])


def run_once(ranks, comm, args, weak):
    """The JSON record of one mpiexec run (``comm`` "reference": the CUDA C solver)."""
    ny = args.ny_per_rank + 2 if weak else args.ny
    program = [args.reference_exe] if comm == "reference" else \
        [sys.executable, "-m", "simt.examples.jacobi_mpi", "--comm", comm]
    command = [args.mpiexec, "-n", str(ranks), *program,
               "--nx", str(args.nx), "--ny", str(ny), "--iterations", str(args.iterations),
               "--nccheck", str(args.nccheck), "--halo-repeats", str(args.halo_repeats)]
    command += ["--weak"] if weak else []
    command += ["--cuda-aware"] if args.cuda_aware and comm != "reference" else []
    env = dict(os.environ, SIMT_DEVICE=args.device)
    if args.device == "cpu":
        env["SIMT_CPU_THREADS"] = str(args.cpu_threads)
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.timeout)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(comm, args):
    """Rows of (ranks, strong record, weak record) and the printed table for one comm."""
    rows = [(n, run(n, comm, args, weak=False), run(n, comm, args, weak=True)) for n in args.ranks]
    strong1, weak1 = rows[0][1]["seconds"], rows[0][2]["seconds"]
    n1 = rows[0][0]
    lines = [f"{comm}: strong {args.nx} x {args.ny}, weak {args.nx} x {args.ny_per_rank} per rank, "
             f"{args.iterations} iterations on {rows[0][1]['device']}",
             f"{'ranks':>5} {'strong s':>9} {'strong eff':>10} {'weak s':>9} {'weak eff':>9} "
             f"{'halo us':>9} {'halo GB/s':>9}"]
    for n, strong, weak in rows:
        halo = strong["exchange_seconds"]
        bandwidth = strong["halo_bytes_sent_per_rank"] / halo / 1e9 if halo else float("nan")
        lines.append(f"{n:5d} {strong['seconds']:9.4f} {strong1 * n1 / (n * strong['seconds']):9.1%} "
                     f"{weak['seconds']:9.4f} {weak1 / weak['seconds']:9.1%} "
                     f"{halo * 1e6:9.1f} {bandwidth:9.3f}")
    return rows, "\n".join(lines)


def build_reference(mpi_home, out="/tmp/jacobi_nccl"):
    """nvcc -O3 of bench/cuda/jacobi_nccl.cu against ``mpi_home``'s MPI and the NCCL wheel's
    header and library; returns the program's path."""
    import nvidia.nccl
    nccl = list(nvidia.nccl.__path__)[0]
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda", "jacobi_nccl.cu")
    mpi_lib, nccl_lib = os.path.join(mpi_home, "lib"), os.path.join(nccl, "lib")
    command = ["nvcc", "-O3", "-arch=sm_90", "-o", out, source,
               "-I", os.path.join(mpi_home, "include"), "-I", os.path.join(nccl, "include"),
               "-L", mpi_lib, "-L", nccl_lib, "-l:libmpi.so.12", "-l:libnccl.so.2",
               f"-Xlinker=-rpath={mpi_lib}", f"-Xlinker=-rpath={nccl_lib}"]
    subprocess.run(command, check=True)
    return out


def compare(records):
    """Lines of simt (NCCL) / CUDA C (NCCL) time per point and the last norms of both."""
    lines = ["simt nccl / CUDA C nccl (same grid, iterations, ranks):",
             f"{'ranks':>5} {'strong':>8} {'weak':>8}"]
    for ours, theirs in zip(records["nccl"], records["reference"]):
        lines.append(f"{ours['ranks']:5d} {ours['strong']['seconds'] / theirs['strong']['seconds']:8.3f} "
                     f"{ours['weak']['seconds'] / theirs['weak']['seconds']:8.3f}")
    return "\n".join(lines)


def _default_ranks(device):
    gpus = sum(1 for d in simt.devices() if d.kind == "cuda")
    most = gpus if device.startswith("cuda") and gpus else 2
    ranks, n = [], 1
    while n <= most:
        ranks.append(n)
        n *= 2
    return ranks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default=os.environ.get("SIMT_DEVICE")
                        or ("cuda:0" if any(d.kind == "cuda" for d in simt.devices()) else "cpu"),
                        help="cpu, or cuda:0 (each rank then takes the GPU of its local rank)")
    parser.add_argument("--ranks", help="comma-separated rank counts (default 1, 2, 4 ... GPUs)")
    parser.add_argument("--comm", default="mpi", help="mpi, nccl or mpi,nccl")
    parser.add_argument("--nx", type=int, default=16384)
    parser.add_argument("--ny", type=int, default=16384, help="rows of the strong-scaling grid")
    parser.add_argument("--ny-per-rank", type=int, default=None,
                        help="interior rows per rank for weak scaling (default: ny - 2)")
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--nccheck", type=int, default=100)
    parser.add_argument("--halo-repeats", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=1, help="runs per point; the fastest counts")
    parser.add_argument("--cuda-aware", action="store_true", help="the MPI takes GPU memory")
    parser.add_argument("--cpu-threads", type=int, default=None,
                        help="SIMT_CPU_THREADS per rank on the CPU device (default cores / most ranks)")
    parser.add_argument("--mpiexec", default=_mpiexec())
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--json", help="also write the records to this file")
    parser.add_argument("--reference", action="store_true",
                        help="also run the CUDA C solver (bench/cuda/jacobi_nccl.cu) and compare")
    parser.add_argument("--mpi-home", default=os.environ.get("MPI_HOME"),
                        help="for --reference: the MPI whose include/mpi.h and lib/libmpi.so.12 nvcc uses")
    args = parser.parse_args(argv)
    args.ranks = [int(r) for r in args.ranks.split(",")] if args.ranks else _default_ranks(args.device)
    args.ny_per_rank = args.ny_per_rank or args.ny - 2
    args.cpu_threads = args.cpu_threads or max(1, (os.cpu_count() or 1) // max(args.ranks))
    if args.device == "cpu":
        print(f"CPU device, {args.cpu_threads} thread(s) per rank, {os.cpu_count()} cores: "
              "CPU-only figures, not GPU scaling")
    comms = args.comm.split(",")
    if args.reference:
        if not args.mpi_home:
            raise SystemExit("--reference needs --mpi-home (or MPI_HOME): the folder holding "
                             "include/mpi.h and lib/libmpi.so.12")
        args.reference_exe = build_reference(args.mpi_home)
        comms += [c for c in ("nccl", "reference") if c not in comms]
    records = {}
    for comm in comms:
        rows, text = table(comm, args)
        records[comm] = [{"ranks": n, "strong": s, "weak": w} for n, s, w in rows]
        print(text)
    if args.reference:
        print(compare(records))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
