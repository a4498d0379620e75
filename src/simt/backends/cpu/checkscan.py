"""Checked mode: the reads of a thread loop that one check per array can stand for.

A read of a static shared array that no write of its barrier interval can race with
(ir/intervals.py) is checked but not recorded, and nothing in the interval changes
the array's shadow: its check gives the same answer for every thread that reads the
element. So before such a thread loop the block looks at the shadow of every element
of each array the loop only reads: when each was written in this block before its last
barrier (what a read's fast path asks of the element it reads, for any thread), the
loop runs with those reads unchecked; otherwise it runs as written, each read checked,
so a report names the same thread, element and line as before. A tiled matmul's tile
is read by a row of threads per element: one look per element, not one per read.

Bounds checks stay in both loops (an index in bounds is an element of the array, whose
shadow was looked at).
"""
from llvmlite import ir as ll

from ...compiler.flat import counted_loop
from ...compiler.lltypes import I8, I32, I64, i32, i64, ptr
from ...ir import nodes as ir
from ...ir.walk import walk
from . import checklayout
from .checklayout import private_bit

_SCAN_BLOCKS = ("shadow_scan", "shadow_scan_body", "shadow_scan_next", "shadow_scan_done")


def thread_loops(em, stmts, emit_loop):
    """Emit the thread loop of ``stmts`` (``emit_loop()``), twice when some of its reads
    can be checked once per element before it. The shared arrays it may change records
    of are looked at again after it (seen_slot)."""
    reads = _unrecorded_reads(em, stmts)
    used = _shared_used(stmts)
    if not reads:
        _forget(em, used)
        emit_loop()
        return
    ok = None
    arrays = _arrays(reads)
    for decl, ref in arrays.values():
        this = _seen_or_scanned(em, decl, ref)
        ok = this if ok is None else em.builder.and_(ok, this)
    unrecorded = getattr(em, "unrecorded", frozenset())
    for site in reads:
        private = None if id(site) in unrecorded else private_bit(em, site)
        if private is not None:          # private in this launch (else checked as before)
            ok = em.builder.and_(ok, private)
    fast, slow, done = (em.new_block(n) for n in ("reads_seen", "reads_checked",
                                                  "threads_checked"))
    em.builder.cbranch(ok, fast, slow).set_weights([1 << 20, 1])
    untouched = _untouched(stmts, reads, arrays)
    for block, skipped in ((fast, frozenset(id(load) for load in reads)), (slow, frozenset())):
        em.builder.position_at_end(block)
        _forget(em, [d for d in used if block is slow or d not in untouched])
        em.checked_seen = skipped
        try:
            emit_loop()
        finally:
            em.checked_seen = frozenset()
        if block is fast:           # the loop changed none of their records
            start = em.builder.load(checklayout.word(em.builder, checklayout.state(em),
                                                     checklayout.BLOCK_START), typ=I64)
            for decl_id in untouched:
                em.builder.store(start, seen_slot(em, decl_id))
        em.builder.branch(done)
    em.builder.position_at_end(done)


def seen_slot(em, decl_id):
    """i64 slot: the BLOCK_START of the block in which every element of static shared
    array ``decl_id`` was last found written before a barrier, with no record of it
    changed since (0: not so). A thread loop that may change its records sets it to 0
    before it runs (every thread loop of the kernel's code is made here: emit.threads)."""
    slots = em.__dict__.setdefault("checked_scans", {})
    if decl_id not in slots:
        slots[decl_id] = em.alloca(I64, name="scan.seen")
        em.entry_builder.store(i64(0), slots[decl_id])
    return slots[decl_id]


def _forget(em, decl_ids):
    """The thread loop about to run may change the records of ``decl_ids``."""
    for decl_id in decl_ids:
        em.builder.store(i64(0), seen_slot(em, decl_id))


def _shared_used(stmts):
    """The ids of the shared arrays ``stmts`` use (any way)."""
    return list(dict.fromkeys(id(n.decl) for n in walk(*stmts)
                              if isinstance(n, ir.ArrayRef) and n.decl.space == "shared"))


def _untouched(stmts, reads, arrays):
    """The arrays of ``arrays`` that ``stmts`` use at the sites ``reads`` only."""
    covered = {id(n) for n in reads}
    uses, at_covered = {}, {}
    for n in walk(*stmts):
        if isinstance(n, ir.ArrayRef):
            uses[id(n.decl)] = uses.get(id(n.decl), 0) + 1
        if isinstance(n, (ir.Load, ir.Store)) and id(n) in covered:
            at_covered[id(n.array.decl)] = at_covered.get(id(n.array.decl), 0) + 1
    return [d for d in arrays if uses.get(d, 0) == at_covered.get(d, 0)]


def _seen_or_scanned(em, decl, ref):
    """i1: every element of ``decl`` is known written in this block before its last
    barrier: from an earlier look whose records nothing changed since (seen_slot), else
    from a look now."""
    b = em.builder
    slot = seen_slot(em, id(decl))
    start = b.load(checklayout.word(b, checklayout.state(em), checklayout.BLOCK_START), typ=I64)
    seen = b.icmp_unsigned("==", b.load(slot, typ=I64), start)
    before = b.block
    look, done = em.new_block("shadow_look"), em.new_block("shadow_known")
    b.cbranch(seen, done, look)
    b.position_at_end(look)
    scanned = _written_before_barrier(em, decl, ref)
    after = em.builder.block
    em.builder.branch(done)
    em.builder.position_at_end(done)
    ok = em.builder.phi(ll.IntType(1))
    ok.add_incoming(ll.Constant(ll.IntType(1), 1), before)
    ok.add_incoming(scanned, after)
    return ok


def _unrecorded_reads(em, stmts):
    """The unrecorded reads of ``stmts``, and their private writes (checked.py's
    private_accesses: no other thread meets them in their interval, so when every element
    was written in this block before its last barrier their records need no update)."""
    if not em.boundscheck:
        return []
    unrecorded = getattr(em, "unrecorded", frozenset())
    private = getattr(em, "private", {})
    first = getattr(em, "first_interval", frozenset())   # nothing written before a barrier
    return [n for n in walk(*stmts) if isinstance(n, (ir.Load, ir.Store))
            and (id(n) in unrecorded or id(n) in private) and id(n) not in first]


def _arrays(reads):
    """decl id -> (decl, an ArrayRef of it), for the arrays ``reads`` read."""
    return {id(load.array.decl): (load.array.decl, load.array) for load in reads}


def _written_before_barrier(em, decl, ref):
    """i1: every element of ``decl`` was written in this block, before its last barrier
    (as the slow path sees it: the record of the element's first byte). The look ends
    at the first element that was not, and there is none to take before the block's
    first barrier."""
    b = em.builder
    st = checklayout.state(em)
    count = 1
    for n in decl.shape:
        count *= int(n)
    data = b.ptrtoint(em.expr(ref).data, I64)
    shadow = b.inttoptr(checklayout.launch_word(em, checklayout.SHARED_SHADOW), ptr())
    first = b.sub(data, checklayout.launch_word(em, checklayout.SHARED_BASE))
    start, last = (b.trunc(b.load(checklayout.word(b, st, k), typ=I64), I32)
                   for k in (checklayout.BLOCK_START, checklayout.BLOCK_LAST))
    span = b.sub(last, start)
    bad = em.alloca(I8, name=f"{decl.name}.unseen")
    no_barrier = b.icmp_unsigned("==", span, i32(0))
    b.store(b.zext(no_barrier, I8), bad)
    loop = counted_loop(em, b.select(no_barrier, i64(0), i64(count)), "shadow_i", _SCAN_BLOCKS)
    with loop as e:
        b = em.builder
        byte = b.add(first, b.mul(e, i64(decl.dtype.itemsize)))
        rec = b.gep(shadow, [b.mul(byte, i64(checklayout.RECORD_WORDS))], source_etype=I32)
        w_gen, flags = (b.load(b.gep(rec, [i64(k)], source_etype=I32), typ=I32)
                        for k in (checklayout.W_GEN, checklayout.FLAGS))
        fresh = b.icmp_unsigned("<", b.sub(w_gen, start), span)   # start <= gen < last
        written = b.icmp_unsigned("!=", b.and_(flags, i32(checklayout.INIT_FLAG)), i32(0))
        good = b.and_(fresh, written)
        b.store(b.zext(b.not_(good), I8), bad)
        b.cbranch(good, loop.step, loop.exit)
    b = em.builder
    return b.icmp_unsigned("==", b.load(bad, typ=I8), ll.Constant(I8, 0))


def seen(em, site):
    """Whether the read ``site`` needs no check in the thread loop being emitted."""
    return id(site) in getattr(em, "checked_seen", ())

