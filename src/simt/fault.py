"""The fault record: how a kernel reports its first error, for every device.

A launch owns one record of ``WORDS`` int64 words. The first failing thread
claims it by writing a nonzero ``code`` in word 0, then fills the words named
in ``FIELDS``. Both targets write this layout (the CPU target through a helper
function, the CUDA target into host-mapped memory) and the runtime turns a
filled record into the exception here, so the wording is the same on every
device. An assert's message is recorded as an id: ``MESSAGE_BASE + i`` in the
``dim`` word indexes the binary's ``messages``.
"""

import linecache

from .errors import (BarrierDivergenceError, DeviceAssertError, IllegalAddressError,
                     LaunchError, MisalignedAddressError, NarrowingConversionError,
                     RaceConditionError,
                     UninitializedReadError)

WORDS = 32
FIELDS = ("code", "line", "array", "dim", "index", "extent", "file",
          "block.x", "block.y", "block.z", "thread.x", "thread.y", "thread.z",
          # checked mode (backends/cpu/checked.py): the other thread, what each did, the index
          "other.line", "other.file", "other.block.x", "other.block.y", "other.block.z",
          "other.thread.x", "other.thread.y", "other.thread.z", "accesses", "ndim",
          "index.0", "index.1", "index.2", "index.3")
CODE, LINE = 0, 1
OTHER = FIELDS.index("other.line")

OUT_OF_BOUNDS = 1
ASSERT = 2
NOT_COOPERATIVE = 3
INTERRUPTED = 4          # Ctrl-C stopped the launch (CPU device: backends/cpu/interrupt.py)
TRAP = 5                 # simt.trap()
BAD_FREE = 6             # simt.free of memory the CPU device's heap did not hand out
# checked mode
RACE = 7                 # two threads, one element, no barrier between, one writes
UNINITIALIZED = 8        # a read of memory nothing wrote
BARRIER_DIVERGENCE = 9   # a barrier some live thread of the block does not reach
WARP_MASK = 10           # a warp collective whose mask names a lane that is not there
USE_AFTER_FREE = 11      # an access of device heap memory that simt.free released
DEVICE_LAUNCH = 12       # a launch inside a kernel that the device runtime refused
UNASSIGNED = 13          # checked mode: a read of a local variable this thread did not assign
STACK_OVERFLOW = 14      # a recursive device function past the 'stack_size' limit (CPU device)
OWN_LANE = 15            # a warp function whose mask leaves out the calling lane (index: mask, lane)
NARROWING = 16           # narrowing=True: an implicit integer conversion changed the value
                         # (index: the value, extent: the result, dim: narrowing_types())
MISALIGNED = 17          # checked mode: a vector access off its alignment (index: address,
#                          extent: the alignment)

# the label a refused device graph launch records (DEVICE_LAUNCH's array word names it)
GRAPH_LABEL = "simt.graph_launch"

# what an access was, in the "accesses" word (mine | other << 4)
READ, WRITE, ATOMIC, ATOMIC_STORE, ATOMIC_LOAD, VOLATILE_LOAD, VOLATILE_STORE = range(1, 8)
_VERBS = {READ: ("reads", "read"), WRITE: ("writes", "wrote"),
          ATOMIC: ("atomically accesses", "atomically accessed"),
          ATOMIC_STORE: ("atomically writes", "atomically wrote"),
          ATOMIC_LOAD: ("atomically reads", "atomically read"),
          VOLATILE_LOAD: ("reads (volatile)", "read (volatile)"),
          VOLATILE_STORE: ("writes (volatile)", "wrote (volatile)")}

# a volatile read of a volatile write that released nothing (no fence before it)
VOLATILE_FLAG_FIX = ("a volatile flag publishes what its writer did before a fence: call "
                     "simt.threadfence() before the flag's volatile_store (and after its "
                     "volatile_load), or use simt.atomic.store/load with order='release'/"
                     "'acquire'")

MESSAGE_BASE = 1000


def message_id(index):
    """The word an assert with message ``index`` records."""
    return MESSAGE_BASE + index


def decode(record, binary, kernel_name):
    """The LaunchError for a filled record of a launch of ``binary``.

    ``binary`` supplies ``labels`` (array names), ``messages`` (assert texts) and
    ``files`` ((function, filename) per file id).
    """
    code, line, array, dim, index, extent, file_id = (int(v) for v in record[:7])
    block = tuple(int(v) for v in record[7:10])
    thread = tuple(int(v) for v in record[10:13])
    files = binary.files
    function, filename = files[file_id] if file_id < len(files) else (kernel_name, "?")
    where = f"{filename}:{line}{_source_line(filename, line)}"
    place = f"in kernel '{kernel_name}'" + (f" (device function '{function}')"
                                             if function != kernel_name else "")
    common = dict(kernel=kernel_name, block=block, thread=thread, filename=filename, line=line)
    if code == OUT_OF_BOUNDS:
        label = binary.labels[array] if array < len(binary.labels) else "array"
        text = (f"out-of-bounds access {place}: index {index} is outside dimension {dim} "
                f"(size {extent}) of '{label}'\n  block {block}, thread {thread}, at {where}"
                f"\n  check the index against {label}.shape[{dim}] first (negative "
                f"indices are out of bounds in kernels)")
        return IllegalAddressError(text, array=label, index=index, shape=extent, **common)
    if code == ASSERT:
        message = binary.messages[dim - MESSAGE_BASE] if dim >= MESSAGE_BASE else ""
        text = f"assertion failed {place}: {message}\n  block {block}, thread {thread}, at {where}"
        return DeviceAssertError(text, **common)
    if code == NOT_COOPERATIVE:
        return LaunchError(f"grid.sync() {place} at {where}\n  needs a cooperative "
                           f"launch: {kernel_name}.launch_cooperative(grid, block, args)",
                           **common)
    if code == NARROWING:
        source, target = INTEGERS[dim // len(INTEGERS)], INTEGERS[dim % len(INTEGERS)]
        return narrowing_error(kernel_name, place, Thread(block, thread, filename, line),
                               index, source, extent, target)
    if code in CHECKED:
        return _decode_checked(code, record, binary, kernel_name, place, where, common)
    if code == INTERRUPTED:
        return LaunchError(f"kernel '{kernel_name}' was interrupted (SIGINT): its results "
                           f"are incomplete\n  it was in the loop at {where}", **common)
    if code == TRAP:
        return LaunchError(f"simt.trap() {place} stopped the kernel\n  block {block}, thread "
                           f"{thread}, at {where}", **common)
    if code == BAD_FREE:
        return LaunchError(f"simt.free {place} of memory simt.malloc did not hand out (or "
                           f"already freed)\n  block {block}, thread {thread}, at {where}\n  "
                           f"free only the arrays simt.malloc returned, each once", **common)
    if code == STACK_OVERFLOW:
        return LaunchError(f"stack overflow {place}: its recursion went past the "
                           f"'stack_size' limit ({extent} bytes)\n  block {block}, thread "
                           f"{thread}, entering the function at {where}\n  stop the "
                           f"recursion earlier (is its base case reached?), or raise the "
                           f"limit: simt.set_limit('stack_size', nbytes)", **common)
    if code == DEVICE_LAUNCH:
        child = binary.labels[array] if array < len(binary.labels) else "?"
        why, advice = _LAUNCH_ERRORS.get(index, (f"cudaError {index}", "see the CUDA "
                                                 "runtime's error codes"))
        what = "the graph launch (simt.graph_launch)" if child == GRAPH_LABEL else \
            f"the launch of kernel '{child}'"
        return LaunchError(f"{what} {place} failed: {why}\n  block "
                           f"{block}, thread {thread}, at {where}\n  {advice}", **common)
    return LaunchError(f"kernel '{kernel_name}' failed (error code {code}) at {where}", **common)


# a device-side launch's cudaError -> (what it means, what to do)
_LAUNCH_ERRORS = {
    -1: ("the device runtime gave no parameter buffer (cudaGetParameterBufferV2 returned "
         "null: too many launches pending)", "launch fewer children at once, or raise the "
                                             "'dev_runtime_pending_launch_count' limit"),
    1: ("invalid value (cudaErrorInvalidValue): a device graph launch needs a GraphExec "
        "instantiated with device_launch=True, launched from a kernel node of a graph",
        "instantiate the graph with g.instantiate(device_launch=True) and launch it from a "
        "kernel of a graph"),
    9: ("invalid configuration (cudaErrorInvalidConfiguration)",
        "give every grid and block dimension at least 1, at most 1024 threads per block "
        "(block z at most 64) and grid y and z at most 65535"),
    65: ("launches nested deeper than 24 levels (cudaErrorLaunchMaxDepthExceeded)",
         "stop the recursion earlier: pass the depth as an argument and test it"),
    69: ("too many launches pending (cudaErrorLaunchPendingCountExceeded)",
         "launch fewer children at once, or raise the 'dev_runtime_pending_launch_count' "
         "limit"),
}


INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def narrowing_types(source, target):
    """The ``dim`` word of a NARROWING record: the two integer types' names."""
    return INTEGERS.index(source) * len(INTEGERS) + INTEGERS.index(target)


def narrowing_error(kernel, place, where, value, source, result, target):
    """The NarrowingConversionError of ``value`` (a ``source`` integer) becoming ``result``
    (a ``target``) in thread ``where`` (a Thread with its file and line); ``place`` names
    the kernel (and device function)."""
    if source.startswith("u"):
        value &= (1 << 64) - 1            # the record holds a uint64 as its int64 bits
    text = (f"Narrowing conversion {place}: {where} converts {value} ({source}) to "
            f"{target} at {where.at}, which changes it to {result}"
            f"{_source_line(where.filename, where.line)}\n  the value does not fit in "
            f"{target}: give the variable or array a wider type, or convert explicitly "
            f"(np.{target}(v)) where the wrap is meant (narrowing=True reports implicit "
            f"conversions only; CUDA wraps them silently)")
    error = NarrowingConversionError(text, kernel=kernel, block=where.block,
                                     thread=where.thread, filename=where.filename,
                                     line=where.line)
    error.value, error.result, error.source, error.target = value, result, source, target
    return error


def _source_line(filename, line):
    text = linecache.getline(filename, line).strip()
    return f"\n      {text}" if text else ""


CHECKED = (RACE, UNINITIALIZED, BARRIER_DIVERGENCE, WARP_MASK, USE_AFTER_FREE, UNASSIGNED,
           OWN_LANE, MISALIGNED)
_ALONE = (UNINITIALIZED, USE_AFTER_FREE, UNASSIGNED, OWN_LANE, MISALIGNED)  # no other thread


class Thread:
    """One thread in a checked-mode report: where it is and what it did there."""

    def __init__(self, block, thread, filename=None, line=None):
        self.block, self.thread = tuple(block), tuple(thread)
        self.filename, self.line = filename, line

    def __str__(self):
        return f"block {self.block} thread {self.thread}"

    @property
    def at(self):
        return f"{_short(self.filename)}:{self.line}" if self.line else None


def checked_error(code, kernel, first, second=None, array=None, index=None, accesses=(0, 0),
                  address=(0, 0)):
    """The LaunchError subclass of a checked-mode report, worded the same on every device
    (the CPU device's checked mode and the sim device).

    ``first`` is the thread that found the problem (a ``Thread``), ``second`` the other
    thread involved (None: none); ``index`` a tuple; ``accesses`` (mine, other) are READ,
    WRITE or ATOMIC for a race; ``address``: (address, alignment) of a misaligned
    access. The first line reads ``<Kind> in kernel '<name>': ...``
    naming both threads as ``block (x, y, z) thread (x, y, z)`` and lines as ``file.py:N``.
    """
    element = f"'{array}[{', '.join(str(i) for i in index)}]'" if index else f"'{array}'"
    source = _source_line(first.filename, first.line) if first.line else ""
    if code == RACE:
        mine, other = (_VERBS.get(a, ("accesses", "accessed")) for a in accesses)
        same_block = second.block == first.block
        text = (f"Race condition in kernel '{kernel}': {first} {mine[0]} {element} at "
                f"{first.at}, and {second} {other[1]} it at {second.at} with no "
                f"{'barrier' if same_block else 'ordering (the threads are in different blocks)'}"
                f" between them{source}\n  "
                + (VOLATILE_FLAG_FIX if accesses == (VOLATILE_LOAD, VOLATILE_STORE) else
                   "order the two accesses with simt.syncthreads() (or simt.syncwarp() "
                   "within a warp), or make both atomic" if same_block else
                   "blocks of one launch run in no set order: have one thread write the "
                   "element, use atomics, or split the work into two launches"))
        cls = RaceConditionError
    elif code == UNINITIALIZED:
        text = (f"Uninitialized read in kernel '{kernel}': {first} reads {element} at "
                f"{first.at}, which nothing wrote{source}\n  write it first (a barrier "
                f"between the write and the read when another thread writes it), or "
                f"allocate with simt.zeros / simt.to_device instead of device_array/empty")
        cls = UninitializedReadError
    elif code == UNASSIGNED:
        text = (f"Unassigned variable in kernel '{kernel}': {first} reads variable '{array}' at "
                f"{first.at}, which it has not assigned{source}\n  assign it on every "
                f"path before this line (a loop may run zero times; an if or elif chain "
                f"without else may match nothing)")
        cls = UninitializedReadError
    elif code == USE_AFTER_FREE:
        verb = _VERBS.get(accesses[0], ("accesses", "accessed"))[0]
        text = (f"Use after free in kernel '{kernel}': {first} {verb} {element} at "
                f"{first.at}, heap memory that simt.free released{source}\n  free an array "
                f"of simt.malloc only after its last use (a barrier between when other "
                f"threads use it), and do not keep its elements past the free")
        cls = IllegalAddressError
    elif code == BARRIER_DIVERGENCE:
        away = (f"{second}, which has not returned, does not reach it"
                + (f" (it took another way at {second.at})" if second.line else ""))
        text = (f"Barrier divergence in kernel '{kernel}': {first} waits at the barrier at "
                f"{first.at}, but {away}{source}\n  every thread of the block that has "
                f"not returned must reach the same simt.syncthreads(): move it out of the "
                f"branch or loop whose condition differs between threads")
        cls = BarrierDivergenceError
    elif code == MISALIGNED:
        at, align = address
        verb = _VERBS.get(accesses[0], ("accesses", "accessed"))[0]
        text = (f"Misaligned address in kernel '{kernel}': {first} {verb} {element} at "
                f"{first.at}, a {align}-byte vector at {at:#x}, which is not aligned to "
                f"{align} bytes (a GPU refuses it){source}\n  give '{array}' data and "
                f"strides on {align} bytes: copy it to a fresh array (simt.to_device, or "
                f"the vector type's .view of an aligned array) first")
        cls = MisalignedAddressError
    elif code == OWN_LANE:
        mask, lane = index
        text = (f"Barrier divergence in kernel '{kernel}': {first} calls a warp function "
                f"at {first.at} with mask {mask & 0xFFFFFFFF:#010x}, which does not name its "
                f"own lane {lane}{source}\n  every lane that calls a *_sync warp function or "
                f"syncwarp must be in its mask (CUDA leaves the call undefined otherwise): "
                f"set bit {lane}, or pass simt.activemask()")
        cls = BarrierDivergenceError
    else:
        text = (f"Barrier divergence in kernel '{kernel}': {first} calls a warp function "
                f"at {first.at} whose mask names {second}, which does not take part"
                f"{source}\n  name in the mask only the lanes that make this same call "
                f"(simt.activemask() gives those that are here)")
        cls = BarrierDivergenceError
    error = cls(text, kernel=kernel, block=first.block, thread=first.thread,
                filename=first.filename, line=first.line)
    error.other = second
    error.array, error.index = array, index
    if code == UNASSIGNED:
        error.array, error.variable = None, array
    if code == OWN_LANE:
        error.array, error.index, error.mask = None, None, index[0] & 0xFFFFFFFF
    return error


def _decode_checked(code, record, binary, kernel_name, place, where, common):
    words = [int(v) for v in record]
    first = Thread(common["block"], common["thread"], common["filename"], common["line"])
    other_line, other_file = words[OTHER], words[OTHER + 1]
    second = None
    if code not in _ALONE:
        files = binary.files
        filename = files[other_file][1] if other_line and other_file < len(files) else None
        second = Thread(words[OTHER + 2:OTHER + 5], words[OTHER + 5:OTHER + 8], filename,
                        other_line or None)
    accesses = words[FIELDS.index("accesses")]
    ndim = words[FIELDS.index("ndim")]
    start = FIELDS.index("index.0")
    label = binary.labels[words[2]] if words[2] < len(binary.labels) else "array"
    index = tuple(words[start:start + ndim]) if 0 < ndim <= 4 else None
    return checked_error(code, kernel_name, first, second, label, index,
                         (accesses & 15, accesses >> 4), (words[4], words[5]))


def _short(filename):
    """A file as ``file.py``: its base name (the source line follows in the message)."""
    return filename.rsplit("/", 1)[-1] if filename else "?"
