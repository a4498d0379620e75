"""The front end's side of ``simt.unroll`` (lang/loops.py): reading
``simt.unroll(range(...), factor)`` in a for statement and checking a full unroll."""
import ast

from ..ir import nodes as ir
from ..lang.loops import FULL, MAX_FACTOR, MAX_FULL_TRIPS
from ..lang.registry import Static


def parse(fc, call):
    """(the range(...) call, the unroll request) of ``simt.unroll(range(...), factor)``."""
    args = list(call.args)
    keywords = {k.arg: k.value for k in call.keywords}
    if set(keywords) - {"factor"} or not 1 <= len(args) + len(keywords) <= 2 or \
            len(args) > 2 or (len(args) == 2 and keywords):
        fc.fail(call, "simt.unroll takes a range and an optional factor",
                "write: simt.unroll(range(n)) or simt.unroll(range(n), factor=4)")
    inner = args[0] if args else None
    if not (isinstance(inner, ast.Call) and _is_range(fc, inner)):
        fc.fail(call, "simt.unroll(...) wraps a range(...) call",
                "write: for i in simt.unroll(range(n)): ...")
    factor_node = args[1] if len(args) == 2 else keywords.get("factor")
    if factor_node is None:
        return inner, FULL
    factor = fc.any(factor_node)
    value = factor.value if isinstance(factor, Static) else factor
    if value is None:
        return inner, FULL
    if not isinstance(factor, Static) or isinstance(value, bool) or not isinstance(value, int):
        fc.fail(call, "the unroll factor must be None or an int known at compile time",
                "use a literal or a module-level constant: factor=4")
    if not 1 <= value <= MAX_FACTOR:
        fc.fail(call, f"unroll factor {value}: it must be 1 to {MAX_FACTOR} (1: do not unroll)")
    return inner, value


def _is_range(fc, call):
    func = fc.any(call.func)
    return isinstance(func, Static) and func.value is range


def check(fc, loop, node):
    """A full unroll needs a trip count of at most MAX_FULL_TRIPS. Without constant bounds
    it is no request at all, as nvcc's ``#pragma unroll`` on a loop whose trip count is
    not a constant ("not unrolled at all", guide B.33): the target's own unrolling applies
    (which still unrolls the loop fully when inlining makes its trip count a constant).
    Any llvm.loop request LLVM cannot meet prints a "loop not unrolled" warning on
    stderr, and a run-time trip count with an early exit (a bounds check) is one."""
    if loop.unroll != FULL:
        return
    bounds = (loop.start, loop.stop, loop.step)
    if not all(isinstance(b, ir.Const) for b in bounds):
        loop.unroll = None
        return
    trips = len(range(*(int(b.value) for b in bounds)))
    if trips > MAX_FULL_TRIPS:
        fc.fail(node, f"simt.unroll would unroll {trips} trips fully; at most "
                f"{MAX_FULL_TRIPS} are unrolled", "pass a factor: simt.unroll(range(n), factor=8)")
