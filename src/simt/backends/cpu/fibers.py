"""Warps as fibers: the native scheduler that runs a block's warps one at a time on the
OS thread that runs the block, each on a stack of its own, switching where a warp waits.

A kernel whose warps wait for each other (independent.py decides which) is compiled as
``warp(args, launch, block, warp, shared, slots, sched)``, the block's thread loops
narrowed to one warp's lanes, plus the usual entry, which calls ``simt_fiber_run``. For
each block that makes one fiber per warp (glibc's ``makecontext``) and resumes them in
turn (``swapcontext``). A warp gives the thread back only where it waits: an arrive/wait
barrier's phase not complete (mbarrier lowerings), a named barrier or syncthreads not
complete (``simt_fiber_bar``), a spin loop's trip (``simt_fiber_yield`` with SPIN). All
warps of a block share its OS thread, so shared memory and shared atomics need no more
than they do in thread loops.

A deadlock is found, not waited out. A wait that finds its barrier not complete yields
BLOCKED; resumed, it checks again and, still not complete, yields STILL, having done
nothing in between. When every live warp in turn has yielded STILL (no warp ran any other
code since the last of them checked), no barrier can complete any more: the scheduler
resumes the lowest live warp with ``give_up`` set, its wait records the fault (naming its
line) and the block fails. A spin loop's yield (SPIN) is never counted as stuck: it may
wait for another block, as on a GPU. (``try_wait`` therefore waits there until the phase
completes, as a GPU's may, rather than returning False: a loop around it runs the same.)

Each OS thread that runs such blocks has one pool (a pthread key; freed when the thread
exits): the scheduler's state, a context per warp and 32 stacks of ``STACK`` bytes, each
above a guard page, in one mapping that costs memory only where a warp's stack reaches.
Linux (glibc) on x86-64 and AArch64.
"""
import ctypes
import functools
import platform
import sys
import threading

import llvmlite.binding as llvm

from .. import hostjit as jit
from ...errors import NotSupportedError

WARPS = 32                 # a block of 1024 threads
STACK = 2 << 20            # a warp's stack: 2 MB (local arrays of a kernel without barriers
GUARD = 4096               # live on it); a guard page below each
CONTEXT = 8192             # bytes for a ucontext_t (968 on x86-64 glibc, 4560 on AArch64)
READY, BLOCKED, STILL, SPIN, DONE = 0, 1, 2, 3, 4
BARRIERS = 16              # named barriers; 0 is syncthreads'

_LIBC = ("getcontext", "makecontext", "swapcontext", "calloc", "free", "mmap", "munmap",
         "mprotect", "pthread_getspecific", "pthread_setspecific")

_IR = r"""
%Bar = type { i32, i32, [2 x i32], [2 x i32] }
; arrived (warps for a whole-block barrier, threads for a counted one), generation, and per
; generation's parity: the predicates that were true and the threads that arrived
%Sched = type { [CONTEXT x i8], ptr, ptr, ptr, ptr, ptr, i64, ptr, ptr, i32, i32, i32, i32, i64, i32, [BARRIERS x %Bar] }
; 0 main context, 1 stacks, 2 fibers, 3 fn, 4 args, 5 launch, 6 block, 7 shared, 8 slots,
; 9 nwarps, 10 live, 11 quiet, 12 give_up, 13 (unused), 14 current, 15 barriers
%Fiber = type { [CONTEXT x i8], ptr, i32, i32, i32, i32 }
; context, sched, warp, status, result

@simt_fiber_key = global i32 0

declare i32 @simt_fiber_getcontext(ptr)
declare void @simt_fiber_makecontext(ptr, ptr, i32, ...)
declare i32 @simt_fiber_swapcontext(ptr, ptr)
declare ptr @simt_fiber_calloc(i64, i64)
declare void @simt_fiber_free(ptr)
declare ptr @simt_fiber_mmap(ptr, i64, i32, i32, i32, i64)
declare i32 @simt_fiber_munmap(ptr, i64)
declare i32 @simt_fiber_mprotect(ptr, i64, i32)
declare ptr @simt_fiber_pthread_getspecific(i32)
declare i32 @simt_fiber_pthread_setspecific(i32, ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

define internal ptr @fiber(ptr %s, i32 %w) {
  %fp = getelementptr %Sched, ptr %s, i32 0, i32 2
  %fibers = load ptr, ptr %fp
  %f = getelementptr %Fiber, ptr %fibers, i32 %w
  ret ptr %f
}

; this OS thread's pool, made at its first use: the state, WARPS contexts, WARPS stacks
define internal ptr @pool() {
entry:
  %key = load i32, ptr @simt_fiber_key
  %have = call ptr @simt_fiber_pthread_getspecific(i32 %key)
  %none = icmp eq ptr %have, null
  br i1 %none, label %make, label %done
make:
  %end = getelementptr %Sched, ptr null, i32 1
  %size = ptrtoint ptr %end to i64
  %s = call ptr @simt_fiber_calloc(i64 1, i64 %size)
  %fend = getelementptr %Fiber, ptr null, i32 1
  %fsize = ptrtoint ptr %fend to i64
  %fibers = call ptr @simt_fiber_calloc(i64 WARPS, i64 %fsize)
  %fp = getelementptr %Sched, ptr %s, i32 0, i32 2
  store ptr %fibers, ptr %fp
  ; PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
  %stacks = call ptr @simt_fiber_mmap(ptr null, i64 MAPPED, i32 3, i32 16418, i32 -1, i64 0)
  %sp = getelementptr %Sched, ptr %s, i32 0, i32 1
  store ptr %stacks, ptr %sp
  br label %guard
guard:
  %w = phi i32 [ 0, %make ], [ %w1, %guard ]
  %off = mul i32 %w, STRIDE
  %low = getelementptr i8, ptr %stacks, i32 %off
  %p = call i32 @simt_fiber_mprotect(ptr %low, i64 GUARD, i32 0)
  %f = call ptr @fiber(ptr %s, i32 %w)
  %g = call i32 @simt_fiber_getcontext(ptr %f)
  %w1 = add i32 %w, 1
  %more = icmp slt i32 %w1, WARPS
  br i1 %more, label %guard, label %keep
keep:
  %r = call i32 @simt_fiber_pthread_setspecific(i32 %key, ptr %s)
  br label %done
done:
  %pool = phi ptr [ %have, %entry ], [ %s, %keep ]
  ret ptr %pool
}

; the pthread key's destructor: an OS thread that ran fibers exits
define void @simt_fiber_pool_free(ptr %s) {
  %sp = getelementptr %Sched, ptr %s, i32 0, i32 1
  %stacks = load ptr, ptr %sp
  %r = call i32 @simt_fiber_munmap(ptr %stacks, i64 MAPPED)
  %fp = getelementptr %Sched, ptr %s, i32 0, i32 2
  %fibers = load ptr, ptr %fp
  call void @simt_fiber_free(ptr %fibers)
  call void @simt_fiber_free(ptr %s)
  ret void
}

; a fiber's whole life: run its warp of the block, report, hand the thread back for good
define internal void @fiber_main(i32 %lo, i32 %hi) {
  %l = zext i32 %lo to i64
  %h0 = zext i32 %hi to i64
  %h = shl i64 %h0, 32
  %a = or i64 %h, %l
  %f = inttoptr i64 %a to ptr
  %schedp = getelementptr %Fiber, ptr %f, i32 0, i32 1
  %s = load ptr, ptr %schedp
  %warpp = getelementptr %Fiber, ptr %f, i32 0, i32 2
  %warp = load i32, ptr %warpp
  %w = zext i32 %warp to i64
  %fnp = getelementptr %Sched, ptr %s, i32 0, i32 3
  %fun = load ptr, ptr %fnp
  %argsp = getelementptr %Sched, ptr %s, i32 0, i32 4
  %args = load ptr, ptr %argsp
  %launchp = getelementptr %Sched, ptr %s, i32 0, i32 5
  %launch = load ptr, ptr %launchp
  %blockp = getelementptr %Sched, ptr %s, i32 0, i32 6
  %block = load i64, ptr %blockp
  %sharedp = getelementptr %Sched, ptr %s, i32 0, i32 7
  %shared = load ptr, ptr %sharedp
  %slotsp = getelementptr %Sched, ptr %s, i32 0, i32 8
  %slots = load ptr, ptr %slotsp
  %r = call i32 %fun(ptr %args, ptr %launch, i64 %block, i64 %w, ptr %shared, ptr %slots, ptr %s)
  %resultp = getelementptr %Fiber, ptr %f, i32 0, i32 5
  store i32 %r, ptr %resultp
  %statusp = getelementptr %Fiber, ptr %f, i32 0, i32 4
  store i32 DONE, ptr %statusp
  %x = call i32 @simt_fiber_swapcontext(ptr %f, ptr %s)
  unreachable
}

; kernel code: this warp waits (BLOCKED: a wait found its barrier not complete; STILL:
; found it so again right after being resumed; SPIN: a spin loop's trip); returns 1 when
; the block is deadlocked and this warp is to report it
define i32 @simt_fiber_yield(ptr %s, i32 %kind) {
  %curp = getelementptr %Sched, ptr %s, i32 0, i32 14
  %cur = load i32, ptr %curp
  %f = call ptr @fiber(ptr %s, i32 %cur)
  %statusp = getelementptr %Fiber, ptr %f, i32 0, i32 4
  store i32 %kind, ptr %statusp
  %x = call i32 @simt_fiber_swapcontext(ptr %f, ptr %s)
  %givep = getelementptr %Sched, ptr %s, i32 0, i32 12
  %give = load i32, ptr %givep
  ret i32 %give
}

; kernel code: ``lanes`` threads of this warp arrive at barrier ``id`` that waits for
; ``count`` threads (0: every live warp of the block), adding ``value`` true predicates;
; ``wait``: then wait for the barrier's generation to complete, and store the predicates
; and threads of that generation in ``out`` (if not null). Returns 1 to give up.
define i32 @simt_fiber_bar(ptr %s, i32 %id, i32 %count, i32 %lanes, i32 %value, i32 %wait, ptr %out) {
entry:
  %kind = alloca i32
  store i32 BLOCKED, ptr %kind
  %bar = getelementptr %Sched, ptr %s, i32 0, i32 15, i32 %id
  %arrivedp = getelementptr %Bar, ptr %bar, i32 0, i32 0
  %genp = getelementptr %Bar, ptr %bar, i32 0, i32 1
  %gen = load i32, ptr %genp
  %par = and i32 %gen, 1
  %whole = icmp eq i32 %count, 0
  %add = select i1 %whole, i32 1, i32 %lanes
  %a0 = load i32, ptr %arrivedp
  %a1 = add i32 %a0, %add
  store i32 %a1, ptr %arrivedp
  %truesp = getelementptr %Bar, ptr %bar, i32 0, i32 2, i32 %par
  %t0 = load i32, ptr %truesp
  %t1 = add i32 %t0, %value
  store i32 %t1, ptr %truesp
  %lanesp = getelementptr %Bar, ptr %bar, i32 0, i32 3, i32 %par
  %n0 = load i32, ptr %lanesp
  %n1 = add i32 %n0, %lanes
  store i32 %n1, ptr %lanesp
  br label %check
check:
  %now = load i32, ptr %genp
  %moved = icmp ne i32 %now, %gen
  br i1 %moved, label %passed, label %count_it
count_it:
  %livep = getelementptr %Sched, ptr %s, i32 0, i32 10
  %live = load i32, ptr %livep
  %expected = select i1 %whole, i32 %live, i32 %count
  %arrived = load i32, ptr %arrivedp
  %full = icmp sge i32 %arrived, %expected
  br i1 %full, label %complete, label %not_yet
complete:
  %next = add i32 %gen, 1
  store i32 %next, ptr %genp
  store i32 0, ptr %arrivedp
  %npar = and i32 %next, 1
  %ntruesp = getelementptr %Bar, ptr %bar, i32 0, i32 2, i32 %npar
  store i32 0, ptr %ntruesp
  %nlanesp = getelementptr %Bar, ptr %bar, i32 0, i32 3, i32 %npar
  store i32 0, ptr %nlanesp
  br label %passed
not_yet:
  %waits = icmp ne i32 %wait, 0
  br i1 %waits, label %yield, label %out_ok
yield:
  %k = load i32, ptr %kind
  %give = call i32 @simt_fiber_yield(ptr %s, i32 %k)
  store i32 STILL, ptr %kind
  %gave = icmp ne i32 %give, 0
  br i1 %gave, label %give_up, label %check
passed:
  %want = icmp ne ptr %out, null
  br i1 %want, label %report, label %out_ok
report:
  %t = load i32, ptr %truesp
  store i32 %t, ptr %out
  %n = load i32, ptr %lanesp
  %outn = getelementptr i32, ptr %out, i32 1
  store i32 %n, ptr %outn
  br label %out_ok
out_ok:
  ret i32 0
give_up:
  ret i32 1
}

; one block: a fiber per warp, resumed in turn until all are done (0) or one failed or the
; block deadlocked (1)
define internal i32 @run_block(ptr %s, i64 %block, i32 %nwarps) {
entry:
  %blockp = getelementptr %Sched, ptr %s, i32 0, i32 6
  store i64 %block, ptr %blockp
  %livep = getelementptr %Sched, ptr %s, i32 0, i32 10
  store i32 %nwarps, ptr %livep
  %quietp = getelementptr %Sched, ptr %s, i32 0, i32 11
  store i32 0, ptr %quietp
  %givep = getelementptr %Sched, ptr %s, i32 0, i32 12
  store i32 0, ptr %givep
  %bars = getelementptr %Sched, ptr %s, i32 0, i32 15
  %bend = getelementptr %Sched, ptr null, i32 0, i32 15, i32 BARRIERS
  %bstart = getelementptr %Sched, ptr null, i32 0, i32 15
  %be = ptrtoint ptr %bend to i64
  %bs = ptrtoint ptr %bstart to i64
  %bsize = sub i64 %be, %bs
  call void @llvm.memset.p0.i64(ptr %bars, i8 0, i64 %bsize, i1 false)
  %sp = getelementptr %Sched, ptr %s, i32 0, i32 1
  %stacks = load ptr, ptr %sp
  br label %make
make:
  %w = phi i32 [ 0, %entry ], [ %w1, %make ]
  %f = call ptr @fiber(ptr %s, i32 %w)
  %schedp = getelementptr %Fiber, ptr %f, i32 0, i32 1
  store ptr %s, ptr %schedp
  %warpp = getelementptr %Fiber, ptr %f, i32 0, i32 2
  store i32 %w, ptr %warpp
  %statusp = getelementptr %Fiber, ptr %f, i32 0, i32 4
  store i32 READY, ptr %statusp
  %linkp = getelementptr i8, ptr %f, i32 8          ; ucontext_t: uc_link, then uc_stack
  store ptr null, ptr %linkp
  %off = mul i32 %w, STRIDE
  %off1 = add i32 %off, GUARD
  %stack = getelementptr i8, ptr %stacks, i32 %off1
  %ssp = getelementptr i8, ptr %f, i32 16
  store ptr %stack, ptr %ssp
  %ssflags = getelementptr i8, ptr %f, i32 24
  store i32 0, ptr %ssflags
  %sssize = getelementptr i8, ptr %f, i32 32
  store i64 STACK, ptr %sssize
  %a = ptrtoint ptr %f to i64
  %lo = trunc i64 %a to i32
  %h = lshr i64 %a, 32
  %hi = trunc i64 %h to i32
  call void (ptr, ptr, i32, ...) @simt_fiber_makecontext(ptr %f, ptr @fiber_main, i32 2, i32 %lo, i32 %hi)
  %w1 = add i32 %w, 1
  %more = icmp slt i32 %w1, %nwarps
  br i1 %more, label %make, label %turn
turn:
  %t = phi i32 [ 0, %make ], [ %tnext, %next ]
  %tf = call ptr @fiber(ptr %s, i32 %t)
  %tstatusp = getelementptr %Fiber, ptr %tf, i32 0, i32 4
  %before = load i32, ptr %tstatusp
  %gone = icmp eq i32 %before, DONE
  br i1 %gone, label %next, label %resume
resume:
  %curp = getelementptr %Sched, ptr %s, i32 0, i32 14
  store i32 %t, ptr %curp
  %x = call i32 @simt_fiber_swapcontext(ptr %s, ptr %tf)
  %after = load i32, ptr %tstatusp
  switch i32 %after, label %spun [ i32 DONE, label %done
                                   i32 STILL, label %still ]
done:
  %resultp = getelementptr %Fiber, ptr %tf, i32 0, i32 5
  %result = load i32, ptr %resultp
  %failed = icmp ne i32 %result, 0
  br i1 %failed, label %fail, label %finished
finished:
  %live = load i32, ptr %livep
  %live1 = sub i32 %live, 1
  store i32 %live1, ptr %livep
  store i32 0, ptr %quietp
  %all = icmp eq i32 %live1, 0
  br i1 %all, label %ok, label %next
spun:
  store i32 0, ptr %quietp
  br label %next
still:
  %q0 = load i32, ptr %quietp
  %q = add i32 %q0, 1
  store i32 %q, ptr %quietp
  %live2 = load i32, ptr %livep
  %stuck = icmp sge i32 %q, %live2
  br i1 %stuck, label %deadlock, label %next
next:
  %t1 = add i32 %t, 1
  %wrap = icmp sge i32 %t1, %nwarps
  %tnext = select i1 %wrap, i32 0, i32 %t1
  br label %turn
deadlock:
  store i32 1, ptr %givep
  br label %find
find:
  %d = phi i32 [ 0, %deadlock ], [ %d1, %skip ]
  %df = call ptr @fiber(ptr %s, i32 %d)
  %dstatusp = getelementptr %Fiber, ptr %df, i32 0, i32 4
  %dstatus = load i32, ptr %dstatusp
  %dead = icmp eq i32 %dstatus, DONE
  br i1 %dead, label %skip, label %report
skip:
  %d1 = add i32 %d, 1
  br label %find
report:
  %curp2 = getelementptr %Sched, ptr %s, i32 0, i32 14
  store i32 %d, ptr %curp2
  %y = call i32 @simt_fiber_swapcontext(ptr %s, ptr %df)
  br label %fail
fail:
  ret i32 1
ok:
  ret i32 0
}

; the entry of a kernel compiled as warps: blocks [first, last)
define i32 @simt_fiber_run(ptr %fn, ptr %args, ptr %launch, i64 %first, i64 %last, ptr %shared, ptr %slots) {
entry:
  %s = call ptr @pool()
  %fnp = getelementptr %Sched, ptr %s, i32 0, i32 3
  store ptr %fn, ptr %fnp
  %argsp = getelementptr %Sched, ptr %s, i32 0, i32 4
  store ptr %args, ptr %argsp
  %launchp = getelementptr %Sched, ptr %s, i32 0, i32 5
  store ptr %launch, ptr %launchp
  %sharedp = getelementptr %Sched, ptr %s, i32 0, i32 7
  store ptr %shared, ptr %sharedp
  %slotsp = getelementptr %Sched, ptr %s, i32 0, i32 8
  store ptr %slots, ptr %slotsp
  %bxp = getelementptr i64, ptr %launch, i32 3
  %bx = load i64, ptr %bxp
  %byp = getelementptr i64, ptr %launch, i32 4
  %by = load i64, ptr %byp
  %bzp = getelementptr i64, ptr %launch, i32 5
  %bz = load i64, ptr %bzp
  %bxy = mul i64 %bx, %by
  %threads = mul i64 %bxy, %bz
  %t31 = add i64 %threads, 31
  %warps64 = udiv i64 %t31, 32
  %nwarps = trunc i64 %warps64 to i32
  %nwp = getelementptr %Sched, ptr %s, i32 0, i32 9
  store i32 %nwarps, ptr %nwp
  br label %loop
loop:
  %b = phi i64 [ %first, %entry ], [ %b1, %ran ]
  %more = icmp slt i64 %b, %last
  br i1 %more, label %body, label %ok
body:
  %r = call i32 @run_block(ptr %s, i64 %b, i32 %nwarps)
  %bad = icmp ne i32 %r, 0
  br i1 %bad, label %fail, label %ran
ran:
  %b1 = add i64 %b, 1
  br label %loop
fail:
  ret i32 1
ok:
  ret i32 0
}
"""

_loaded = []
_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def available():
    """Whether this process can run warps as fibers (glibc's ucontext, Linux's mmap)."""
    if not sys.platform.startswith("linux") or platform.machine() not in (
            "x86_64", "aarch64", "arm64"):
        return False
    libc = ctypes.CDLL(None)
    return all(hasattr(libc, name) for name in _LIBC)


def ensure():
    """Load the scheduler (once per process) so that kernels compiled as warps link to it;
    a NotSupportedError where fibers cannot run."""
    if _loaded:
        return
    if not available():
        raise NotSupportedError(
            "a kernel whose warps wait for each other (arrive/wait barriers or named barriers "
            "in code only some warps run, barrier_arrive, spin loops) needs Linux with glibc "
            "on x86-64 or AArch64 on the cpu device; run it on the sim device instead")
    with _lock:
        if _loaded:
            return
        libc = ctypes.CDLL(None)
        for name in _LIBC:
            llvm.add_symbol(f"simt_fiber_{name}", ctypes.cast(getattr(libc, name),
                                                              ctypes.c_void_p).value)
        loaded = jit.LoadedObject(jit.cached_object("fibers", _text()))
        free = loaded.address("simt_fiber_pool_free")
        key = ctypes.c_uint32.from_address(loaded.engine.get_global_value_address(
            "simt_fiber_key"))
        if libc.pthread_key_create(ctypes.byref(key), ctypes.c_void_p(free)):
            raise NotSupportedError("the cpu device could not make a pthread key for warp "
                                    "fibers (pthread_key_create failed)")
        for name in ("simt_fiber_run", "simt_fiber_yield", "simt_fiber_bar"):
            llvm.add_symbol(name, loaded.address(name))
        _loaded.append(loaded)


def _text():
    stride = STACK + GUARD
    values = {"CONTEXT": CONTEXT, "BARRIERS": BARRIERS, "WARPS": WARPS, "STRIDE": stride,
              "MAPPED": stride * WARPS, "GUARD": GUARD, "STACK": STACK, "READY": READY,
              "BLOCKED": BLOCKED, "STILL": STILL, "SPIN": SPIN, "DONE": DONE}
    text = _IR
    for name in sorted(values, key=len, reverse=True):
        text = text.replace(name, str(values[name]))
    return text
