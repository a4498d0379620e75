"""Checked mode's layout on the CPU device: the checker's state words (after the
launch's fault record), the shadow record of an element, the flags and access kinds,
and the helpers that reach them from generated code: the state, its words, a report
of the running thread (checked.py, checker.py and fastpath.py write the code that
uses them; shadow.py fills the state)."""
from llvmlite import ir as ll

import simt.fault as fault
from ...compiler.lltypes import I8, I32, I64, i32, i64, ptr

# the checker's state: int64 words after the fault record (shadow.py fills them)
GEN, BASE, BLOCK_START, BLOCK_LAST, ME, GX, GY, BX, BY = range(9)
SHARED_SHADOW, SHARED_BASE, SHARED_SIZE, TABLE, TABLE_SIZE, PENDING, ACQUIRED = range(9, 16)
READ_ONLY = 16                      # bit p: parameter p needs no checks in this launch
WARP_LAST = 17
SITE_CACHE = WARP_LAST + 32         # per access site (hashed): the table entry it last hit
SITE_SLOTS = 64
# the memory model (what atomics and fences order): the acquisitions of the block's threads
# up to its last barrier and in the current run of its threads, and the running thread's
# fence stamp, relaxed loads' acquisitions (of its own block's releases) a fence would
# confirm, its slot of these, its stamp of a fence wider than the block, and relaxed loads'
# acquisitions of other blocks' releases (that only such a fence confirms)
BLOCK_ACQUIRED, TURN_ACQUIRED, FENCED, PENDING_ACQ, ORDER_PTR, FENCED_WIDE, PENDING_FAR = \
    range(SITE_CACHE + SITE_SLOTS, SITE_CACHE + SITE_SLOTS + 7)
WARP_ACQUIRED = PENDING_FAR + 1     # per warp of the block: what its lanes acquired by its
                                    # last syncwarp (syncwarp_start gathers it)
OWNED = WARP_ACQUIRED + 32     # bit p: parameter p's writes need no record (disjoint.py)
ORDER_SCRATCH = OWNED + 1      # ORDER_PTR's slot where no turn set it (checked.orders)
ORDER_SLOT = "$chk.order"           # per thread: ACQUIRED, FENCED, PENDING_ACQ, FENCED_WIDE,
ORDER_WORDS = 5                     # PENDING_FAR (slot_index of raise_to: 0 .. 4)
PRIVATE = ORDER_SCRATCH + ORDER_WORDS   # bit g: group g of shared accesses is private
STATE_WORDS = PRIVATE + 1               # in this launch (checked.private_groups)
# a shadow record: int32 words
W_WHO, W_GEN, W_SITE, FLAGS, R1_WHO, R1_GEN, R1_SITE, R2_WHO, R2_GEN, R2_SITE = range(10)
RECORD_WORDS = 10
ATOMIC_FLAG, INIT_FLAG, FREED_FLAG = 1, 2, 4     # FREED: device heap memory simt.free released
RELEASE_FLAG = 8            # the last atomic write released what came before it (its W_GEN)
RELEASE_WIDE = 16           # ... to the other blocks too (scope and fence wider than 'block')
VOLATILE_FLAG = 32          # the last write is a volatile store (a relaxed one of system scope)
LINE_BITS = 20              # a site is file id << LINE_BITS | line
KINDS = {"read": fault.READ, "write": fault.WRITE, "atomic": fault.ATOMIC,
         "atomic_store": fault.ATOMIC_STORE, "atomic_load": fault.ATOMIC_LOAD,
         "volatile_load": fault.VOLATILE_LOAD, "volatile_store": fault.VOLATILE_STORE}
# an atomic's memory order as the checker's ``order`` bits; NARROW: its scope is 'block'
RELEASES, ACQUIRES, NARROW = 1, 2, 4
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


def module_flag(em, name):
    """An i8 constant of the module, 0 until code that needs it sets its initializer to
    1 (before the module is optimized, which folds the branches on it)."""
    flag = em.module.globals.get(name)
    if flag is None:
        flag = ll.GlobalVariable(em.module, I8, name)
        flag.linkage = "internal"
        flag.global_constant = True
        flag.initializer = ll.Constant(I8, 0)
    return flag


ME_STORED = "simt.chk.me"   # module_flag: every turn stores ME (code read it from the state)


def running(em):
    """i32: the running thread (``who``): its turn's value; where there is none, the state
    word ME, which every turn then stores (ME_STORED)."""
    turn = getattr(em, "checked_turn", None)
    if turn and ME in turn:
        return turn[ME]
    module_flag(em, ME_STORED).initializer = ll.Constant(I8, 1)
    b = em.builder
    return b.trunc(b.load(word(b, state(em), ME), typ=I64), I32)


def publish_me(em):
    """Before a call of code that reads the state word ME (simt.chk): store the turn's
    ``who`` there (stores in the turn itself would keep LLVM from vectorizing it)."""
    turn = getattr(em, "checked_turn", None)
    if turn and ME in turn:
        b = em.builder
        b.store(b.zext(turn[ME], I64), word(b, state(em), ME))
    else:
        module_flag(em, ME_STORED).initializer = ll.Constant(I8, 1)


def report_mine(em, code, loc, access=0):
    """Report ``code`` at ``loc`` for the calling thread; returns the state pointer. The
    caller records the details and ends the thread."""
    b = em.builder
    st = state(em)
    me = running(em)
    b.call(reporter(em.module), [st, i32(code), me, i32(site(em, loc)), i32(0), i32(0),
                                  i32(access)])
    return st


def record_element(em, indices, label):
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


def private_bit(em, site):
    """i1: the access ``site`` is private in this launch (None: it never is)."""
    group = getattr(em, "private", {}).get(id(site))
    if group is None:
        return None
    b = em.builder
    return b.icmp_unsigned("!=", b.and_(launch_word(em, PRIVATE), i64(1 << group)), i64(0))


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


def reporter(module):
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
