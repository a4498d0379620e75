"""What atomics and fences order on the sim device: the memory model of the race check
(memory.py), the same as checked mode's on the CPU device (docs/finding-bugs.md).

A thread's ``vc`` maps what it has acquired to a count: a thread of its own block (the
releases of an arrive/wait barrier: mbarrier.py), ``(thread, block)`` (that thread's
releases ``rel`` while it ran in that block) and ``("ep", block)`` (that block's
accesses before its barrier number ``ep``). An atomic write that releases (its order
says so, or its thread called a fence before it) leaves on the element the clock of
what it publishes, and a read-modify-write after a release carries it on (a release
sequence). An atomic that acquires (an acquiring order, any read-modify-write: the
guide's B.5 last block acquires through a relaxed atomicInc; a relaxed load once a fence
follows it) adds that clock to its thread's. A block barrier shares what its threads
acquired. Scopes are not modelled: a block-scope release counts for every block.
"""
RELEASING = ("release", "acq_rel", "seq_cst")
ACQUIRING = ("acquire", "acq_rel", "seq_cst")


def merge(into, clock):
    for key, n in clock.items():
        if into.get(key, 0) < n:
            into[key] = n
    return into


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


def fence(th):
    """simt.threadfence (any scope): th's later relaxed atomic writes release what it did
    so far; what its relaxed atomic loads read, it acquires now."""
    th.fenced = snapshot(th)
    if th.pend is not None:
        acquire(th, th.pend)
        th.pend = None


def atomic(th, clocks, k, kind, order):
    """The model's part of an atomic ``kind`` ("load", "store", or a read-modify-write)
    of element k, whose release clocks (element -> clock) are ``clocks``."""
    clock = clocks.get(k)
    if clock is not None:
        if kind == "load" and order not in ACQUIRING:
            th.pend = merge(th.pend if th.pend is not None else {}, clock)
        else:
            acquire(th, clock)
    if kind == "load":
        return
    new = snapshot(th) if order in RELEASING else th.fenced
    if kind != "store" and clock is not None:
        new = merge(dict(clock), new) if new is not None else clock
    if new is None:
        clocks.pop(k, None)
    else:
        clocks[k] = new


def share(threads):
    """A block barrier: what any of its threads acquired, every one has."""
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
