"""Unrolling hints for range loops on NVIDIA GPUs, as ``llvm.loop`` metadata on the
loop's latch branch.

LLVM's NVPTX pipeline unrolls less than NVIDIA's NVVM: it leaves a constant-trip loop
over constant memory rolled once the body passes its full-unroll threshold (raytrace's
20 spheres), and does not runtime-unroll strided loops (a histogram's load + atomic with
step 256), so a warp waits out one load's latency per iteration. nvcc unrolls both; these hints ask
LLVM for the same, per loop, without touching the process-wide LLVM options that the
CPU device shares:

- ``llvm.loop.unroll.disable`` for a constant trip count whose body (device functions
  included) has a loop of unknown length, which nvcc leaves rolled. The book's hash table
  (``for i in range(32): if tid % 32 == i: ... lock(...)``, a spin loop in ``lock``):
  LLVM unrolled it fully on our hint below (5,000 instructions) or 4 times by itself, and
  its kernel took 62-68 ms; rolled, 54, against CUDA C's 50 in the same shape (H100,
  relaxed locks, bench/gpu/hashtable_probe.py);
- ``llvm.loop.unroll.full`` for other constant trip counts of at most ``FULL_TRIPS``
  whose unrolled size stays within ``FULL_BUDGET`` IR nodes;
- ``llvm.loop.unroll.count`` 4 (nvcc's factor) for a run-time trip count with a constant
  step other than 1 or -1, or a step known only at run time (block- and grid-stride loops:
  those run on a trip counter computed before the loop, codegen.range_trips, as LLVM needs
  a countable loop to unroll), and a small body without inner loops, early exits or
  barriers. LLVM declines those by itself (likely because their
  trip count needs a division, which its cost model calls expensive); unit-step loops it already unrolls 4 times, and a pragma there
  would only add ``.pragma "nounroll"`` to the unrolled loop, which stops ptxas from
  unrolling it further (spmv ran 11% slower so on the H200).

Loops with barriers, warp operations or grid syncs get no hint: LLVM's own rules for
convergent code apply to them.
"""
from llvmlite import ir as ll

from ...ir import nodes as ir
from ...ir.walk import walk
from ...compiler.lltypes import I32
from ...compiler.loopmeta import constant_trips, mark

FULL_TRIPS = 32          # constant trip counts up to this are fully unrolled ...
FULL_BUDGET = 2400       # ... while trips * body size (IR nodes) stays within this
RUNTIME_COUNT = 4        # nvcc's runtime unroll factor for small loops
RUNTIME_MAX_SIZE = 60    # body size (IR nodes) up to which a run-time loop is unrolled


def loop_hint(em, stmt, latch_branch, start, stop, step):
    """Attach unrolling metadata to ``latch_branch``, the back edge of range loop ``stmt``
    whose bounds were lowered to ``start``, ``stop``, ``step``."""
    if any(isinstance(s, (ir.Barrier, ir.Collective, ir.WarpOp, ir.GridSync))
           for s in ir.walk_stmts(stmt.body)):
        return
    size = body_size(stmt.body)
    trips = constant_trips(start, stop, step, em.locals[stmt.var].kind == "i")
    module = em.module
    if trips is not None:
        if open_loop(stmt.body):
            props = [module.add_metadata([ll.MetaDataString(module, "llvm.loop.unroll.disable")])]
        elif 1 < trips <= FULL_TRIPS and trips * size <= FULL_BUDGET:
            props = [module.add_metadata([ll.MetaDataString(module, "llvm.loop.unroll.full")])]
        else:
            return
    elif (strided(step) or not isinstance(step, ll.Constant)) and size <= RUNTIME_MAX_SIZE and not any(
            isinstance(s, (ir.ForRange, ir.While, ir.Break, ir.Return))
            for s in ir.walk_stmts(stmt.body)):
        props = [module.add_metadata([ll.MetaDataString(module, "llvm.loop.unroll.count"),
                                      ll.Constant(I32, RUNTIME_COUNT)])]
    else:
        return
    mark(module, latch_branch, props)


def strided(step):
    """Whether ``step`` is a constant other than 1 and -1."""
    if not isinstance(step, ll.Constant) or not isinstance(step.constant, int):
        return False
    mask = (1 << step.type.width) - 1
    return step.constant & mask not in (1, mask)


def open_loop(stmts, seen=None):
    """Whether ``stmts`` (device functions' bodies included) hold a while loop or a range
    loop whose bounds are not constants."""
    seen = set() if seen is None else seen
    for node in walk(*stmts):
        if isinstance(node, ir.While) or isinstance(node, ir.ForRange) and not all(
                isinstance(e, ir.Const) for e in (node.start, node.stop, node.step)):
            return True
        if isinstance(node, ir.CallDevice) and id(node.function) not in seen:
            seen.add(id(node.function))
            if open_loop(node.function.body, seen):
                return True
    return False


def body_size(stmts, seen=None):
    """IR nodes (statements and expressions) in ``stmts``, device functions' bodies
    included: a rough measure of the LLVM instructions one iteration costs."""
    seen = set() if seen is None else seen
    total = 0
    for node in walk(*stmts):
        total += 1
        if isinstance(node, ir.CallDevice) and id(node.function) not in seen:
            seen.add(id(node.function))
            total += body_size(node.function.body, seen)
    return total
