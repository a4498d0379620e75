"""Checked mode on GPUs (``checks=True`` on ``cuda:N``): what a kernel runs besides its
own work (docs/finding-bugs.md has the table of what each device checks).

Indices are checked as with ``boundscheck`` (codegen.check_index). The rest lives in
shared memory, per block, zeroed by every thread at the kernel's start (then a barrier):

- a shadow of two 64-bit words for each element of each static shared array (``Plan``
  says which): the last plain write and the last plain read, each as a ``stamp`` (the
  thread + 1, the block's barrier epoch, its warp's syncwarp count, the access's site:
  its line and file id, from the table SITES). A read or write that finds
  another thread's stamp of the same epoch, from another warp or from a lane of this
  warp since the warp's last syncwarp (``warp_epoch``), is a race; a read of an element
  whose write word
  is 0 is held back (``P_WHO``..., one per block) until the reader's next barrier or the
  end of the block's last thread: unwritten still, it is an uninitialized read (written
  by then: a race, which the writer reported);
- a barrier's words (``STATE``): each thread sets its bit in ``arrived`` and its site
  in ``SITE``, waits at ``barrier.sync 0`` (not ``bar.sync``: divergent threads may
  meet there), and then checks that every thread arrived at the same site or returned
  (``gone``: a kernel's ``return``; a thread that ran to the end is not excused, as on
  the CPU device). A ticket elects one thread to advance the epoch; a second barrier
  ends the check.

A failed check writes the launch's fault record (target.record_fault: the first thread
wins) with the words of simt/fault.py, so the runtime raises what the CPU device raises.
"""
from llvmlite import ir as ll

import simt.fault as fault
from ...compiler.lltypes import I32, I64, function, i32, i64, ptr
from ...ir import nodes as ir
from ...ir import types as T
from ...ir.walk import walk
from ...errors import NotSupportedError

SHARED = 3
STATIC_LIMIT = 48 * 1024                # a block's static shared memory (CUDA's limit)
# STATE words
EPOCH, TICKET, SITE, DONE, P_WHO, P_SLOT, P_LABEL, P_NDIM, P_INDEX = range(9)
STATE_WORDS = P_INDEX + 4
WARPS = 32                              # bitmap words: 1024 threads
# a stamp: thread + 1 (11 bits), barrier epoch (24), warp epoch (13: its syncwarps), site
# (16: an index into SITES, the (line, file id) of each checked access and barrier)
TID_BITS, EPOCH_BITS, WARP_BITS, SITE_BITS = 11, 24, 13, 16
EPOCH_SHIFT = TID_BITS
WARP_SHIFT = EPOCH_SHIFT + EPOCH_BITS
SITE_SHIFT = WARP_SHIFT + WARP_BITS
SITES = "simt_check_sites"              # constant table, line | file id << 32, by site
# intrinsics whose element accesses go through element_address (and so check_access)
CHECKED_OPS = ("atomic", "volatile_load", "volatile_store", "ld", "st")
# what orders threads besides syncthreads, which the shadows do not follow: a kernel that
# uses one has no shadows (its races would be false reports), only bounds and barriers
UNFOLLOWED = ("barrier.", "pipeline.", "cg.wait", "cluster.", "threadfence", "volatile_",
              "wgmma", "wmma", "mma", "tma")


class Plan:
    """Which static shared arrays get a shadow: all of them, less those that code other
    than plain element accesses and atomics writes (async copies, TMA, wmma, linked
    device code...), whose writes the shadow would not see, and records; none in a
    kernel that orders threads by other means than barriers (``UNFOLLOWED``, or an
    atomic of another order than relaxed)."""

    def __init__(self, functions, shared_bytes=0):
        decls, excluded, every = [], set(), False
        self.unfollowed = None           # the op that turned the shadows off, if one did
        self.local_every = False         # a local array goes where its writes are not seen
        for fn in functions:
            for decl in fn.decls:
                if decl.space == "shared" and all(d is not decl for d in decls):
                    decls.append(decl)
            for node in walk(*fn.body):
                if isinstance(node, ir.Intrinsic) and (
                        node.op.startswith(UNFOLLOWED) or
                        node.attrs.get("order", "relaxed") != "relaxed"):
                    self.unfollowed = self.unfollowed or node.op
                    every = True
                if isinstance(node, ir.Intrinsic) and node.op.startswith(CHECKED_OPS) \
                        and "label" in node.attrs:
                    continue
                if not isinstance(node, (ir.Intrinsic, ir.CallDevice)) or (
                        isinstance(node, ir.CallDevice) and node.extern is None):
                    continue
                for arg in node.args:
                    t = getattr(arg, "type", None)
                    if isinstance(t, T.Array) and t.space in ("shared", "local"):
                        if isinstance(arg, ir.ArrayRef):
                            excluded.add(id(arg.decl))
                        elif t.space == "shared":
                            every = True
                        else:
                            self.local_every = True
        self.decls = [] if every else [d for d in decls if id(d) not in excluded
                                       and getattr(d.dtype, "fields", None) is None]
        self.local_excluded = excluded   # ids of the local arrays passed to calls
        self.dropped = []                # too large to shadow within STATIC_LIMIT
        while self.decls and shared_bytes + state_bytes(self) > STATIC_LIMIT:
            largest = max(self.decls, key=_count)
            self.decls.remove(largest)
            self.dropped.append(largest.name)
        self.shadows = {}                # id(decl) -> (write words, read words) globals
        self.sites = {}                  # (line, file id) -> site index (SITES)

    @property
    def shadow_bytes(self):
        return sum(16 * _count(d) for d in self.decls)


def _count(decl):
    n = 1
    for extent in decl.shape:
        n *= int(extent)
    return n


def _shared(module, name, lltype):
    gv = module.globals.get(name)
    if gv is None:
        gv = ll.GlobalVariable(module, lltype, name, addrspace=SHARED)
        gv.linkage = "internal"
        gv.initializer = ll.Constant(lltype, ll.Undefined)
        gv.align = 8
    return gv


def _state(em):
    return _shared(em.module, "simt_check_state", ll.ArrayType(I64, STATE_WORDS))


def _bitmap(em, name):
    return _shared(em.module, f"simt_check_{name}", ll.ArrayType(I32, WARPS))


def _put(b, value, address, ordering="monotonic", align=8):
    """An atomic store (IRBuilder.store_atomic reads the pointee type opaque pointers lack)."""
    b._insert(ll.instructions.StoreAtomicInstr(b.block, value, address, ordering, align))


def _word(em, gv, index):
    """A pointer (opaque) to element ``index`` of shared global ``gv``."""
    base = ll.FormattedConstant(ptr(SHARED), gv.get_reference())
    return em.builder.gep(base, [index if isinstance(index, ll.Value) else i64(index)],
                          source_etype=gv.value_type.element)


def _shadows(em, decl):
    plan = em.target.check_plan
    found = plan.shadows.get(id(decl))
    if found is None:
        n = len(plan.shadows)
        kind = ll.ArrayType(I64, _count(decl))
        found = plan.shadows[id(decl)] = (_shared(em.module, f"simt_check_w{n}", kind),
                                          _shared(em.module, f"simt_check_r{n}", kind))
    return found


# ------------------------------------------------------------------ the thread
def _tid(em):
    """(linear thread index in the block, thread count), i32."""
    sp = lambda name: em.target.special(em, name)     # noqa: E731
    b = em.builder
    x, y, z = sp("threadIdx.x"), sp("threadIdx.y"), sp("threadIdx.z")
    dx, dy, dz = sp("blockDim.x"), sp("blockDim.y"), sp("blockDim.z")
    tid = b.add(b.mul(b.add(b.mul(z, dy), y), dx), x)
    return tid, b.mul(b.mul(dx, dy), dz)


def _thread_of(em, linear):
    """The (x, y, z) words (i64) of linear thread index ``linear`` (i64) of this block."""
    b = em.builder
    dx, dy = (b.zext(em.target.special(em, f"blockDim.{a}"), I64) for a in "xy")
    return [b.urem(linear, dx), b.urem(b.udiv(linear, dx), dy), b.udiv(linear, b.mul(dx, dy))]


def _where(em, loc):
    """(line, file id) of ``loc`` as i64 constants (a statement lowering made: its
    function's)."""
    line = (loc.line if loc is not None else em.function.loc.line) or 0
    return i64(line), i64(em.target.file_id(em.function, loc))


def _site(em, loc):
    """The site index of ``loc`` (SITES; the last one stands for any past the table)."""
    sites = em.target.check_plan.sites
    line, file = _where(em, loc)
    key = (line.constant, file.constant)
    return sites.setdefault(key, min(len(sites), (1 << SITE_BITS) - 1))


def _located(em, site):
    """(line, file id) words (i64) of site index ``site`` (an i64 value)."""
    b = em.builder
    table = ll.FormattedConstant(ptr(4), f'@"{SITES}"')
    entry = b.load(b.gep(table, [site], source_etype=I64), typ=I64)
    return b.and_(entry, i64(0xFFFFFFFF)), b.lshr(entry, i64(32))


def finish(target, module):
    """The SITES table, once every check of the module has its site."""
    sites = sorted(target.check_plan.sites.items(), key=lambda item: item[1])
    values = [ll.Constant(I64, line | file << 32) for (line, file), _ in sites] or [i64(0)]
    gv = ll.GlobalVariable(module, ll.ArrayType(I64, len(values)), SITES, addrspace=4)
    gv.initializer = ll.Constant(gv.value_type, values)
    gv.global_constant = True
    gv.linkage = "internal"


def _warp_epoch(em, tid):
    """The count of syncwarps of this thread's warp so far (i64)."""
    b = em.builder
    word = _word(em, _bitmap(em, "warp_epoch"), b.zext(b.lshr(tid, i32(5)), I64))
    return b.zext(b.load_atomic(word, "monotonic", 4, typ=I32), I64)


def _stamp(em, loc, tid):
    b = em.builder
    epoch = b.load_atomic(_word(em, _state(em), EPOCH), "monotonic", 8, typ=I64)
    epoch = b.and_(epoch, i64((1 << EPOCH_BITS) - 1))
    warp = b.and_(_warp_epoch(em, tid), i64((1 << WARP_BITS) - 1))
    word = b.or_(b.add(b.zext(tid, I64), i64(1)), b.shl(epoch, i64(EPOCH_SHIFT)))
    word = b.or_(word, b.shl(warp, i64(WARP_SHIFT)))
    return b.or_(word, i64(_site(em, loc) << SITE_SHIFT))


def _conflict(em, other, mine):
    """Whether stamp ``other`` is another thread's of this barrier interval, from another
    warp or from this warp since its last syncwarp."""
    b = em.builder
    mask = i64((1 << TID_BITS) - 1)
    who, me = b.and_(other, mask), b.and_(mine, mask)
    field = lambda shift, bits: i64(((1 << bits) - 1) << shift)     # noqa: E731
    epoch, warp_epoch = field(EPOCH_SHIFT, EPOCH_BITS), field(WARP_SHIFT, WARP_BITS)
    same_epoch = b.icmp_unsigned("==", b.and_(other, epoch), b.and_(mine, epoch))
    same_warp_epoch = b.icmp_unsigned("==", b.and_(other, warp_epoch),
                                      b.and_(mine, warp_epoch))
    other_warp = b.icmp_unsigned("!=", b.lshr(b.sub(who, i64(1)), i64(5)),
                                 b.lshr(b.sub(me, i64(1)), i64(5)))
    c = b.and_(b.icmp_unsigned("!=", who, i64(0)), b.icmp_unsigned("!=", who, me))
    return b.and_(b.and_(c, same_epoch), b.or_(other_warp, same_warp_epoch))


# ------------------------------------------------------------------ reports
def _report(em, code, line, file, label=0, other=None, accesses=0, indices=(),
            index=None, extent=None, ndim=None, thread=None):
    """Fill the fault record and end the thread (the caller positions after it).
    ``other``: (linear thread, line, file) of the other thread, of this block (i64);
    ``indices``: the element's index values; ``ndim``: their count, when a value;
    ``thread``: the linear index (i64) of the thread to name, when not this one."""
    b = em.builder
    em.target.can_fail = True
    words = [line, label if isinstance(label, ll.Value) else i64(label), i64(0),
             index if index is not None else i64(0), extent if extent is not None else i64(0),
             file]
    field = fault.FIELDS.index
    extra = [(field("accesses"), i64(accesses)),
             (field("ndim"), ndim if ndim is not None else i64(len(indices)))]
    extra += [(field(f"index.{k}"), _i64(b, v)) for k, v in enumerate(indices[:4])]
    if other is not None:
        linear, oline, ofile = other
        block = [b.zext(em.target.special(em, f"blockIdx.{a}"), I64) for a in "xyz"]
        values = [oline, ofile] + block + _thread_of(em, linear)
        extra += [(fault.OTHER + k, v) for k, v in enumerate(values)]
    ids = None
    if thread is not None:
        ids = [b.zext(em.target.special(em, f"blockIdx.{a}"), I64) for a in "xyz"]
        ids += _thread_of(em, thread)
    em.target.record_fault(em, code, words, extra, ids)


def _i64(b, value):
    return value if value.type == I64 else b.sext(value, I64)


def _branch(em, cond, name):
    """Branch to a new block when ``cond``; returns it (the builder stays on the other)."""
    b = em.builder
    bad, ok = em.new_block(name), em.new_block(name + "_ok")
    b.cbranch(cond, bad, ok)
    return bad, ok


def _fail_when(em, cond, name, report):
    b = em.builder
    bad, ok = _branch(em, cond, name)
    b.position_at_end(bad)
    report()
    b.position_at_end(ok)


# ------------------------------------------------------------------ accesses
def check_access(em, array, indices, address, access, label, loc, order="relaxed",
                 site=None, scope="device"):
    """One access of ``array`` at ``address`` (codegen.element_address): vectors'
    alignment everywhere, races and uninitialized reads in shadowed shared arrays."""
    if isinstance(array.type.element, T.Vector) and array.type.align is None:
        _alignment(em, indices, address, array.type.element.align, access, label, loc)
    plan = getattr(em.target, "check_plan", None)
    if array.type.space == "local" and plan is not None:
        _local_access(em, plan, indices, address, access, label, loc)
    if array.type.space != "shared" or plan is None or not plan.decls:
        return
    b = em.builder
    addr = b.ptrtoint(address, I64)
    found, wslot, rslot = ll.Constant(ll.IntType(1), 0), None, None
    for decl in plan.decls:
        data = ll.FormattedConstant(ptr(SHARED), em.target.shared_data(em, decl).get_reference())
        w, r = _shadows(em, decl)
        offset = b.sub(addr, b.ptrtoint(data, I64))
        inside = b.icmp_unsigned("<", offset, i64(_count(decl) * decl.dtype.itemsize))
        element = b.udiv(offset, i64(decl.dtype.itemsize))
        ws, rs = _word(em, w, element), _word(em, r, element)
        wslot = ws if wslot is None else b.select(inside, ws, wslot)
        rslot = rs if rslot is None else b.select(inside, rs, rslot)
        found = b.or_(found, inside)
    check, done = _branch(em, found, "shadowed")
    b.position_at_end(check)
    tid, _ = _tid(em)
    mine = _stamp(em, loc, tid)
    label_id = em.target.label_id(label)
    line, file = _where(em, loc)

    def race(other, verbs):
        who = b.sub(b.and_(other, i64((1 << TID_BITS) - 1)), i64(1))
        oline, ofile = _located(em, b.lshr(other, i64(SITE_SHIFT)))
        mine_kind, other_kind = verbs
        return lambda: _report(em, fault.RACE, line, file, label_id, (who, oline, ofile),
                               mine_kind | other_kind << 4, indices)

    # a read stamps its word, then looks at the write word again; a write stamps its
    # word, then looks at the read word: with a fence between, one of two racing threads
    # sees the other's stamp, whatever the order (Dekker's)
    if access == "read":
        w = b.load_atomic(wslot, "monotonic", 8, typ=I64)
        unwritten = b.icmp_unsigned("==", w, i64(0))
        _fail_when(em, _conflict(em, w, mine), "race", race(w, (fault.READ, fault.WRITE)))
        _hold(em, unwritten, mine, wslot, label_id, indices)
        _put(b, mine, rslot, "monotonic", 8)
        b.fence("seq_cst", "block")
        w = b.load_atomic(wslot, "monotonic", 8, typ=I64)
        _fail_when(em, _conflict(em, w, mine), "race", race(w, (fault.READ, fault.WRITE)))
    elif access == "write":
        old = b.atomic_rmw("xchg", wslot, mine, "monotonic")
        _fail_when(em, _conflict(em, old, mine), "race", race(old, (fault.WRITE, fault.WRITE)))
        b.fence("seq_cst", "block")
        r = b.load_atomic(rslot, "monotonic", 8, typ=I64)
        _fail_when(em, _conflict(em, r, mine), "race", race(r, (fault.WRITE, fault.READ)))
    elif access in ("atomic", "atomic_store", "volatile_store"):
        # written, by no thread in particular: atomics race with no access here
        _put(b, b.and_(mine, i64(~((1 << TID_BITS) - 1))), wslot, "monotonic", 8)
    b.branch(done)
    b.position_at_end(done)


def _locals(em, plan):
    """The kernel's local arrays, each with its "written" bytes (one per element, this
    thread's: an entry-block slot, zeroed there): [(decl, bytes, element count)]. None in
    a device function (its local arrays are checked for bounds only, as on the CPU)."""
    found = getattr(em, "local_written", None)
    if found is None and getattr(em, "kernel_entry", False) and not plan.local_every:
        found = em.local_written = []
        memset = em.module.declare_intrinsic("llvm.memset", [ptr(), I64])
        for node in walk(*em.function.body):
            decl = getattr(node, "decl", None)
            if isinstance(node, ir.ArrayRef) and decl.space == "local" and \
                    id(decl) not in plan.local_excluded and all(d is not decl for d, _, _ in found):
                count = _count(decl)
                bits = em.alloca(ll.ArrayType(ll.IntType(8), count), name=f"{decl.name}.written")
                em.entry_builder.call(memset, [bits, ll.Constant(ll.IntType(8), 0), i64(count),
                                               ll.Constant(ll.IntType(1), 0)])
                found.append((decl, bits, count))
    return found


def _local_access(em, plan, indices, address, access, label, loc):
    """A read of an element of a local array this thread did not write: reported at
    once (no other thread can write it); a write marks it written."""
    arrays = _locals(em, plan)
    if not arrays:
        return
    b = em.builder
    addr = b.ptrtoint(address, I64)
    written = None
    for decl, bits, count in arrays:
        value = em.decl_values.get(id(decl))
        if value is None:
            continue
        size = decl.dtype.itemsize
        offset = b.sub(addr, b.ptrtoint(value.data, I64))
        inside = b.icmp_unsigned("<", offset, i64(count * size))
        element = b.gep(bits, [b.udiv(offset, i64(size))], source_etype=ll.IntType(8))
        if written is None:             # an address in no local array: nothing to check
            written = getattr(em, "local_scratch", None)
            if written is None:
                written = em.local_scratch = em.alloca(ll.IntType(8), name="written.none")
                em.entry_builder.store(ll.Constant(ll.IntType(8), 1), written)
        written = b.select(inside, element, written)
    if written is None:
        return
    if access in ("read", "atomic", "atomic_load", "volatile_load"):
        unwritten = b.icmp_unsigned("==", b.load(written, typ=ll.IntType(8)),
                                    ll.Constant(ll.IntType(8), 0))
        line, file = _where(em, loc)
        _fail_when(em, unwritten, "local_uninitialized", lambda: _report(
            em, fault.UNINITIALIZED, line, file, em.target.label_id(label), None, fault.READ,
            indices))
    if access != "read":
        b.store(ll.Constant(ll.IntType(8), 1), written)


def _hold(em, unwritten, mine, wslot, label_id, indices):
    """An unwritten element's read: claim the block's pending slot (if free) with its
    stamp, element and index; ``settle`` reports it if still unwritten then."""
    b = em.builder
    claim, done = _branch(em, unwritten, "unwritten")
    b.position_at_end(claim)
    state = _state(em)
    pair = b.cmpxchg(_word(em, state, P_WHO), i64(0), mine, "monotonic", "monotonic")
    won, lost = _branch(em, b.extract_value(pair, 1), "pending")
    b.position_at_end(won)
    b.store(b.ptrtoint(wslot, I64), _word(em, state, P_SLOT))
    b.store(i64(label_id), _word(em, state, P_LABEL))
    b.store(i64(len(indices)), _word(em, state, P_NDIM))
    for k, v in enumerate(indices[:4]):
        b.store(_i64(b, v), _word(em, state, P_INDEX + k))
    b.branch(lost)
    b.position_at_end(lost)
    b.branch(done)
    b.position_at_end(done)


def settle(em, tid, last=False):
    """The block's held-back read: still unwritten, report it as uninitialized; then free
    the slot. At each barrier (after the wait) its reader settles it; at the end of the
    kernel, the block's last thread to end (``last``: ``tid`` is then unused)."""
    b = em.builder
    state = _state(em)
    who = b.load_atomic(_word(em, state, P_WHO), "monotonic", 8, typ=I64)
    mask = i64((1 << TID_BITS) - 1)
    reader = b.and_(who, mask)
    held = b.icmp_unsigned("!=", reader, i64(0)) if last else \
        b.icmp_unsigned("==", reader, b.add(b.zext(tid, I64), i64(1)))
    check, done = _branch(em, held, "held_read")
    b.position_at_end(check)
    slot = b.inttoptr(b.load(_word(em, state, P_SLOT), typ=I64), ptr(SHARED))
    unwritten = b.icmp_unsigned("==", b.load_atomic(slot, "monotonic", 8, typ=I64), i64(0))
    line, file = _located(em, b.lshr(who, i64(SITE_SHIFT)))
    label = b.load(_word(em, state, P_LABEL), typ=I64)
    ndim = b.load(_word(em, state, P_NDIM), typ=I64)
    values = [b.load(_word(em, state, P_INDEX + k), typ=I64) for k in range(4)]
    _fail_when(em, unwritten, "uninitialized",
               lambda: _report(em, fault.UNINITIALIZED, line, file, label, None,
                               fault.READ, values, ndim=ndim, thread=b.sub(reader, i64(1))))
    _put(b, i64(0), _word(em, state, P_WHO), "monotonic", 8)
    b.branch(done)
    b.position_at_end(done)


def _alignment(em, indices, address, align, access, label, loc):
    """A vector element off its alignment: the GPU would stop the context
    (CUDA_ERROR_MISALIGNED_ADDRESS); report it at its line instead."""
    b = em.builder
    addr = b.ptrtoint(address, I64)
    off = b.icmp_unsigned("!=", b.and_(addr, i64(align - 1)), i64(0))
    line, file = _where(em, loc)
    kinds = {"read": fault.READ, "write": fault.WRITE}
    _fail_when(em, off, "misaligned", lambda: _report(
        em, fault.MISALIGNED, line, file, em.target.label_id(label), None,
        kinds.get(access, fault.ATOMIC), indices, index=addr, extent=i64(align)))


# ------------------------------------------------------------------ barriers
def _sync(em):
    """``barrier.sync 0``, not ``bar.sync 0`` (``barrier.sync.aligned``): every non-exited
    thread of the block, wherever each waits (a warp's threads may wait apart)."""
    fn = function(em.module, "llvm.nvvm.barrier.cta.sync.all",
                  ll.FunctionType(ll.VoidType(), [I32]))
    em.builder.call(fn, [i32(0)])


def _bit(em, tid):
    b = em.builder
    return b.lshr(tid, i32(5)), b.shl(i32(1), b.and_(tid, i32(31)))


def barrier(em, loc):
    """A checked syncthreads at ``loc`` (see the module's doc)."""
    b = em.builder
    tid, count = _tid(em)
    warp, bit = _bit(em, tid)
    state, arrived, gone = _state(em), _bitmap(em, "arrived"), _bitmap(em, "gone")
    line, file = _where(em, loc)
    site = _site(em, loc) << 32
    b.atomic_rmw("or", _word(em, arrived, b.zext(warp, I64)), bit, "monotonic")
    ticket = b.atomic_rmw("add", _word(em, state, TICKET), i64(1), "monotonic")
    _put(b, b.or_(i64(site), b.zext(tid, I64)), _word(em, state, SITE), "monotonic", 8)
    _sync(em)
    # the same barrier?
    there = b.load_atomic(_word(em, state, SITE), "monotonic", 8, typ=I64)
    other_site = b.lshr(there, i64(32))
    _fail_when(em, b.icmp_unsigned("!=", other_site, i64(site >> 32)), "divergent",
               lambda: _report(em, fault.BARRIER_DIVERGENCE, line, file, 0, (
                   b.and_(there, i64(0xFFFFFFFF)), *_located(em, other_site))))
    # every thread arrived or returned?
    words = b.lshr(b.add(count, i32(31)), i32(5))
    head = b.block
    loop, body, after = (em.new_block(n) for n in ("barrier_scan", "barrier_word", "barrier_scanned"))
    b.branch(loop)
    b.position_at_end(loop)
    k = b.phi(I32)
    k.add_incoming(i32(0), head)
    b.cbranch(b.icmp_unsigned("<", k, words), body, after)
    b.position_at_end(body)
    here = b.or_(b.load_atomic(_word(em, arrived, b.zext(k, I64)), "monotonic", 4, typ=I32),
                 b.load_atomic(_word(em, gone, b.zext(k, I64)), "monotonic", 4, typ=I32))
    left = b.sub(count, b.shl(k, i32(5)))            # threads in this word
    full = b.icmp_unsigned(">=", left, i32(32))
    valid = b.select(full, i32(-1), b.sub(b.shl(i32(1), b.and_(left, i32(31))), i32(1)))
    missing = b.and_(valid, b.xor(here, i32(-1)))
    cttz = em.module.declare_intrinsic("llvm.cttz", [I32], ll.FunctionType(I32, [I32, ll.IntType(1)]))
    first = b.add(b.shl(k, i32(5)), b.call(cttz, [missing, ll.Constant(ll.IntType(1), 1)]))
    _fail_when(em, b.icmp_unsigned("!=", missing, i32(0)), "missing",
               lambda: _report(em, fault.BARRIER_DIVERGENCE, line, file, 0,
                               (b.zext(first, I64), i64(0), i64(0))))
    k.add_incoming(b.add(k, i32(1)), b.block)
    b.branch(loop)
    b.position_at_end(after)
    settle(em, tid)
    # the ticket's first thread starts the next epoch
    lead, go = _branch(em, b.icmp_unsigned("==", ticket, i64(0)), "epoch")
    b.position_at_end(lead)
    epoch = b.load(_word(em, state, EPOCH), typ=I64)
    _put(b, b.add(epoch, i64(1)), _word(em, state, EPOCH), "monotonic", 8)
    _put(b, i64(0), _word(em, state, TICKET), "monotonic", 8)
    b.branch(go)
    b.position_at_end(go)
    _sync(em)
    b.atomic_rmw("and", _word(em, arrived, b.zext(warp, I64)), b.xor(bit, i32(-1)),
                 "monotonic")


def refuse(em, what, loc):
    """A barrier the GPU checks cannot follow (named or tile barriers)."""
    where = f" at {loc.filename}:{loc.line}" if loc is not None else ""
    raise NotSupportedError(
        f"checked mode on GPUs (checks=True on cuda) does not follow {what} (kernel "
        f"'{em.target.kernel.name}'{where}): run the kernel with "
        f"simt.use_device('cpu', checks=True), which checks them, or without checks")


def returned(em):
    """A kernel's ``return``: excused from the barriers after this; then ``ended``."""
    tid, _ = _tid(em)
    warp, bit = _bit(em, tid)
    em.builder.atomic_rmw("or", _word(em, _bitmap(em, "gone"), em.builder.zext(warp, I64)),
                          bit, "monotonic")
    em.builder.fence("seq_cst", "block")     # done before the thread exits (and releases
    ended(em)                                # the barrier the others wait at)


def ended(em):
    """A thread's end (a thread that runs to the end is not excused from barriers, as on
    the CPU device): the block's last thread to end settles the held-back read, not its
    reader, which may end before the writer writes (that is a race, the writer's report)."""
    b = em.builder
    tid, count = _tid(em)
    b.fence("seq_cst", "block")       # its shadow writes, before its count (NVPTX
    done = b.atomic_rmw("add", _word(em, _state(em), DONE), i64(1), "monotonic")
    b.fence("seq_cst", "block")       # drops the orders of atomicrmw: fences instead)
    last, after = _branch(em, b.icmp_unsigned("==", b.add(done, i64(1)), b.zext(count, I64)),
                          "last_thread")
    b.position_at_end(last)
    settle(em, tid, last=True)
    b.branch(after)
    b.position_at_end(after)


def prologue(em):
    """Zero the shadows and the barrier words (every thread a share), then wait."""
    b = em.builder
    tid, count = _tid(em)
    tid, count = b.zext(tid, I64), b.zext(count, I64)
    regions = [(_state(em), STATE_WORDS, I64)] + [
        (_bitmap(em, name), WARPS, I32) for name in ("arrived", "gone", "warp_epoch")]
    for decl in em.target.check_plan.decls:
        regions += [(gv, _count(decl), I64) for gv in _shadows(em, decl)]
    for gv, n, etype in regions:
        head = b.block
        loop, body, after = (em.new_block(f"zero_{gv.name}{s}") for s in ("", "_body", "_done"))
        b.branch(loop)
        b.position_at_end(loop)
        k = b.phi(I64)
        k.add_incoming(tid, head)
        b.cbranch(b.icmp_unsigned("<", k, i64(n)), body, after)
        b.position_at_end(body)
        b.store(ll.Constant(etype, 0), _word(em, gv, k))
        k.add_incoming(b.add(k, count), body)
        b.branch(loop)
        b.position_at_end(after)
    _sync(em)


def state_bytes(plan):
    """The shared memory checked mode adds to a block: shadows, state and bitmaps."""
    return plan.shadow_bytes + 8 * STATE_WORDS + 3 * 4 * WARPS


def syncwarp(em, mask):
    """A checked syncwarp(``mask``): after it, its first lane there starts the warp's next
    epoch, and a second syncwarp lets the lanes of the mask see it (what a lane of the warp did
    before it no longer races with what another does after)."""
    b = em.builder
    sync = function(em.module, "llvm.nvvm.bar.warp.sync", ll.FunctionType(ll.VoidType(), [I32]))
    b.call(sync, [mask])
    # its first lane that is here (a lane of the mask may have exited)
    active = b.call(ll.InlineAsm(ll.FunctionType(I32, []), "activemask.b32 $0;", "=r",
                                 side_effect=True), [], attrs=("convergent",))
    cttz = em.module.declare_intrinsic("llvm.cttz", [I32], ll.FunctionType(I32, [I32, ll.IntType(1)]))
    first = b.call(cttz, [b.and_(mask, active), ll.Constant(ll.IntType(1), 1)])
    tid, _ = _tid(em)
    lead, after = _branch(em, b.icmp_unsigned("==", first, em.target.laneid(em)), "warp_epoch")
    b.position_at_end(lead)
    word = _word(em, _bitmap(em, "warp_epoch"), b.zext(b.lshr(tid, i32(5)), I64))
    b.atomic_rmw("add", word, i32(1), "monotonic")
    b.branch(after)
    b.position_at_end(after)
    b.call(sync, [mask])


def own_lane(em, mask, loc):
    """A warp function whose ``mask`` (i32) leaves out the calling lane: undefined in
    CUDA; reported at the call (the record's index: the mask and the lane)."""
    b = em.builder
    lane = em.target.laneid(em)
    missing = b.icmp_unsigned("==", b.and_(b.lshr(mask, lane), i32(1)), i32(0))
    line, file = _where(em, loc)
    _fail_when(em, missing, "own_lane", lambda: _report(
        em, fault.OWN_LANE, line, file, 0, None, 0, [b.zext(mask, I64), b.zext(lane, I64)]))


def warn_dropped(plan, kernel):
    """A CompileWarning naming the shared arrays too large to shadow (their races and
    uninitialized reads go unchecked on the GPU)."""
    if plan.dropped and kernel is not None:
        from ...compiler.errors import warn
        names = ", ".join(f"'{name}'" for name in plan.dropped)
        warn(None, kernel.loc, f"checked mode on GPUs: shared array(s) {names} too large to "
             f"shadow (16 bytes per element, within {STATIC_LIMIT // 1024} KB of static shared "
             f"memory): their races and uninitialized reads are not checked",
             "check the kernel on the cpu device (simt.use_device('cpu', checks=True)), or "
             "with smaller arrays", kernel.name)
