"""A team of worker threads parked in native code: a launch's blocks run as OpenMP's
static schedule does, with one wake-up and one join per launch and no Python per block.

The launching thread and the workers each own a contiguous range of the grid's blocks and
take it in order, in chunks that shrink as the range empties (guided: a CHUNKS-th of what is
left, at least a SMALLEST-th of the range); one that is done takes chunks of the others'
ranges still left (so blocks of uneven cost even out, down to a small chunk). The workers
are Python threads (simt's stack size; gone in a forked child) that call
``simt_team_serve`` once and stay in it: after a launch they spin a little, then sleep on
a futex until the next. The launcher spins, then sleeps, until the last of them is done.
Ctrl-C: the kernels' loops read the flag (interrupt.py), so a launch ends and the join
returns.

One launch at a time per team (``try_lock``): a launch that finds it busy runs another
way (device.py). Linux on x86-64 and AArch64 (the futex system call's number);
``available()`` says whether this process can have a team.
"""
import ctypes
import functools
import os
import platform
import sys
import threading

import llvmlite.binding as llvm
import numpy as np

from .. import hostjit as jit
from ..aligned import aligned_buffer
from ...ir.nodes import MAX_ALIGN
from .streams import with_stack

_FUTEX = {"x86_64": 202, "aarch64": 98, "arm64": 98}
_PAUSE = {"x86_64": ("declare void @llvm.x86.sse2.pause()", "call void @llvm.x86.sse2.pause()"),
          "aarch64": ("", 'call void asm sideeffect "yield", ""()'),
          "arm64": ("", 'call void asm sideeffect "yield", ""()')}
SPIN = 2000             # thousand cycles a waiting thread spins before it sleeps (~0.6 ms;
#   200 left 16 sleeping workers to wake at every launch on the 16-core GPU host: 300-400 us
#   a launch there, 12-18 us with 2000 (bench/cpu_team_probe.py, 2026-11-24))
SPIN_CROWDED = 10       # ... with more members than cores (OpenMP throttles its spin too)
YIELD_EVERY = 16        # spinning trips between sched_yield calls
CHUNKS = 16             # a chunk: this fraction of what is left of a range (guided) ...
SMALLEST = 64           # ... and at least this fraction of the whole range, and one block
RANGE_WORDS = 8         # a member's range: next, end, smallest chunk; one 64-byte line each


class TeamState(ctypes.Structure):
    """%Team in the IR below, field for field."""
    _fields_ = [("generation", ctypes.c_int32), ("sleepers", ctypes.c_int32),
                ("_line1", ctypes.c_int32 * 14),       # the futex words a line apart: the
                ("pending", ctypes.c_int32), ("joining", ctypes.c_int32),   # workers poll
                ("_line2", ctypes.c_int32 * 14),       # one while they write the other
                ("stop", ctypes.c_int32), ("failed", ctypes.c_int32),
                ("members", ctypes.c_int32), ("spin", ctypes.c_int32),
                ("entry", ctypes.c_void_p), ("args", ctypes.c_void_p),
                ("launch", ctypes.c_void_p), ("nblocks", ctypes.c_int64),
                ("shared", ctypes.c_void_p), ("slots", ctypes.c_void_p),
                ("ranges", ctypes.c_void_p)]


_IR = r"""
%Team = type { i32, i32, [14 x i32], i32, i32, [14 x i32], i32, i32, i32, i32, ptr, ptr, ptr, i64, ptr, ptr, ptr }
%Range = type { i64, i64, i64, [5 x i64] }

declare i64 @simt_team_syscall(i64, ...)
declare i32 @simt_team_yield()
declare i64 @llvm.readcyclecounter()
PAUSE_DECL

define internal void @pause() alwaysinline {
  PAUSE
  ret void
}

define internal void @futex(ptr %word, i64 %op, i32 %value) {
  %v = zext i32 %value to i64
  %r = call i64 (i64, ...) @simt_team_syscall(i64 FUTEX, ptr %word, i64 %op, i64 %v, ptr null)
  ret void
}

; spin until *word != value (for at most team.spin thousand cycles, giving the core away
; every YIELD_EVERY trips: the thread awaited may be waiting for it), then sleep on the
; futex until it is (sleepers counted)
define internal void @await_change(ptr %team, ptr %word, i32 %value, ptr %sleepers) {
entry:
  %spinp = getelementptr %Team, ptr %team, i32 0, i32 9
  %spin = load i32, ptr %spinp
  %spin64 = zext i32 %spin to i64
  %budget = mul i64 %spin64, 1000
  %t0 = call i64 @llvm.readcyclecounter()
  br label %spinning
spinning:
  %i = phi i32 [ 0, %entry ], [ %i1, %yield ], [ %i1, %relax ]
  %now = load atomic i32, ptr %word acquire, align 4
  %same = icmp eq i32 %now, %value
  br i1 %same, label %count, label %done
count:
  %t = call i64 @llvm.readcyclecounter()
  %spent = sub i64 %t, %t0
  %more = icmp ult i64 %spent, %budget
  br i1 %more, label %again, label %sleep
again:
  %i1 = add i32 %i, 1
  %turn = and i32 %i1, YIELD_MASK
  %give = icmp eq i32 %turn, 0
  br i1 %give, label %yield, label %relax
yield:
  %y = call i32 @simt_team_yield()
  br label %spinning
relax:
  call void @pause()
  br label %spinning
sleep:
  %s0 = atomicrmw add ptr %sleepers, i32 1 seq_cst
  %now2 = load atomic i32, ptr %word seq_cst, align 4
  %same2 = icmp eq i32 %now2, %value
  br i1 %same2, label %wait, label %woke
wait:
  call void @futex(ptr %word, i64 128, i32 %value)
  br label %woke
woke:
  %s1 = atomicrmw sub ptr %sleepers, i32 1 seq_cst
  %now3 = load atomic i32, ptr %word acquire, align 4
  %same3 = icmp eq i32 %now3, %value
  br i1 %same3, label %sleep, label %done
done:
  ret void
}

; take chunks of one range until it is empty or a block failed; returns 1 on failure
define internal i32 @take(ptr %team, ptr %range, ptr %shared, ptr %slots) {
entry:
  %entryp = getelementptr %Team, ptr %team, i32 0, i32 10
  %fn = load ptr, ptr %entryp
  %argsp = getelementptr %Team, ptr %team, i32 0, i32 11
  %args = load ptr, ptr %argsp
  %launchp = getelementptr %Team, ptr %team, i32 0, i32 12
  %launch = load ptr, ptr %launchp
  %failedp = getelementptr %Team, ptr %team, i32 0, i32 7
  %nextp = getelementptr %Range, ptr %range, i32 0, i32 0
  %endp = getelementptr %Range, ptr %range, i32 0, i32 1
  %end = load i64, ptr %endp
  %chunkp = getelementptr %Range, ptr %range, i32 0, i32 2
  %chunk = load i64, ptr %chunkp
  br label %loop
loop:
  %seen = load atomic i64, ptr %nextp monotonic, align 8
  %gone = icmp sge i64 %seen, %end
  br i1 %gone, label %out, label %claim
claim:                  ; read first: members that find a range empty leave its line shared
  %left = sub i64 %end, %seen
  %share = udiv i64 %left, CHUNKS
  %tiny = icmp slt i64 %share, %chunk
  %size = select i1 %tiny, i64 %chunk, i64 %share
  %want0 = add i64 %seen, %size
  %over = icmp sgt i64 %want0, %end
  %want = select i1 %over, i64 %end, i64 %want0
  %pair = cmpxchg ptr %nextp, i64 %seen, i64 %want monotonic monotonic
  %won = extractvalue { i64, i1 } %pair, 1
  br i1 %won, label %check, label %loop
check:
  %failed = load atomic i32, ptr %failedp monotonic, align 4
  %stop = icmp ne i32 %failed, 0
  br i1 %stop, label %fail, label %run
run:
  %r = call i32 %fn(ptr %args, ptr %launch, i64 %seen, i64 %want, ptr %shared, ptr %slots)
  %bad = icmp ne i32 %r, 0
  br i1 %bad, label %mark, label %loop
mark:
  store atomic i32 1, ptr %failedp monotonic, align 4
  br label %fail
fail:
  ret i32 1
out:
  ret i32 0
}

; member me's share: its own range, then what is left of the others'
define internal void @work(ptr %team, i32 %me) {
entry:
  %membersp = getelementptr %Team, ptr %team, i32 0, i32 8
  %members = load i32, ptr %membersp
  %rangesp = getelementptr %Team, ptr %team, i32 0, i32 16
  %ranges = load ptr, ptr %rangesp
  %sharedp = getelementptr %Team, ptr %team, i32 0, i32 14
  %sharedt = load ptr, ptr %sharedp
  %slotsp = getelementptr %Team, ptr %team, i32 0, i32 15
  %slotst = load ptr, ptr %slotsp
  %sp = getelementptr ptr, ptr %sharedt, i32 %me
  %shared = load ptr, ptr %sp
  %lp = getelementptr ptr, ptr %slotst, i32 %me
  %slots = load ptr, ptr %lp
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %next ]
  %j0 = add i32 %me, %k
  %wrap = icmp sge i32 %j0, %members
  %j1 = sub i32 %j0, %members
  %j = select i1 %wrap, i32 %j1, i32 %j0
  %range = getelementptr %Range, ptr %ranges, i32 %j
  %r = call i32 @take(ptr %team, ptr %range, ptr %shared, ptr %slots)
  %bad = icmp ne i32 %r, 0
  br i1 %bad, label %out, label %next
next:
  %k1 = add i32 %k, 1
  %more = icmp slt i32 %k1, %members
  br i1 %more, label %loop, label %out
out:
  ret void
}

; a worker thread's whole life: wait for a launch, do its share, report; until stop
define void @simt_team_serve(ptr %team, i32 %me, i32 %seen0) {
entry:
  %genp = getelementptr %Team, ptr %team, i32 0, i32 0
  %sleepersp = getelementptr %Team, ptr %team, i32 0, i32 1
  %pendingp = getelementptr %Team, ptr %team, i32 0, i32 3
  %joiningp = getelementptr %Team, ptr %team, i32 0, i32 4
  %stopp = getelementptr %Team, ptr %team, i32 0, i32 6
  br label %wait
wait:
  %seen = phi i32 [ %seen0, %entry ], [ %gen, %report ], [ %gen, %joined ]
  call void @await_change(ptr %team, ptr %genp, i32 %seen, ptr %sleepersp)
  %gen = load atomic i32, ptr %genp acquire, align 4
  %stop = load atomic i32, ptr %stopp acquire, align 4
  %stopping = icmp ne i32 %stop, 0
  br i1 %stopping, label %out, label %go
go:
  call void @work(ptr %team, i32 %me)
  %left = atomicrmw sub ptr %pendingp, i32 1 seq_cst
  %last = icmp eq i32 %left, 1
  br i1 %last, label %tell, label %joined
tell:
  %joining = load atomic i32, ptr %joiningp seq_cst, align 4
  %asleep = icmp ne i32 %joining, 0
  br i1 %asleep, label %report, label %joined
report:
  call void @futex(ptr %pendingp, i64 129, i32 1)
  br label %wait
joined:
  br label %wait
out:
  ret void
}

; wake the workers for the launch set in the team; returns without waiting
define void @simt_team_wake(ptr %team) {
  %genp = getelementptr %Team, ptr %team, i32 0, i32 0
  %sleepersp = getelementptr %Team, ptr %team, i32 0, i32 1
  %old = atomicrmw add ptr %genp, i32 1 seq_cst
  %sleepers = load atomic i32, ptr %sleepersp seq_cst, align 4
  %any = icmp ne i32 %sleepers, 0
  br i1 %any, label %wake, label %out
wake:
  call void @futex(ptr %genp, i64 129, i32 2147483647)
  br label %out
out:
  ret void
}

; a launch: split the blocks, wake the workers, do member 0's share, join;
; returns 1 if a chunk failed
define i32 @simt_team_launch(ptr %team, ptr %entryfn, ptr %args, ptr %launch, i64 %n) {
entry:
  %entryp = getelementptr %Team, ptr %team, i32 0, i32 10
  store ptr %entryfn, ptr %entryp
  %argsp = getelementptr %Team, ptr %team, i32 0, i32 11
  store ptr %args, ptr %argsp
  %launchp = getelementptr %Team, ptr %team, i32 0, i32 12
  store ptr %launch, ptr %launchp
  %np = getelementptr %Team, ptr %team, i32 0, i32 13
  store i64 %n, ptr %np
  %failedp = getelementptr %Team, ptr %team, i32 0, i32 7
  store i32 0, ptr %failedp
  %membersp = getelementptr %Team, ptr %team, i32 0, i32 8
  %members = load i32, ptr %membersp
  %m = sext i32 %members to i64
  %rangesp = getelementptr %Team, ptr %team, i32 0, i32 16
  %ranges = load ptr, ptr %rangesp
  br label %split
split:
  %i = phi i64 [ 0, %entry ], [ %i1, %split ]
  %i1 = add i64 %i, 1
  %lo0 = mul i64 %i, %n
  %lo = udiv i64 %lo0, %m
  %hi0 = mul i64 %i1, %n
  %hi = udiv i64 %hi0, %m
  %len = sub i64 %hi, %lo
  %c0 = udiv i64 %len, SMALLEST
  %small = icmp eq i64 %c0, 0
  %c = select i1 %small, i64 1, i64 %c0
  %range = getelementptr %Range, ptr %ranges, i64 %i
  %nextp = getelementptr %Range, ptr %range, i32 0, i32 0
  store i64 %lo, ptr %nextp
  %endp = getelementptr %Range, ptr %range, i32 0, i32 1
  store i64 %hi, ptr %endp
  %chunkp = getelementptr %Range, ptr %range, i32 0, i32 2
  store i64 %c, ptr %chunkp
  %more = icmp slt i64 %i1, %m
  br i1 %more, label %split, label %start
start:
  %pendingp = getelementptr %Team, ptr %team, i32 0, i32 3
  %workers = sub i32 %members, 1
  store atomic i32 %workers, ptr %pendingp seq_cst, align 4
  call void @simt_team_wake(ptr %team)
  call void @work(ptr %team, i32 0)
  %joiningp = getelementptr %Team, ptr %team, i32 0, i32 4
  br label %join
join:
  %left = load atomic i32, ptr %pendingp seq_cst, align 4
  %done = icmp eq i32 %left, 0
  br i1 %done, label %out, label %wait
wait:
  call void @await_change(ptr %team, ptr %pendingp, i32 %left, ptr %joiningp)
  br label %join
out:
  %failed = load i32, ptr %failedp
  ret i32 %failed
}
"""

SERVE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32)
LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_void_p, ctypes.c_int64)
WAKE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_code = []               # the loaded object, once per process


@functools.lru_cache(maxsize=1)
def available():
    """Whether this process can have a native team (Linux, a known futex number)."""
    return sys.platform.startswith("linux") and platform.machine() in _FUTEX


def _functions():
    if not _code:
        machine = platform.machine()
        libc = ctypes.CDLL(None)
        llvm.add_symbol("simt_team_syscall", ctypes.cast(libc.syscall, ctypes.c_void_p).value)
        llvm.add_symbol("simt_team_yield", ctypes.cast(libc.sched_yield, ctypes.c_void_p).value)
        declare, pause = _PAUSE[machine]
        text = (_IR.replace("PAUSE_DECL", declare).replace("PAUSE", pause)
                .replace("FUTEX", str(_FUTEX[machine])).replace("CHUNKS", str(CHUNKS))
                .replace("SMALLEST", str(SMALLEST))
                .replace("YIELD_MASK", str(YIELD_EVERY - 1)))
        loaded = jit.LoadedObject(jit.cached_object("team", text))
        _code.append((loaded, SERVE(loaded.address("simt_team_serve")),
                      LAUNCH(loaded.address("simt_team_launch")),
                      WAKE(loaded.address("simt_team_wake"))))
    return _code[0]


class Team:
    """``members - 1`` parked worker threads and the launching thread's place among them;
    each member has its own shared-memory and thread-slot buffers."""

    def __init__(self, members):
        _, self._serve, self._launch, self._wake = _functions()
        self.members = members
        self.lock = threading.Lock()
        spin = SPIN if members <= (os.cpu_count() or 1) else SPIN_CROWDED
        self.state = TeamState(members=members, spin=spin)
        self.ranges = np.zeros((members, RANGE_WORDS), np.int64)
        self.shared_table = (ctypes.c_void_p * members)()
        self.slots_table = (ctypes.c_void_p * members)()
        self.state.ranges = self.ranges.ctypes.data
        self.state.shared = ctypes.addressof(self.shared_table)
        self.state.slots = ctypes.addressof(self.slots_table)
        self.address = ctypes.addressof(self.state)
        self.buffers = {"shared": [], "slots": []}
        self.sizes = {"shared": 0, "slots": 0}
        self.ensure(64, 64)
        self.threads = [threading.Thread(target=self._serve, args=(self.address, i, 0),
                                         name=f"simt-cpu-{i}", daemon=True)
                        for i in range(1, members)]
        with_stack(lambda: [t.start() for t in self.threads])

    def ensure(self, shared_bytes, slot_bytes):
        """Give each member buffers of at least these sizes (called holding the lock)."""
        if shared_bytes <= self.sizes["shared"] and slot_bytes <= self.sizes["slots"]:
            return
        for name, table, nbytes in (("shared", self.shared_table, shared_bytes),
                                    ("slots", self.slots_table, slot_bytes)):
            if nbytes > self.sizes[name]:
                size = max(nbytes, 2 * self.sizes[name])
                # at arrays' largest alignment=
                bufs = self.buffers[name] = [aligned_buffer(size, MAX_ALIGN)
                                             for _ in range(self.members)]
                for i, buf in enumerate(bufs):
                    table[i] = buf.ctypes.data
                self.sizes[name] = size

    def launch(self, entry, args, launch, nblocks):
        """Run blocks [0, nblocks) on the team (the caller holds the lock and called
        ``ensure``); returns whether a block failed."""
        return self._launch(self.address, entry, args, launch, nblocks)

    def retire(self):
        """Let the workers return once the launch on the team (if any) is done, and wait
        until they have: they read this team's state and ranges, which go with it (a team
        dropped while its workers still woke read freed memory: a segfault on 16 cores).
        The lock stays taken, so later launches go elsewhere."""
        self.lock.acquire()
        self.state.stop = 1
        self._wake(self.address)
        for thread in self.threads:
            thread.join()
