"""simt.chk, checked mode's checker on the CPU device: one internal function per
module that the generated code calls for an access its fast path (fastpath.py) does
not take. It finds the element's shadow record, compares the access with the last
write and the last two reads of the element (the memory model's acquire and release
included), reports a race, a use after free or an uninitialized read, or records the
access (checked.py's docstring describes the state it keeps)."""
from llvmlite import ir as ll

import simt.fault as fault
from ...compiler.lltypes import I1, I32, I64, i32, i64, ptr
from .checklayout import (ACQUIRED, ACQUIRES, ATOMIC_FLAG, BASE, BLOCK_LAST, BLOCK_START,
                          FENCED, FENCED_WIDE, FLAGS, FREED_FLAG, GEN, INIT_FLAG, KINDS, ME,
                          NARROW, NOTED, PENDING, PENDING_ACQ, PENDING_FAR, R1_GEN, R1_SITE,
                          R1_WHO, R2_GEN, R2_SITE, R2_WHO, RECORD_WORDS, RELEASE_FLAG,
                          RELEASE_WIDE, RELEASES, REPORT, SHARED_BASE, SHARED_SHADOW,
                          SHARED_SIZE, SITE_CACHE, SITE_SLOTS, TABLE, TABLE_SIZE,
                          TURN_ACQUIRED, VOLATILE_FLAG, W_GEN, W_SITE, W_WHO, WARP_LAST,
                          publish_me, raise_to, record_element, reporter, site, state, word)


def call_checker(em, indices, address, access, label, loc, order):
    publish_me(em)
    b = em.builder
    result = b.call(_checker(em.module), [state(em), b.ptrtoint(address, I64),
                                          i32(KINDS[access]), i32(site(em, loc)), i32(order)])
    ok, failed = em.new_block("access_ok"), em.new_block("access_reported")
    b.cbranch(b.icmp_unsigned("==", result, i32(0)), ok, failed)
    b.position_at_end(failed)
    record_element(em, indices, label)
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
        b.call(reporter(self.module), [self.st, i32(code), self.me, self.here, who, where,
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
        for load in (fault.ATOMIC_LOAD, fault.VOLATILE_LOAD):
            reads = b.or_(reads, b.icmp_unsigned("==", kind, i32(load)))
        b.cbranch(b.and_(reads, b.not_(self.written)), self.blocks["uninit"],
                  self.blocks["inited"])
        self.at("uninit")
        pending = word(b, self.st, PENDING)
        first = b.icmp_unsigned("==", b.load(pending, typ=I64), i64(0))
        b.cbranch(first, self.blocks["note"], self.blocks["read"])
        self.at("note")
        b.store(i64(fault.UNINITIALIZED), pending)
        b.call(reporter(self.module), [self.st, i32(0), self.me, self.here, i32(0), i32(0),
                                        kind])
        self.record_read(self.gen)
        b.ret(i32(NOTED))

    def write_race(self):
        """The last write, by another thread, not ordered before this access: a race
        when one of the two is a plain write. A volatile store is a relaxed write of
        system scope (PTX's st.volatile) that atomics and volatile stores do not race
        with; a plain read of it does, and so does a volatile read unless it released to
        this thread (the guide's flag: a fence, then the volatile write of the flag)."""
        b, w_atomic, kind = self.b, self.w_atomic, self.kind
        self.at("inited")
        w_volatile = self.flag(VOLATILE_FLAG)
        is_kind = {k: b.icmp_unsigned("==", kind, i32(k))
                   for k in (fault.READ, fault.WRITE, fault.VOLATILE_LOAD)}
        plain = b.or_(b.not_(b.or_(w_atomic, w_volatile)), is_kind[fault.WRITE])
        stale = b.or_(is_kind[fault.READ],
                      b.and_(is_kind[fault.VOLATILE_LOAD], b.not_(self.released_by_other())))
        plain = b.or_(plain, b.and_(w_volatile, stale))
        race = b.and_(self.concurrent(self.w_who, self.w_gen), plain)
        b.cbranch(race, self.blocks["wrace"], self.blocks["wok"])
        self.at("wrace")
        theirs = b.select(w_volatile, i32(fault.VOLATILE_STORE), i32(fault.WRITE))
        self.report(fault.RACE, self.w_who, self.get(W_SITE),
                    b.select(w_atomic, i32(fault.ATOMIC), theirs))
        self.at("wok")
        b.cbranch(is_kind[fault.READ], self.blocks["read"], self.blocks["not_read"])
        self.at("not_read")
        loads = b.or_(b.icmp_unsigned("==", kind, i32(fault.ATOMIC_LOAD)),
                      is_kind[fault.VOLATILE_LOAD])
        b.cbranch(loads, self.blocks["atomic_read"], self.blocks["write"])

    def read(self):
        self.at("read")
        self.record_read(self.gen)
        self.b.ret(i32(0))

    def atomic_read(self):
        """An atomic or volatile load: a read on record (a plain write of another thread
        after it races); it acquires a release it reads when its order acquires, else
        only once a fence of this thread follows (PENDING_ACQ, PENDING_FAR)."""
        b = self.b
        self.at("atomic_read")
        released = self.released_by_other()
        acquires = b.icmp_unsigned("!=", b.and_(self.order, i32(ACQUIRES)), i32(0))
        gen = b.sext(self.w_gen, I64)
        raise_to(b, self.st, b.and_(released, acquires), gen, ACQUIRED, TURN_ACQUIRED,
                 slot_index=0)
        later = b.and_(released, b.not_(acquires))      # a fence of this thread confirms it
        near = self.writer_in_my_block()
        raise_to(b, self.st, b.and_(later, near), gen, PENDING_ACQ, slot_index=2)
        raise_to(b, self.st, b.and_(later, b.not_(near)), gen, PENDING_FAR, slot_index=4)
        self.record_read(self.gen)
        b.ret(i32(0))

    def released_by_other(self):
        """i1: the element's last write is another thread's atomic that released, to this
        thread: one of its block, or wide (scope and fence wider than the block) when this
        access's scope is too (scope='block' acquires from the block only)."""
        b = self.b
        released = b.icmp_unsigned("!=", b.and_(self.flags, i32(RELEASE_FLAG)), i32(0))
        other = b.and_(b.icmp_unsigned("!=", self.w_who, i32(0)),
                       b.icmp_unsigned("!=", self.w_who, self.me))
        wide = b.and_(self.flag(RELEASE_WIDE), b.not_(self.bit(NARROW)))
        reaches = b.or_(self.writer_in_my_block(), wide)
        return b.and_(b.and_(released, other), reaches)

    def flag(self, bit):
        return self.b.icmp_unsigned("!=", self.b.and_(self.flags, i32(bit)), i32(0))

    def bit(self, bit):
        """i1: the access's ``order`` word has ``bit``."""
        return self.b.icmp_unsigned("!=", self.b.and_(self.order, i32(bit)), i32(0))

    def writer_in_my_block(self):
        b = self.b
        return b.icmp_unsigned("==", b.lshr(b.sub(self.w_who, i32(1)), i32(10)), self.my_block)

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
            self.flag(RELEASE_FLAG),
            b.icmp_signed(">=", self.w_gen, b.trunc(self.load(BASE), I32)))
        was_wide = b.and_(was_release, self.flag(RELEASE_WIDE))
        # what reached only the writer's block is carried on in that block only
        carried = b.and_(rmw, b.and_(was_release, b.or_(was_wide, self.writer_in_my_block())))
        order_releases = self.bit(RELEASES)
        releases = b.or_(order_releases, b.icmp_unsigned("!=", self.load(FENCED), i64(0)))
        wide = b.and_(b.not_(self.bit(NARROW)), b.or_(
            order_releases, b.icmp_unsigned("!=", self.load(FENCED_WIDE), i64(0))))
        self.releasing = b.and_(is_atomic, b.or_(releases, carried))
        self.releasing_wide = b.and_(is_atomic, b.or_(wide, b.and_(rmw, was_wide)))
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
        write: the other threads' atomics race with it. A volatile store is on record as
        one (VOLATILE_FLAG), not as an atomic."""
        b, field_ptr, get = self.b, self.field_ptr, self.get
        volatile = b.icmp_unsigned("==", self.kind, i32(fault.VOLATILE_STORE))
        keep = b.and_(b.and_(is_atomic, b.not_(volatile)),
                      b.and_(b.not_(self.w_atomic), b.icmp_unsigned("==", self.w_who, self.me)))
        for k, value in ((W_WHO, self.me), (W_GEN, gen), (W_SITE, self.here)):
            b.store(b.select(keep, get(k), value), field_ptr(k))
        for k in (R1_WHO, R2_WHO):          # a plain write ends the reads; an atomic keeps them
            b.store(b.select(is_atomic, get(k), i32(0)), field_ptr(k))
        atomic_flag = b.zext(b.and_(b.and_(is_atomic, b.not_(volatile)), b.not_(keep)), I32)
        volatile_flag = b.select(volatile, i32(VOLATILE_FLAG), i32(0))
        release_flag = b.select(b.and_(self.releasing, b.not_(keep)), i32(RELEASE_FLAG), i32(0))
        wide_flag = b.select(b.and_(self.releasing_wide, b.not_(keep)), i32(RELEASE_WIDE),
                             i32(0))
        flags = b.or_(b.or_(i32(INIT_FLAG), atomic_flag), b.or_(release_flag, wide_flag))
        flags = b.or_(flags, volatile_flag)
        b.store(flags, field_ptr(FLAGS))
        b.ret(i32(0))
