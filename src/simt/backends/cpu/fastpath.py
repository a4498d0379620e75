"""Checked mode's inline fast paths on the CPU device: what most plain reads, plain
writes and relaxed read-modify-write atomics of global and shared memory do in the
generated code itself, calling the checker (checker.py) only when the element's record
says another thread may be involved."""
from llvmlite import ir as ll

from ...compiler.lltypes import I1, I32, I64, i32, i64, ptr
from .checklayout import (ATOMIC_FLAG, BASE, BLOCK_LAST, BLOCK_START, FENCED, FLAGS,
                          FREED_FLAG, GEN, INIT_FLAG, ME, R1_GEN, R1_SITE, R1_WHO, R2_GEN,
                          R2_SITE, R2_WHO, RECORD_WORDS, RELEASE_FLAG, SHARED_BASE,
                          SHARED_SHADOW, SITE_CACHE, SITE_SLOTS, TABLE, W_GEN, W_SITE, W_WHO,
                          launch_word, running, site, state, word)


def fast_path(em, address, access, shared, loc, keep=True, private=None):
    """simt.chk's fast path for a plain read or write, inline (most accesses take it).
    A read: the element was written (in shared memory: in this block), by this thread,
    before this launch or before the last barrier of this block; it is recorded in the
    first reader's slot when that one is ordered before it, else in the second. A write:
    the last write and both reads are so; it becomes the last write. Global memory finds
    the shadow through the table entry this site hit last. Returns i1: done (false:
    call the checker). ``keep=False``: a read of shared memory that no write of its
    interval can race with (ir/intervals.py) is checked but not recorded; so is one
    where ``private`` (i1: no other thread meets it in its interval in this launch)."""
    fast = FastAccess(em, address, shared, loc)
    if not keep and shared and access == "read":
        return fast.condition(access)
    if private is not None and shared and access == "read":
        cond = fast.condition(access)
        fast.record(access, em.builder.and_(cond, em.builder.not_(private)))
        return cond
    return fast.record(access, fast.condition(access))


def blind_write(em, address, loc):
    """A plain shared write that no other thread's access can meet in its barrier
    interval (checked.private_accesses): nothing to check, the record is written as the
    fast path writes it."""
    fast = FastAccess(em, address, True, loc)
    b = em.builder
    for k, value in ((W_WHO, fast.me), (W_GEN, fast.now(GEN)), (W_SITE, i32(site(em, loc))),
                     (FLAGS, i32(INIT_FLAG)), (R1_WHO, i32(0)), (R2_WHO, i32(0))):
        b.store(value, fast.field_ptr(k))


class FastAccess:
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
        if index == ME:
            return running(self.em)
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
