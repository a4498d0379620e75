"""Stress simt: host threads and processes launching, copying and synchronizing at once.

Usage: python tools/stress.py [--device cpu|cuda:0] [--seconds N] [--threads T] [--processes P]

Each process runs T host threads; each thread loops over a random mix of operations until
the time is up: kernels on the default stream and on the thread's own streams, async copies
to pinned memory, events (record, wait, synchronize, query, elapsed_time), a kernel with
barriers and atomics, host functions, NumPy arguments, streams and arrays dropped while
their work is queued, device arrays made and dropped, and (CPU device only: on a GPU the
error ends the context) out-of-bounds kernels whose error must reach their own thread only.
Every result is checked against NumPy. The run starts with every operation once in all T
threads at once, so that the kernels' first launches (compile, disk-cache load) race.

Besides this process, P processes are started with multiprocessing's spawn (on the CPU
device they start at once, racing this one's first launches), and one more with fork (when
P > 0): on the CPU device the fork comes after this process has used the device (its pool
and stream threads exist); on a GPU before, as CUDA cannot be used in a child forked after
the parent initialized it.

At the end each process compares with their values after the first round: the device and
pinned memory it holds (the backend's own count, bytes_in_use: mem_get_info reports the
whole GPU, every process on it), its open file descriptors (/proc/self/fd) and its running
CPU stream threads. It prints operations done, failures (each with its whole traceback:
the frame that raised is the one that says why) and the leak figures; the exit
status is 1 on any failure or leak of memory or descriptors.

A child that dies or does not report within the run's time plus a grace period is a
failure: its exit status is reported, and a child still running is made to print every
thread's stack (faulthandler, SIGUSR1) before it is ended, so that a hang shows where it is.
"""

import argparse
import faulthandler
import gc
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import traceback

import numpy as np

import simt
from simt import blockDim, blockIdx, threadIdx

BLOCK = 128
BINS = 16
SPIN = 64
FD_SLACK = 4                   # descriptors a process may hold more at the end
SLACK = 1 << 20                # bytes a process may hold more at the end
GRACE = 120                    # seconds a child may take beyond the run to report


@simt.kernel
def axpy(y, a, x):
    i = simt.grid(1)
    if i < y.shape[0]:
        y[i] = a * x[i] + y[i]


@simt.kernel
def spin_square(out, x, spin):
    """out = x*x, after a busy loop that leaves the result alone: slow enough to overlap."""
    i = simt.grid(1)
    if i < out.shape[0]:
        v = x[i]
        acc = v * 0
        for k in range(spin):
            acc = (acc * 31 + v + k) & 0xFFFF
        out[i] = v * v + (acc - acc)


@simt.kernel
def block_sum(total, counts, x):
    """A tree sum in shared memory between barriers, blocks combined with atomics, and a
    histogram of x & 15 by atomics."""
    buf = simt.shared.array(BLOCK, np.int64)
    t = threadIdx.x
    i = blockIdx.x * blockDim.x + t
    v = x[0] * 0
    if i < x.shape[0]:
        v = x[i]
        simt.atomic.add(counts, v & (BINS - 1), 1)
    buf[t] = v
    simt.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        simt.syncthreads()
        s //= 2
    if t == 0:
        simt.atomic.add(total, 0, buf[0])


@simt.kernel
def write_past_end(x):
    i = simt.grid(1)
    x[i + 1] = 1


def grid_for(n):
    return (n + BLOCK - 1) // BLOCK, BLOCK


class Failure(Exception):
    """A wrong result."""


def expect(ok, what):
    if not ok:
        raise Failure(what)


# ---------------------------------------------------------------- operations
class Worker:
    """One host thread's state: its random numbers and its two streams."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.stream = simt.Stream()
        self.side = simt.Stream(non_blocking=True)

    def ints(self, n=None):
        n = n or int(self.rng.integers(1, 3000))
        return self.rng.integers(0, 1000, n).astype(np.int64)

    def default_stream_axpy(self):
        n = int(self.rng.integers(1, 5000))
        x = self.rng.standard_normal(n).astype(np.float32)
        y = self.rng.standard_normal(n).astype(np.float32)
        d_y = simt.to_device(y)
        axpy[grid_for(n)](d_y, np.float32(2.5), simt.to_device(x))
        expect(np.allclose(d_y.copy_to_host(), np.float32(2.5) * x + y, rtol=1e-5, atol=1e-5),
               "axpy on the default stream")

    def stream_to_pinned(self):
        x = self.ints()
        s = self.stream if self.rng.random() < 0.5 else self.side
        d_x = simt.to_device(x, stream=s)
        d_out = simt.device_array(x.shape, x.dtype)
        spin_square[grid_for(x.size) + (0, s)](d_out, d_x, SPIN)
        out = simt.pinned_array(x.shape, x.dtype)
        out[:] = -1
        d_out.copy_to_host(out, stream=s)
        done = simt.Event(timing=False).record(s)
        how = self.rng.integers(3)
        if how == 0:
            done.synchronize()
        elif how == 1:
            s.synchronize()
        else:
            while not done.query():
                time.sleep(0.0005)
        expect(np.array_equal(out, x * x), "spin_square copied to pinned memory in a stream")

    def event_between_streams(self):
        x = self.ints()
        d_x, d_sq = simt.to_device(x), simt.device_array(x.shape, x.dtype)
        d_y = simt.zeros(x.shape, x.dtype)
        spin_square[grid_for(x.size) + (0, self.stream)](d_sq, d_x, SPIN * 4)
        done = simt.Event().record(self.stream)
        self.side.wait_event(done)
        axpy[grid_for(x.size) + (0, self.side)](d_y, np.int64(3), d_sq)
        out = simt.pinned_array(x.shape, x.dtype)
        d_y.copy_to_host(out, stream=self.side)
        end = simt.Event().record(self.side)
        end.synchronize()
        expect(done.elapsed_time(end) >= 0, "elapsed_time between two streams")
        expect(np.array_equal(out, 3 * x * x), "a stream waiting for another's event")

    def barriers_and_atomics(self):
        x = self.ints()
        d_total, d_counts = simt.zeros(1, np.int64), simt.zeros(BINS, np.int64)
        s = self.stream if self.rng.random() < 0.5 else None
        block_sum[grid_for(x.size) + (0, s)](d_total, d_counts, simt.to_device(x, stream=s))
        if s is not None:
            s.synchronize()
        expect(d_total.copy_to_host()[0] == x.sum(), "block_sum total")
        expect(np.array_equal(d_counts.copy_to_host(), np.bincount(x & (BINS - 1), minlength=BINS)),
               "block_sum histogram")

    def arrays_made_and_dropped(self):
        arrays = []
        for _ in range(int(self.rng.integers(1, 6))):
            x = self.ints()
            make = self.rng.integers(4)
            if make == 0:
                d = simt.to_device(x)
            elif make == 1:
                d = simt.device_array(x.shape, x.dtype)
                d.copy_from(x)
            elif make == 2:
                d = simt.zeros(x.shape, x.dtype)
                expect(not d.copy_to_host().any(), "zeros")
                d.copy_from(x)
            else:
                d = simt.to_device(np.concatenate([x, x]))[x.size:]
            arrays.append((d, x))
        for d, x in arrays:
            expect(np.array_equal(d.copy_to_host(), x), "a device array's contents")
        copy = simt.device_array(arrays[0][1].shape, np.int64)
        copy.copy_from(arrays[0][0])
        expect(np.array_equal(copy.copy_to_host(), arrays[0][1]), "a device-to-device copy")

    def host_function(self):
        x = self.ints()
        d_x, d_sq = simt.to_device(x), simt.device_array(x.shape, x.dtype)
        out = simt.pinned_array(x.shape, x.dtype)
        seen = []
        spin_square[grid_for(x.size) + (0, self.stream)](d_sq, d_x, SPIN)
        d_sq.copy_to_host(out, stream=self.stream)
        self.stream.launch_host_func(lambda: seen.append(out.copy()))
        self.stream.synchronize()
        expect(len(seen) == 1 and np.array_equal(seen[0], x * x),
               "a host function after a copy in its stream")

    def dropped_stream_and_inputs(self):
        """A stream and the inputs of its work dropped before that work has run: the
        work still runs, on memory kept alive until then."""
        x = self.ints()
        s = simt.Stream(non_blocking=bool(self.rng.integers(2)))
        d_sq = simt.device_array(x.shape, x.dtype)
        spin_square[grid_for(x.size) + (0, s)](d_sq, simt.to_device(x, stream=s), SPIN * 4)
        out = simt.pinned_array(x.shape, x.dtype)
        d_sq.copy_to_host(out, stream=s)
        done = simt.Event(timing=False).record(s)
        del s, d_sq
        done.synchronize()
        expect(np.array_equal(out, x * x), "work of a dropped stream")

    def default_stream_events(self):
        x = self.ints()
        d_sq = simt.device_array(x.shape, x.dtype)
        spin_square[grid_for(x.size)](d_sq, simt.to_device(x), SPIN)
        done = simt.Event().record()
        self.side.wait_event(done)
        out = simt.pinned_array(x.shape, x.dtype)
        d_sq.copy_to_host(out, stream=self.side)
        self.side.synchronize()
        expect(done.query() and np.array_equal(out, x * x), "an event of the default stream")

    def numpy_arguments(self):
        x = self.ints()
        y = np.zeros_like(x)
        axpy[grid_for(x.size)](y, np.int64(-2), x)
        expect(np.array_equal(y, -2 * x), "NumPy arrays passed to a kernel")

    def fault_stays_in_its_thread(self):
        """An out-of-bounds kernel: its error reaches this thread's synchronizing call,
        never another thread's (CPU device only: on a GPU the error ends the context)."""
        d = simt.zeros(BLOCK, np.int64)
        s = self.stream if self.rng.random() < 0.5 else None
        write_past_end[1, BLOCK, 0, s](d)
        try:
            (s or simt).synchronize()
        except simt.IllegalAddressError:
            return
        raise Failure("an out-of-bounds write raised nothing")

    def device_synchronize(self):
        simt.synchronize()


def operations(spec):
    """The names of the operations a thread picks from on device ``spec``."""
    return [name for name, value in vars(Worker).items()
            if callable(value) and not name.startswith("_") and name != "ints"
            and not (spec.startswith("cuda") and name in CPU_ONLY)]


CPU_ONLY = {"fault_stays_in_its_thread"}
# weights: device_synchronize waits for every thread's streams, so less often
WEIGHTS = {"device_synchronize": 0.2}


def run_thread(spec, seed, deadline, stats, lock):
    """One host thread: random operations until ``deadline``; counts go to ``stats``."""
    done, failures = {}, []
    try:
        simt.set_device(spec)
        worker, names = Worker(seed), operations(spec)
        weights = np.array([WEIGHTS.get(name, 1.0) for name in names])
        weights /= weights.sum()
        while time.monotonic() < deadline:
            name = names[worker.rng.choice(len(names), p=weights)]
            try:
                getattr(worker, name)()
                done[name] = done.get(name, 0) + 1
            except Exception:
                failures.append(f"{name}: {traceback.format_exc()}")
        worker.stream.synchronize()
        worker.side.synchronize()
    except Exception:
        failures.append(f"thread: {traceback.format_exc()}")
    with lock:
        for name, count in done.items():
            stats["ops"][name] = stats["ops"].get(name, 0) + count
        stats["failures"].extend(failures)


# ---------------------------------------------------------------- leak figures
def open_fds():
    return len(os.listdir("/proc/self/fd"))


def stream_threads():
    """Threads of CPU streams still running: each must end once its stream is gone."""
    return sum(thread.name == "simt-cpu-stream" for thread in threading.enumerate())


def memory_in_use(spec):
    """Device and pinned memory this process holds, by the backend's own count."""
    return simt.get_device().backend.bytes_in_use()


def settle():
    """Let dropped memory go: finish queued work, collect, finish what that released."""
    for _ in range(3):
        simt.synchronize()
        gc.collect()
        time.sleep(0.05)


def warm_up(spec, threads):
    """Every operation once in each of ``threads`` threads started together: the kernels'
    first launches (compile or disk-cache load) race, and what the leak baseline includes
    (loaded kernels, pools) is there after."""
    simt.set_device(spec)
    start, failures = threading.Barrier(threads), []

    def first_round(seed):
        try:
            simt.set_device(spec)
            worker = Worker(seed)
            start.wait()
            for name in operations(spec):
                getattr(worker, name)()
        except Exception:
            failures.append(f"warm-up: {traceback.format_exc()}")
    pool = [threading.Thread(target=first_round, args=(t,)) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    settle()
    return failures


def run_process(spec, seconds, threads, seed):
    """T threads in this process; returns its report (a dict)."""
    stats, lock = {"ops": {}, "failures": warm_up(spec, threads)}, threading.Lock()
    fds, memory, streams = open_fds(), memory_in_use(spec), stream_threads()
    deadline = time.monotonic() + seconds
    pool = [threading.Thread(target=run_thread, args=(spec, seed * 1000 + t, deadline, stats, lock))
            for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    settle()
    stats["fd_leak"] = open_fds() - fds
    stats["thread_leak"] = stream_threads() - streams
    stats["memory_leak"] = memory_in_use(spec) - memory
    stats["pid"] = os.getpid()
    return stats


def child(spec, seconds, threads, seed, results, go):
    """A child process: wait for the parent's go, run, send the report back."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    go.wait()
    try:
        report = run_process(spec, seconds, threads, seed)
    except Exception:
        report = {"ops": {}, "failures": [f"process: {traceback.format_exc()}"],
                  "fd_leak": 0, "memory_leak": 0, "thread_leak": 0, "pid": os.getpid()}
    results.put(report)


# ---------------------------------------------------------------- the run
def start_children(spec, seconds, threads, processes, go, results):
    spawn = multiprocessing.get_context("spawn")
    kids = [spawn.Process(target=child, args=(spec, seconds, threads, 1 + p, results, go))
            for p in range(processes)]
    for kid in kids:
        kid.start()
    return kids


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--grace", type=float, default=GRACE,
                        help=f"seconds a child may take beyond the run to report (default {GRACE})")
    args = parser.parse_args(argv)
    spec, gpu = args.device, args.device.startswith("cuda")
    # a run that has not ended by then prints every thread's stack (this process's), so that
    # a hang shows where it is even when an outer timeout ends the run
    faulthandler.dump_traceback_later(args.seconds + args.grace + 30, exit=False)

    go, results = multiprocessing.get_context("spawn").Event(), \
        multiprocessing.get_context("spawn").Queue()
    fork = multiprocessing.get_context("fork").Process(
        target=child, args=(spec, args.seconds, args.threads, 99, results, go))
    if args.processes and gpu:           # forked before this process initializes CUDA
        fork.start()
    kids = start_children(spec, args.seconds, args.threads, args.processes, go, results)
    if not gpu:                          # CPU: the children's first launches race this one's
        go.set()
    failures = warm_up(spec, args.threads)
    if args.processes and not gpu:       # forked with this process's device threads running
        fork.start()
    kids += [fork] if args.processes else []
    go.set()
    reports = [run_process(spec, args.seconds, args.threads, 0)]
    reports[0]["failures"] += failures
    reports += collect(kids, results, time.monotonic() + args.seconds + args.grace,
                       reports[0]["failures"])
    return summarize(spec, args, reports)


def collect(kids, results, deadline, failures):
    """The children's reports. A child that ended without one, or that has not reported by
    ``deadline`` (its stacks are printed first, then it is ended), adds to ``failures``."""
    reports = []
    while len(reports) < len(kids) and time.monotonic() < deadline:
        try:
            reports.append(results.get(timeout=1.0))
        except queue.Empty:
            reported = {report["pid"] for report in reports}
            if any(kid.exitcode is not None and kid.pid not in reported for kid in kids):
                time.sleep(1.0)               # a report may still be in the pipe
                while not results.empty():
                    reports.append(results.get())
                break
    reported = {report["pid"] for report in reports}
    for kid in kids:
        if kid.pid not in reported:
            if kid.exitcode is None:
                failures.append(f"process {kid.pid} had not reported when the time was up: "
                                "its stacks are above (SIGUSR1)")
                os.kill(kid.pid, signal.SIGUSR1)
                time.sleep(2)
                kid.kill()
            else:
                failures.append(f"process {kid.pid} ended with status {kid.exitcode} "
                                "without a report")
        kid.join(60)
        if kid.pid in reported and kid.exitcode != 0:
            failures.append(f"process {kid.pid} ended with status {kid.exitcode}")
    return reports


def summarize(spec, args, reports):
    ops, failures = {}, []
    for report in reports:
        for name, count in report["ops"].items():
            ops[name] = ops.get(name, 0) + count
        failures += [f"[pid {report['pid']}] {f}" for f in report["failures"]]
    leaks = [f"pid {r['pid']}: {r['fd_leak']} file descriptors, {r['memory_leak']} bytes, "
             f"{r['thread_leak']} stream threads" for r in reports
             if r["fd_leak"] > FD_SLACK or r["memory_leak"] > SLACK or r["thread_leak"] > 0]
    print(f"simt stress on {spec}: {args.seconds:g} s, {args.threads} threads x "
          f"{len(reports)} processes")
    print(f"operations: {sum(ops.values())} ({', '.join(f'{k} {v}' for k, v in sorted(ops.items()))})")
    print(f"failures: {len(failures)}")
    for failure in failures[:10]:
        print("  " + failure.rstrip().replace("\n", "\n    "))
    print("leaks (file descriptors, bytes, stream threads) per process: " +
          " ".join(f"({r['fd_leak']}, {r['memory_leak']}, {r['thread_leak']})" for r in reports))
    for leak in leaks:
        print("  LEAK " + leak)
    return 1 if failures or leaks else 0


if __name__ == "__main__":
    sys.exit(main())
