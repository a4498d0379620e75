"""Ctrl-C for kernels on the CPU device.

Compiled loops read a flag once per trip (``loop_poll`` in target.py); a set flag ends
the launch like a failed thread does, with the fault code ``INTERRUPTED``. The flag is
set by a SIGINT handler compiled here, which then calls the handler it replaced
(Python's), so Python still raises KeyboardInterrupt once the launch returns. Python
code cannot be the handler: while a kernel runs on the main thread, Python's own
handlers wait for it. The flag is cleared when a launch starts while no other runs (a
launch running at a Ctrl-C ends; one started later, once they have, runs).

Linux only (the ``sigaction`` layout); Python installing another C handler later
(``signal.signal(SIGINT, ...)`` does) turns it off: loops then run to their end.
"""
import ctypes
import signal
import sys
import threading

import llvmlite.binding as llvm

from ...errors import LaunchError
from .. import hostjit as jit

SYMBOL = "simt_cpu_interrupt"
FLAG = ctypes.c_int32(0)
llvm.add_symbol(SYMBOL, ctypes.addressof(FLAG))

_SA_SIGINFO = 4
_lock = threading.Lock()
_handler = []            # the compiled handler, kept loaded while installed
_tried = []
_running = []           # one entry per launch running now (starting() to ended())


def install():
    """Put the flag-setting handler in front of SIGINT's C handler (once; Linux only).
    Called when the first kernel is loaded: a process that launches nothing pays nothing."""
    if _tried:
        return
    with _lock:
        if _tried:
            return
        _tried.append(True)
        if not sys.platform.startswith("linux"):
            return
        libc = ctypes.CDLL(None, use_errno=True)
        old = ctypes.create_string_buffer(256)           # struct sigaction (152 bytes on Linux)
        if libc.sigaction(signal.SIGINT, None, old):
            return
        previous = ctypes.c_void_p.from_buffer(old).value or 0
        flags = ctypes.c_int.from_buffer(old, 8 + 128).value
        if previous in (0, 1) or flags & _SA_SIGINFO:    # default, ignored, or not Python's
            return
        loaded = jit.LoadedObject(jit.emit_object(jit.optimize(_handler_ir(previous))))
        new = ctypes.create_string_buffer(old.raw, 256)
        ctypes.c_void_p.from_buffer(new).value = loaded.address("simt_cpu_sigint")
        if libc.sigaction(signal.SIGINT, new, None) == 0:
            _handler.append(loaded)


def _handler_ir(previous):
    """void simt_cpu_sigint(int): set the flag, then call the handler it replaced."""
    return f"""
@{SYMBOL} = external global i32
define void @simt_cpu_sigint(i32 %sig) {{
  store atomic volatile i32 1, ptr @{SYMBOL} monotonic, align 4
  call void inttoptr (i64 {previous} to ptr)(i32 %sig)
  ret void
}}
"""


def starting():
    """A launch starts: unless another runs (it may not have seen the flag yet), a Ctrl-C
    from before (Python has raised KeyboardInterrupt for it, or will at once) must not
    stop it. (list.append and pop are atomic under the GIL: no lock on the launch path.)"""
    if FLAG.value and not _running:
        FLAG.value = 0
    _running.append(None)


def ended():
    _running.pop()


def python_raises():
    """Whether Python's SIGINT handler raises KeyboardInterrupt itself (the default)."""
    return signal.getsignal(signal.SIGINT) is signal.default_int_handler


def stopped(what):
    """``what`` (work of several launches: a graph) ended early for a Ctrl-C: quietly where
    Python raises KeyboardInterrupt for it, else a LaunchError, as an interrupted kernel's,
    so that incomplete results never pass silently."""
    if not python_raises():
        raise LaunchError(f"{what} was interrupted (SIGINT): its results are incomplete")
