"""Checked mode on the CPU device, the runtime half: shadow memory and a launch's
checker state (checked.py is the code half; docs/finding-bugs.md the user's view).

Each allocation a checked launch touches gets a shadow: one record (checklayout.RECORD_WORDS
int32) per element, made at its first checked launch with the element size of the array
passed then. An allocation made by ``device_array``/``empty`` starts unwritten; copies,
``zeros`` and memsets from the host mark what they cover as written, byte for byte: an
element counts as written once all of its bytes are (a memset of ``n`` bytes where ``n``
elements were meant leaves the rest unwritten, as compute-sanitizer's initcheck sees it).
Writes before the allocation's first checked launch are kept as byte ranges until its
shadow is made. Shared memory has one record per
byte, reused by every block: records are stamped with the launch's sync counter, so
nothing needs clearing between blocks or launches.
"""
import threading
import weakref

import numpy as np

import simt.fault as fault
from . import checklayout, disjoint

RESET_AT = 1 << 30          # the int32 stamps start over before they could wrap


class Shadow:
    """The records of one allocation: ``base``..``end``, one per ``1 << shift`` bytes."""

    def __init__(self, base, nbytes, shift, written):
        self.base, self.end, self.shift = base, base + nbytes, shift
        self.records = np.zeros(((nbytes >> shift) + 1, checklayout.RECORD_WORDS), np.int32)
        self.full = written
        self.partial = {}        # record -> bit mask of its bytes the host wrote (not all)
        if written:
            self.records[:, checklayout.FLAGS] = checklayout.INIT_FLAG

    def complete(self):
        """Every element written (it stays so: flags are never cleared)."""
        if not self.full:
            count = (self.end - self.base - 1 >> self.shift) + 1
            self.full = bool(np.all(self.records[:count, checklayout.FLAGS] & checklayout.INIT_FLAG))
        return self.full

    def span(self, start, stop):
        """The records of the bytes [start, stop) (clipped to the allocation)."""
        first = (max(start, self.base) - self.base) >> self.shift
        return first, (min(stop, self.end) - self.base - 1 >> self.shift) + 1

    def mark_written(self, start, stop):
        """The host wrote the bytes [start, stop): the records all of whose bytes are now
        written count as written (a record's bytes past the allocation's end need none)."""
        start, stop = max(start, self.base) - self.base, min(stop, self.end) - self.base
        if start >= stop:
            return
        size = 1 << self.shift
        first = -(-start // size)
        last = (self.end - self.base - 1) // size + 1 if stop == self.end - self.base \
            else stop // size
        if first < last:
            self.records[first:last, checklayout.FLAGS] |= checklayout.INIT_FLAG
        for record in {start // size, (stop - 1) // size}:
            if not first <= record < last:
                self._mark_bytes(record, start - record * size, stop - record * size, size)

    def _mark_bytes(self, record, lo, hi, size):
        """Bytes lo..hi (clipped to the record's) of ``record`` written by the host."""
        lo, hi = max(lo, 0), min(hi, size, self.end - self.base - record * size)
        mask = self.partial.get(record, 0) | ((1 << hi - lo) - 1) << lo
        if mask == (1 << min(size, self.end - self.base - record * size)) - 1:
            self.partial.pop(record, None)
            self.records[record, checklayout.FLAGS] |= checklayout.INIT_FLAG
        else:
            self.partial[record] = mask

    def forget_accesses(self):
        """Keep only what was written (the stamps start over)."""
        flags = self.records[:, checklayout.FLAGS] & checklayout.INIT_FLAG
        self.records[:] = 0
        self.records[:, checklayout.FLAGS] = flags


class ShadowMemory:
    """The CPU backend's shadows, and which allocations nothing has written yet."""

    def __init__(self):
        # base -> [end, the byte ranges written so far], of allocations with no shadow yet
        # that are not wholly written
        self.unwritten = {}
        self.shadows = {}            # base -> Shadow
        self.gen = 1                 # the next launch's first stamp
        self.shared = np.zeros(0, np.int32)
        self.lock = threading.Lock()     # one checked launch at a time (host threads, streams)
        # the two tables change under table_lock; an allocation's finalizer, which may run
        # in any thread at any allocation (a garbage collection), only queues its base
        self.table_lock = threading.Lock()
        self.dead = []

    def allocated(self, base, nbytes, owner):
        """A new allocation: uninitialized until something writes it."""
        with self.table_lock:
            self._forget_dead()
            self.unwritten[base] = [base + nbytes, []]
        weakref.finalize(owner, self.dead.append, base)

    def _forget_dead(self):
        while self.dead:
            base = self.dead.pop()
            self.unwritten.pop(base, None)
            self.shadows.pop(base, None)

    def written(self, start, nbytes):
        """The host wrote [start, start + nbytes) (a copy or a memset)."""
        self.written_spans(((start, start + nbytes),))

    def written_spans(self, spans):
        """The host wrote the byte ranges ``spans`` ((start, stop) pairs: the rows of a
        2-D/3-D copy). Called when the write runs, in stream or graph order: it waits for
        a checked launch under way, whose checker updates the records without locks."""
        spans = [(start, stop) for start, stop in spans if stop > start]
        if not (self.unwritten or self.shadows) or not spans:
            return
        lo, hi = min(start for start, _ in spans), max(stop for _, stop in spans)
        with self.table_lock:
            self._forget_dead()
            for base, (end, done) in list(self.unwritten.items()):
                done = _merged(done + [(max(start, base), min(stop, end))
                                       for start, stop in spans if base < stop and start < end])
                if done == [(base, end)]:
                    del self.unwritten[base]
                else:
                    self.unwritten[base][1] = done
            shadows = [s for s in self.shadows.values() if s.base < hi and lo < s.end]
        if not shadows:
            return
        with self.lock:
            for shadow in shadows:
                for start, stop in spans:
                    if shadow.base < stop and start < shadow.end:
                        shadow.mark_written(start, stop)

    def shadow(self, base, nbytes, itemsize, owner):
        with self.table_lock:
            self._forget_dead()
            found = self.shadows.get(base)
            if found is None or found.end != base + nbytes:
                shift = (itemsize & -itemsize).bit_length() - 1   # the largest power of 2 in it
                pending = self.unwritten.pop(base, None)     # the shadow keeps it now
                found = Shadow(base, nbytes, shift, pending is None)
                for start, stop in pending[1] if pending is not None else ():
                    found.mark_written(start, stop)
                self.shadows[base] = found
                if pending is None:     # allocated() registered the others already
                    weakref.finalize(owner, self.dead.append, base)
        return found

    def begin(self, err, args, grid, block, shared_bytes):
        """Fill the checker state after the fault record ``err`` for one launch; returns
        what it must keep alive. ``args``: the launch's arguments and the module-level
        arrays it uses. The caller holds ``lock``."""
        if self.gen > RESET_AT:
            with self.table_lock:
                shadows = list(self.shadows.values())
            for shadow in shadows:
                shadow.forget_accesses()
            self.shared[:] = 0
            self.gen = 1
        table = []
        for arg in args:
            region = _region(arg)
            if region is not None:
                shadow = self.shadow(*region)
                table.append((shadow.base, shadow.end, shadow.records.ctypes.data, shadow.shift))
        count = len(table)
        table = np.array(table or [(0, 0, 0, 0)], np.int64)
        if self.shared.size < shared_bytes * checklayout.RECORD_WORDS:
            self.shared = np.zeros(shared_bytes * checklayout.RECORD_WORDS, np.int32)
        st = err[fault.WORDS:]
        st[:] = 0
        st[checklayout.GEN] = st[checklayout.BASE] = self.gen
        st[checklayout.GX], st[checklayout.GY] = grid[0], grid[1]
        st[checklayout.BX], st[checklayout.BY] = block[0], block[1]
        st[checklayout.SHARED_SHADOW] = self.shared.ctypes.data
        st[checklayout.SHARED_SIZE] = shared_bytes        # SHARED_BASE: the caller's (arena)
        st[checklayout.TABLE], st[checklayout.TABLE_SIZE] = table.ctypes.data, count
        st[checklayout.ORDER_PTR] = st[checklayout.ORDER_SCRATCH:].ctypes.data
        return table, self.shared

    def read_only_mask(self, args, candidates):
        """checklayout.READ_ONLY for a launch (after ``begin``): the bits of the parameters
        in ``candidates`` (those the kernel only reads) whose memory is fully written and
        overlaps no other argument that the kernel may write."""
        regions = [_region(arg) for arg in args]
        mask = 0
        for p in candidates:
            if regions[p] is None:
                continue
            base, end = regions[p][0], regions[p][0] + regions[p][1]
            shadow = self.shadows.get(base)
            if shadow is None or not shadow.complete():
                continue
            if not any(r is not None and q not in candidates and r[0] < end and base < r[0] + r[1]
                       for q, r in enumerate(regions)):
                mask |= 1 << p
        return mask

    def owned_mask(self, args, specs, grid, block):
        """checklayout.OWNED for a launch (after ``begin``): the bits of the parameters
        of ``specs`` (written and accessed at one affine index: ir/disjoint.py) whose
        memory is fully written, overlaps no other argument, and whose index no two
        threads of this launch share (disjoint.py): each element is one thread's, so
        their accesses cannot race nor read unwritten memory, and their records need
        nothing new."""
        regions = [_region(arg) for arg in args]
        mask = 0
        for p, spec in specs:
            if regions[p] is None:
                continue
            base, end = regions[p][0], regions[p][0] + regions[p][1]
            shadow = self.shadows.get(base)
            if shadow is None or not shadow.complete():
                continue
            if any(r is not None and q != p and r[0] < end and base < r[0] + r[1]
                   for q, r in enumerate(regions)):
                continue
            if disjoint.distinct_bytes(args[p]) and disjoint.disjoint(p, spec, args, grid, block):
                mask |= 1 << p
        return mask

    def heap_region(self, heap):
        """The device heap as an argument of a checked launch: one record per 4 bytes."""
        return heap.buffer.view(np.float32)

    def heap_malloc(self, address, nbytes):
        """A new heap block: unwritten, no accesses, not freed."""
        shadow = self._owner(address)
        if shadow is not None:
            first, last = shadow.span(address, address + nbytes)
            shadow.records[first:last] = 0
            shadow.full = False

    def heap_freed(self, address, nbytes):
        shadow = self._owner(address)
        if shadow is not None:
            first, last = shadow.span(address, address + nbytes)
            shadow.records[first:last, checklayout.FLAGS] = checklayout.FREED_FLAG

    def _owner(self, address):
        with self.table_lock:
            shadows = list(self.shadows.values())
        for shadow in shadows:
            if shadow.base <= address < shadow.end:
                return shadow
        return None

    def launch_done(self, st):
        self.gen = int(st[checklayout.GEN]) + 1


def _merged(spans):
    """The byte ranges ``spans`` as sorted, disjoint ranges."""
    out = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _region(arg):
    """(base, nbytes, itemsize, owner) of the allocation under an array argument, or None."""
    alloc = getattr(arg, "alloc", None)
    if alloc is not None and getattr(arg, "dtype", None) is not None:
        return alloc.ptr, alloc.nbytes, arg.dtype.itemsize, (alloc if alloc.keepalive is None
                                                             else alloc.keepalive)
    if isinstance(arg, np.ndarray):
        root = arg
        while isinstance(root.base, np.ndarray):
            root = root.base
        return root.ctypes.data, root.nbytes, arg.dtype.itemsize, root
    return None
