"""One launch of a sim kernel: its arguments as Python values and SimArrays, its shared,
local and constant memory, and the errors its checks raise (schedule.Report words them)."""
import ctypes
import os

import numpy as np

import simt.fault as fault

from ...errors import LaunchError, NotSupportedError
from ...ir import types as T
from ...lang import bfloat16
from .. import devqueue
from . import devlaunch, heap, records, textures, values
from .copies import SimTensorMap
from .memory import FREED, INIT, Gone, Shadow, SimArray, VecArray, adder, elements, flat_buffer
from .schedule import (Block, Fault, Report, block_order, block_steps, fault_record,
                       make_threads, run_block, run_grid, thread_indices)


class Launch:
    """A launch's state; generated code calls its methods as ``_k_L``."""

    def __init__(self, loaded, grid, block, shared_bytes, symbols, memory, family=None,
                 child=False, cooperative=False, cluster=None):
        binary = loaded.binary
        self.binary, self.loaded = binary, loaded
        self.grid, self.block, self.shared_bytes = tuple(grid), tuple(block), shared_bytes
        self.seed = binary.seed
        self.tids = thread_indices(self.block)
        self.sites = binary.sites
        self.report = Report(binary.name, binary.sites)
        self.symbols = symbols
        self.memory = memory          # the backend: which device memory is initialized
        self.shadows = {}             # (root address, itemsize) -> Shadow of global memory
        self.cur = None
        self.unwritten = None         # the first uninitialized read: (site, index, thread)
        self.family = family          # devqueue.Family of the host launch, if it launches
        self.children = []            # the launches its threads made (devlaunch.py)
        self.child = child            # launched from a kernel: scalars come as sim values
        self.addresses = {}           # id(global buffer) -> (its address, its unit's size)
        self.cooperative = cooperative  # launch_cooperative: grid.sync() waits for the grid
        self.cluster = tuple(cluster or (1, 1, 1))     # blocks per cluster, per axis
        self.cluster_size = self.cluster[0] * self.cluster[1] * self.cluster[2]
        self.running = {}             # block index -> Block, of the blocks running together

    # ------------------------------------------------------------ running
    def run(self, args):
        """Run every block; the first error as a LaunchError, else None."""
        try:
            self.params = self.arguments(args)
            make_block = self.loaded.launch_fn(self)
            if self.cluster_size > 1 or self.cooperative and self.binary.sync:
                for group in self.groups():     # every block at once / a cluster's
                    blocks = [Block(self, index) for index in group]
                    self.running = {b.index: b for b in blocks}
                    run_grid(self, [(b, block_steps(self, b, make_block(b), make_threads(self),
                                                    self.binary.sync))
                                    for b in blocks], self.seed)
                    for b in blocks:            # what records of accesses keep: not these
                        b.shared_arrays = {}
            else:
                threads = make_threads(self)
                for index in block_order(self.grid, self.seed):
                    block = Block(self, index)
                    run_block(self, block, make_block(block), threads, self.binary.sync)
        except Fault as fault:
            return fault.error
        except RecursionError as exc:
            return self.stack_overflow(exc)
        finally:
            self.cur = None
        self.memory.mark_written(self.shadows)
        return None

    def groups(self):
        """The blocks that run together: the grid (cooperative), else each cluster, in the
        seed's order."""
        order = block_order(self.grid, self.seed)
        if self.cooperative:
            return [order]
        clusters = {}
        for index in order:
            clusters.setdefault(tuple(i // c for i, c in zip(index, self.cluster)), []) \
                .append(index)
        return list(clusters.values())

    # ------------------------------------------------------------ clusters
    def cluster_rank(self, bid):
        """The rank of block ``bid`` in its cluster (x fastest, as %cluster_ctarank)."""
        cx, cy, _ = self.cluster
        x, y, z = (i % c for i, c in zip(bid, self.cluster))
        return x + cx * (y + cy * z)

    def map_shared(self, th, site, array, rank):
        """cluster.map_shared_rank(array, rank): the same shared array (or view) of the
        cluster's block of that rank, checked as its own block's accesses are."""
        if not 0 <= rank < self.cluster_size:
            from ...lang.cluster import NO_BLOCK
            where = self.sites[site]
            raise Fault(fault.decode(fault_record(fault.ASSERT, where, th,
                                                  dim=fault.message_id(0)),
                                     self.report._binary(where, messages=[NO_BLOCK]),
                                     self.binary.name))
        cx, cy, _ = self.cluster
        origin = [i - i % c for i, c in zip(th.bid, self.cluster)]
        index = (origin[0] + rank % cx, origin[1] + rank // cx % cy, origin[2] + rank // (cx * cy))
        if index == th.bid:
            return array
        other = self.running[index]
        name = next(n for n, a in th.block.shared_arrays.items() if a.data is array.data)
        return other.shared_arrays[name].reshaped(array.off, array.shape, array.est)

    def stack_overflow(self, exc):
        """The LaunchError of a recursive device function too deep for Python's stack:
        at the user's line its innermost frame ran (generated code keeps those lines)."""
        frames = [(tb.tb_frame.f_code, tb.tb_lineno) for tb in _tracebacks(exc.__traceback__)]
        user = [(code, line) for code, line in frames if not code.co_filename.startswith(_SIMT)]
        code, line = user[-1] if user else (None, 0)
        th = self.cur
        where = f"{code.co_filename}:{line}" if code else "?"
        name = self.binary.name
        place = f"in kernel '{name}'" + (f" (device function '{code.co_name}')"
                                         if code and code.co_name != name else "")
        return LaunchError(
            f"stack overflow {place}: its recursion went deeper than the sim device's "
            f"Python stack\n  block {th.bid}, thread {th.tid}, at {where}\n  stop the "
            f"recursion earlier (is its base case reached?); the cpu device goes deeper",
            kernel=name, block=th.bid, thread=th.tid,
            filename=code.co_filename if code else None, line=line)

    # ------------------------------------------------------------ arguments
    def arguments(self, args):
        """The kernel's arguments as generated code takes them. Global memory gets a
        Shadow (one per buffer, shared by arguments over it) unless the kernel only reads
        it and all of it was written before: then nothing can race or be uninitialized."""
        binary = self.binary
        spans = {}
        for i, (t, value) in enumerate(zip(binary.params, args)):
            if isinstance(t, T.Array):
                spans[i] = self.span(t, value, binary.param_names[i])
            elif isinstance(t, T.TensorMap):     # simt.tma.store may write through it
                spans[i] = self.span(t, self.map_array(value), binary.param_names[i])
            elif isinstance(t, T.Surface):       # a checked array of texels (sim/textures.py)
                spans[i] = self.span(t, textures.texels(t, value), binary.param_names[i])
        written = {spans[i][0] for i in binary.written if i in spans}
        written |= {spans[i][0] for i, t in enumerate(binary.params)
                    if isinstance(t, (T.TensorMap, T.Surface))}
        out = [self.global_array(t, spans[i], spans[i][0] in written, binary.param_names[i])
               if i in spans else self.argument(t, value)
               for i, (t, value) in enumerate(zip(binary.params, args))]
        return [SimTensorMap(a, t) if isinstance(t, T.TensorMap) else
                textures.SimTexture(t, a) if isinstance(t, T.Surface) else a
                for a, t in zip(out, binary.params)]

    def map_array(self, tmap):
        """The array of a tensor map (runtime/tensormaps.py) made on this device."""
        if tmap.device.backend is not self.memory:
            raise ValueError(f"{tmap!r} was made on {tmap.device.name}; make the tensor map "
                             "on the device that runs the kernel")
        return tmap.array

    def argument(self, t, value):
        if isinstance(t, T.Tuple):
            return tuple(self.argument(it, v) for it, v in zip(t.items, value))
        if isinstance(t, T.Texture):
            return textures.kernel_object(t, value)
        if isinstance(t, T.Array):
            raise Fault(NotSupportedError("arrays inside tuples are not supported on the sim "
                                          "device: pass them as arguments of their own"))
        return value if self.child else scalar(t, value)

    def span(self, t, value, label):
        """((buffer address, itemsize), buffer bytes, written, address, shape, strides)."""
        unit, _ = unit_of(np.dtype(t.dtype))
        if isinstance(value, np.ndarray):
            ptr, shape, strides = value.ctypes.data, value.shape, value.strides
        else:
            ptr, shape, strides = value.ptr, value.shape, value.strides
        item = unit.itemsize
        if any(s % item for s in strides):
            raise Fault(NotSupportedError(f"array '{label}' has strides {strides} that are not "
                                          f"a multiple of its itemsize: not on the sim device"))
        lo = ptr + sum(min(0, (n - 1) * s) for n, s in zip(shape, strides) if n)
        hi = ptr + np.dtype(t.dtype).itemsize + sum(max(0, (n - 1) * s)
                                                    for n, s in zip(shape, strides) if n)
        if 0 in shape:
            lo = hi = ptr
        root, root_bytes, initialized = self.memory.region(lo, hi)
        return (root, item), root_bytes, initialized, ptr, tuple(shape), strides

    def global_array(self, t, span, written, label):
        (root, item), root_bytes, initialized, ptr, shape, strides = span
        dtype = np.dtype(t.dtype)
        if records.is_record(dtype):
            return self.record_array(span, written, label, dtype)
        key = (root, item)
        shadow = self.shadows.get(key)
        if shadow is None and (written or initialized is not True):
            init = initialized if initialized is True else \
                [INIT if ok else None for ok in initialized[:root_bytes // item * item]
                 .reshape(-1, item).all(axis=1).tolist()]
            shadow = self.shadows[key] = Shadow(self, root_bytes // item, init, written)
        unit, n = unit_of(dtype)
        buffer = flat_buffer(root, root_bytes, unit)
        self.addresses[id(buffer)] = (root, item)
        return new_array(self, buffer, (ptr - root) // item, shape,
                         tuple(s // item for s in strides), dtype, label, shadow, n)

    def record_array(self, span, written, label, dtype):
        """An array of records: its bytes, with a byte-granular Shadow (records.py)."""
        (root, _), root_bytes, initialized, ptr, shape, strides = span
        key = (root, 1)
        shadow = self.shadows.get(key)
        if shadow is None and (written or initialized is not True):
            init = initialized if initialized is True else \
                [INIT if ok else None for ok in initialized[:root_bytes].tolist()]
            shadow = self.shadows[key] = Shadow(self, root_bytes, init, written)
        raw = (ctypes.c_char * max(root_bytes, 1)).from_address(root)
        data = memoryview(raw).cast("B")
        self.addresses[id(data)] = (root, 1)
        return records.RecArray(self, data, ptr - root, shape, tuple(strides), dtype, label,
                                shadow, None)

    def malloc(self, th, site, count, dtype):
        return heap.malloc(self, th, site, count, dtype)

    def free(self, th, site, array):
        heap.free(self, th, site, array)

    def null_array(self, dtype, label):
        """An empty array of no allocation, as a failed simt.malloc returns (every index is
        out of bounds; simt.free ignores it)."""
        if records.is_record(dtype):
            return records.RecArray(self, memoryview(bytearray(1)), 0, (0,),
                                    (dtype.itemsize,), dtype, label, None, None)
        _, n = unit_of(dtype)
        return new_array(self, [], 0, (0,), (n or 1,), dtype, label, None, n)

    def index_fault(self, site):
        """The out-of-bounds report of an index into a record value's array field."""
        return lambda i, d, n: self.out_of_bounds(site, i, d, n, _Named(self.sites[site].label))

    def make_shared(self, decl, block):
        name, space, shape, dtype, data, index = decl
        if space == "dynamic_shared":
            shape = (self.shared_bytes // dtype.itemsize,)
        return self._private(shape, dtype, name, reads=True)

    def make_local(self, decl):
        name, space, shape, dtype, data, index = decl
        return self._private(shape, dtype, name, reads=False)

    def _private(self, shape, dtype, name, reads):
        unit, n = unit_of(dtype)
        count = int(np.prod(shape)) if len(shape) else 1
        if records.is_record(dtype):
            data = memoryview(bytearray(max(count, 1) * dtype.itemsize))
            est = tuple(int(np.prod(shape[i + 1:])) * dtype.itemsize for i in range(len(shape)))
            shadow = Shadow(self, count * dtype.itemsize, False, reads)
            return records.RecArray(self, data, 0, tuple(shape), est, dtype,
                                    name.split("_", 3)[-1], shadow, None)
        buffer = np.zeros(max(count, 1), dtype)
        est = tuple(int(np.prod(shape[i + 1:])) * (n or 1) for i in range(len(shape)))
        shadow = Shadow(self, count * (n or 1), False, reads)
        return new_array(self, _buffer_of(buffer, unit), 0, tuple(shape), est, dtype,
                         name.split("_", 3)[-1], shadow, n)

    def static(self, decl):
        """Constant memory and module-level symbols: checked for bounds, read as they are."""
        name, space, shape, dtype, data, index = decl
        if space == "symbol":
            data = self.symbols[index].host
        data = np.ascontiguousarray(data)
        unit, n = unit_of(dtype)
        if records.is_record(dtype):
            raw = memoryview(data.reshape(-1).view(np.uint8)).cast("B") if data.nbytes else \
                memoryview(bytearray(1))
            return records.RecArray(self, raw, 0, tuple(data.shape), tuple(data.strides),
                                    dtype, name.split("_", 3)[-1], None, None)
        est = tuple(s // unit.itemsize for s in data.strides)
        return new_array(self, _buffer_of(data, unit), 0, tuple(data.shape), est, dtype,
                         name.split("_", 3)[-1], None, n)

    # ------------------------------------------------------------ launches from kernels
    def device_launch(self, th, site, index, stream, grid, block, shared, values):
        """``child[grid, block, shared, stream](values)`` run by thread th: checked as the
        device runtime checks it, then queued for when this grid has finished."""
        code = self.family.check(grid, block, shared)
        if code:
            raise Fault(self.report.device_launch(self.sites[site], th, code))
        try:
            args = tuple(devlaunch.argument(self, v) for v in values)
        except NotSupportedError as error:
            raise Fault(error) from None
        self.children.append((index, grid, block, shared, args, stream))

    def graph_launch(self, th, site, ident):
        """simt.graph_launch(exe) run by thread th: refused (cudaErrorInvalidValue) unless
        this grid is a kernel node of a graph's replay and exe was instantiated with
        device_launch=True; then queued, fire-and-forget, for when this grid has finished."""
        replay = self.memory.device_graphs.get(ident)
        if replay is None or not self.family.in_graph:
            code = devqueue.INVALID_VALUE
        else:
            code = 0 if self.family.add() else devqueue.PENDING_COUNT_EXCEEDED
        if code:
            raise Fault(self.report.device_launch(self.sites[site], th, code))
        self.children.append(devlaunch.graph_entry(replay))

    # ------------------------------------------------------------ errors
    def out_of_bounds(self, site, index, dim, extent, array):
        raise Fault(self.report.out_of_bounds(self.sites[site], index, dim, extent, self.cur,
                                              array.label))

    def uninitialized(self, site, idx, th):
        """Kept until the block's next barrier: a write of another thread before then
        makes it a race, which is what it is reported as."""
        if self.unwritten is None:
            self.unwritten = (site, idx, th)

    def flush(self):
        """At a barrier and at the end of a block: report a read nothing wrote."""
        if self.unwritten is not None:
            site, idx, th = self.unwritten
            raise Fault(self.report.uninitialized(self.sites[site], self.sites[site].label or
                                                  "array", idx, th))

    def unassigned(self, th, site):
        """A read of a local variable that thread th has not assigned (ir/assigned.py)."""
        where = self.sites[site]
        raise Fault(fault.checked_error(fault.UNASSIGNED, self.binary.name,
                                        fault.Thread(th.bid, th.tid, where.file, where.line),
                                        array=where.label))

    def race(self, rec, first, site, second, idx, th):
        if type(rec) is Gone:          # not a race: the element's memory is gone
            if rec is FREED:
                raise Fault(heap.use_after_free(self, site, idx, th, second != "read"))
            raise Fault(self.report.exited_block(self.sites[site], second, idx, th))
        other = (_Past(rec[0], rec[1]), self.sites[rec[4]])
        across = "grid.sync() (cg.this_grid().sync())" if self.cooperative else \
            "cg.this_cluster().sync()" if self.cluster_size > 1 and \
            self.running.get(rec[1].index) is rec[1] else None
        raise Fault(self.report.race(other, first, self.sites[site], second,
                                     self.sites[site].label or "array", idx, th, across))

    def trap(self, th, site):
        raise Fault(self.report.trap(self.sites[site], th))

    def assert_failed(self, th, site):
        raise Fault(self.report.assert_failed(self.sites[site], th))

    def divergence(self, th1, site1, th2, site2):
        raise Fault(self.report.divergence(th1, self.sites[site1], th2, self.sites[site2]))

    def skipped_barrier(self, th, site, missing):
        """th waits at barrier ``site``, which thread ``missing`` passed by: it ran to the
        kernel's end without returning (the CPU device's checked mode reports it so too)."""
        where = self.sites[site]
        raise Fault(fault.checked_error(fault.BARRIER_DIVERGENCE, self.binary.name,
                                        fault.Thread(th.bid, th.tid, where.file, where.line),
                                        fault.Thread(missing.bid, missing.tid, None, 0)))

    def narrowed(self, th, site, value):
        """narrowing=True: ``value`` converted to a narrower integer type (the site's
        label: 'int64>int32'); a NarrowingConversionError when that changes it."""
        where = self.sites[site]
        source, target = where.label.split(">")
        bits, signed = np.dtype(target).itemsize * 8, target.startswith("i")
        result = int(value) & (1 << bits) - 1
        if signed and result >> bits - 1:
            result -= 1 << bits
        if result != value:
            place = f"in kernel '{self.binary.name}'" + (
                f" (device function '{where.function}')"
                if where.function not in ("?", self.binary.name) else "")
            raise Fault(fault.narrowing_error(
                self.binary.name, place, fault.Thread(th.bid, th.tid, where.file, where.line),
                int(value), source, result, target))
        return result

    def own_lane(self, th, site, mask):
        """A warp function whose mask leaves out th's own lane (undefined in CUDA)."""
        where = self.sites[site]
        raise Fault(fault.checked_error(fault.OWN_LANE, self.binary.name,
                                        fault.Thread(th.bid, th.tid, where.file, where.line),
                                        index=(mask & 0xFFFFFFFF, th.lane)))

    def divergence_warp(self, th, site, other, wait, done):
        other_site = self.sites[wait[1]] if wait is not None else None
        raise Fault(self.report.warp_divergence(th, self.sites[site], other, other_site, done))

    def named_deadlock(self, th, waits, done):
        """Every thread left waits and a named barrier th waits at cannot complete."""
        _, site, (ident, _) = waits[th]
        bar = th.block.named[ident]
        others = [(o, w) for o, w in waits.items() if w[:2] != ("nbar", site)]
        other, other_site = (others[0][0], self.sites[others[0][1][1]]) if others else \
            (None, None)
        return self.report.named_deadlock(th, self.sites[site], ident, bar, other, other_site,
                                          th.block.live)

    def grid_sync(self, th, site):
        raise Fault(self.report.not_cooperative(self.sites[site], th))


class _Named:
    """What an out-of-bounds report names: an array field of a record value."""

    def __init__(self, label):
        self.label = label


class _Past:
    """The thread of an earlier access, as it was then (Thread objects move on to the
    next block)."""

    def __init__(self, thread, block):
        self.tid, self.bid, self.block = thread.tid, block.index, block


def _buffer_of(array, unit):
    return elements(array.reshape(-1).view(np.uint8).view(unit)) if array.nbytes else []


def unit_of(dtype):
    """(the dtype sim memory holds, components per element): a vector type's component
    and its count, else the dtype and None."""
    t = T.element_type(dtype)
    if isinstance(t, T.Vector):
        return t.dtype, t.n
    return dtype, None


def new_array(launch, data, off, shape, est, dtype, label, shadow, n):
    """A SimArray over ``data``; for a vector type (``n`` components) a VecArray over the
    components."""
    if n is None:
        return SimArray(launch, data, off, shape, est, dtype, label, shadow, adder(dtype))
    return VecArray(launch, data, off, shape, est, dtype, label, shadow, adder(dtype), n)


def scalar(t, value):
    """A scalar argument as the Python value generated code computes with."""
    if isinstance(t, T.Record):                    # the tuple of its leaves (records.py)
        return records.Layout(t.dtype).from_host(value)
    if isinstance(t, T.Vector):                    # a tuple of its components
        return tuple(scalar(t.element, v) for v in value)
    kind = t.kind
    if kind == "b":
        return bool(value)
    if kind in "iu":
        return values.wrapper(t.dtype)(int(value))
    if kind == "c":
        z = complex(value)
        return values.c64(z) if t.dtype.itemsize == 8 else z
    if t.is_bfloat16:
        return int(bfloat16.bits(value))          # held as its 16 bits
    x = float(value)
    return values.ROUND.get(t.dtype.name, lambda v: v)(x)


_SIMT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tracebacks(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next
