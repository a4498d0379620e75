"""Running a sim kernel: blocks one after another, the threads of a block interleaved.

Each thread of a kernel with barriers or warp functions is a generator that yields at
each of them; the others are plain calls. A block runs its runnable threads one by one
until each waits or returns, in an order the seed chooses (seed 0: thread order; any
other: a shuffle of the warps and of the lanes in each warp, and of the blocks), then
releases the threads whose arrive/wait barrier phase has completed (mbarrier.py), else
the named barriers' threads, else the warp operations whose lanes have all arrived, or,
when only barriers are left, the barrier, after checking that every thread still running
waits at the same one (threads waiting on phases that nothing can complete: a LaunchError).
Named barriers (``barrier_sync(id, count)``, ``barrier_arrive``) count arrivals as the GPU
does: ``Block.named`` holds each id's, a ``barrier_sync`` waits until ``count`` threads have
arrived there (all the block's live threads when it names none), a ``barrier_arrive``
counts without waiting. The first error (out of bounds, race, divergence, deadlock,
uninitialized read, assert) stops the launch as a ``Fault`` carrying its LaunchError.
"""
import itertools
import random
from collections import namedtuple

import simt.fault as fault
from ...errors import (BarrierDivergenceError, IllegalAddressError, LaunchError,
                       RaceConditionError, UninitializedReadError)
from ...ir import types as T
from . import ordering
from .mbarrier import acquire
from .memory import EXITED, INIT

dim3 = namedtuple("dim3", "x y z")
WARP = T.WARP32           # the sim device's warp facts (SimBackend.warp): NVIDIA's 32 lanes


class Fault(Exception):
    """Stops a launch; ``error`` is what the user gets."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


class Warp:
    """A warp's sync log: the lanes (a bit mask) of each warp sync, in order."""

    __slots__ = ("log",)

    def __init__(self):
        self.log = []


class Named:
    """One named barrier of a block: the threads counted since it last completed (``count``
    of them complete it; None: all the block's live threads) and those of them waiting."""

    __slots__ = ("count", "arrived", "waiting")

    def __init__(self):
        self.count, self.arrived, self.waiting = None, 0, []


class Block:
    """One block's state: its barrier count and shared memory; its arrive/wait barriers
    (mbarrier.py), ``tick`` counting their changes, ``tried`` the tick at which try_waits
    last gave up; its named barriers and the threads those released (the scheduler resumes
    them); in a cooperative launch, ``gsync``: its barrier count when the grid last passed
    a grid.sync() (its accesses from before that count are ordered before every other
    block's after it: memory.ordered)."""

    __slots__ = ("ep", "shared_arrays", "launch", "index", "mbars", "tick", "tried", "named",
                 "freed", "live", "gsync", "at_grid")

    def __init__(self, launch, index):
        self.launch, self.index, self.ep = launch, index, 0
        self.gsync, self.at_grid = 0, False    # its barrier count at the last grid.sync()
        self.shared_arrays, self.mbars = {}, {}
        self.tick, self.tried = 0, -1
        self.named, self.freed, self.live = {}, [], len(launch.tids)

    def shared(self, decl):
        array = self.launch.make_shared(decl, self)
        if self.launch.cluster_size > 1:     # for cluster.map_shared_rank, while it runs
            self.shared_arrays[decl[0]] = array
        return array

    def arrive(self, ident, count, th, site, wait=False):
        """Thread th counts at named barrier ``ident`` (bar.arrive; bar.sync when it
        ``wait``s): the count-th arrival completes it, releasing the waiting threads and,
        for the race check, ordering every access before it with every access after (one
        barrier count for the whole block: a named barrier of part of the block orders
        more than on the GPU, never less)."""
        bar = self.named.get(ident)
        if bar is None:
            bar = self.named[ident] = Named()
        if bar.arrived == 0:
            bar.count = count
        bar.arrived += 1
        if wait:
            bar.waiting.append(th)
        if bar.arrived >= (self.live if bar.count is None else bar.count):
            self.complete(bar)

    def complete(self, bar):
        self.launch.flush()
        self.freed += bar.waiting
        bar.arrived, bar.waiting = 0, []
        self.ep += 1

    def exited(self):
        """A thread returned: a barrier_sync(id) waits for one thread less."""
        self.live -= 1
        for bar in self.named.values():
            if bar.count is None and bar.arrived and bar.arrived >= self.live:
                self.complete(bar)


class Thread:
    """One thread: its index (a tuple, for speed; ``threadIdx`` etc. for pdb); ``rel`` and
    ``vc``: its arrive/wait barrier releases and what it acquired (mbarrier.py)."""

    __slots__ = ("tid", "lane", "warp", "block", "locals", "result", "rel", "vc", "fenced",
                 "fenced_wide", "pend", "pend_far")

    def __init__(self, tid, block, warp, lane):
        self.tid, self.block, self.warp, self.lane = tid, block, warp, lane
        self.locals = self.result = self.vc = None
        self.fenced = self.fenced_wide = self.pend = self.pend_far = None
        self.rel = 0

    @property
    def bid(self):
        return self.block.index

    def local(self, decl):
        if self.locals is None:
            self.locals = {}
        array = self.locals.get(id(decl))
        if array is None:
            array = self.locals[id(decl)] = self.block.launch.make_local(decl)
        return array

    def dims(self):
        """threadIdx, blockIdx, blockDim, gridDim as pdb shows them."""
        launch = self.block.launch
        return dim3(*self.tid), dim3(*self.bid), dim3(*launch.block), dim3(*launch.grid)

    def __repr__(self):
        return f"block {self.bid} thread {self.tid}"


def block_order(grid, seed):
    blocks = list(itertools.product(range(grid[2]), range(grid[1]), range(grid[0])))
    if seed:
        random.Random(seed).shuffle(blocks)
    return [(x, y, z) for z, y, x in blocks]


def thread_order(threads, seed, bid):
    """Thread order of one block: by warps, the lanes in a warp; shuffled for seed != 0."""
    if not seed:
        return list(threads)
    rng = random.Random(hash((seed,) + bid))
    warps = [threads[i:i + WARP.size] for i in range(0, len(threads), WARP.size)]
    rng.shuffle(warps)
    order = []
    for warp in warps:
        warp = list(warp)
        rng.shuffle(warp)
        order += warp
    return order


def thread_indices(block):
    """(threadIdx, lane, warp number) of each thread of a block of shape ``block``."""
    bx, by, bz = block
    return [((x, y, z), n % WARP.size, n // WARP.size) for n, (z, y, x) in
            enumerate(itertools.product(range(bz), range(by), range(bx)))]


def make_threads(launch):
    """The Thread objects of a launch, one per thread of a block: each block reuses them
    (a record of an access names the block as well as the thread)."""
    warps = [Warp() for _ in range((len(launch.tids) + WARP.size - 1) // WARP.size)]
    return [Thread(tid, None, warps[w], lane) for tid, lane, w in launch.tids]


def run_block(launch, block, body, threads, sync):
    """Run every thread of one block (body: the kernel function made for this block)."""
    for _ in block_steps(launch, block, body, threads, sync):
        pass                 # grid.sync(): only a cooperative launch gets here (run_grid)


def run_grid(launch, blocks, seed):
    """A cooperative launch, or one cluster of a cluster launch: ``blocks`` ((Block, its
    block_steps generator) each) run in turn until each waits at grid.sync() (or
    cluster.sync()) or has finished; once all that have not finished wait there, they pass
    it (a block that finished is excused, as on the cpu device). A seed shuffles the
    blocks' order at every such sync too. A read of memory nothing wrote is kept until all
    got there (launch.flush): another block's write before then makes it a race."""
    rounds = 0
    while blocks:
        waiting = []
        for block, steps in blocks:
            for _ in steps:
                waiting.append((block, steps))
                break
        launch.flush()          # a read nothing wrote, kept until every block got here
        for block, _ in waiting:
            block.gsync = block.ep
        rounds += 1
        if seed:
            random.Random(hash((seed, rounds))).shuffle(waiting)
        blocks = waiting


def block_steps(launch, block, body, threads, sync):
    """run_block as a generator that yields when the block's threads all wait at a
    grid.sync() of a cooperative launch (or a cluster.sync() of a cluster launch)."""
    for th in threads:
        th.block = block
        th.locals = th.result = th.vc = None
        th.fenced = th.fenced_wide = th.pend = th.pend_far = None
        th.rel = 0
    for warp in {id(th.warp): th.warp for th in threads[::WARP.size]}.values():
        warp.log = []
    order = thread_order(threads, launch.seed, block.index)
    if not sync:
        for th in order:
            launch.cur = th
            body(th)
    else:
        yield from _run_sync(launch, block, body, threads, order)
    if not launch.running:
        launch.flush()
    elif launch.cluster_size > 1:      # its shared memory is gone for the cluster's others
        _exit_cluster_block(launch, block)


def _exit_cluster_block(launch, block):
    """Block ``block`` of a cluster has exited: another block's access of its shared memory
    since their last cluster.sync() is not ordered before the exit (a use after exit in
    some order of the blocks), and any access from now on is one."""
    for array in block.shared_arrays.values():
        shadow = array.shadow
        if shadow is None:
            continue
        for k in range(len(shadow.w)):
            reads = shadow.r[k] if shadow.r is not None else None
            reads = reads if type(reads) is list else [] if reads is None else [reads]
            w = shadow.w[k]
            writes = [w] if w is not None and w is not INIT and type(w) is tuple else []
            for rec, access in [(r, "read") for r in reads] + [(r, "write") for r in writes]:
                if rec[1] is not block and rec[2] >= rec[1].gsync:
                    n = len(shadow.w)
                    idx = tuple(int(i) for i in _unravel(k, array.shape, n))
                    raise Fault(launch.report.exited_block(launch.sites[rec[4]], access, idx,
                                                           rec[0]))
        shadow.w[:] = [EXITED] * len(shadow.w)


def _unravel(k, shape, n):
    """The index of flat element k of an array of ``shape`` (k itself where the shadow
    holds more than its elements: a record's bytes, a vector's components)."""
    count = 1
    for extent in shape:
        count *= extent
    if count != n:
        return (k,)
    out = []
    for extent in reversed(shape):
        out.append(k % extent)
        k //= extent
    return tuple(reversed(out))


def _run_sync(launch, block, body, threads, order):
    rank = {th: i for i, th in enumerate(order)}
    ths, gens = list(order), [body(th) for th in order]
    held = []                      # (thread, generator, what it yielded) still waiting
    done = set()
    ran_off = []                   # threads that ended without a return: no barrier excuses them
    while True:
        ys = []
        for th, gen in zip(ths, gens):
            launch.cur = th
            try:
                ys.append(gen.send(th.result))
            except StopIteration as end:
                ys.append(None)
                done.add(th)
                block.exited()
                if not end.value:
                    ran_off.append(th)
        if None in ys:
            alive = [th for th, y in zip(ths, ys) if y is not None]
            keep = [gen for gen, y in zip(gens, ys) if y is not None]
            ys = [y for y in ys if y is not None]
        else:
            alive, keep = ths, gens
        if not held and ys and (ys.count(ys[0]) == len(ys) and ys[0][0] == "bar" or
                                _one_barrier(ys)):
            if ran_off:
                _skipped(launch, alive, ys, ran_off)
            _barrier(launch, block, alive, ys)     # the usual case: one barrier, all there
            ths, gens = alive, keep
            continue
        for th, (kind, site, payload) in zip(alive, ys):
            if kind == "nbar":                     # bar.sync: counted as it gets there
                block.arrive(payload[0], payload[1], th, site, wait=True)
        waiting = held + list(zip(alive, keep, ys))
        if not waiting:
            return
        waiting.sort(key=lambda w: rank[w[0]])
        waits = {th: y for th, _, y in waiting}
        results = {}
        released = _release_mbarriers(waits, results) or _release_named(block, waits) or \
            _release_warps(launch, threads, waits, results, done)
        if not released:
            if ran_off:
                _skipped(launch, list(waits), list(waits.values()), ran_off)
            released = _release_barrier(launch, block, threads, waits, results, done)
        ths = [th for th, _, _ in waiting if th in released]
        gens = [gen for th, gen, _ in waiting if th in released]
        held = [w for w in waiting if w[0] not in released]
        for th in ths:
            th.result = results.get(th)
        if block.at_grid:              # every thread of the block waits at grid.sync()
            block.at_grid = False
            yield


def _skipped(launch, waiting, ys, ran_off):
    """Threads wait at a block barrier that the threads of ``ran_off`` never reached: they
    ended without a ``return`` (a thread that returned is excused, as on a GPU, where
    an exited thread no longer counts). The first waiting thread and the first such
    thread are reported, as checked mode on the CPU device reports them."""
    for th, (kind, site, _) in zip(waiting, ys):
        if kind in ("bar", "grid"):
            launch.flush()
            launch.skipped_barrier(th, site, min(ran_off, key=lambda t: t.tid[::-1]))


def _one_barrier(ys):
    """Whether every thread yielded the same barrier (a collective: values differ)."""
    site = ys[0][1]
    return ys[0][0] == "bar" and all(y[0] == "bar" and y[1] == site for y in ys)


def _barrier(launch, block, threads, ys):
    launch.flush()
    payload = ys[0][2]
    if payload is not None:
        preds = [bool(y[2][1]) for y in ys]
        value = {"count": sum(preds), "and": int(all(preds)), "or": int(any(preds))}[payload[0]]
    else:
        value = None
    for th in threads:
        th.result = value
    block.ep += 1
    ordering.share(threads)


def _release_mbarriers(waits, results):
    """Threads waiting on an arrive/wait barrier's phase that has completed since."""
    released = set()
    for th, (kind, site, payload) in waits.items():
        if kind == "mbar":
            bar, test, value, _ = payload
            seen = bar.passed(test, value)
            if seen is not None:
                acquire(th, seen)
                results[th] = True
                released.add(th)
    for th in released:
        del waits[th]
    return released


def _release_named(block, waits):
    """The threads named barriers released (their count of arrivals reached)."""
    released = set(block.freed)
    block.freed = []
    for th in released:
        del waits[th]
    return released


def _release_warps(launch, threads, waits, results, done):
    """Warp operations whose lanes have all arrived (or do not take part): their results.
    A lane waiting on an arrive/wait barrier may still come: its warp's operation waits."""
    released = set()
    groups = {}
    for th, (kind, site, payload) in waits.items():
        if kind == "warp":      # syncwarp calls of one mask meet at any site (Volta on)
            key = ("syncwarp", payload[1][0]) if payload[0] == "syncwarp" else site
            groups.setdefault((th.warp, key), []).append(th)
    for (warp, _), lanes in groups.items():
        present = {th.lane: th for th in lanes}
        arrived = 0
        for lane in present:
            arrived |= 1 << lane
        warp_threads = [th for th in threads if th.warp is warp]
        if any(waits.get(th, ("",))[0] == "mbar" and not arrived >> th.lane & 1
               for th in warp_threads):
            continue
        for th in lanes:
            op, values, types = waits[th][2]
            if op not in ("activemask", "elect"):         # no mask argument
                mask = values[0]
                if not mask >> th.lane & 1:
                    launch.own_lane(th, waits[th][1], mask)
                missing = mask & ~arrived & ((1 << len(warp_threads)) - 1)
                if missing:
                    lane = (missing & -missing).bit_length() - 1
                    other = warp_threads[lane]
                    launch.divergence_warp(th, waits[th][1], other, waits.get(other),
                                           other in done)
        for th in lanes:
            results[th] = _warp_result(th, present, arrived, waits, types)
        warp.log.append(arrived)
        if waits[lanes[0]][2][0] == "syncwarp":     # orders memory as a barrier of its lanes
            ordering.share(lanes)
        for th in lanes:
            del waits[th]
        released.update(lanes)
    return released


def _warp_result(th, present, arrived, waits, types):
    op, values, _ = waits[th][2]
    kind, _, sub = op.partition(".")
    if kind == "syncwarp":
        return None
    if kind == "activemask":
        return arrived
    if kind == "elect":                 # elect.sync: the lowest lane here
        return th.lane == min(present)
    if kind == "exchange":              # every lane's operands (lang/mma.py), None if absent
        return [waits[present[lane]][2][1][1:] if lane in present else None
                for lane in range(WARP.size)]
    mask = values[0] & arrived
    lanes = [present[lane] for lane in sorted(present) if mask >> lane & 1]
    if kind == "shfl":
        last = WARP.size - 1
        value, b, width = values[1], values[2] & last, values[3]
        seg = (WARP.size - width) & last
        lane = th.lane
        lo = lane & seg
        if sub == "up":
            src = lane - b
            ok = src >= lo
        else:
            hi = lo | (last & ~seg)
            src = {"down": lane + b, "bfly": lane ^ b, "idx": lo | (b & ~seg)}[sub]
            ok = src <= hi
        if ok and mask >> src & 1 and src in present:
            return waits[present[src]][2][1][1]
        return value
    args = [waits[o][2][1][1] for o in lanes]
    if kind == "vote":
        if sub == "ballot":
            return sum(1 << o.lane for o, p in zip(lanes, args) if p)
        if sub == "uni":            # the same predicate everywhere: all true, or none
            return int(all(args) or not any(args))
        return int(all(args) if sub == "all" else any(args))
    if kind == "match":
        own = _bits(values[1], types[1])
        same = [o for o, v in zip(lanes, args) if _bits(v, types[1]) == own]
        bits = sum(1 << o.lane for o in same)
        if sub == "any":
            return bits
        everyone = len(same) == len(lanes)
        return (sum(1 << o.lane for o in lanes) if everyone else 0, int(everyone))
    if kind == "reduce":
        signed = types[1][1] == "i"
        acc = args[0]
        for v in args[1:]:
            acc = {"add": lambda a, b: a + b, "and": lambda a, b: a & b,
                   "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b, "min": min,
                   "max": max}[sub](acc, v)
        acc &= 0xFFFFFFFF
        return acc - (1 << 32) if signed and acc >> 31 else acc
    raise LaunchError(f"internal: warp operation {op} on the sim device")


def _bits(value, dtype):
    if dtype[1] == "f":
        import numpy as np
        return np.array(value, dtype).tobytes()
    return value


def _release_barrier(launch, block, threads, waits, results, done):
    """Every running thread waits at a barrier: the same one, or the block diverged."""
    if any(kind == "mbar" for kind, _, _ in waits.values()):
        return _stuck(launch, block, waits, results)
    sites = {}
    for th, (kind, site, payload) in waits.items():
        sites.setdefault(site, []).append(th)
    if not launch.running:         # blocks running together: run_grid flushes
        launch.flush()
    stuck = [th for th, (kind, _, _) in waits.items() if kind == "nbar"]
    if stuck:
        raise Fault(launch.named_deadlock(stuck[0], waits, done))
    if len(sites) > 1:
        (s1, t1), (s2, t2) = sorted(sites.items(), key=lambda kv: kv[0])[:2]
        launch.divergence(t1[0], s1, t2[0], s2)
    (site, waiting), = sites.items()
    kind, _, scope = waits[waiting[0]]
    ops = [waits[th][2] for th in waiting]
    if kind == "grid":       # grid.sync() (scope None), cluster.sync() ('cluster')
        if scope is None and not launch.cooperative:
            launch.grid_sync(waiting[0], site)
        block.at_grid = scope is None or launch.cluster_size > 1
    elif ops[0] is not None:
        op = ops[0][0]
        preds = [bool(p[1]) for p in ops]
        value = {"count": sum(preds), "and": int(all(preds)), "or": int(any(preds))}[op]
        for th in waiting:
            results[th] = value
    block.ep += 1
    ordering.share(waiting)
    for th in waiting:
        del waits[th]
    return set(waiting)


def _stuck(launch, block, waits, results):
    """No thread can run and some wait on arrive/wait barrier phases: their try_waits give
    up (return False) once, as a GPU's would after a while; if nothing changed a barrier
    since they last did, no phase can ever complete."""
    tries = [th for th, (kind, _, payload) in waits.items() if kind == "mbar" and payload[3]]
    if tries and block.tried != block.tick:
        block.tried = block.tick
        for th in tries:
            results[th] = False
            del waits[th]
        return set(tries)
    launch.flush()
    th, (_, site, _) = next((th, w) for th, w in waits.items() if w[0] == "mbar")
    raise Fault(launch.report.never_completes(launch.sites[site], th))


def _element(label, idx):
    """``a[3]`` or ``a[1, 2]`` (idx: an int or a tuple)."""
    return f"{label}[{', '.join(map(str, idx)) if isinstance(idx, tuple) else idx}]"


def fault_record(code, site, th, array=0, dim=0, index=0, extent=0):
    record = [0] * fault.WORDS
    record[:7] = [code, site.line, array, dim, index, extent, 0]
    record[7:10] = th.bid
    record[10:13] = th.tid
    return record


class Report:
    """The LaunchErrors of a launch, worded as checked mode words them."""

    def __init__(self, name, sites):
        self.name = name
        self.sites = sites

    def _binary(self, site, labels=(), messages=()):
        class _B:
            pass
        b = _B()
        b.labels, b.messages, b.files = list(labels), list(messages), [(site.function, site.file)]
        return b

    def out_of_bounds(self, site, index, dim, extent, th, label):
        record = fault_record(fault.OUT_OF_BOUNDS, site, th, 0, dim, index, extent)
        return fault.decode(record, self._binary(site, [label or site.label or "array"]),
                            self.name)

    def assert_failed(self, site, th):
        record = fault_record(fault.ASSERT, site, th, dim=fault.message_id(0))
        return fault.decode(record, self._binary(site, messages=[site.label]), self.name)

    def trap(self, site, th):
        return fault.decode(fault_record(fault.TRAP, site, th), self._binary(site), self.name)

    def device_launch(self, site, th, code):
        """A launch inside the kernel that the device runtime refuses (cudaError ``code``);
        the site's label names the child."""
        record = fault_record(fault.DEVICE_LAUNCH, site, th, index=code)
        return fault.decode(record, self._binary(site, [site.label]), self.name)

    def not_cooperative(self, site, th):
        return fault.decode(fault_record(fault.NOT_COOPERATIVE, site, th), self._binary(site),
                            self.name)

    def where(self, th, site):
        return f"block {th.bid} thread {th.tid} at {site}{fault._source_line(site.file, site.line)}"

    def race(self, rec, first, site, second, label, idx, th, across=None):
        """``across``: what orders blocks' accesses in this launch (grid.sync() ...)."""
        other, other_site = rec
        element = _element(label, idx)
        if (first, second) == ("volatile write", "volatile read"):
            fix = fault.VOLATILE_FLAG_FIX
        elif other.block is th.block:
            fix = ("order them with simt.syncthreads() (simt.syncwarp() within a warp), or "
                   "use atomics")
        elif across is not None:
            fix = (f"the threads are in different blocks: order them with {across}, give "
                   f"each block its own elements, or use atomics")
        else:
            fix = ("the threads are in different blocks, which nothing orders within a launch: "
                   "give each block its own elements, or use atomics")
        text = (f"Race condition in kernel '{self.name}': {first} and {second} of {element} by "
                f"two threads with no barrier between them\n  {first}: "
                f"{self.where(other, other_site)}\n  {second}: {self.where(th, site)}\n  {fix}")
        return RaceConditionError(text, kernel=self.name, block=th.bid, thread=th.tid,
                                  filename=site.file, line=site.line)

    def exited_block(self, site, access, idx, th):
        """An access of the shared memory of a block of the cluster that has exited."""
        element = _element(site.label or "array", idx)
        text = (f"Use after exit in kernel '{self.name}': {access} of {element}, the shared "
                f"memory of another block of the cluster, which has exited\n  {access}: "
                f"{self.where(th, site)}\n  keep every block of a cluster running while the "
                f"others use its shared memory: end the kernel with cg.this_cluster().sync()")
        return IllegalAddressError(text, kernel=self.name, block=th.bid, thread=th.tid,
                                   filename=site.file, line=site.line)

    def uninitialized(self, site, label, idx, th):
        element = _element(label, idx)
        text = (f"Uninitialized read in kernel '{self.name}': {element} is read before "
                f"anything wrote it\n  read: {self.where(th, site)}\n  write it first (shared "
                f"memory and device_array/empty memory start undefined)")
        return UninitializedReadError(text, kernel=self.name, block=th.bid, thread=th.tid,
                                      filename=site.file, line=site.line)

    def divergence(self, th1, site1, th2, site2, what="barrier"):
        where2 = self.where(th2, site2) if site2 is not None else \
            f"block {th2.bid} thread {th2.tid}, which {what}"
        text = (f"Barrier divergence in kernel '{self.name}': threads of one block wait at "
                f"different barriers\n  {self.where(th1, site1)}\n  {where2}\n  every thread "
                f"of a block must reach the same simt.syncthreads(); move it out of the "
                f"branch or loop that only some threads take")
        return BarrierDivergenceError(text, kernel=self.name, block=th1.bid, thread=th1.tid,
                                      filename=site1.file, line=site1.line)

    def never_completes(self, site, th):
        text = (f"Deadlock in kernel '{self.name}': this phase of the simt.shared.barrier never "
                f"completes: every thread still running waits, and none can arrive\n  "
                f"{self.where(th, site)}\n  check the count, that every thread "
                f"arrives (or arrive_and_drop()s) once a phase, and the bytes expected "
                f"(expect_tx) against the copies; on a GPU the wait would hang")
        return LaunchError(text, kernel=self.name, block=th.bid, thread=th.tid,
                           filename=site.file, line=site.line)

    def named_deadlock(self, th, site, ident, bar, other, other_site, live):
        count = f"{bar.count} threads" if bar.count is not None else \
            f"the block's {live} live threads"
        if other is None:
            state = "every other thread waits at a named barrier too, or has exited"
        else:
            state = (f"another thread waits at "
                     f"{self.where(other, other_site) if other_site else 'none'}")
        text = (f"Barrier deadlock in kernel '{self.name}': named barrier {ident} waits for "
                f"{count} and only {bar.arrived} arrived; nothing else can run\n  "
                f"{self.where(th, site)}\n  {state}\n  a named barrier completes when its "
                f"count of threads have called simt.barrier_sync or simt.barrier_arrive with "
                f"its id: check the count, and that every thread meant to reach it does")
        return BarrierDivergenceError(text, kernel=self.name, block=th.bid, thread=th.tid,
                                      filename=site.file, line=site.line)

    def warp_divergence(self, th, site, other, other_site, other_done):
        state = "has exited" if other_done else (
            f"waits at {other_site}{fault._source_line(other_site.file, other_site.line)}"
            if other_site is not None else "does not arrive")
        text = (f"Barrier divergence in kernel '{self.name}': a warp collective's mask names "
                f"a lane that does not take part\n  {self.where(th, site)}\n  the lane: block "
                f"{other.bid} thread {other.tid}, which {state}\n  name only the lanes that "
                f"reach this call in its mask (simt.activemask() gives them)")
        return BarrierDivergenceError(text, kernel=self.name, block=th.bid, thread=th.tid,
                                      filename=site.file, line=site.line)

