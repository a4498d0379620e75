"""What atomics, fences and volatile accesses order on the sim device: the memory model of
the race check (memory.py), the same as checked mode's on the CPU device
(docs/finding-bugs.md).

A thread's ``vc`` maps what it has acquired to a count: a thread of its own block (the
releases of an arrive/wait barrier: mbarrier.py), ``(thread, block)`` (that thread's
releases ``rel`` while it ran in that block) and ``("ep", block)`` (that block's
accesses before its barrier number ``ep``). An atomic write that releases (its order
says so, or its thread called a fence before it) leaves on the element a ``Release``: the
clock of what it publishes to its own block, and to the other blocks (a release of
scope 'block', or one whose only fence was threadfence_block, publishes nothing to
them); a read-modify-write after a release carries it on (a release sequence). An
atomic that acquires (an acquiring order, any read-modify-write: the guide's B.5 last
block acquires through a relaxed atomicInc; a relaxed load once a fence follows it)
adds that clock to its thread's, across blocks only when its own scope (its fence's,
for a relaxed load) reaches them. A volatile access is a relaxed one of scope 'system'
(PTX's ld.volatile/st.volatile). A block barrier shares what its threads acquired, a
syncwarp what its lanes did.
"""
RELEASING = ("release", "acq_rel", "seq_cst")
ACQUIRING = ("acquire", "acq_rel", "seq_cst")


def merge(into, clock):
    for key, n in clock.items():
        if into.get(key, 0) < n:
            into[key] = n
    return into


class Release:
    """What an atomic write released: ``near``, the clock its own block (``block``)
    acquires; ``far``, the clock the other blocks do (None: nothing)."""

    __slots__ = ("near", "far", "block")

    def __init__(self, near, far, block):
        self.near, self.far, self.block = near, far, block

    def seen_by(self, th, wide):
        """The clock th acquires from it (an access of scope ``wide`` or not), or None."""
        return self.near if th.block is self.block else self.far if wide else None

    def carried(self, near, far, block):
        """A read-modify-write of ``block`` after this release: its own release (``near``,
        ``far``), this one carried on (what reached only this one's block stays there)."""
        mine = self.near if block is self.block else self.far
        return Release(_joined(near, mine), _joined(far, self.far), block)


def _joined(a, b):
    if a is None or b is None:
        return a if b is None else b
    return merge(dict(a), b)


def snapshot(th):
    """What th publishes now: its accesses so far, its block's before its last barrier,
    and what it acquired."""
    th.rel += 1
    block = th.block
    clock = {("ep", block): block.ep, (th, block): th.rel}
    for key, n in (th.vc or {}).items():
        if type(key) is not tuple:          # a thread of th's block
            key = (key, block)
        if clock.get(key, 0) < n:
            clock[key] = n
    return clock


def acquire(th, clock):
    if th.vc is None:
        th.vc = {}
    merge(th.vc, clock)


def fence(th, wide=True):
    """simt.threadfence (``wide``; threadfence_block: not): th's later relaxed atomic
    writes release what it did so far (to the other blocks too only after a wide fence);
    what its relaxed atomic loads read, it acquires now (another block's release only at
    a wide fence)."""
    th.fenced = snapshot(th)
    if wide:
        th.fenced_wide = th.fenced
    for pend in (th.pend, th.pend_far if wide else None):
        if pend is not None:
            acquire(th, pend)
    th.pend = None
    if wide:
        th.pend_far = None


def atomic(th, clocks, k, kind, site):
    """The model's part of an atomic ``kind`` ("load", "store", or a read-modify-write)
    of element k, whose releases (element -> Release) are ``clocks``; ``site`` gives its
    order and scope."""
    order, wide = site.order, site.scope != "block"
    release = clocks.get(k)
    clock = release.seen_by(th, wide) if release is not None else None
    if clock is not None:
        if kind == "load" and order not in ACQUIRING:
            if th.block is release.block:
                th.pend = merge(th.pend if th.pend is not None else {}, clock)
            else:
                th.pend_far = merge(th.pend_far if th.pend_far is not None else {}, clock)
        else:
            acquire(th, clock)
    if kind == "load":
        return
    if order in RELEASING:
        near = snapshot(th)
        far = near if wide else None
    else:
        near, far = th.fenced, th.fenced_wide if wide else None
    if kind != "store" and release is not None:
        new = release.carried(near, far, th.block)
    else:
        new = Release(near, far, th.block) if near is not None else None
    if new is None:
        clocks.pop(k, None)
    else:
        clocks[k] = new


def share(threads):
    """A block barrier (or a syncwarp, over its lanes): what any of its threads
    acquired, every one has."""
    clocks = [th.vc for th in threads if th.vc]
    if not clocks:
        return
    merged = {}
    for clock in clocks:
        merge(merged, clock)
    for th in threads:
        th.vc = dict(merged)


def acquired(rec, th):
    """Whether th acquired the access ``rec`` (memory.py's record) of another block, or
    of its own through an atomic (its ``vc`` knows the release that followed it)."""
    vc = th.vc
    if vc is None:
        return False
    other, block = rec[0], rec[1]
    return vc.get((other, block), 0) > rec[5] or vc.get(("ep", block), 0) > rec[2]
