"""Launches from kernels on the CPU device (dynamic parallelism, guide appendix D).

A thread that runs ``child[grid, block](args)`` packs the child's argument struct (the
one a host launch of the child fills, less its module symbols) and hands it to
``simt_cpu_device_launch`` with the launch's fault record, which names the running
grid. The launch is checked as the device runtime checks it (cudaErrorInvalidConfiguration
for a bad shape; cudaErrorLaunchPendingCountExceeded past the pending-launch limit, 2048
unless set_limit('dev_runtime_pending_launch_count') says otherwise) and queued. When the
host launch's grid has finished, ``run_children`` runs the queue in launch order, each
child followed by its own children, then the grid's tail launches in the order they were
made (``in_order``): so the children of one block run in the order they were launched,
each after the one before and all its descendants, a tail launch after everything else
its parent launched, and all finish before the host launch does, as on a GPU. CUDA
promises nothing more, so nothing more is kept: children run after their parent's whole
grid rather than alongside it (a fire-and-forget child may start earlier on a GPU, which
no correct program can tell).

A device graph launch (``simt.graph_launch``) goes through ``simt_cpu_graph_launch`` into
the same queue: the graph runs where a child grid would, after the launching grid.
"""
import ctypes
import threading

import llvmlite.binding as llvm
from llvmlite import ir as ll

from ...compiler.lltypes import I32, I64, function, i32, i64, ptr, value_type
from ...ir import types as T
import simt.fault as fault
from .. import devqueue
from ..devqueue import INVALID_VALUE, PENDING_COUNT_EXCEEDED, in_order
from . import frames

LAUNCH = "simt_cpu_device_launch"
GRAPH_LAUNCH = "simt_cpu_graph_launch"


class Family(devqueue.Family):
    """devqueue's Family, plus the host launch's arrays (checked mode watches them in
    every child) and whether the host launch is a kernel node of a graph's replay."""

    def __init__(self, kernels, arrays, limit, properties, in_graph=False):
        super().__init__(kernels, limit, properties)
        self.arrays, self.in_graph = arrays, in_graph


class Queue:
    """The launches the threads of one running grid made: (family index, grid, block,
    shared bytes, argument bytes, stream), in the order they reached the queue."""

    def __init__(self, family):
        self.family = family
        self.pending = []


_queues = {}            # the fault record's address -> the Queue of the grid that owns it
_lock = threading.Lock()


def open_queue(record_address, family):
    with _lock:
        queue = _queues[record_address] = Queue(family)
    return queue


def close_queue(record_address):
    with _lock:
        del _queues[record_address]


def _launch(record, index, stream, gx, gy, gz, bx, by, bz, shared, args, nbytes):
    queue = _queues[record]       # every launch that can launch opens one (device.py)
    grid, block = (gx, gy, gz), (bx, by, bz)
    code = queue.family.check(grid, block, shared)
    if code:
        return code
    queue.pending.append((index, grid, block, shared, ctypes.string_at(args, nbytes),
                          stream))
    return 0


_callback = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32,
                             *[ctypes.c_uint32] * 7, ctypes.c_void_p, ctypes.c_int64)(_launch)
llvm.add_symbol(LAUNCH, ctypes.cast(_callback, ctypes.c_void_p).value)


_device_graphs = {}     # id -> the replay of an exec instantiated with device_launch=True


def add_device_graph(ident, replay):
    """Make ``replay()`` (runs an exec's nodes, returns the first error or None)
    launchable from kernels as ``ident``, the value its kernel argument has."""
    _device_graphs[ident] = replay


def remove_device_graph(ident):
    _device_graphs.pop(ident, None)


def _graph_launch(record, ident):
    queue = _queues[record]
    replay = _device_graphs.get(ident)
    if replay is None or not queue.family.in_graph:
        return INVALID_VALUE
    if not queue.family.add():
        return PENDING_COUNT_EXCEEDED
    queue.pending.append((GRAPH_LAUNCH, replay))
    return 0


_graph_callback = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p,
                                   ctypes.c_uint64)(_graph_launch)
llvm.add_symbol(GRAPH_LAUNCH, ctypes.cast(_graph_callback, ctypes.c_void_p).value)


def fill(packed, argbytes, symbols):
    """A child's argument struct: the bytes its parent packed, then its own symbols."""
    ctypes.memmove(ctypes.addressof(packed), argbytes, len(argbytes))
    for i, sym in enumerate(symbols):
        setattr(packed, f"s{i}", sym.host.ctypes.data)


def _stream(launch):
    return launch[-1] if launch[0] != GRAPH_LAUNCH else 0    # a graph: fire-and-forget


def run_children(backend, queue):
    """Run the launches of a host launch's grid depth first: each child grid, then its
    own children, before the next launch of the same grid (tail launches last). A loop,
    not a recursion, so that nesting is bounded by the pending-launch limit as on a GPU,
    not by Python's stack. Returns the first error, which ends the host launch."""
    family = queue.family
    levels = [iter(in_order(queue.pending, _stream))]
    while levels:
        launch = next(levels[-1], None)
        if launch is None:
            levels.pop()
            if levels:                  # the grid that made that level has finished
                family.finished()
            continue
        if launch[0] == GRAPH_LAUNCH:          # a device graph launch: the whole graph
            error = launch[1]()
            family.finished()
            if error is not None:
                return error
            continue
        index, grid, block, shared, argbytes, _ = launch
        child = family.kernels[index]
        run = backend.prepare(child, frames.plan(child, grid, block, shared), None,
                              child_of=(argbytes, family))
        error = run()
        if error is not None:
            return error
        levels.append(iter(in_order(run.queue.pending, _stream)))
    return None


def emit(em, e, grid, block, shared, values):
    """The CPU target's ``device_launch``: pack, queue, and fail the thread on an error."""
    b = em.builder
    em.target.launches_kernels = True
    child = e.attrs["types"]            # the child's parameters: it is typed for these
    struct = ll.LiteralStructType([value_type(t, em.target) for t in child])
    slot = em.alloca(struct, "launch_args")
    for i, (t, v) in enumerate(zip(child, values)):
        if isinstance(t, T.Array):
            v = v.pack(b, em.target)
        b.store(v, b.gep(slot, [i32(0), i32(i)], source_etype=struct))
    nbytes = struct.get_abi_size(em.target.data_layout)
    fnty = ll.FunctionType(I32, [ptr(), I32, I32] + [I32] * 7 + [ptr(), I64])
    code = b.call(function(em.module, LAUNCH, fnty),
                  [em.err_ptr, i32(e.attrs["index"]), i32(e.attrs["stream"])] + grid +
                  block + [shared, slot, i64(nbytes)])
    failed, done = em.new_block("device_launch_failed"), em.new_block("device_launch_done")
    b.cbranch(b.icmp_unsigned("!=", code, i32(0)), failed, done)
    b.position_at_end(failed)
    em.target.emit_error(em, fault.DEVICE_LAUNCH, e.loc,
                         array=em.target.label_id(e.attrs["name"]),
                         index=b.sext(code, I64))
    em.builder.position_at_end(done)
