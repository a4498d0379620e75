"""Thread block clusters on the CPU device: the blocks of a cluster run at once.

``run_blocks`` runs the grid one cluster after another, each cluster's blocks on OS
threads of their own, every block's shared memory allocated before any starts so that
``cluster.map_shared_rank`` can reach it. Kernel code asks the table here for its rank, the
cluster's shape and another block's shared memory, and meets the other blocks at
``cluster.sync()`` (or its halves ``barrier_arrive()`` / ``barrier_wait()``) between two
thread loops. The table is keyed by the address of the launch's fault record, which kernels
and device functions both hold. A launch without a cluster shape is in clusters of one
block: rank 0, size 1, barriers that wait for no one.
"""
import ctypes
import threading

import llvmlite.binding as llvm
from llvmlite import ir as ll

from .hostsymbols import DIM, RANK, SHARED, SIZE
from ..aligned import aligned_buffer
from ...ir.nodes import MAX_ALIGN
from ...compiler.lltypes import I32, i32, ptr

SYNC = "simt_cpu_cluster_sync"
BARRIER_KINDS = {"cluster": 0, "cluster.arrive": 1, "cluster.wait": 2}
_launches = {}            # address of a launch's fault record -> its ClusterLaunch


class ClusterBarrier:
    """barrier.cluster over the blocks of one cluster, in phases: a block's arrive counts
    it in the next phase, its wait returns once every block still running has arrived in
    the phase of its own last arrive (at once where that phase is complete, or where it
    never arrived, which is undefined on a GPU); sync() is arrive + wait. A block that
    finishes is excused, as exited threads are."""

    def __init__(self, ranks):
        self.cond = threading.Condition()
        self.arrivals = {rank: 0 for rank in ranks}     # running blocks: arrivals so far
        self.done = 0                                    # phases complete

    def arrive(self, rank):
        with self.cond:
            self.arrivals[rank] += 1
            self._complete()

    def wait(self, rank):
        with self.cond:
            phase = self.arrivals[rank]
            while self.done < phase:
                self.cond.wait()

    def leave(self, rank):
        with self.cond:
            del self.arrivals[rank]
            self._complete()

    def _complete(self):
        if self.arrivals and min(self.arrivals.values()) > self.done:
            self.done = min(self.arrivals.values())
            self.cond.notify_all()


class ClusterLaunch:
    def __init__(self, grid, cluster):
        self.grid, self.cluster = grid, cluster
        self.size = cluster[0] * cluster[1] * cluster[2]
        self.shared = {}            # linear block index -> its shared memory's address
        self.barrier = None         # the running cluster's

    def rank(self, x, y, z):
        cx, cy, cz = self.cluster
        return x % cx + (y % cy) * cx + (z % cz) * cx * cy

    def rank_of_block(self, index):
        """The rank of the block of this linear index."""
        gx, gy, _ = self.grid
        return self.rank(index % gx, index // gx % gy, index // (gx * gy))

    def block_of(self, x, y, z, rank):
        cx, cy, _ = self.cluster
        bx = x - x % cx + rank % cx
        by = y - y % cy + (rank // cx) % cy
        bz = z - z % self.cluster[2] + rank // (cx * cy)
        return bx + by * self.grid[0] + bz * self.grid[0] * self.grid[1]


def _rank(launch, x, y, z):
    state = _launches.get(launch)
    return state.rank(x, y, z) if state else 0


def _size(launch):
    state = _launches.get(launch)
    return state.size if state else 1


def _dim(launch, axis):
    state = _launches.get(launch)
    return state.cluster[axis] if state else 1


def _shared(launch, x, y, z, rank, own):
    state = _launches.get(launch)
    if state is None:
        return own if rank == 0 else 0
    if not 0 <= rank < state.size:
        return 0
    return state.shared[state.block_of(x, y, z, rank)]


def _sync(launch, x, y, z, kind):
    state = _launches.get(launch)
    if state is not None:
        rank = state.rank(x, y, z)
        if kind != 2:
            state.barrier.arrive(rank)
        if kind != 1:
            state.barrier.wait(rank)
    return 0


_FNS = [(RANK, ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32,
                                ctypes.c_int32), _rank),
        (SIZE, ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p), _size),
        (SHARED, ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32,
                                  ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                                  ctypes.c_void_p), _shared),
        (DIM, ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32), _dim),
        (SYNC, ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32,
                                ctypes.c_int32, ctypes.c_int32), _sync)]
_callbacks = []
for _name, _type, _fn in _FNS:
    _callbacks.append(_type(_fn))
    llvm.add_symbol(_name, ctypes.cast(_callbacks[-1], ctypes.c_void_p).value)


def emit_cluster_sync(em, s):
    """Block-level code between two thread loops: arrive at the cluster barrier, wait
    there for the cluster's other blocks, or both (``s.scope``)."""
    fnty = ll.FunctionType(I32, [ptr(), I32, I32, I32, I32])
    fn = em.module.globals.get(SYNC) or ll.Function(em.module, fnty, SYNC)
    block = [em.specials[f"blockIdx.{axis}"] for axis in "xyz"]
    em.builder.call(fn, [em.err_ptr, *block, i32(BARRIER_KINDS[s.scope])])


def run_blocks(loaded, plan, args_ptr, launch_ptr, cluster):
    """A cluster launch's blocks (CpuBackend._execute): one cluster after another."""
    grid = plan.grid
    record = (ctypes.c_int64 * 8).from_address(launch_ptr)[7]     # the fault record
    code = ctypes.c_int64.from_address(record)
    state = _launches[record] = ClusterLaunch(tuple(grid), cluster)
    shared_size, slot_size = max(64, plan.shared_size), max(64, plan.slot_size)
    cx, cy, cz = cluster
    try:
        for z0 in range(0, grid[2], cz):
            for y0 in range(0, grid[1], cy):
                for x0 in range(0, grid[0], cx):
                    blocks = [x + y * grid[0] + z * grid[0] * grid[1]
                              for z in range(z0, z0 + cz) for y in range(y0, y0 + cy)
                              for x in range(x0, x0 + cx)]
                    _run_cluster(loaded, args_ptr, launch_ptr, state, blocks, shared_size,
                                 slot_size)
                    if code.value:      # a block failed: the launch ends
                        return
    finally:
        del _launches[record]


def _run_cluster(loaded, args_ptr, key, state, blocks, shared_size, slot_size):
    memory = {b: aligned_buffer(shared_size, MAX_ALIGN) for b in blocks}   # alignment=
    state.shared = {b: m.ctypes.data for b, m in memory.items()}
    state.barrier = barrier = ClusterBarrier(range(len(blocks)))

    def run_block(index):
        try:
            slots = aligned_buffer(slot_size, MAX_ALIGN)
            loaded.entry(args_ptr, key, index, index + 1,
                         state.shared[index], slots.ctypes.data)
        finally:
            barrier.leave(state.rank_of_block(index))

    threading.stack_size(16 * 1024 * 1024)
    try:
        threads = [threading.Thread(target=run_block, args=(b,), name=f"simt-cluster-{b}")
                   for b in blocks]
    finally:
        threading.stack_size(0)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    del memory

