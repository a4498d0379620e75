"""Thread block clusters on the CPU device: the blocks of a cluster run at once.

``run_blocks`` runs the grid one cluster after another, each cluster's blocks on OS
threads of their own, every block's shared memory allocated before any starts so that
``cluster.map_shared_rank`` can reach it. Kernel code asks the table here (by the address of
its launch record) for its rank, the cluster's size and another block's shared memory, and
meets the other blocks at ``cluster.sync()`` between two thread loops. A launch without a
cluster shape is in clusters of one block: rank 0, size 1, a sync that waits for no one.
"""
import ctypes
import threading

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir as ll

from .hostsymbols import RANK, SHARED, SIZE
from ...compiler.lltypes import I32, ptr
from .cooperative import GridBarrier

SYNC = "simt_cpu_cluster_sync"
_launches = {}            # address of a launch record -> its ClusterLaunch


class ClusterLaunch:
    def __init__(self, grid, cluster):
        self.grid, self.cluster = grid, cluster
        self.size = cluster[0] * cluster[1] * cluster[2]
        self.shared = {}            # linear block index -> its shared memory's address
        self.barrier = None         # the running cluster's

    def rank(self, x, y, z):
        cx, cy, cz = self.cluster
        return x % cx + (y % cy) * cx + (z % cz) * cx * cy

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


def _shared(launch, x, y, z, rank, own):
    state = _launches.get(launch)
    if state is None:
        return own if rank == 0 else 0
    if not 0 <= rank < state.size:
        return 0
    return state.shared[state.block_of(x, y, z, rank)]


def _sync(launch):
    state = _launches.get(launch)
    if state is not None:
        state.barrier.wait()
    return 0


_FNS = [(RANK, ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32,
                                ctypes.c_int32), _rank),
        (SIZE, ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p), _size),
        (SHARED, ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32,
                                  ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                                  ctypes.c_void_p), _shared),
        (SYNC, ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p), _sync)]
_callbacks = []
for _name, _type, _fn in _FNS:
    _callbacks.append(_type(_fn))
    llvm.add_symbol(_name, ctypes.cast(_callbacks[-1], ctypes.c_void_p).value)


def emit_cluster_sync(em, s):
    """Block-level code between two thread loops: wait for the cluster's other blocks."""
    fn = em.module.globals.get(SYNC) or ll.Function(em.module, ll.FunctionType(I32, [ptr()]),
                                                     SYNC)
    em.builder.call(fn, [em.llfunc.args[1]])


def run_blocks(loaded, plan, args_ptr, launch_ptr, cluster):
    """A cluster launch's blocks (CpuBackend._execute): one cluster after another."""
    grid = plan.grid
    code = ctypes.c_int64.from_address((ctypes.c_int64 * 8).from_address(launch_ptr)[7])
    state = _launches[launch_ptr] = ClusterLaunch(tuple(grid), cluster)
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
        del _launches[launch_ptr]


def _run_cluster(loaded, args_ptr, key, state, blocks, shared_size, slot_size):
    memory = {b: np.empty(shared_size, np.uint8) for b in blocks}
    state.shared = {b: m.ctypes.data for b, m in memory.items()}
    state.barrier = barrier = GridBarrier(len(blocks))

    def run_block(index):
        try:
            slots = np.empty(slot_size, np.uint8)
            loaded.entry(args_ptr, key, index, index + 1,
                         state.shared[index], slots.ctypes.data)
        finally:
            barrier.leave()

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

