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

from .errors import DeviceAssertError, IllegalAddressError, LaunchError

WORDS = 16
FIELDS = ("code", "line", "array", "dim", "index", "extent", "file",
          "block.x", "block.y", "block.z", "thread.x", "thread.y", "thread.z")
CODE, LINE = 0, 1

OUT_OF_BOUNDS = 1
ASSERT = 2
NOT_COOPERATIVE = 3
INTERRUPTED = 4          # Ctrl-C stopped the launch (CPU device: backends/cpu/interrupt.py)
TRAP = 5                 # simt.trap()
BAD_FREE = 6             # simt.free of memory the CPU device's heap did not hand out

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
    return LaunchError(f"kernel '{kernel_name}' failed (error code {code}) at {where}", **common)


def _source_line(filename, line):
    text = linecache.getline(filename, line).strip()
    return f"\n      {text}" if text else ""
