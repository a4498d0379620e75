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
from ...compiler.writes import written_params
from ...ir import nodes as ir
from ...ir import types as T
from ...ir.walk import fields, walk
from .checker import call_checker
from .checklayout import (ACQUIRED, BLOCK_ACQUIRED, BLOCK_LAST, BLOCK_START,
                          CHECKED_SPACES, FENCED, FENCED_WIDE, GEN, KINDS, ME, ME_STORED,
                          NARROW, ORDER_BITS, ORDER_PTR, ORDER_SLOT, ORDER_WORDS, OWNED,
                          PENDING, PENDING_ACQ, PENDING_FAR, READ_ONLY, TURN_ACQUIRED,
                          WARP_ACQUIRED, WARP_LAST, launch_word, module_flag, private_bit,
                          raise_to, record_element, report_mine, reporter, running, site,
                          state, word)
from .disjoint import constant as _constant_spec
from .fastpath import FastAccess, blind_write, fast_path
from ...ir import disjoint


# ------------------------------------------------------------------ memory accesses
def read_only_params(fn):
    """The indices of the kernel's global array parameters that it only reads, directly
    (``a[i]``, ``a.shape``): no view, call, assignment or atomic takes them elsewhere, and
    no store writes a field of an element (``a[i].x = v``: compiler/writes.py). A
    launch where such an array is fully written and shares no memory with another
    argument needs no checks on it (shadow.ShadowMemory.read_only_mask): nothing in the
    launch writes it, so its reads cannot race nor read uninitialized memory."""
    found = {i for i, (_, t) in enumerate(fn.params)
             if isinstance(t, T.Array) and t.space == "global" and i < 63}
    found -= written_params(fn).keys()
    for node in walk(*fn.body):
        for name, value in fields(node):
            items = value if isinstance(value, list) else [value]
            direct = isinstance(node, (ir.Load, ir.ArrayAttr)) and name == "array"
            for item in items:
                if isinstance(item, ir.Param) and not direct:
                    found.discard(item.index)
    return frozenset(found)


def private_groups(function):
    """((spec, shape), ...) of the groups of shared accesses of ``function`` that no
    other thread's access meets in their barrier intervals when the launch's block shape
    makes their index distinct per thread (ir/disjoint.py; bit g of the state word
    PRIVATE: group g is so in this launch, shadow.private_mask), and {id of a Load or
    Store: its group}. Such a read is checked but not recorded, such a write recorded
    without a look at the record (fastpath.blind_write)."""
    groups, found = [], {}
    for decl, specs in disjoint.private_shared(function).values():
        shape = tuple(int(n) for n in decl.shape)
        for spec, ids in specs:
            if len(groups) < 63 and _constant_spec(spec):
                found.update(dict.fromkeys(ids, len(groups)))
                groups.append((spec, shape))
    return tuple(groups), found


def _param_index(em, array, candidates):
    """The parameter ``array`` is, when it is one of ``candidates`` (indices); else None."""
    for index in candidates:
        if em.params[index] is array:
            return index
    return None


def check_access(em, array, indices, address, access, label, loc, order="relaxed",
                 site=None, scope="device"):
    """Call the checker for one access of ``array`` (global or shared) at ``address``;
    a report ends the thread, its array and index written into the fault record. A read
    of a read-only parameter skips the call when the launch says it may (READ_ONLY).
    ``order``, ``scope``: an atomic's memory order and scope; ``site``: the Load or Store
    node (a read that ir/intervals.py finds nothing can race with is checked but not
    recorded)."""
    if isinstance(array.type.element, T.Vector) and array.type.align is None:
        _check_alignment(em, indices, address, array.type.element.align, access, label, loc)
    if array.type.space == "local":
        _local_access(em, indices, address, access, label, loc)
    if array.type.space not in CHECKED_SPACES:
        return                      # local arrays are the thread's own; constants read-only
    if id(site) in getattr(em, "checked_seen", ()):
        return                      # checked for the whole thread loop (checkscan.py)
    em.target.can_fail = True
    private = private_bit(em, site) if access in ("read", "write") else None
    if private is not None and access == "write":
        blind, check = em.new_block("private_write"), em.new_block("shared_write")
        done = em.new_block("private_done")
        em.builder.cbranch(private, blind, check)
        em.builder.position_at_end(blind)
        blind_write(em, address, loc)
        em.builder.branch(done)
        em.builder.position_at_end(check)
        _check_access(em, array, indices, address, access, label, loc, order, site, scope)
        em.builder.branch(done)
        em.builder.position_at_end(done)
        return
    _check_access(em, array, indices, address, access, label, loc, order, site, scope,
                  private)


def _check_access(em, array, indices, address, access, label, loc, order, site, scope,
                  private=None):
    if access not in ("read", "write"):
        orders(em)                  # atomics and volatiles: the memory model's words
    b = em.builder
    bits = ORDER_BITS[order] | (NARROW if scope == "block" else 0)
    param, mask = None, None
    if access == "read":
        param, mask = _param_index(em, array, getattr(em, "read_only", ())), READ_ONLY
    if param is None and access in ("read", "write"):
        param, mask = _param_index(em, array, getattr(em, "owned", ())), OWNED
    if param is not None:
        bit = b.and_(launch_word(em, mask), i64(1 << param))
        skip = b.icmp_unsigned("!=", bit, i64(0))
    elif access in ("read", "write") and array.type.space != "generic":
        keep = id(site) not in getattr(em, "unrecorded", ())
        skip = fast_path(em, address, access, array.type.space != "global", loc, keep,
                         private)
    elif access == "atomic" and order == "relaxed" and array.type.space != "generic":
        fast = FastAccess(em, address, array.type.space != "global", loc)
        skip = fast.record(access, fast.condition(access))
    else:
        call_checker(em, indices, address, access, label, loc, bits)
        return
    done, check = em.new_block("checked"), em.new_block("check")
    b.cbranch(skip, done, check)
    b.position_at_end(check)
    call_checker(em, indices, address, access, label, loc, bits)
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
    st = report_mine(em, fault.MISALIGNED, loc, KINDS[access])
    err = b.gep(st, [i64(-fault.WORDS)], source_etype=I64)
    for field, value in (("index", addr), ("extent", i64(align))):
        b.store(value, b.gep(err, [i64(fault.FIELDS.index(field))], source_etype=I64))
    record_element(em, indices, label)
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
    if access in ("read", "atomic", "atomic_load", "volatile_load"):
        em.target.can_fail = True
        unwritten = b.icmp_unsigned("==", b.load(written, typ=I8), ll.Constant(I8, 0))
        stop, go = em.new_block("local_uninitialized"), em.new_block("local_written")
        b.cbranch(unwritten, stop, go)
        b.position_at_end(stop)
        report_mine(em, fault.UNINITIALIZED, loc, fault.READ)
        record_element(em, indices, label)
        em.abort()
        b.position_at_end(go)
    if access not in ("read", "atomic_load", "volatile_load"):
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
    report_mine(em, fault.UNASSIGNED, loc, fault.READ)
    record_element(em, [], name)
    em.abort()
    b.position_at_end(go)


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
            em.add_slot(ORDER_SLOT, ll.ArrayType(I64, ORDER_WORDS))
        memset = em.module.declare_intrinsic("llvm.memset", [ptr(), I64])
        b.call(memset, [em.slot_layout[ORDER_SLOT][0], ll.Constant(I8, 0),
                        b.mul(em.nthreads, i64(8 * ORDER_WORDS)), ll.Constant(I1, 0)])


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
    _if_flag(em, ME_STORED, lambda em: em.builder.store(b.zext(who, I64), word(b, st, ME)))
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


def orders(em):
    """Note that the kernel makes an atomic, volatile or fence access: its threads' turns
    keep their memory-model words (_order_start). Without any, nothing raises those words
    in the launch and the turns skip them."""
    module_flag(em, ORDERS).initializer = ll.Constant(I8, 1)


ORDERS = "simt.chk.orders"      # module_flag: the kernel has memory-model accesses


def _order_start(em):
    """The running thread's memory-model words from its slot (ORDER_SLOT; a kernel
    without barriers runs each thread in one turn: a scratch slot, zeroed here). What its
    block acquired before its last barrier counts as acquired by every thread of it.
    Only in a kernel that has memory-model accesses (``orders``): in others the words
    stay 0 for the whole launch (ShadowMemory.begin zeroes them)."""
    _if_flag(em, ORDERS, _order_words)


def _if_flag(em, name, emit):
    """``emit(em)``'s code, run only where module_flag ``name`` ends up set."""
    b = em.builder
    needed = b.icmp_unsigned("!=", b.load(module_flag(em, name), typ=I8), ll.Constant(I8, 0))
    then, done = em.new_block("order_words"), em.new_block("order_words_done")
    b.cbranch(needed, then, done)
    b.position_at_end(then)
    emit(em)
    em.builder.branch(done)
    em.builder.position_at_end(done)


def _order_words(em):
    b, st = em.builder, state(em)
    kind = ll.ArrayType(I64, ORDER_WORDS)
    if em.plan is not None:
        if ORDER_SLOT not in em.slot_layout:
            em.add_slot(ORDER_SLOT, kind)
        base, _ = em.slot_layout[ORDER_SLOT]
        slot = b.gep(base, [em.flat_tid], source_etype=kind)
    else:
        slot = getattr(em, "order_scratch", None)
        if slot is None:
            slot = em.order_scratch = em.alloca(kind, name="order")
        b.store(ll.Constant(kind, [0] * ORDER_WORDS), slot)
    b.store(b.ptrtoint(slot, I64), word(b, st, ORDER_PTR))
    mine = [b.load(b.gep(slot, [i32(0), i32(k)], source_etype=kind), typ=I64)
            for k in range(ORDER_WORDS)]
    block = b.load(word(b, st, BLOCK_ACQUIRED), typ=I64)
    b.store(b.select(b.icmp_signed(">", block, mine[0]), block, mine[0]), word(b, st, ACQUIRED))
    for k, index in enumerate((FENCED, PENDING_ACQ, FENCED_WIDE, PENDING_FAR), 1):
        b.store(mine[k], word(b, st, index))


def fence(em, scope="device"):
    """A fence of ``scope``: this thread's later relaxed atomic writes release what it
    did before (FENCED; to other blocks too, FENCED_WIDE, only after a fence wider than
    the block), and the releases its relaxed atomic loads read are acquired (another
    block's, PENDING_FAR, only by such a fence: threadfence_block orders nothing for
    other blocks)."""
    orders(em)
    b, st = em.builder, state(em)
    wide = scope != "block"
    gen = b.load(word(b, st, GEN), typ=I64)
    raise_to(b, st, ll.Constant(I1, 1), gen, FENCED, slot_index=1)
    if wide:
        raise_to(b, st, ll.Constant(I1, 1), gen, FENCED_WIDE, slot_index=3)
    for index in (PENDING_ACQ, PENDING_FAR) if wide else (PENDING_ACQ,):
        pending = b.load(word(b, st, index), typ=I64)
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
        who = running(em)
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
    b.call(reporter(em.module), [state(em), i32(fault.BARRIER_DIVERGENCE), a,
                                  i32(site(em, stmt.loc)), b.load(slots["found_m"], typ=I32),
                                  b.load(slots["found_site"], typ=I32), i32(0)])
    em.abort()
    b.position_at_end(go)


# ------------------------------------------------------------------ warps
def syncwarp_start(em):
    """Block-level, before the thread loop that completes a ``syncwarp``: a new gen, and
    what each warp's lanes acquired so far gathered per warp (WARP_ACQUIRED): the CUDA
    memory model orders a syncwarp's lanes as a barrier does, so what one lane acquired
    before it, the others have after it (syncwarp_done hands it out)."""
    bump(em)
    if em.plan is None or ORDER_SLOT not in em.slot_layout:
        return
    b, st = em.builder, state(em)
    for w in range(32):
        b.store(i64(0), word(b, st, WARP_ACQUIRED + w))
    base, kind = em.slot_layout[ORDER_SLOT]
    with counted_loop(em, em.nthreads, "acq_thread", signed=False) as t:
        b = em.builder
        mine = b.load(b.gep(base, [t, i32(0)], source_etype=kind), typ=I64)
        at = b.gep(st, [b.add(i64(WARP_ACQUIRED), b.lshr(t, i64(5)))], source_etype=I64)
        old = b.load(at, typ=I64)
        b.store(b.select(b.icmp_signed(">", mine, old), mine, old), at)


def syncwarp_done(em, lanes):
    """In that loop: this thread's warp is synchronized from the new gen on, and the
    thread has what its warp's lanes acquired before the syncwarp (all lanes of the
    warp, whatever the mask: as WARP_LAST, the model keeps one word per warp)."""
    b = em.builder
    st = state(em)
    warp = b.lshr(b.zext(lanes.base, I64), i64(5))
    b.store(b.load(word(b, st, GEN), typ=I64),
            b.gep(st, [b.add(i64(WARP_LAST), warp)], source_etype=I64))
    if em.plan is None or ORDER_SLOT not in em.slot_layout:
        return

    def hand_out(em):           # the slot (ORDER_PTR) is set only where _order_start ran
        b = em.builder
        shared = b.load(b.gep(st, [b.add(i64(WARP_ACQUIRED), warp)], source_etype=I64),
                        typ=I64)
        raise_to(b, st, ll.Constant(I1, 1), shared, ACQUIRED, TURN_ACQUIRED, slot_index=0)
    _if_flag(em, ORDERS, hand_out)


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
    st = report_mine(em, fault.OWN_LANE, loc)
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
        me = running(em)
        other = b.add(b.sub(me, lanes.lane), lane)
        b.call(reporter(em.module), [state(em), i32(fault.WARP_MASK), me, i32(site(em, loc)),
                                      other, i32(0), i32(0)])
        em.abort()
        b.position_at_end(step)
