"""Values and control flow of a barrier kernel that need no per-thread storage.

The CPU device runs a kernel with barriers as thread loops (regions.py); a variable
read in more than one of them normally lives in a per-thread slot in memory, and
control flow that holds a barrier is executed with per-thread flags. Both cost
loads and stores in every thread loop and keep LLVM from vectorizing across
threads. Two common cases need neither:

- *Recomputed values*: a variable assigned only at the kernel's top level, each
  time from a pure expression of indices, parameters and constants (``row =
  blockIdx.y * 32 + threadIdx.y``), is recomputed at the start of every thread
  loop instead of being kept in a slot.
- *Uniform control flow*: a loop or ``if`` holding a barrier whose bounds or
  condition are the same for every thread of the block (they read no thread
  index, no memory, no variable a thread changes) runs once per block, outside the
  thread loops, with its loop variable in one block-level variable.
"""
from . import nodes as ir
import simt.ir.types as T
from .regions import stmt_names
from .walk import map_children, walk

# per-thread and per-block special registers (all pure)
THREAD_OPS = ("threadIdx.x", "threadIdx.y", "threadIdx.z", "laneid")
BLOCK_OPS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "blockDim.x", "blockDim.y",
             "blockDim.z", "gridDim.x", "gridDim.y", "gridDim.z", "warpSize")
PURE_BINOPS = {"add", "sub", "mul", "truediv", "floordiv", "mod", "lshift", "rshift", "and",
               "or", "xor", "min", "max"}
MAX_NODES = 64          # a recomputed value costs its whole expression in every thread loop


class _Impure(Exception):
    pass


def closed(e, env, keep=()):
    """``e`` with every variable replaced by its recomputable definition in ``env``
    (name -> closed expression); variables in ``keep`` stay as they are. None when
    ``e`` reads memory, calls anything or reads another variable."""
    try:
        out = _close(e, env, keep)
    except _Impure:
        return None
    return out if _size(out) <= MAX_NODES else None


def _close(e, env, keep):
    if isinstance(e, (ir.Const, ir.Param)):
        return e
    if isinstance(e, ir.Var):
        if e.name in keep:
            return e
        if e.name in env:
            return env[e.name]
        raise _Impure
    if isinstance(e, ir.Intrinsic):
        if e.op in THREAD_OPS or e.op in BLOCK_OPS:
            return e
        raise _Impure
    if isinstance(e, ir.ArrayAttr):
        if isinstance(e.array, ir.Param):
            return e
        raise _Impure
    if isinstance(e, ir.BinOp):
        if e.op not in PURE_BINOPS or (e.op in ("floordiv", "mod") and e.type.kind not in "iu"):
            raise _Impure
    elif not isinstance(e, (ir.Cast, ir.UnaryOp, ir.Compare, ir.Logical, ir.IfExp)):
        raise _Impure
    if not isinstance(e.type, T.Scalar) or e.type.kind == "c":
        raise _Impure
    return map_children(e, lambda child: _close(child, env, keep))


def _size(e):
    return sum(1 for _ in walk(e))


def reads_thread(e):
    """Whether an expression depends on the thread (its index or a recomputed value of it)."""
    return any(isinstance(node, ir.Intrinsic) and node.op in THREAD_OPS for node in walk(e))


def _assigned_names(body):
    """name -> how it is assigned: 'top' (only top-level Assigns), 'assign' (Assigns, some
    nested) or 'other' (also a loop variable or a collective's or warp function's result)."""
    how = {}
    for s in ir.walk_stmts(body):
        if isinstance(s, ir.Assign):
            top = any(s is t for t in body)
            if how.get(s.name) != "other":
                how[s.name] = "top" if top and how.get(s.name, "top") == "top" else "assign"
        elif isinstance(s, ir.ForRange):
            how[s.var] = "other"
        elif isinstance(s, (ir.Collective, ir.WarpOp)) and s.name is not None:
            how[s.name] = "other"
    return how


def exits_loop(body):
    """Whether a loop body has a break or continue of its own (not of a nested loop)."""
    for s in body:
        if isinstance(s, (ir.Break, ir.Continue)):
            return True
        if isinstance(s, ir.If) and (exits_loop(s.then) or exits_loop(s.orelse)):
            return True
    return False


class Uniformity:
    """What of a barrier kernel is recomputed or runs once per block.

    ``recomputed``: names recomputed in every thread loop; ``state(stmt)``: name -> closed
    expression of each of them at the start of the top-level statement holding ``stmt``.
    ``block_vars``: names with one value per block (block-level variables): loop variables
    of uniform loops, and *uniform variables*, assigned only where the whole block goes, from
    values the same for every thread (``off = 1`` ... ``off *= 2`` around a barrier loop).
    ``block_level(stmt)``: for an If/While/ForRange holding a barrier that runs once per
    block, its closed condition or [start, stop, step]; for an Assign to a uniform
    variable, its closed value (the Assign runs once per block, before the thread loop
    of its run: nothing earlier in that run reads or writes the variable)."""

    def __init__(self, function):
        body = function.body
        how = _assigned_names(body)

        def scalar(n):
            return isinstance(function.locals.get(n), T.Scalar)
        candidates = {n for n, h in how.items() if h == "top" and scalar(n)}
        while True:
            states, bad = self._states(body, candidates)
            if not bad:
                break
            candidates -= bad
        self.recomputed = candidates
        self._states_by_id = states
        # block-level variables: assume every candidate, drop those that fail, until stable
        for_vars = [s.var for s in ir.walk_stmts(body)
                    if isinstance(s, ir.ForRange) and ir.contains_barrier(s)]
        plain = {s.var for s in ir.walk_stmts(body)
                 if isinstance(s, ir.ForRange) and not ir.contains_barrier(s)}
        block = {n for n, h in how.items() if h != "other" and scalar(n)} - candidates
        block |= {n for n in for_vars if for_vars.count(n) == 1 and n not in plain
                  and not self._assigned_otherwise(body, n)}
        while True:
            self._block_level, self._bad = {}, set()
            self._scan(body, True, block)
            if not self._bad:
                break
            block -= self._bad
        self.block_vars = block

    @staticmethod
    def _assigned_otherwise(body, name):
        return any(isinstance(s, (ir.Assign, ir.Collective, ir.WarpOp)) and s.name == name
                   for s in ir.walk_stmts(body))

    def _states(self, body, candidates):
        env, states, bad = {}, {}, set()
        for s in body:
            snapshot = dict(env)
            for inner in ir.walk_stmts([s]):
                states[id(inner)] = snapshot
            if isinstance(s, ir.Assign) and s.name in candidates:
                value = closed(s.value, env)
                if value is None:
                    bad.add(s.name)
                else:
                    env[s.name] = value
        return states, bad

    def state(self, stmt):
        return self._states_by_id.get(id(stmt), {})

    def same_state(self, new, old):
        """``new`` (a statement a later pass made: interchange.py) sees the recomputed
        values as ``old`` does."""
        self._states_by_id[id(new)] = self.state(old)

    def _uniform_value(self, e, stmt, block):
        value = closed(e, self.state(stmt), block)
        return None if value is None or reads_thread(value) else value

    def _scan(self, stmts, whole_block, block):
        """Find what runs once per block in ``stmts``; ``whole_block``: every thread of the
        block that has not returned runs them (no per-thread condition around them)."""
        seen = set()            # names the current run has used so far
        for s in stmts:
            if not ir.contains_barrier(s):
                if isinstance(s, ir.Assign) and s.name in block:
                    value = self._uniform_value(s.value, s, block)
                    if value is None or not whole_block or s.name in seen:
                        self._bad.add(s.name)
                    else:
                        self._block_level[id(s)] = value
                for inner in ir.walk_stmts([s]):
                    if inner is not s and isinstance(inner, ir.Assign) and inner.name in block:
                        self._bad.add(inner.name)     # under a per-thread condition
                stmt_names(s, seen)
                continue
            seen = set()
            if isinstance(s, ir.If):
                cond = self._uniform_value(s.cond, s, block)
                if cond is not None:
                    self._block_level[id(s)] = cond
                inner = whole_block and cond is not None
                self._scan(s.then, inner, block)
                self._scan(s.orelse, inner, block)
            elif isinstance(s, (ir.While, ir.ForRange)):
                if isinstance(s, ir.While):
                    bounds = self._uniform_value(s.cond, s, block)
                    ok = bounds is not None
                else:
                    bounds = [self._uniform_value(e, s, block) for e in (s.start, s.stop, s.step)]
                    ok = all(b is not None for b in bounds) and s.var in block
                ok = ok and not exits_loop(s.body)
                if ok:
                    self._block_level[id(s)] = bounds
                elif isinstance(s, ir.ForRange) and s.var in block:
                    self._bad.add(s.var)
                self._scan(s.body, whole_block and ok, block)

    def block_level(self, stmt):
        return self._block_level.get(id(stmt))
