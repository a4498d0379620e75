"""What warp-specialised kernels (sm_90) use besides asynchronous copies: moving registers
between warpgroups (``setmaxnreg``), electing one lane (``elect_one``), named barriers
(``barrier_sync``, ``barrier_arrive``) and programmatic dependent launch's in-kernel half
(``griddepcontrol.wait``, ``griddepcontrol.launch_dependents``).

On the GPU each is its PTX instruction (backends/cuda/lower/warpspec.py; ``elect_one`` is
a warp operation, backends/*/warp.py). On the CPU and sim devices ``setmaxnreg`` and
``griddepcontrol`` do nothing (launches are ordered already) and ``elect_one`` is true in
the lowest lane of the warp that calls it. The sim device interleaves a block's threads and
counts named barriers' arrivals as a GPU does; so does the CPU device for a kernel whose
named barriers only part of the block meets (any other count, a ``barrier_sync`` only part
of the block reaches, ``barrier_arrive``): it runs that kernel's warps as fibers
(backends/cpu/independent.py). In checked mode the CPU device runs every kernel in thread
loops, where those are a NotSupportedError. docs/inline-ptx.md has the semantics.
"""
import numpy as np

from ..ir import nodes as ir
from ..ir import types as T
from .registry import Intrinsic, Namespace, Static
from .warp import warp_op

NAMED_BARRIERS = 16            # ids 0 to 15; 0 is syncthreads'
REGISTER_RANGE = (24, 256)     # setmaxnreg's count: a multiple of 8 in this range


def _positional(fc, args, kwargs, names, loc, name):
    out = list(args)
    for key in names[len(args):]:
        if key in kwargs:
            out.append(kwargs.pop(key))
    if kwargs or len(out) > len(names):
        fc.fail(loc, f"simt.{name}() takes ({', '.join(names)})")
    return out


def _setmaxnreg_build(fc, args, kwargs, loc):
    values = _positional(fc, args, dict(kwargs), ("n", "action"), loc, "setmaxnreg")
    if len(values) != 2:
        fc.fail(loc, "simt.setmaxnreg(n, action) needs the register count and 'inc' or 'dec'")
    n = fc.constant_int(values[0], "simt.setmaxnreg's register count", loc)
    low, high = REGISTER_RANGE
    if n % 8 or not low <= n <= high:
        fc.fail(loc, f"simt.setmaxnreg: the register count is {n}; it must be a multiple of 8 "
                f"from {low} to {high}")
    action = fc.static(values[1], "simt.setmaxnreg's action", loc)
    if action not in ("inc", "dec"):
        fc.fail(loc, f"simt.setmaxnreg: the action is {action!r}; it must be 'inc' (take "
                "registers from the block's pool) or 'dec' (give them back)")
    return setmaxnreg.node(T.VOID, loc, [], {"n": n, "action": action})


def _elect_build(fc, args, kwargs, loc):
    if args or kwargs:
        fc.fail(loc, "simt.elect_one() takes no arguments")
    return warp_op(fc, "elect", [], T.BOOL, loc)


def _barrier_id(fc, value, loc, name):
    if isinstance(value, Static):
        v = value.value
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or \
                not 0 <= v < NAMED_BARRIERS:
            fc.fail(loc, f"simt.{name}: the barrier id is {v!r}; it must be 0 to "
                    f"{NAMED_BARRIERS - 1}", "id 0 is the one syncthreads uses")
    return _int32(fc, value, loc, name, "the barrier id")


def _thread_count(fc, value, loc, name):
    if isinstance(value, Static):
        v = value.value
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v % 32 or \
                not 32 <= v <= 1024:
            fc.fail(loc, f"simt.{name}: the thread count is {v!r}; it must be a multiple of "
                    "32 (whole warps) from 32 to 1024")
    return _int32(fc, value, loc, name, "the thread count")


def _int32(fc, value, loc, name, what):
    v = fc.expr(value, loc)
    if not isinstance(v.type, T.Scalar) or v.type.kind not in "iu":
        fc.fail(loc, f"simt.{name}: {what} must be an integer, got {v.type}")
    return fc.cast(v, T.INT32, loc)


def _once(fc, value, loc):
    """``value`` as something that may be read twice: a constant, or a temporary."""
    if isinstance(value, ir.Const):
        return value, ir.Const(value.type, loc, value.value)
    name = fc.temp("count")
    fc.hoist(*fc.bind_name(name, value, loc))
    return ir.Var(value.type, loc, name), ir.Var(value.type, loc, name)


def _barrier_sync_build(fc, args, kwargs, loc):
    values = _positional(fc, args, dict(kwargs), ("id", "count"), loc, "barrier_sync")
    if not values:
        fc.fail(loc, "simt.barrier_sync(id, count) needs the barrier id")
    named = [_barrier_id(fc, values[0], loc, "barrier_sync")]
    if len(values) == 2 and not (isinstance(values[1], Static) and values[1].value is None):
        count, again = _once(fc, _thread_count(fc, values[1], loc, "barrier_sync"), loc)
        # what the CPU device checks: the count is the whole block (it has no barrier of
        # part of a block); nothing on a GPU or the sim device
        fc.hoist(ir.ExprStmt(loc, barrier_count.node(T.VOID, loc, [count])))
        named.append(again)
    return ir.Barrier(loc, named=named)


def _barrier_arrive_build(fc, args, kwargs, loc):
    values = _positional(fc, args, dict(kwargs), ("id", "count"), loc, "barrier_arrive")
    if len(values) != 2:
        fc.fail(loc, "simt.barrier_arrive(id, count) needs the barrier id and the number of "
                "threads the barrier waits for")
    return barrier_arrive.node(T.VOID, loc, [_barrier_id(fc, values[0], loc, "barrier_arrive"),
                                             _thread_count(fc, values[1], loc,
                                                           "barrier_arrive")])


def _no_args(entry_name):
    def build(fc, args, kwargs, loc):
        if args or kwargs:
            fc.fail(loc, f"simt.{entry_name}() takes no arguments")
        return _GRIDDEP[entry_name].node(T.VOID, loc, [])
    return build


setmaxnreg = Intrinsic(
    "setmaxnreg", "simt.setmaxnreg(n, 'inc' | 'dec'): setmaxnreg.inc/dec.sync.aligned.u32 "
    "(sm_90a): set the registers per thread of this warpgroup's threads to n (a "
    "compile-time multiple of 8 from 24 to 256), taking registers from the block's pool "
    "('inc', which waits until enough are free) or giving them back ('dec'). Every thread of "
    "the warpgroup (4 warps) calls it together. The kernel needs "
    "launch_bounds=(threads, blocks) or maxnreg= so that its register count at entry is "
    "known. The CPU and sim devices do nothing.", _setmaxnreg_build)
elect_one = Intrinsic(
    "elect_one", "simt.elect_one(): elect.sync (sm_90): True in exactly one of the lanes of "
    "this warp that call it together, False in the others (bool). On the CPU and sim "
    "devices that lane is the lowest.", _elect_build, lowered_as=(ir.WarpOp,))
barrier_sync = Intrinsic(
    "barrier_sync", "simt.barrier_sync(id, count=None): bar.sync: wait at named barrier id "
    "(0 to 15; 0 is syncthreads') until count threads (a multiple of 32; all the block's "
    "when left out) have arrived or synced there. Whole warps call it. The sim and CPU "
    "devices count as a GPU does (the CPU device runs such a kernel's warps as fibers; in "
    "checked mode it must be the whole block's barrier, met at one line).",
    _barrier_sync_build, statement=True, lowered_as=(ir.Barrier,))
barrier_arrive = Intrinsic(
    "barrier_arrive", "simt.barrier_arrive(id, count): bar.arrive: count this warp's "
    "threads as arrived at named barrier id (0 to 15) without waiting; the threads that "
    "sync there go on when count threads (a multiple of 32) have arrived or synced. Memory "
    "written before it is visible to them after their barrier_sync. GPUs, the sim "
    "device and the CPU device (not in checked mode).",
    _barrier_arrive_build)
barrier_count = Intrinsic(
    "barrier_count", "The check, before a named barrier, that the CPU device's checked mode "
    "can run it: its thread count is the block's.", None, public=False)
griddepcontrol_wait = Intrinsic(
    "griddepcontrol.wait", "simt.griddepcontrol.wait(): griddepcontrol.wait (sm_90): wait "
    "until the grids this one depends on (a launch with programmatic=True) have completed "
    "and their memory is visible. The CPU and sim devices do nothing: their launches "
    "run in order.", _no_args("griddepcontrol.wait"),
    python_name="simt.griddepcontrol.wait")
griddepcontrol_launch_dependents = Intrinsic(
    "griddepcontrol.launch_dependents", "simt.griddepcontrol.launch_dependents(): "
    "griddepcontrol.launch_dependents (sm_90): let the grid launched after this one with "
    "programmatic=True start once every block of this grid has called it or exited. The "
    "CPU and sim devices do nothing.", _no_args("griddepcontrol.launch_dependents"),
    python_name="simt.griddepcontrol.launch_dependents")
_GRIDDEP = {"griddepcontrol.wait": griddepcontrol_wait,
               "griddepcontrol.launch_dependents": griddepcontrol_launch_dependents}
griddepcontrol = Namespace(
    "simt.griddepcontrol", "Programmatic dependent launch inside kernels (sm_90).",
    wait=griddepcontrol_wait, launch_dependents=griddepcontrol_launch_dependents)
