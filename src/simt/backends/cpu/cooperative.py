"""Grid-wide sync on the CPU device: cooperative launches run every block at once.

``kernel.launch_cooperative`` starts one OS thread per block (so the grid must be
co-resident, as on a GPU: at most ``co_resident_blocks`` blocks); at ``this_grid().sync()``
each block, between two of its thread loops, calls ``simt_cpu_grid_sync``, which waits until
every block that has not finished arrives. A block that finishes is excused from later
syncs (as exited threads are from barriers), so a grid that disagrees on the number of
syncs cannot hang. A grid sync in a kernel launched with ``kernel[grid, block]`` fails the
launch with a LaunchError that says to launch it cooperatively.
"""
import ctypes
import threading

import llvmlite.binding as llvm
from llvmlite import ir as ll

from ...compiler.lltypes import I32, I64, i32, i64, ptr
from ..aligned import aligned_buffer
from ...ir.nodes import MAX_ALIGN
import simt.fault as fault
from ...errors import InvalidConfiguration
from ..occupancy import blocks_per_core, potential_block_size  # noqa: F401  (device.py)

SYMBOL = "simt_cpu_grid_sync"
GRID_SYNC_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_barriers = {}            # address of a launch record -> its GridBarrier


class GridBarrier:
    """A barrier over the blocks of one launch that have not finished."""

    def __init__(self, blocks):
        self.cond = threading.Condition()
        self.live = blocks
        self.waiting = 0
        self.generation = 0

    def wait(self):
        with self.cond:
            generation = self.generation
            self.waiting += 1
            if self.waiting >= self.live:
                self._release()
            while generation == self.generation:
                self.cond.wait()

    def leave(self):
        with self.cond:
            self.live -= 1
            if self.waiting and self.waiting >= self.live:
                self._release()

    def _release(self):
        self.waiting = 0
        self.generation += 1
        self.cond.notify_all()


def _grid_sync(launch, line, file_id):
    barrier = _barriers.get(launch)
    if barrier is None:
        record = (ctypes.c_int64 * 8).from_address(launch)
        err = (ctypes.c_int64 * fault.WORDS).from_address(record[7])
        if err[0] == 0:
            err[0], err[1], err[6] = fault.NOT_COOPERATIVE, line, file_id
        return 1
    barrier.wait()
    return 0


_callback = GRID_SYNC_FN(_grid_sync)
llvm.add_symbol(SYMBOL, ctypes.cast(_callback, ctypes.c_void_p).value)


def emit_grid_sync(em, s):
    """Block-level code between two thread loops: wait for the other blocks."""
    b = em.builder
    fnty = ll.FunctionType(I32, [ptr(), I64, I64])
    fn = em.module.globals.get(SYMBOL) or ll.Function(em.module, fnty, SYMBOL)
    status = b.call(fn, [em.llfunc.args[1], i64(s.loc.line),
                         i64(em.target.file_id(em.function, s.loc))])
    ok, failed = em.new_block("grid_synced"), em.new_block("grid_sync_failed")
    b.cbranch(b.icmp_unsigned("==", status, i32(0)), ok, failed)
    b.position_at_end(failed)
    em.abort()
    b.position_at_end(ok)


def co_resident_blocks(device_props, threads_per_block):
    """How many blocks may run at once: blocks_per_core on every core."""
    per_core = max(1, blocks_per_core(device_props, threads_per_block, 0))
    return device_props.multiprocessor_count * per_core


def run_blocks(loaded, plan, args_ptr, launch_ptr, props):
    """A cooperative launch's blocks (CpuBackend._execute): one OS thread each, all at
    once, meeting at ``grid.sync()``."""
    nblocks, nthreads = plan.nblocks, plan.block[0] * plan.block[1] * plan.block[2]
    limit = co_resident_blocks(props, nthreads)
    if nblocks > limit:
        raise InvalidConfiguration(
            f"cooperative launch of '{loaded.binary.name}': {nblocks} blocks of {nthreads} "
            f"threads cannot all be resident at once on this device (at most {limit}); CUDA "
            "fails this launch with cudaErrorCooperativeLaunchTooLarge. Launch fewer blocks "
            "and loop over the data (a grid-stride loop)")
    barrier = GridBarrier(nblocks)
    shared_size, slot_size = max(64, plan.shared_size), max(64, plan.slot_size)

    def run_block(index):
        try:
            shared = aligned_buffer(shared_size, MAX_ALIGN)    # arrays' alignment=
            slots = aligned_buffer(slot_size, MAX_ALIGN)
            loaded.entry(args_ptr, launch_ptr, index, index + 1, shared.ctypes.data,
                         slots.ctypes.data)
        finally:
            barrier.leave()
    _barriers[launch_ptr] = barrier
    threading.stack_size(16 * 1024 * 1024)
    try:
        threads = [threading.Thread(target=run_block, args=(i,), name=f"simt-coop-{i}")
                   for i in range(nblocks)]
    finally:
        threading.stack_size(0)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        del _barriers[launch_ptr]
