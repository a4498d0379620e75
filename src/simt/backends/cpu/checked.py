"""Checked mode on the CPU device, the code half: what a kernel compiled with
``checks=True`` runs besides its own work (docs/finding-bugs.md; shadow.py is the
runtime half).

Every load, store and atomic on global or shared memory calls ``simt.chk``, which finds
the element's shadow record and compares this access with the last write and the last
two reads of the element. Threads are named ``who`` = (linear block << 10 | linear
thread) + 1; accesses are stamped with ``gen``, a counter of the launch's sync points
that grows at each block's start, each barrier, each ``syncwarp`` and each atomic. Two
accesses of different threads are ordered when a barrier of their block
(``block_last``), or a ``syncwarp`` of their warp (``warp_last``), came between them, or
when the later thread's atomic read what an atomic after the earlier access wrote (a
lock: ``acquired``, this thread's since its turn in the thread loop began); accesses of
different blocks are otherwise never ordered (global memory). Only plain writes race:
a plain read next to atomics (the first guess of a compare-and-swap loop) does not.
A launch in checked mode runs its blocks one after the other on one OS thread, so this
state needs no locks.

A read of an element nothing wrote is held back (``pending``) until the next barrier or
the block's end: a later write by another thread in between makes it a race (the thread
read too early), else it is reported as uninitialized. Barriers check that every thread
of the block that has not returned arrived; warp functions check their mask.
"""
from llvmlite import ir as ll

import simt.fault as fault
from ...compiler.flat import counted_loop
from ...compiler.lltypes import I1, I8, I32, I64, i32, i64, ptr
from ...ir import nodes as ir
from ...ir import types as T
from ...ir.walk import fields, walk

# the checker's state: int64 words after the fault record (shadow.py fills them)
GEN, BASE, BLOCK_START, BLOCK_LAST, ME, GX, GY, BX, BY = range(9)
SHARED_SHADOW, SHARED_BASE, SHARED_SIZE, TABLE, TABLE_SIZE, PENDING, ACQUIRED = range(9, 16)
READ_ONLY = 16                      # bit p: parameter p needs no checks in this launch
WARP_LAST = 17
SITE_CACHE = WARP_LAST + 32         # per access site (hashed): the table entry it last hit
SITE_SLOTS = 64
# the memory model (what atomics and fences order): the acquisitions of the block's threads
# up to its last barrier and in the current run of its threads, and the running thread's
# fence stamp, relaxed loads' acquisitions a fence would confirm, and its slot of the three
BLOCK_ACQUIRED, TURN_ACQUIRED, FENCED, PENDING_ACQ, ORDER_PTR = range(SITE_CACHE + SITE_SLOTS,
                                                                      SITE_CACHE + SITE_SLOTS + 5)
STATE_WORDS = ORDER_PTR + 1
ORDER_SLOT = "$chk.order"            # per thread: ACQUIRED, FENCED, PENDING_ACQ
# a shadow record: int32 words
W_WHO, W_GEN, W_SITE, FLAGS, R1_WHO, R1_GEN, R1_SITE, R2_WHO, R2_GEN, R2_SITE = range(10)
RECORD_WORDS = 10
ATOMIC_FLAG, INIT_FLAG, FREED_FLAG = 1, 2, 4     # FREED: device heap memory simt.free released
RELEASE_FLAG = 8            # the last atomic write released what came before it (its W_GEN)
LINE_BITS = 20              # a site is file id << LINE_BITS | line
KINDS = {"read": fault.READ, "write": fault.WRITE, "atomic": fault.ATOMIC,
         "atomic_store": fault.ATOMIC_STORE, "atomic_load": fault.ATOMIC_LOAD}
# an atomic's memory order as the checker's ``order`` bits
RELEASES, ACQUIRES = 1, 2
ORDER_BITS = {"relaxed": 0, "release": RELEASES, "acquire": ACQUIRES,
              "acq_rel": RELEASES | ACQUIRES, "seq_cst": RELEASES | ACQUIRES}
CHECKED_SPACES = ("global", "shared", "dynamic_shared", "generic")

REPORT, NOTED = 1, 2        # what simt.chk returns besides 0 (fine)


def site(em, loc):
    return (em.target.file_id(em.function, loc) << LINE_BITS) | loc.line


def state(em):
    """i64* to the checker's state (right after the launch's fault record)."""
    st = getattr(em, "checked_state", None)
    if st is None:
        st = em.checked_state = em.entry_builder.gep(em.err_ptr, [i64(fault.WORDS)],
                                                    source_etype=I64)
    return st


def word(b, st, index):
    return b.gep(st, [i64(index)], source_etype=I64)


# ------------------------------------------------------------------ memory accesses
def read_only_params(fn):
    """The indices of the kernel's global array parameters that it only reads, directly
    (``a[i]``, ``a.shape``): no view, call, assignment or atomic takes them elsewhere. A
    launch where such an array is fully written and shares no memory with another
    argument needs no checks on it (shadow.ShadowMemory.read_only_mask): nothing in the
    launch writes it, so its reads cannot race nor read uninitialized memory."""
    found = {i for i, (_, t) in enumerate(fn.params)
             if isinstance(t, T.Array) and t.space == "global" and i < 63}
    for node in walk(*fn.body):
        for name, value in fields(node):
            items = value if isinstance(value, list) else [value]
            direct = isinstance(node, (ir.Load, ir.ArrayAttr)) and name == "array"
            for item in items:
                if isinstance(item, ir.Param) and not direct:
                    found.discard(item.index)
    return frozenset(found)


def _read_only_index(em, array):
    """The parameter ``array`` is, when the kernel only reads it; else None."""
    for index in getattr(em, "read_only", ()):
        if em.params[index] is array:
            return index
    return None


def check_access(em, array, indices, address, access, label, loc, order="relaxed",
                 site=None):
    """Call the checker for one access of ``array`` (global or shared) at ``address``;
    a report ends the thread, its array and index written into the fault record. A read
    of a read-only parameter skips the call when the launch says it may (READ_ONLY).
    ``order``: an atomic's memory order; ``site``: the Load or Store node (a read that
    ir/intervals.py finds nothing can race with is checked but not recorded)."""
    if isinstance(array.type.element, T.Vector) and array.type.align is None:
        _check_alignment(em, indices, address, array.type.element.align, access, label, loc)
    if array.type.space == "local":
        _local_access(em, indices, address, access, label, loc)
    if array.type.space not in CHECKED_SPACES:
        return                      # local arrays are the thread's own; constants read-only
    if id(site) in getattr(em, "checked_seen", ()):
        return                      # checked for the whole thread loop (checkscan.py)
    em.target.can_fail = True
    b = em.builder
    param = _read_only_index(em, array) if access == "read" else None
    if param is not None:
        bit = b.and_(launch_word(em, READ_ONLY), i64(1 << param))
        skip = b.icmp_unsigned("!=", bit, i64(0))
    elif access in ("read", "write") and array.type.space != "generic":
        keep = id(site) not in getattr(em, "unrecorded", ())
        skip = _fast_path(em, address, access, array.type.space != "global", loc, keep)
    elif access == "atomic" and order == "relaxed" and array.type.space != "generic":
        fast = _FastAccess(em, address, array.type.space != "global", loc)
        skip = fast.record(access, fast.condition(access))
    else:
        _call_checker(em, indices, address, access, label, loc, ORDER_BITS[order])
        return
    done, check = em.new_block("checked"), em.new_block("check")
    b.cbranch(skip, done, check)
    b.position_at_end(check)
    _call_checker(em, indices, address, access, label, loc, 0)
    em.builder.branch(done)
    em.builder.position_at_end(done)


def _check_alignment(em, indices, address, align, access, label, loc):
    """A vector element (float4 ...) is one access of the whole vector, which a GPU
    makes only at an address aligned as CUDA aligns the type: report one off it here,
    at its line (the record's index and extent words: the address and the alignment)."""
    b = em.builder
    addr = b.ptrtoint(address, I64)
    off = b.icmp_unsigned("!=", b.and_(addr, i64(align - 1)), i64(0))
    bad, fine = em.new_block("misaligned"), em.new_block("aligned")
    b.cbranch(off, bad, fine)
    b.position_at_end(bad)
    st = _report_mine(em, fault.MISALIGNED, loc, KINDS[access])
    err = b.gep(st, [i64(-fault.WORDS)], source_etype=I64)
    for field, value in (("index", addr), ("extent", i64(align))):
        b.store(value, b.gep(err, [i64(fault.FIELDS.index(field))], source_etype=I64))
    _record_element(em, indices, label)
    em.abort()
    b.position_at_end(fine)


# ------------------------------------------------------------------ local arrays
def _locals(em):
    """The kernel's local arrays, each with its written bytes (one per element, this
    thread's): (decl, the bytes: an alloca, or a slot name in a kernel with barriers,
    element count). None in a device function (its local arrays are not checked)."""
    found = getattr(em, "local_written", None)
    if found is None and hasattr(em, "read_only"):
        found = em.local_written = []
        seen = set()
        for node in walk(*em.function.body):
            decl = getattr(node, "decl", None)
            if isinstance(node, ir.ArrayRef) and decl.space == "local" and id(decl) not in seen:
                seen.add(id(decl))
                count = 1
                for n in decl.shape:
                    count *= int(n)
                kind = ll.ArrayType(I8, count)
                if em.plan is None:
                    found.append((decl, em.alloca(kind, name=f"{decl.name}.written"), count))
                else:
                    name = f"$written.{decl.name}.{id(decl)}"
                    em.add_slot(name, kind)
                    found.append((decl, name, count))
    return found


def _forget_locals(em, threads):
    """Zero the written bytes of the local arrays (of ``threads`` threads' slots)."""
    b = em.builder
    memset = em.module.declare_intrinsic("llvm.memset", [ptr(), I64])
    for decl, where, count in _locals(em) or ():
        base = em.slot_layout[where][0] if isinstance(where, str) else where
        b.call(memset, [base, ll.Constant(I8, 0), b.mul(threads, i64(count)),
                        ll.Constant(I1, 0)])


def _local_access(em, indices, address, access, label, loc):
    """A read of an element of a local array that this thread did not write is an
    uninitialized read, reported at once (no other thread can write it); a write marks
    the element written."""
    arrays = _locals(em)
    if not arrays:
        return
    b = em.builder
    addr = b.ptrtoint(address, I64)
    scratch = getattr(em, "local_scratch", None)
    if scratch is None:                 # an address in no local array: nothing to check
        scratch = em.local_scratch = em.alloca(I8, name="written.none")
        em.entry_builder.store(ll.Constant(I8, 1), scratch)
    written = scratch
    for decl, where, count in arrays:
        if isinstance(where, str):
            data_name = f"$local.{decl.name}.{id(decl)}"
            if data_name not in em.slot_layout:
                continue
            data, bits = em.var_ptr(data_name), em.var_ptr(where)
        else:
            value = em.decl_values.get(id(decl))
            if value is None:
                continue
            data, bits = value.data, where
        size = decl.dtype.itemsize
        offset = b.sub(addr, b.ptrtoint(data, I64))
        inside = b.icmp_unsigned("<", offset, i64(count * size))
        element = b.gep(bits, [b.udiv(offset, i64(size))], source_etype=I8)
        written = b.select(inside, element, written)
    if access in ("read", "atomic"):
        em.target.can_fail = True
        unwritten = b.icmp_unsigned("==", b.load(written, typ=I8), ll.Constant(I8, 0))
        stop, go = em.new_block("local_uninitialized"), em.new_block("local_written")
        b.cbranch(unwritten, stop, go)
        b.position_at_end(stop)
        _report_mine(em, fault.UNINITIALIZED, loc, fault.READ)
        _record_element(em, indices, label)
        em.abort()
        b.position_at_end(go)
    if access != "read":
        b.store(ll.Constant(I8, 1), written)


# ------------------------------------------------------------------ local variables
def unassigned_read(em, assigned, name, loc):
    """A read of variable ``name`` where ``assigned`` (i1: this thread assigned it) is
    false: report it and stop (ir/assigned.py made the flag)."""
    em.target.can_fail = True
    b = em.builder
    stop, go = em.new_block("unassigned"), em.new_block("assigned")
    b.cbranch(assigned, go, stop)
    b.position_at_end(stop)
    _report_mine(em, fault.UNASSIGNED, loc, fault.READ)
    _record_element(em, [], name)
    em.abort()
    b.position_at_end(go)


def _report_mine(em, code, loc, access=0):
    """Report ``code`` at ``loc`` for the calling thread (its id from the state word);
    returns the state pointer. The caller records the details and ends the thread."""
    b = em.builder
    st = state(em)
    me = b.trunc(b.load(word(b, st, ME), typ=I64), I32)
    b.call(_reporter(em.module), [st, i32(code), me, i32(site(em, loc)), i32(0), i32(0),
                                  i32(access)])
    return st


def _record_element(em, indices, label):
    """The array and index of a report, into the fault record."""
    b = em.builder
    err = em.err_ptr
    b.store(i64(em.target.label_id(label)), b.gep(err, [i64(2)], source_etype=I64))
    b.store(i64(len(indices)), b.gep(err, [i64(fault.FIELDS.index("ndim"))], source_etype=I64))
    first = fault.FIELDS.index("index.0")
    for d, index in enumerate(indices[:4]):
        b.store(index, b.gep(err, [i64(first + d)], source_etype=I64))


def launch_word(em, index):
    """A state word that stays the same for the whole launch, loaded once at entry."""
    words = em.__dict__.setdefault("checked_words", {})
    if index not in words:
        eb = em.entry_builder
        words[index] = eb.load(word(eb, state(em), index), typ=I64)
    return words[index]


def _fast_path(em, address, access, shared, loc, keep=True):
    """simt.chk's fast path for a plain read or write, inline (most accesses take it).
    A read: the element was written (in shared memory: in this block), by this thread,
    before this launch or before the last barrier of this block; it is recorded in the
    first reader's slot when that one is ordered before it, else in the second. A write:
    the last write and both reads are so; it becomes the last write. Global memory finds
    the shadow through the table entry this site hit last. Returns i1: done (false:
    call the checker). ``keep=False``: a read of shared memory that no write of its
    interval can race with (ir/intervals.py) is checked but not recorded."""
    fast = _FastAccess(em, address, shared, loc)
    if not keep and shared and access == "read":
        return fast.condition(access)
    return fast.record(access, fast.condition(access))


class _FastAccess:
    """One inline fast path: the element's shadow record, and who and when this is."""

    def __init__(self, em, address, shared, loc):
        self.em, self.b, self.st, self.shared, self.loc = em, em.builder, state(em), shared, loc
        self.slow = []              # the blocks that leave for the checker
        addr = self.b.ptrtoint(address, I64)
        self.after = None
        self.rec = self._shared_record(addr) if shared else self._global_record(addr)
        self.me, self.last = self.now(ME), self.now(BLOCK_LAST)
        self.start = None if shared else self.b.trunc(launch_word(em, BASE), I32)

    def _shared_record(self, addr):
        b, em = self.b, self.em
        offset = b.sub(addr, launch_word(em, SHARED_BASE))
        return b.gep(b.inttoptr(launch_word(em, SHARED_SHADOW), ptr()),
                     [b.mul(offset, i64(RECORD_WORDS))], source_etype=I32)

    def _global_record(self, addr):
        """Through the table entry this site hit last; a miss leaves for the checker."""
        b, em = self.b, self.em
        cache = word(b, self.st, SITE_CACHE + (site(em, self.loc) & (SITE_SLOTS - 1)))
        entry = b.gep(b.inttoptr(launch_word(em, TABLE), ptr()),
                      [b.mul(b.load(cache, typ=I64), i64(4))], source_etype=I64)
        base, end, records, shift = (b.load(b.gep(entry, [i64(k)], source_etype=I64), typ=I64)
                                     for k in range(4))
        inside = b.and_(b.icmp_unsigned(">=", addr, base), b.icmp_unsigned("<", addr, end))
        found = em.new_block("shadow_found")
        self.slow.append(b.block)
        self.after = em.new_block("access_checked")
        b.cbranch(inside, found, self.after)
        b.position_at_end(found)
        index = b.lshr(b.sub(addr, base), shift)
        return b.gep(b.inttoptr(records, ptr()), [b.mul(index, i64(RECORD_WORDS))],
                     source_etype=I32)

    def field_ptr(self, k):
        return self.b.gep(self.rec, [i64(k)], source_etype=I32)

    def get(self, k):
        return self.b.load(self.field_ptr(k), typ=I32)

    def now(self, index):
        turn = getattr(self.em, "checked_turn", None)
        if turn and index in turn:
            return turn[index]
        return self.b.trunc(self.b.load(word(self.b, self.st, index), typ=I64), I32)

    def alone(self, who, when):
        b, me = self.b, self.me
        mine = b.or_(b.icmp_unsigned("==", who, i32(0)), b.icmp_unsigned("==", who, me))
        barrier = b.icmp_signed("<", when, self.last)
        if self.start is not None:   # shared records stamped since the block began are its own
            same_block = b.icmp_unsigned("==", b.lshr(b.sub(who, i32(1)), i32(10)),
                                         b.lshr(b.sub(me, i32(1)), i32(10)))
            barrier = b.or_(b.and_(same_block, barrier), b.icmp_signed("<", when, self.start))
        return b.or_(mine, barrier)

    def condition(self, access):
        """i1: this access may take the fast path."""
        b, get = self.b, self.get
        w_gen = get(W_GEN)
        w_alone = self.alone(get(W_WHO), w_gen)
        if access == "atomic":
            return self._atomic_condition(w_gen, w_alone)
        if access == "read":
            written = b.icmp_unsigned("!=", b.and_(get(FLAGS), i32(INIT_FLAG)), i32(0))
            if self.shared:
                written = b.and_(written, b.icmp_signed(">=", w_gen, self.now(BLOCK_START)))
            return b.and_(w_alone, written)
        fast = b.and_(w_alone, b.and_(self.alone(get(R1_WHO), get(R1_GEN)),
                                      self.alone(get(R2_WHO), get(R2_GEN))))
        if not self.shared:     # a write to freed heap memory: the checker reports it
            live = b.icmp_unsigned("==", b.and_(get(FLAGS), i32(FREED_FLAG)), i32(0))
            fast = b.and_(fast, live)
        return fast

    def _atomic_condition(self, w_gen, w_alone):
        """A relaxed read-modify-write of a written element whose last write is an atomic
        or another thread's plain write ordered before it, which released nothing, by a
        thread with no fence before it (FENCED): no race, nothing acquired or released
        (simt.chk's ``write`` with every condition false but the new gen)."""
        b, get = self.b, self.get
        flags = get(FLAGS)
        bits = i32(INIT_FLAG | RELEASE_FLAG | FREED_FLAG)
        plain_ok = b.and_(w_alone, b.icmp_unsigned("!=", get(W_WHO), self.me))
        atomic = b.icmp_unsigned("!=", b.and_(flags, i32(ATOMIC_FLAG)), i32(0))
        fast = b.and_(b.icmp_unsigned("==", b.and_(flags, bits), i32(INIT_FLAG)),
                      b.or_(atomic, plain_ok))
        if self.shared:     # written in this block
            fast = b.and_(fast, b.icmp_signed(">=", w_gen, self.now(BLOCK_START)))
        fenced = b.load(word(b, self.st, FENCED), typ=I64)
        return b.and_(fast, b.icmp_unsigned("==", fenced, i64(0)))

    def record(self, access, fast):
        """Record the access when ``fast``; returns i1: it was."""
        b, em, field_ptr = self.b, self.em, self.field_ptr
        record = em.new_block("fast_access")
        if self.shared:
            self.after = em.new_block("access_checked")
        self.slow.append(b.block)
        b.cbranch(fast, record, self.after)
        b.position_at_end(record)
        gen, at = self.now(GEN), i32(site(em, self.loc))
        if access == "atomic":      # a new point in the order; the reads stay on record
            new_gen = b.add(b.load(word(b, self.st, GEN), typ=I64), i64(1))
            b.store(new_gen, word(b, self.st, GEN))
            for k, value in ((W_WHO, self.me), (W_GEN, b.trunc(new_gen, I32)), (W_SITE, at),
                             (FLAGS, i32(INIT_FLAG | ATOMIC_FLAG))):
                b.store(value, field_ptr(k))
        elif access == "read":
            r1_alone = self.alone(self.get(R1_WHO), self.get(R1_GEN))
            for k1, k2, value in ((R1_WHO, R2_WHO, self.me), (R1_GEN, R2_GEN, gen),
                                  (R1_SITE, R2_SITE, at)):
                b.store(value, b.select(r1_alone, field_ptr(k1), field_ptr(k2)))
        else:
            for k, value in ((W_WHO, self.me), (W_GEN, gen), (W_SITE, at),
                             (FLAGS, i32(INIT_FLAG)), (R1_WHO, i32(0)), (R2_WHO, i32(0))):
                b.store(value, field_ptr(k))
        b.branch(self.after)
        b.position_at_end(self.after)
        done = b.phi(I1)
        for block in self.slow:
            done.add_incoming(ll.Constant(I1, 0), block)
        done.add_incoming(ll.Constant(I1, 1), record)
        return done


def _call_checker(em, indices, address, access, label, loc, order):
    b = em.builder
    result = b.call(_checker(em.module), [state(em), b.ptrtoint(address, I64),
                                          i32(KINDS[access]), i32(site(em, loc)), i32(order)])
    ok, failed = em.new_block("access_ok"), em.new_block("access_reported")
    b.cbranch(b.icmp_unsigned("==", result, i32(0)), ok, failed)
    b.position_at_end(failed)
    _record_element(em, indices, label)
    stop = em.new_block("access_stop")
    b.cbranch(b.icmp_unsigned("==", result, i32(REPORT)), stop, ok)
    b.position_at_end(stop)
    em.abort()
    b.position_at_end(ok)


def _checker(module):
    """i32 simt.chk(state, address, kind, site, order): 0, REPORT (the record is filled:
    stop) or NOTED (an uninitialized read held back: the caller adds the index, goes on).
    ``order``: RELEASES | ACQUIRES bits of an atomic."""
    name = "simt.chk"
    if name in module.globals:
        return module.globals[name]
    fn = ll.Function(module, ll.FunctionType(I32, [ptr(), I64, I32, I32, I32]), name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    chk = _Checker(module, fn)
    chk.find_record()
    chk.refuse_freed()
    chk.fast_paths()
    chk.uninitialized_read()
    chk.write_race()
    chk.read()
    chk.atomic_read()
    chk.write()
    return fn


class _Checker:
    """The body of simt.chk, written one rule at a time; each method starts at its
    blocks and ends each path with a return or a branch to the next rule's."""

    BLOCKS = ("entry", "global", "scan", "probe", "next", "none", "found", "record",
              "fast_read", "not_fast_read", "fast_write", "slow", "uninit", "note", "inited",
              "wrace", "wok", "read", "atomic_read", "write", "r1race", "r1ok", "r2race",
              "store", "not_read")

    def __init__(self, module, fn):
        self.module, self.fn = module, fn
        self.st, self.addr, self.kind, self.here, self.order = fn.args
        self.blocks = {n: fn.append_basic_block(n) for n in self.BLOCKS}
        self.b = ll.IRBuilder(self.blocks["entry"])
        self.me = self.b.trunc(self.load(ME), I32)
        self.gen = self.b.trunc(self.load(GEN), I32)

    def load(self, index):
        return self.b.load(word(self.b, self.st, index), typ=I64)

    def at(self, name):
        self.b.position_at_end(self.blocks[name])

    def field_ptr(self, k):
        return self.b.gep(self.rec, [i64(k)], source_etype=I32)

    def get(self, k):
        return self.b.load(self.field_ptr(k), typ=I32)

    # ------------------------------------------------------------ the element's record
    def find_record(self):
        """``rec``, the element's shadow record, and ``is_shared``: shared memory has one
        record per byte of the block's shared memory; global memory is looked up in the
        launch's table of (base, end, shadow, shift), one per allocation."""
        b, blocks = self.b, self.blocks
        offset = b.sub(self.addr, self.load(SHARED_BASE))
        shared = b.icmp_unsigned("<", offset, self.load(SHARED_SIZE))
        shared_rec = b.gep(b.inttoptr(self.load(SHARED_SHADOW), ptr()),
                           [b.mul(offset, i64(RECORD_WORDS))], source_etype=I32)
        b.cbranch(shared, blocks["record"], blocks["global"])
        global_rec = self._probe()
        self.at("record")
        self.rec = b.phi(ptr())
        self.rec.add_incoming(shared_rec, blocks["entry"])
        self.rec.add_incoming(global_rec, blocks["found"])
        self.is_shared = b.phi(I1)
        self.is_shared.add_incoming(ll.Constant(I1, 1), blocks["entry"])
        self.is_shared.add_incoming(ll.Constant(I1, 0), blocks["found"])

    def _probe(self):
        """The table entry this access site hit last, then every entry in order; memory
        simt did not hand out returns 0 (nothing to check). Returns the record."""
        b, blocks, addr = self.b, self.blocks, self.addr
        self.at("global")
        table = b.inttoptr(self.load(TABLE), ptr())
        count = self.load(TABLE_SIZE)
        cache = b.gep(self.st, [b.add(i64(SITE_CACHE),
                                      b.zext(b.and_(self.here, i32(SITE_SLOTS - 1)), I64))],
                      source_etype=I64)
        first = b.load(cache, typ=I64)
        b.branch(blocks["probe"])
        self.at("scan")
        i = b.phi(I64)
        b.cbranch(b.icmp_unsigned("<", i, count), blocks["probe"], blocks["none"])
        self.at("probe")
        at = b.phi(I64)
        at.add_incoming(first, blocks["global"])
        at.add_incoming(i, blocks["scan"])
        scanning = b.phi(I1)
        scanning.add_incoming(ll.Constant(I1, 0), blocks["global"])
        scanning.add_incoming(ll.Constant(I1, 1), blocks["scan"])
        entry = b.gep(table, [b.mul(at, i64(4))], source_etype=I64)
        field = [b.load(b.gep(entry, [i64(k)], source_etype=I64), typ=I64) for k in range(4)]
        inside = b.and_(b.icmp_unsigned(">=", addr, field[0]),
                        b.icmp_unsigned("<", addr, field[1]))
        b.cbranch(inside, blocks["found"], blocks["next"])
        self.at("next")
        i.add_incoming(b.select(scanning, b.add(at, i64(1)), i64(0)), blocks["next"])
        b.branch(blocks["scan"])
        self.at("none")
        b.ret(i32(0))
        self.at("found")
        b.store(at, cache)
        index = b.lshr(b.sub(addr, field[0]), field[3])
        global_rec = b.gep(b.inttoptr(field[2], ptr()), [b.mul(index, i64(RECORD_WORDS))],
                           source_etype=I32)
        b.branch(blocks["record"])
        return global_rec

    # ------------------------------------------------------------ ordering and reports
    def concurrent(self, who, when):
        """i1: an access by ``who`` at ``when`` is not ordered before this one."""
        b, me = self.b, self.me
        other, mine = b.sub(who, i32(1)), b.sub(me, i32(1))
        this_launch = b.icmp_signed(">=", when, b.trunc(self.load(BASE), I32))
        same_block = b.icmp_unsigned("==", b.lshr(other, i32(10)), b.lshr(mine, i32(10)))
        warp = b.lshr(b.and_(other, i32(1023)), i32(5))
        same_warp = b.icmp_unsigned("==", warp, b.lshr(b.and_(mine, i32(1023)), i32(5)))
        since_barrier = b.icmp_signed(">=", when, b.trunc(self.load(BLOCK_LAST), I32))
        warp_last = b.load(b.gep(self.st, [b.add(i64(WARP_LAST), b.zext(warp, I64))],
                                 source_etype=I64), typ=I64)
        since_syncwarp = b.icmp_signed(">=", when, b.trunc(warp_last, I32))
        within = b.and_(since_barrier, b.or_(b.not_(same_warp), since_syncwarp))
        across = b.not_(self.is_shared)     # shared memory of another block is another memory
        unordered = b.select(same_block, within, across)
        since_acquired = b.icmp_signed(">=", when, b.trunc(self.load(ACQUIRED), I32))
        unordered = b.and_(unordered, since_acquired)
        other_thread = b.and_(b.icmp_unsigned("!=", who, i32(0)), b.icmp_unsigned("!=", who, me))
        return b.and_(b.and_(other_thread, this_launch), unordered)

    def alone(self, who, when):
        """i1: an access by ``who`` at ``when`` is this thread's, older than this launch
        (shared memory: than this block), or of this block before its last barrier."""
        b = self.b
        mine = b.or_(b.icmp_unsigned("==", who, i32(0)), b.icmp_unsigned("==", who, self.me))
        same_block = b.icmp_unsigned("==", b.lshr(b.sub(who, i32(1)), i32(10)), self.my_block)
        barrier = b.and_(same_block, b.icmp_signed("<", when, self.block_last))
        return b.or_(b.or_(mine, b.icmp_signed("<", when, self.start)), barrier)

    def report(self, code, who, where, theirs):
        """Fill the fault record and return REPORT."""
        b = self.b
        accesses = b.or_(self.kind, b.shl(theirs, i32(4)))
        b.call(_reporter(self.module), [self.st, i32(code), self.me, self.here, who, where,
                                        accesses])
        b.ret(i32(REPORT))

    def record_read(self, gen):
        """Keep this read: in the first reader's slot when that one is empty, this
        thread's, or ordered before this read; else in the second slot (the latest other
        reader)."""
        b, field_ptr = self.b, self.field_ptr
        r1 = self.get(R1_WHO)
        keep_first = b.or_(b.icmp_unsigned("==", r1, self.me),
                           b.not_(self.concurrent(r1, self.get(R1_GEN))))
        for k1, k2, value in ((R1_WHO, R2_WHO, self.me), (R1_GEN, R2_GEN, gen),
                              (R1_SITE, R2_SITE, self.here)):
            b.store(value, b.select(keep_first, field_ptr(k1), field_ptr(k2)))

    # ------------------------------------------------------------ the rules
    def refuse_freed(self):
        """An access of device heap memory that simt.free released."""
        b, get = self.b, self.get
        self.w_who, self.w_gen, self.flags = get(W_WHO), get(W_GEN), get(FLAGS)
        freed, live = self.fn.append_basic_block("freed"), self.fn.append_basic_block("live")
        b.cbranch(b.icmp_unsigned("!=", b.and_(self.flags, i32(FREED_FLAG)), i32(0)),
                  freed, live)
        b.position_at_end(freed)
        self.report(fault.USE_AFTER_FREE, i32(0), i32(0), i32(0))
        b.position_at_end(live)

    def fast_paths(self):
        """The element's last write and reads are alone (no other thread's access can
        race with this one): a read after no other thread's write is kept in the first
        reader's slot when that one is alone too, else in the second; a plain write
        becomes the last write."""
        b, get, blocks, flags = self.b, self.get, self.blocks, self.flags
        self.w_atomic = b.icmp_unsigned("!=", b.and_(flags, i32(ATOMIC_FLAG)), i32(0))
        # a read (an atomic reads too) of an element nothing wrote: in shared memory,
        # nothing wrote it in this block
        written = b.icmp_unsigned("!=", b.and_(flags, i32(INIT_FLAG)), i32(0))
        fresh = b.icmp_signed(">=", self.w_gen, b.trunc(self.load(BLOCK_START), I32))
        self.written = b.and_(written, b.or_(b.not_(self.is_shared), fresh))
        self.start = b.trunc(b.select(self.is_shared, self.load(BLOCK_START),
                                      self.load(BASE)), I32)
        self.block_last = b.trunc(self.load(BLOCK_LAST), I32)
        self.my_block = b.lshr(b.sub(self.me, i32(1)), i32(10))
        w_alone, r1_alone = self.alone(self.w_who, self.w_gen), self.alone(get(R1_WHO),
                                                                           get(R1_GEN))
        quiet = b.and_(w_alone, r1_alone)
        fast_read = b.and_(b.and_(w_alone, self.written),
                           b.icmp_unsigned("==", self.kind, i32(fault.READ)))
        b.cbranch(fast_read, blocks["fast_read"], blocks["not_fast_read"])
        self.at("fast_read")
        for k1, k2, value in ((R1_WHO, R2_WHO, self.me), (R1_GEN, R2_GEN, self.gen),
                              (R1_SITE, R2_SITE, self.here)):
            b.store(value, b.select(r1_alone, self.field_ptr(k1), self.field_ptr(k2)))
        b.ret(i32(0))
        self.at("not_fast_read")
        fast_write = b.and_(b.and_(quiet, self.alone(get(R2_WHO), get(R2_GEN))),
                            b.icmp_unsigned("==", self.kind, i32(fault.WRITE)))
        b.cbranch(fast_write, blocks["fast_write"], blocks["slow"])
        self.at("fast_write")
        for k, value in ((W_WHO, self.me), (W_GEN, self.gen), (W_SITE, self.here),
                         (FLAGS, i32(INIT_FLAG)), (R1_WHO, i32(0)), (R2_WHO, i32(0))):
            b.store(value, self.field_ptr(k))
        b.ret(i32(0))

    def uninitialized_read(self):
        """A read of an element nothing wrote: the first is held back (PENDING, NOTED:
        a later write by another thread before the next barrier makes it a race)."""
        b, kind = self.b, self.kind
        self.at("slow")
        reads = b.or_(b.icmp_unsigned("==", kind, i32(fault.READ)),
                      b.icmp_unsigned("==", kind, i32(fault.ATOMIC)))
        reads = b.or_(reads, b.icmp_unsigned("==", kind, i32(fault.ATOMIC_LOAD)))
        b.cbranch(b.and_(reads, b.not_(self.written)), self.blocks["uninit"],
                  self.blocks["inited"])
        self.at("uninit")
        pending = word(b, self.st, PENDING)
        first = b.icmp_unsigned("==", b.load(pending, typ=I64), i64(0))
        b.cbranch(first, self.blocks["note"], self.blocks["read"])
        self.at("note")
        b.store(i64(fault.UNINITIALIZED), pending)
        b.call(_reporter(self.module), [self.st, i32(0), self.me, self.here, i32(0), i32(0),
                                        kind])
        self.record_read(self.gen)
        b.ret(i32(NOTED))

    def write_race(self):
        """The last write, by another thread, not ordered before this access: a race
        when one of the two is a plain write."""
        b, w_atomic = self.b, self.w_atomic
        self.at("inited")
        plain = b.or_(b.not_(w_atomic), b.icmp_unsigned("==", self.kind, i32(fault.WRITE)))
        race = b.and_(self.concurrent(self.w_who, self.w_gen), plain)
        b.cbranch(race, self.blocks["wrace"], self.blocks["wok"])
        self.at("wrace")
        self.report(fault.RACE, self.w_who, self.get(W_SITE),
                    b.select(w_atomic, i32(fault.ATOMIC), i32(fault.WRITE)))
        self.at("wok")
        b.cbranch(b.icmp_unsigned("==", self.kind, i32(fault.READ)), self.blocks["read"],
                  self.blocks["not_read"])
        self.at("not_read")
        b.cbranch(b.icmp_unsigned("==", self.kind, i32(fault.ATOMIC_LOAD)),
                  self.blocks["atomic_read"], self.blocks["write"])

    def read(self):
        self.at("read")
        self.record_read(self.gen)
        self.b.ret(i32(0))

    def atomic_read(self):
        """An atomic load: a read on record (a plain write of another thread after it
        races); it acquires a release it reads when its order acquires, else only once a
        fence of this thread follows (PENDING_ACQ)."""
        b = self.b
        self.at("atomic_read")
        released = self.released_by_other()
        acquires = b.icmp_unsigned("!=", b.and_(self.order, i32(ACQUIRES)), i32(0))
        gen = b.sext(self.w_gen, I64)
        raise_to(b, self.st, b.and_(released, acquires), gen, ACQUIRED, TURN_ACQUIRED,
                 slot_index=0)
        raise_to(b, self.st, b.and_(released, b.not_(acquires)), gen, PENDING_ACQ,
                 slot_index=2)
        self.record_read(self.gen)
        b.ret(i32(0))

    def released_by_other(self):
        """i1: the element's last write is another thread's atomic that released."""
        b = self.b
        released = b.icmp_unsigned("!=", b.and_(self.flags, i32(RELEASE_FLAG)), i32(0))
        other = b.and_(b.icmp_unsigned("!=", self.w_who, i32(0)),
                       b.icmp_unsigned("!=", self.w_who, self.me))
        return b.and_(released, other)

    def write(self):
        """A plain write: against the reads since the last write. An atomic: a
        read-modify-write acquires the release it replaces (whatever its own order: the
        guide's B.5 last block acquires through a relaxed atomicInc); an atomic write
        releases when its order says so, when this thread called a fence before it, or
        when it continues a release (a read-modify-write after one). It is a new point
        in the order."""
        b, st = self.b, self.st
        self.at("write")
        is_atomic = b.icmp_unsigned(">=", self.kind, i32(fault.ATOMIC))
        rmw = b.icmp_unsigned("==", self.kind, i32(fault.ATOMIC))
        released = self.released_by_other()
        raise_to(b, st, b.and_(rmw, released), b.sext(self.w_gen, I64), ACQUIRED,
                 TURN_ACQUIRED, slot_index=0)
        was_release = b.and_(  # a release of this launch (what came before it is ordered)
            b.icmp_unsigned("!=", b.and_(self.flags, i32(RELEASE_FLAG)), i32(0)),
            b.icmp_signed(">=", self.w_gen, b.trunc(self.load(BASE), I32)))
        releases = b.or_(b.icmp_unsigned("!=", b.and_(self.order, i32(RELEASES)), i32(0)),
                         b.icmp_unsigned("!=", self.load(FENCED), i64(0)))
        self.releasing = b.and_(is_atomic, b.or_(releases, b.and_(rmw, was_release)))
        new_gen = b.add(self.load(GEN), b.zext(is_atomic, I64))
        b.store(new_gen, word(b, st, GEN))
        gen = b.trunc(new_gen, I32)
        self.reader_race(is_atomic, R1_WHO, R1_GEN, R1_SITE, "r1race", "r1ok")
        self.reader_race(is_atomic, R2_WHO, R2_GEN, R2_SITE, "r2race", "store")
        self.store_write(is_atomic, gen)

    def reader_race(self, is_atomic, who, gen, at, race, ok):
        """A plain write after a read of another thread not ordered before it."""
        b = self.b
        reader_race = b.and_(b.not_(is_atomic), self.concurrent(self.get(who), self.get(gen)))
        b.cbranch(reader_race, self.blocks[race], self.blocks[ok])
        self.at(race)
        self.report(fault.RACE, self.get(who), self.get(at), i32(fault.READ))
        self.at(ok)

    def store_write(self, is_atomic, gen):
        """The write on record. An atomic after this thread's own plain write keeps that
        write: the other threads' atomics race with it."""
        b, field_ptr, get = self.b, self.field_ptr, self.get
        keep = b.and_(is_atomic, b.and_(b.not_(self.w_atomic),
                                        b.icmp_unsigned("==", self.w_who, self.me)))
        for k, value in ((W_WHO, self.me), (W_GEN, gen), (W_SITE, self.here)):
            b.store(b.select(keep, get(k), value), field_ptr(k))
        for k in (R1_WHO, R2_WHO):          # a plain write ends the reads; an atomic keeps them
            b.store(b.select(is_atomic, get(k), i32(0)), field_ptr(k))
        atomic_flag = b.zext(b.and_(is_atomic, b.not_(keep)), I32)
        release_flag = b.select(b.and_(self.releasing, b.not_(keep)), i32(RELEASE_FLAG), i32(0))
        b.store(b.or_(b.or_(i32(INIT_FLAG), atomic_flag), release_flag), field_ptr(FLAGS))
        b.ret(i32(0))


def _reporter(module):
    """void simt.chk.report(state, code, me, site, other, other_site, accesses): fill the
    fault record (code 0: all but the code, for a report held back)."""
    name = "simt.chk.report"
    if name in module.globals:
        return module.globals[name]
    fnty = ll.FunctionType(ll.VoidType(), [ptr()] + [I32] * 6)
    fn = ll.Function(module, fnty, name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    fn.attributes.add("cold")
    st, code, me, here, other, there, accesses = fn.args
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    err = b.gep(st, [i64(-fault.WORDS)], source_etype=I64)
    dims = [b.load(word(b, st, k), typ=I64) for k in (GX, GY, BX, BY)]

    def put(field, value):
        b.store(b.zext(value, I64) if value.type != I64 else value,
                b.gep(err, [i64(fault.FIELDS.index(field))], source_etype=I64))

    def where(prefix, who, at):
        valid = b.icmp_unsigned("!=", who, i32(0))
        flat = b.zext(b.sub(who, b.zext(valid, I32)), I64)
        block, thread = b.lshr(flat, i64(10)), b.and_(flat, i64(1023))
        for axis, value in zip("xyz", _unflatten(b, block, dims[0], dims[1])):
            put(f"{prefix}block.{axis}", b.select(valid, value, i64(0)))
        for axis, value in zip("xyz", _unflatten(b, thread, dims[2], dims[3])):
            put(f"{prefix}thread.{axis}", b.select(valid, value, i64(0)))
        put(f"{prefix}line", b.and_(at, i32((1 << LINE_BITS) - 1)))
        put(f"{prefix}file", b.lshr(at, i32(LINE_BITS)))

    where("", me, here)
    where("other.", other, there)
    put("accesses", accesses)
    put("code", b.sext(code, I64))
    b.ret_void()
    return fn


def _unflatten(b, flat, nx, ny):
    x = b.urem(flat, nx)
    rest = b.udiv(flat, nx)
    return x, b.urem(rest, ny), b.udiv(rest, ny)


# ------------------------------------------------------------------ the block's steps
def bump(em, *targets):
    """gen += 1, stored in the state words ``targets`` too; returns the new gen (i64)."""
    b = em.builder
    st = state(em)
    gen = b.add(b.load(word(b, st, GEN), typ=I64), i64(1))
    for index in (GEN,) + targets:
        b.store(gen, word(b, st, index))
    return gen


def block_start(em):
    bump(em, BLOCK_START, BLOCK_LAST)
    b, st = em.builder, state(em)
    for index in (BLOCK_ACQUIRED, TURN_ACQUIRED):
        b.store(i64(0), word(b, st, index))
    if em.plan is not None:         # local arrays live in the slots of every thread
        _forget_locals(em, em.nthreads)
        if ORDER_SLOT not in em.slot_layout:
            em.add_slot(ORDER_SLOT, ll.ArrayType(I64, 3))
        memset = em.module.declare_intrinsic("llvm.memset", [ptr(), I64])
        b.call(memset, [em.slot_layout[ORDER_SLOT][0], ll.Constant(I8, 0),
                        b.mul(em.nthreads, i64(24)), ll.Constant(I1, 0)])


def settle(em):
    """At a barrier and at the block's end: a read held back is uninitialized after all."""
    b = em.builder
    st = state(em)
    pending = b.load(word(b, st, PENDING), typ=I64)
    stop, go = em.new_block("uninitialized_read"), em.new_block("settled")
    b.cbranch(b.icmp_unsigned("!=", pending, i64(0)), stop, go)
    b.position_at_end(stop)
    b.store(pending, em.err_ptr)
    em.abort()
    b.position_at_end(go)


def thread_start(em, block_lin):
    """At the top of each thread's turn in a thread loop: who is running (``thread_end``
    closes the turn)."""
    b = em.builder
    who = b.add(b.or_(b.shl(b.trunc(block_lin, I32), i32(10)), b.trunc(em.flat_tid, I32)),
                i32(1))
    st = state(em)
    b.store(b.zext(who, I64), word(b, st, ME))
    # what stays the same for the thread's turn, loaded once (the shadow records the fast
    # paths store to could alias the state words, so LLVM would load them per access)
    em.checked_turn = {ME: who, **{k: b.trunc(b.load(word(b, st, k), typ=I64), I32)
                                   for k in (BLOCK_LAST, BLOCK_START)}}
    _order_start(em)
    if em.plan is None:             # the thread's one turn: its local arrays start unwritten
        _forget_locals(em, i64(1))


def thread_end(em):
    """The end of the thread's turn: the words thread_start loaded are out of scope."""
    em.checked_turn = None


def _order_start(em):
    """The running thread's memory-model words from its slot (ORDER_SLOT; a kernel
    without barriers runs each thread in one turn: a scratch slot, zeroed here). What its
    block acquired before its last barrier counts as acquired by every thread of it."""
    b, st = em.builder, state(em)
    kind = ll.ArrayType(I64, 3)
    if em.plan is not None:
        if ORDER_SLOT not in em.slot_layout:
            em.add_slot(ORDER_SLOT, kind)
        base, _ = em.slot_layout[ORDER_SLOT]
        slot = b.gep(base, [em.flat_tid], source_etype=kind)
    else:
        slot = getattr(em, "order_scratch", None)
        if slot is None:
            slot = em.order_scratch = em.alloca(kind, name="order")
        b.store(ll.Constant(kind, [0, 0, 0]), slot)
    b.store(b.ptrtoint(slot, I64), word(b, st, ORDER_PTR))
    mine = [b.load(b.gep(slot, [i32(0), i32(k)], source_etype=kind), typ=I64) for k in range(3)]
    block = b.load(word(b, st, BLOCK_ACQUIRED), typ=I64)
    b.store(b.select(b.icmp_signed(">", block, mine[0]), block, mine[0]), word(b, st, ACQUIRED))
    b.store(mine[1], word(b, st, FENCED))
    b.store(mine[2], word(b, st, PENDING_ACQ))


def raise_to(b, st, cond, value, index, turn_index=None, slot_index=None):
    """Where ``cond``: the state word ``index`` (and the word ``turn_index``, and word
    ``slot_index`` of the running thread's ORDER_SLOT) become at least ``value`` (i64)."""
    places = [word(b, st, k) for k in (index, turn_index) if k is not None]
    if slot_index is not None:
        slot = b.inttoptr(b.load(word(b, st, ORDER_PTR), typ=I64), ptr())
        places.append(b.gep(slot, [i64(slot_index)], source_etype=I64))
    for at in places:
        old = b.load(at, typ=I64)
        b.store(b.select(b.and_(cond, b.icmp_signed(">", value, old)), value, old), at)


def fence(em):
    """threadfence (any scope): this thread's later relaxed atomic writes release what
    it did before (FENCED), and the releases its relaxed atomic loads read are acquired."""
    b, st = em.builder, state(em)
    gen = b.load(word(b, st, GEN), typ=I64)
    raise_to(b, st, ll.Constant(I1, 1), gen, FENCED, slot_index=1)
    pending = b.load(word(b, st, PENDING_ACQ), typ=I64)
    raise_to(b, st, ll.Constant(I1, 1), pending, ACQUIRED, TURN_ACQUIRED, slot_index=0)


def barrier(em, stmt, guards, flag_sites):
    """Before a barrier's thread loops: every thread of the block (of its tile, for a
    tile barrier) that has not returned must reach it. With guards (a barrier under a
    branch or loop whose condition differs between threads) the threads that fail them,
    and have not returned, did not. A tile barrier orders accesses as a block barrier
    does here (a race between two tiles across it is not seen)."""
    settle(em)
    if guards:
        _arrivals(em, stmt, guards, flag_sites)
    bump(em, BLOCK_LAST)
    b, st = em.builder, state(em)      # what a thread acquired, its block has after this
    raise_to(b, st, ll.Constant(I1, 1), b.load(word(b, st, TURN_ACQUIRED), typ=I64),
             BLOCK_ACQUIRED)


def _arrivals(em, stmt, guards, flag_sites):
    """Walk the block's threads in order, group by group (the block, or each tile of
    ``stmt.tile``): the first group with a thread that arrived and a live one that did
    not is reported, naming the first of each and where the second went another way."""
    names = ("group", "arrived", "missing", "missing_site", "found_a", "found_m", "found_site")
    slots = {n: em.alloca(I32, name=n) for n in names}
    b = em.builder
    for slot in slots.values():
        b.store(i32(0), slot)
    size = getattr(stmt, "tile", 0) or 1 << 20

    def visit():
        b = em.builder

        def get(n):
            return b.load(slots[n], typ=I32)
        who = b.trunc(b.load(word(b, state(em), ME), typ=I64), I32)
        group = b.trunc(b.udiv(em.flat_tid, i64(size)), I32)
        same = b.icmp_unsigned("==", group, get("group"))
        b.store(group, slots["group"])
        for n in ("arrived", "missing", "missing_site"):      # a new group starts over
            b.store(b.select(same, get(n), i32(0)), slots[n])
        here = em.guard(guards, check_exit=False)
        live = ll.Constant(I1, 1)
        if em.exited:
            live = b.icmp_unsigned("==", b.load(em.var_ptr(em.exited), typ=I8), ll.Constant(I8, 0))
        first_arrival = b.and_(here, b.icmp_unsigned("==", get("arrived"), i32(0)))
        b.store(b.select(first_arrival, who, get("arrived")), slots["arrived"])
        away = b.and_(b.and_(live, b.not_(here)), b.icmp_unsigned("==", get("missing"), i32(0)))
        b.store(b.select(away, who, get("missing")), slots["missing"])
        where = i32(0)
        for flag, expected in reversed(guards):
            value = b.load(em.var_ptr(flag), typ=I8)
            failed = b.icmp_unsigned("!=", value, ll.Constant(I8, expected))
            where = b.select(failed, i32(flag_sites.get(flag, 0)), where)
        b.store(b.select(away, where, get("missing_site")), slots["missing_site"])
        both = b.and_(b.icmp_unsigned("!=", get("arrived"), i32(0)),
                      b.icmp_unsigned("!=", get("missing"), i32(0)))
        first = b.and_(both, b.icmp_unsigned("==", get("found_a"), i32(0)))
        for mine, found in (("arrived", "found_a"), ("missing", "found_m"),
                            ("missing_site", "found_site")):
            b.store(b.select(first, get(mine), get(found)), slots[found])
    em.thread_loop(visit, [], check_exit=False)
    b = em.builder
    a = b.load(slots["found_a"], typ=I32)
    stop, go = em.new_block("barrier_divergence"), em.new_block("barrier_reached")
    b.cbranch(b.icmp_unsigned("!=", a, i32(0)), stop, go)
    b.position_at_end(stop)
    b.call(_reporter(em.module), [state(em), i32(fault.BARRIER_DIVERGENCE), a,
                                  i32(site(em, stmt.loc)), b.load(slots["found_m"], typ=I32),
                                  b.load(slots["found_site"], typ=I32), i32(0)])
    em.abort()
    b.position_at_end(go)


# ------------------------------------------------------------------ warps
def syncwarp_start(em):
    """Block-level, before the thread loop that completes a ``syncwarp``: a new gen."""
    bump(em)


def syncwarp_done(em, lanes):
    """In that loop: this thread's warp is synchronized from the new gen on."""
    b = em.builder
    st = state(em)
    warp = b.lshr(b.zext(lanes.base, I64), i64(5))
    b.store(b.load(word(b, st, GEN), typ=I64),
            b.gep(st, [b.add(i64(WARP_LAST), warp)], source_etype=I64))


def branches(em, flag, stmt):
    """Note which arms of the divergent ``if`` whose flag is ``flag`` call syncwarp."""
    em.flag_syncwarps[flag] = tuple(
        any(isinstance(n, ir.WarpOp) and n.op == "syncwarp" for n in walk(*arm))
        for arm in (stmt.then, stmt.orelse))


def _in_other_arm(em, lanes, lane):
    """i1: ``lane`` took the other arm of an ``if`` around this syncwarp, and that arm
    calls syncwarp too: on Volta and later the lanes of a warp may meet at different
    syncwarp calls. This device runs one arm after the other, so it cannot see the two
    calls meet (the sim device checks that their masks match)."""
    b = em.builder
    away = ll.Constant(I1, 0)
    for flag, expected in em.run_guards:
        arms = em.flag_syncwarps.get(flag)
        if arms is None or not arms[2 - expected]:      # the other arm
            continue
        base, lltype = em.slot_layout[flag]
        value = b.load(b.gep(base, [b.add(lanes.base, b.zext(lane, I64))], source_etype=lltype),
                       typ=lltype)
        away = b.or_(away, b.icmp_unsigned("==", value, ll.Constant(lltype, 3 - expected)))
    return away


def check_own_lane(em, lanes, mask, loc):
    """A warp function whose mask leaves out the calling lane: undefined in CUDA (the
    guide: each calling thread must have its own bit set in the mask), reported at the
    call as compute-sanitizer's synccheck does; the record's index is (mask, lane)."""
    b = em.builder
    bad, fine = em.new_block("own_lane_bad"), em.new_block("own_lane_ok")
    own = b.and_(b.lshr(mask, lanes.lane), i32(1))
    b.cbranch(b.icmp_unsigned("==", own, i32(0)), bad, fine)
    b.position_at_end(bad)
    st = _report_mine(em, fault.OWN_LANE, loc)
    err = b.gep(st, [i64(-fault.WORDS)], source_etype=I64)
    for field, value in (("ndim", i64(2)), ("index.0", b.zext(mask, I64)),
                         ("index.1", b.zext(lanes.lane, I64))):
        b.store(value, b.gep(err, [i64(fault.FIELDS.index(field))], source_etype=I64))
    em.abort()
    b.position_at_end(fine)


def check_mask(em, lanes, mask, loc, syncwarp=False):
    """A warp function whose mask names a lane of the warp that did not make this call
    (it is elsewhere): lanes that returned, and lanes past the end of a partial warp,
    are excused (the guide: "all non-exited threads named in mask"); for syncwarp, lanes
    at a syncwarp in the other arm of an ``if`` too."""
    head, test, bad, step, done = (em.new_block(n) for n in
                                   ("mask", "mask_test", "mask_bad", "mask_next", "mask_done"))
    with counted_loop(em, lanes.count, "mask_lane", (head, test, step, done),
                      signed=False) as lane:
        b = em.builder
        named = b.icmp_unsigned("!=", b.and_(b.lshr(mask, lane), i32(1)), i32(0))
        absent = b.and_(named, b.not_(lanes.present(lane)))
        if em.exited:
            base, lltype = em.slot_layout[em.exited]
            slot = b.gep(base, [b.add(lanes.base, b.zext(lane, I64))], source_etype=lltype)
            flag = b.load(slot, typ=lltype)
            absent = b.and_(absent, b.icmp_unsigned("==", flag, ll.Constant(lltype, 0)))
        if syncwarp:
            absent = b.and_(absent, b.not_(_in_other_arm(em, lanes, lane)))
        b.cbranch(absent, bad, step)
        b.position_at_end(bad)
        me = b.trunc(b.load(word(b, state(em), ME), typ=I64), I32)
        other = b.add(b.sub(me, lanes.lane), lane)
        b.call(_reporter(em.module), [state(em), i32(fault.WARP_MASK), me, i32(site(em, loc)),
                                      other, i32(0), i32(0)])
        em.abort()
        b.position_at_end(step)
