"""Warp functions on the CPU device: a warp operation is a barrier at warp scope.

A block runs its threads as loops (emit.py). At a warp operation the current run ends with
a *gather*: every thread that reaches it stores its operands and a ticket (the number of
this dynamic execution of the operation, counted per kernel call) into per-thread slots.
The next run starts with the *result*: each thread reads the slots of its warp's lanes
(linear thread index // warp size) and computes what the GPU instruction gives. A lane takes part
when it exists (partial warps), holds the current ticket (it reached this same operation:
lanes that exited, or are on another path, do not) and is named in the caller's mask.
A shuffle whose source lane does not take part returns the caller's own value, as a
shuffle whose source is outside its segment does; nothing ever waits, so misuse cannot
hang. docs/warp.md has the whole contract. The warp's size and lane-mask type are the
target's (``em.target.warp``: 32 lanes, uint32 masks).
"""
from llvmlite import ir as ll

from ...ir import nodes as ir
from ...compiler.flat import counted_loop
from ...compiler.lltypes import I1, I8, I32, I64, const, i32, i64, scalar, value_type
from . import checked

TICKET = "$warp.ticket"


def prepare(em):
    """Before the thread loop of a run ending in a gather (ir/fission.py cuts the runs):
    the ticket counter (one per kernel call) and the zeroed per-thread ticket slots."""
    if em.warp_counter is None:
        counter = em.warp_counter = em.alloca(I64, name="warp_ticket")
        eb = em.entry_builder
        eb.store(i64(1), counter)             # slots start at 0: never a valid ticket
        for parity in (0, 1):
            name = f"{TICKET}.{parity}"
            em.add_slot(name, I64)
            base, _ = em.slot_layout[name]
            memset = em.module.declare_intrinsic("llvm.memset", [base.type, I64])
            count = em.nthreads
            if em.fibers is not None:      # a warp's own lanes: the others may be mid-way
                first, end = (eb.zext(v, I64) for v in em.lane_span)
                base, count = eb.gep(base, [first], source_etype=I64), eb.sub(end, first)
            eb.call(memset, [base, const(I8, 0), eb.mul(count, i64(8)), const(I1, 0)])


def advance(em):
    """After that thread loop: the next run computes the result (ticket = counter - 1)
    and may end with the next gather."""
    b = em.builder
    b.store(b.add(b.load(em.warp_counter, typ=I64), i64(1)), em.warp_counter)


def _slot_name(index, lltype):
    return f"$warp.arg{index}.{lltype}".replace(" ", "")


def _slot_ptr(em, name, lltype, index, parity):
    """Slots come in two sets, chosen by the ticket's parity: in one run, the result of
    operation k reads one set while the gather of operation k + 1 writes the other."""
    for p in (0, 1):
        if f"{name}.{p}" not in em.slot_layout:
            em.add_slot(f"{name}.{p}", lltype)
    b = em.builder
    base = b.select(parity, em.slot_layout[f"{name}.1"][0], em.slot_layout[f"{name}.0"][0])
    return b.gep(base, [index], source_etype=lltype)


def _parity(b, ticket):
    return b.trunc(ticket, I1)


def gather(em, s):
    for i, arg in enumerate(s.args):
        value = em.expr(arg)
        lltype = value_type(arg.type, em.target)
        b = em.builder
        parity = _parity(b, b.load(em.warp_counter, typ=I64))
        b.store(value, _slot_ptr(em, _slot_name(i, lltype), lltype, em.flat_tid, parity))
    b = em.builder
    ticket = b.load(em.warp_counter, typ=I64)
    b.store(ticket, _slot_ptr(em, TICKET, I64, em.flat_tid, _parity(b, ticket)))


class Lanes:
    """This thread's view of its warp inside a result run."""

    def __init__(self, em, s):
        b = em.builder
        self.em, self.s = em, s
        size = em.target.warp.size
        self.mask_type = scalar(em.target.warp.mask)
        flat = em.flat_tid
        self.lane = b.trunc(b.and_(flat, i64(size - 1)), I32)
        self.base = b.sub(flat, b.zext(self.lane, I64))
        left = b.sub(em.nthreads, self.base)
        self.count = b.trunc(b.select(b.icmp_unsigned("<", left, i64(size)), left, i64(size)),
                             I32)
        self.ticket = b.sub(b.load(em.warp_counter, typ=I64), i64(1))
        self.parity = _parity(b, self.ticket)

    def arg_ptr(self, i, lane):
        arg = self.s.args[i]
        lltype = value_type(arg.type, self.em.target)
        index = self.em.builder.add(self.base, self.em.builder.zext(lane, I64))
        return _slot_ptr(self.em, _slot_name(i, lltype), lltype, index, self.parity), lltype

    def arg(self, i, lane=None):
        pointer, lltype = self.arg_ptr(i, self.lane if lane is None else lane)
        return self.em.builder.load(pointer, typ=lltype)

    def present(self, lane, mask=None):
        """i1: ``lane`` exists, reached this operation, and is in ``mask`` (if given).
        Reads only inside the warp: the lane index is clamped before any load."""
        b = self.em.builder
        exists = b.icmp_unsigned("<", lane, self.count)
        safe = b.select(exists, lane, self.lane)
        index = b.add(self.base, b.zext(safe, I64))
        ticket = b.load(_slot_ptr(self.em, TICKET, I64, index, self.parity), typ=I64)
        ok = b.and_(exists, b.icmp_unsigned("==", ticket, self.ticket))
        if mask is not None:
            bit = b.and_(b.lshr(mask, self.in_mask(safe)), self.mask_const(1))
            ok = b.and_(ok, b.icmp_unsigned("!=", bit, self.mask_const(0)))
        return ok

    def mask_const(self, value):
        return ll.Constant(self.mask_type, value)

    def in_mask(self, lane):
        """An i32 lane number as a shift count of the mask's type."""
        b = self.em.builder
        return lane if self.mask_type == I32 else b.zext(lane, self.mask_type)

    def bit(self, b, lane):
        """The mask with only ``lane``'s bit set."""
        return b.shl(self.mask_const(1), self.in_mask(lane))

    def each_present(self, mask, body):
        """Run ``body(lane)`` for each lane 0..count-1 that is present (an LLVM loop)."""
        em = self.em
        head, check, run, step, done = (em.new_block(n) for n in
                                        ("lanes", "lane_check", "lane_run", "lane_next", "lanes_done"))
        with counted_loop(em, self.count, "lane", (head, check, step, done), signed=False) as lane:
            em.builder.cbranch(self.present(lane, mask), run, step)
            em.builder.position_at_end(run)
            body(lane)


NO_MASK = ("activemask", "elect")       # the operations without a mask argument


def result(em, s):
    lanes = Lanes(em, s)
    kind, _, sub = s.op.partition(".")
    if em.checks and kind not in NO_MASK:
        checked.check_own_lane(em, lanes, lanes.arg(0), s.loc)
        checked.check_mask(em, lanes, lanes.arg(0), s.loc, kind == "syncwarp")
    if kind == "syncwarp":
        if em.checks:
            checked.syncwarp_done(em, lanes)
        return
    if kind == "exchange":      # its operands stay in the slots: the next call reads them
        return
    value = _RESULTS[kind](em, lanes, sub)
    em.store_var(s.name, value)


def _shfl(em, lanes, mode):
    b = em.builder
    mask, width = lanes.arg(0), lanes.arg(3)
    last = i32(em.target.warp.size - 1)
    bval = b.and_(lanes.arg(2), last)
    lane = lanes.lane
    seg = b.and_(b.sub(i32(em.target.warp.size), width), last)     # PTX's c[12:8]
    min_lane = b.and_(lane, seg)
    if mode == "up":
        source = b.sub(lane, bval)
        ok = b.icmp_signed(">=", source, min_lane)
    else:
        max_lane = b.or_(min_lane, b.and_(last, b.not_(seg)))
        source = {"down": lambda: b.add(lane, bval), "bfly": lambda: b.xor(lane, bval),
                  "idx": lambda: b.or_(min_lane, b.and_(bval, b.not_(seg)))}[mode]()
        ok = b.icmp_signed("<=", source, max_lane)
    source = b.select(ok, source, lane)
    present = lanes.present(source, mask)
    return lanes.arg(1, b.select(present, source, lane))   # own value when absent


def _accumulate(em, lanes, init, lltype, step, mask):
    acc = em.alloca(lltype, name="warp_acc")
    em.builder.store(init, acc)

    def body(lane):
        b = em.builder
        b.store(step(b, b.load(acc, typ=lltype), lane), acc)
    lanes.each_present(mask, body)
    return em.builder.load(acc, typ=lltype)


def _vote(em, lanes, kind):
    mask = lanes.arg(0)
    if kind == "ballot":
        return _accumulate(em, lanes, lanes.mask_const(0), lanes.mask_type,
                           lambda b, acc, lane: b.select(lanes.arg(1, lane),
                                                         b.or_(acc, lanes.bit(b, lane)), acc),
                           mask)
    if kind == "uni":           # the same predicate everywhere: all true, or none
        every, some = _vote_flag(em, lanes, "all", mask), _vote_flag(em, lanes, "any", mask)
        b = em.builder
        return b.zext(b.or_(every, b.not_(some)), I32)
    return em.builder.zext(_vote_flag(em, lanes, kind, mask), I32)


def _vote_flag(em, lanes, kind, mask):
    """i1: the predicate of every ("all") or some ("any") lane of mask taking part."""
    start = const(I1, 1 if kind == "all" else 0)
    combine = "and_" if kind == "all" else "or_"
    return _accumulate(em, lanes, start, I1,
                       lambda b, acc, lane: getattr(b, combine)(acc, lanes.arg(1, lane)), mask)


def _taking_part(em, lanes, mask):
    """The mask of the lanes that take part (of those in ``mask``, when given)."""
    return _accumulate(em, lanes, lanes.mask_const(0), lanes.mask_type,
                       lambda b, acc, lane: b.or_(acc, lanes.bit(b, lane)), mask)


def _activemask(em, lanes, sub):
    return _taking_part(em, lanes, None)


def _elect(em, lanes, sub):
    """elect.sync: true in the lowest lane taking part (the GPU elects one of them)."""
    here = _taking_part(em, lanes, None)
    b = em.builder
    lowest = b.and_(here, b.neg(here))
    return b.icmp_unsigned("==", lowest, lanes.bit(b, lanes.lane))


def _bits(b, value, t):
    """Equality as the GPU's match does it: on the bits."""
    if t.kind == "f":
        return b.bitcast(value, ll.IntType(t.bits))
    return value


def _match(em, lanes, kind):
    mask = lanes.arg(0)
    t = lanes.s.args[1].type
    b = em.builder
    own = _bits(b, lanes.arg(1), t)

    def same(b, lane):
        return b.icmp_unsigned("==", _bits(b, lanes.arg(1, lane), t), own)
    if kind == "any":
        return _accumulate(em, lanes, lanes.mask_const(0), lanes.mask_type,
                           lambda b, acc, lane: b.select(same(b, lane),
                                                         b.or_(acc, lanes.bit(b, lane)), acc),
                           mask)
    all_same = _accumulate(em, lanes, const(I1, 1), I1,
                           lambda b, acc, lane: b.and_(acc, same(b, lane)), mask)
    # the mask that matched names only the lanes taking part: as on the GPU, lanes of a
    # partial warp that do not exist (and lanes that exited) are 0 bits
    matched = _taking_part(em, lanes, mask)
    b = em.builder
    pair = ll.Constant(ll.LiteralStructType([lanes.mask_type, I32]), ll.Undefined)
    pair = b.insert_value(pair, b.select(all_same, matched, lanes.mask_const(0)), 0)
    return b.insert_value(pair, b.zext(all_same, I32), 1)


def _reduce(em, lanes, kind):
    mask = lanes.arg(0)
    signed = lanes.s.type.kind == "i"
    init = {"add": 0, "and": -1, "or": 0, "xor": 0,
            "min": 0x7FFFFFFF if signed else -1, "max": -0x80000000 if signed else 0}[kind]
    cmp = "icmp_signed" if signed else "icmp_unsigned"

    def step(b, acc, lane):
        v = lanes.arg(1, lane)
        if kind in ("min", "max"):
            better = getattr(b, cmp)("<" if kind == "min" else ">", v, acc)
            return b.select(better, v, acc)
        return {"add": b.add, "and": b.and_, "or": b.or_, "xor": b.xor}[kind](acc, v)
    return _accumulate(em, lanes, ll.Constant(I32, init & 0xFFFFFFFF), I32, step, mask)


_RESULTS = {"shfl": _shfl, "vote": _vote, "activemask": _activemask, "match": _match,
            "reduce": _reduce, "elect": _elect}
