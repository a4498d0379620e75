"""The benchmark workloads: one module each, with the simt kernels, a NumPy
reference, sizes for the GPU and the CPU, and the bytes and FLOPs each moves.
Their CUDA C twins live in bench/cuda/, their C+OpenMP twins in bench/openmp/."""
from . import (saxpy, reduction, transpose, matmul, histogram, scan, stencil, nbody, spmv,
               julia, raytrace)

MODULES = [saxpy, reduction, transpose, matmul, histogram, scan, stencil, nbody, spmv, julia,
           raytrace]


def all_cases():
    """Every timed case of every workload, in order."""
    return [case for module in MODULES for case in module.CASES if case.available()]
