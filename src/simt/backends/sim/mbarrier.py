"""The arrive/wait barrier (lang/barrier.py) on the sim device: a Python object per barrier
and block, counting as the CPU device's words do (backends/cpu/lower/mbarrier.py): the
arrivals a phase expects, the arrivals so far, the transaction bytes still awaited (signed:
a copy may land before its expect_tx) and the phase number, which is the token. A phase
completes when its arrivals reach the count and no bytes are pending; a barrier with a
completion function counts its arrivals (``count``) and leaves closing the phase to
``complete``, after the function ran. Generated code calls these as ``_k_mb``.

A wait whose phase has not completed yields ``('mbar', site, (barrier, kind, value,
is_try))``; schedule.py resumes the thread when the phase completes, so threads in
different branches (a producer warp, consumer warps) make progress on their own.

The barrier also orders memory for the race check (memory.py): each thread counts its
releases (``rel``: arrivals, and copies landing on a barrier); a phase gathers the
releases of what arrived in it (with what those threads had acquired), and a thread whose
wait sees the phase completed acquires them (``vc``: thread -> releases seen)."""

TOKEN, PARITY = 0, 1


class MBarrier:
    """One barrier of one block (see the module's doc)."""

    __slots__ = ("expected", "arrived", "pending", "phase", "clock", "done", "block")

    def __init__(self, block, expected):
        self.block, self.expected = block, expected
        self.arrived = self.pending = self.phase = 0
        self.clock = {}              # the releases gathered by the current phase
        self.done = {}               # phase -> its releases, once completed

    def release(self, th):
        """th's accesses so far happen before whoever completes a wait of this phase."""
        th.rel += 1
        clock = self.clock
        for other, n in (th.vc or {}).items():
            if clock.get(other, 0) < n:
                clock[other] = n
        clock[th] = th.rel
        self.block.tick += 1

    def close_if_due(self, landed=False):
        """Close the phase when its arrivals and bytes are all in (bytes landing close it
        only once something arrived, as on the CPU device)."""
        if self.arrived >= self.expected and self.pending == 0 and \
                (not landed or self.arrived > 0):
            self.close()

    def close(self):
        self.done[self.phase] = self.clock
        self.clock = {}
        self.phase += 1
        self.arrived = 0

    def passed(self, kind, value):
        """Whether the phase a wait names has completed (a token: the phase moved on; a
        parity: the current phase has the other parity), and the releases it acquires."""
        if kind == TOKEN:
            if self.phase == value:
                return None
            return self.done.get(value, {})
        if (self.phase & 1) == (value & 1):
            return None
        return self.done.get(self.phase - 1, {})


def get(th, array):
    return th.block.mbars[id(array)]


def init(th, array, expected):
    th.block.mbars[id(array)] = MBarrier(th.block, expected)


def arrive(th, array, drop):
    """Count an arrival (a drop: one fewer expected from now on); the phase token."""
    bar = get(th, array)
    token = bar.phase
    bar.release(th)
    if drop:
        bar.expected -= 1
    else:
        bar.arrived += 1
    bar.close_if_due()
    return token


def expect_tx(th, array, nbytes):
    bar = get(th, array)
    bar.pending += nbytes
    th.block.tick += 1


def arrive_expect_tx(th, array, nbytes):
    expect_tx(th, array, nbytes)
    return arrive(th, array, False)


def complete_tx(th, array, nbytes):
    """A copy issued by th landed nbytes: count them off the current phase."""
    bar = get(th, array)
    bar.release(th)
    bar.pending -= nbytes
    bar.close_if_due(landed=True)


def count(th, array, drop):
    """An arrival on a barrier with a completion function: whether it completes the phase
    (then th runs the function and calls ``complete``)."""
    bar = get(th, array)
    bar.release(th)
    if drop:
        bar.expected -= 1
    else:
        bar.arrived += 1
    last = bar.arrived == bar.expected
    if last:                        # the completion function sees every arrival's writes
        acquire(th, bar.clock)
    return last


def complete(th, array):
    bar = get(th, array)
    bar.release(th)                 # what the completion function wrote
    bar.close()


def passed(th, array, kind, value):
    """Whether a wait may go on now; if so th acquires the phase's releases."""
    seen = get(th, array).passed(kind, value)
    if seen is None:
        return False
    acquire(th, seen)
    return True


def acquire(th, seen):
    if not seen:
        return
    vc = th.vc
    if vc is None:
        vc = th.vc = {}
    for other, n in seen.items():
        if vc.get(other, 0) < n:
            vc[other] = n
