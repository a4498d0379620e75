"""Block-stride loops swapped with the thread loop (the CPU device, kernels with barriers).

A thread loop whose run holds ``for i in range(a + threadIdx.x, b, step)``, ``a``, ``b``
and ``step`` the same for the whole block (uniform.py) and ``step`` positive, visits
each thread's elements with a stride of ``step``: one element per trip, on a CPU no
vector code. Swapped, the range loop runs once per block outside and the threads inside,

    for k in range(a, b, step):          # once per block, k one value per block
        for each thread:                 # a thread loop: consecutive elements
            if k + threadIdx.x < b:
                i = k + threadIdx.x
                body

and the same for ``while v < b: body; v += step`` (CUDA C's form, CUDA by Example's
dot product) when ``v = a + threadIdx.x`` is assigned earlier in the run and ``v`` is read
nowhere else (its value after the loop would differ). Each thread still runs its own
trips in their order (thread t's trip j is ``a + t + j*step`` either way, and
``k + t >= b`` once ``k >= b``); only the
interleaving of different threads' trips changes, and the threads between two barriers
may run in any interleaving on a GPU. The run's statements before and after the loop
become thread loops of their own (as if a barrier stood there, another interleaving).

The body must keep that interleaving invisible (``legal``): no break, continue or return
of its own, no printf, assert, device function call or intrinsic other than math,
vector arithmetic, special registers and atomics (whose order CUDA leaves open), no
record field stored; and when it stores to global or shared memory (non-atomically),
every access of that memory in the body is at one index (in any of its arrays), one each
thread owns: ``i`` or ``i`` plus or minus a value the same for the block (distinct over
threads and trips: a step of at least the block's width) or ``threadIdx.x`` (blocks of
one row), so no thread reads or writes what another
writes (arrays passed twice, overlapping at other elements, would be a data race in
CUDA). Local arrays and constant memory are each thread's own or read-only.

``apply`` is called by the CPU emitter (backends/cpu/emit.py) on fission.py's pieces,
outside checked mode and warp fibers; the block-level loop variables it makes are added
to ``uniformity.block_vars`` (no per-thread slot); its name starts ``$interchange``
(seen in the kernel's LLVM IR: ``inspect_llvm``).
"""

from . import nodes as ir
from . import types as T
from .fission import Region, Run
from .uniform import BLOCK_OPS, THREAD_OPS, closed, exits_loop, reads_thread
from .walk import fields, walk

_PURE_PREFIXES = ("math.", "vector.")
_SPECIAL = frozenset(THREAD_OPS) | frozenset(BLOCK_OPS)
_POSITIVE_OPS = frozenset(BLOCK_OPS)
_REFUSED = (ir.Return, ir.Print, ir.Assert, ir.StoreField, ir.Barrier, ir.Collective,
            ir.WarpOp, ir.GridSync, ir.WarpGather, ir.WarpResult)


def apply(pieces, function, uniformity, block):
    """``pieces`` with every interchangeable loop swapped; returns (pieces, {name: type}
    of the block-level loop variables made). ``block``: the block shape the kernel is
    compiled for, or None."""
    made = {}
    return _pieces(pieces, function, uniformity, block, made), made


def _pieces(pieces, function, uniformity, block, made):
    out = []
    for piece in pieces:
        if isinstance(piece, Region):
            piece.parts = [_pieces(p, function, uniformity, block, made) for p in piece.parts]
            out.append(piece)
        else:
            out.extend(_run(piece, function, uniformity, block, made))
    return out


def _run(run, function, uniformity, block, made):
    for index, s in enumerate(run.stmts):
        if isinstance(s, ir.While):
            shape = match_while(s, run.stmts[:index], function, uniformity, block)
            if shape is not None:
                return _swap_while(run, index, shape, function, uniformity, block, made)
            continue
        if not isinstance(s, ir.ForRange):
            continue
        shape = match(s, function, uniformity, block)
        if shape is None:
            continue
        start, stop, step, tid = shape
        t = function.locals[s.var]
        k = f"$interchange{len(made)}.{s.var}"
        made[k] = t
        uniformity.block_vars.add(k)
        i = ir.BinOp(t, s.loc, "add", ir.Var(t, s.loc, k), tid)
        guard = ir.If(s.loc, ir.Compare(T.BOOL, s.loc, "lt", i, stop),
                      [ir.Assign(s.loc, s.var, i)] + list(s.body), [])
        uniformity.same_state(guard, s)
        outer = ir.ForRange(s.loc, k, start, stop, step, [guard], s.unroll)
        pieces = [Run(run.stmts[:index], run.hoisted),
                  Region(outer, [start, stop, step], [[Run([guard])]])]
        rest = Run(run.stmts[index + 1:])
        if rest.stmts:
            pieces.extend(_run(rest, function, uniformity, block, made))
        return pieces
    return [run]


def _swap_while(run, index, shape, function, uniformity, block, made):
    """``while v < b: body; v += step`` (v = a + threadIdx.x before it, not read after it)
    as a uniform while loop over a block-level ``k`` around a thread loop."""
    s = run.stmts[index]
    v, start, step, tid, wide, stop = shape
    t = function.locals[v]
    k = f"$interchange{len(made)}.{v}"
    made[k] = t
    uniformity.block_vars.add(k)

    def below(x):              # the loop's condition at x, in the type it compares in
        return ir.Compare(T.BOOL, s.loc, "lt", x if wide is None else ir.Cast(wide, s.loc, x),
                          stop)
    kvar = ir.Var(t, s.loc, k)
    i = ir.BinOp(t, s.loc, "add", kvar, tid)
    guard = ir.If(s.loc, below(i), [ir.Assign(s.loc, v, i)] + list(s.body[:-1]), [])
    uniformity.same_state(guard, s)
    nxt = ir.BinOp(t, s.loc, "add", kvar, step)
    outer = ir.While(s.loc, below(kvar), [guard])
    first = Run(run.stmts[:index], run.hoisted + [(ir.Assign(s.loc, k, start), start)])
    pieces = [first, Region(outer, below(kvar),
                            [[Run([guard]), Run([], [(ir.Assign(s.loc, k, nxt), nxt)])]])]
    rest = Run(run.stmts[index + 1:])
    if rest.stmts:
        pieces.extend(_run(rest, function, uniformity, block, made))
    return pieces


def match_while(s, before, function, uniformity, block):
    """(v, a, step, the thread part, the compare's wider type or None, b) of a loop
    ``while v < b: ...; v = v + step`` whose ``v`` is assigned ``a + threadIdx.x`` in the
    run before it (``before``) and read nowhere else, else None."""
    if not s.body or not isinstance(s.cond, ir.Compare) or s.cond.op != "lt":
        return None
    last, lhs, wide = s.body[-1], s.cond.lhs, None
    if isinstance(lhs, ir.Cast) and _strip(lhs) is not lhs and isinstance(_strip(lhs), ir.Var):
        wide, lhs = lhs.type, _strip(lhs)
    if not isinstance(lhs, ir.Var) or not isinstance(last, ir.Assign) or last.name != lhs.name:
        return None
    v = lhs.name
    t = function.locals.get(v)
    if not isinstance(t, T.Scalar) or t.kind != "i" or (wide is not None and wide.kind != "i"):
        return None
    inc = last.value
    if not (isinstance(inc, ir.BinOp) and inc.op == "add" and inc.type == t):
        return None
    step = inc.rhs if _is_var(inc.lhs, v) else inc.lhs if _is_var(inc.rhs, v) else None
    init = next((x for x in reversed(before) if isinstance(x, ir.Assign) and x.name == v), None)
    if step is None or init is None:
        return None
    after = before[[id(x) for x in before].index(id(init)) + 1:]
    if any(_assigns(x, v) for x in after) or _reads_elsewhere(function.body, v, s, init):
        return None
    state, keep = uniformity.state(s), uniformity.block_vars
    step, stop = closed(step, state, keep), closed(s.cond.rhs, state, keep)
    value = closed(init.value, uniformity.state(init), keep)
    if step is None or stop is None or value is None or step.type != t:
        return None
    if reads_thread(stop) or reads_thread(step) or not _positive(step):
        return None
    split = _split_start(value, t)
    if split is None:
        return None
    rows = block is not None and tuple(block[1:]) == (1, 1)
    if not legal(v, s.body[:-1], state, keep, rows, rows and _covers(step, block[0])):
        return None
    return v, split[0], step, split[1], wide, stop


def _is_var(e, name):
    return isinstance(e, ir.Var) and e.name == name


def _assigns(stmt, name):
    return any(isinstance(x, ir.Assign) and x.name == name or
               isinstance(x, ir.ForRange) and x.var == name or
               isinstance(x, (ir.Collective, ir.WarpOp)) and x.name == name
               for x in ir.walk_stmts([stmt]))


def _reads_elsewhere(body, name, loop, init):
    """Whether ``name`` is read outside ``loop`` and ``init``'s value."""
    inside = sum(1 for n in walk(*_all_exprs([loop])) if _is_var(n, name)) + \
        sum(1 for n in walk(init.value) if _is_var(n, name))
    return sum(1 for n in walk(*_all_exprs(body)) if _is_var(n, name)) != inside


def _all_exprs(body):
    return [e for stmt in ir.walk_stmts(body) for e in _exprs(stmt)]


def match(s, function, uniformity, block):
    """(a, b, step, the thread part of the start) of a loop that may be swapped, else None."""
    state = uniformity.state(s)
    keep = uniformity.block_vars
    bounds = [closed(e, state, keep) for e in (s.start, s.stop, s.step)]
    if any(e is None for e in bounds):
        return None
    start, stop, step = bounds
    t = function.locals.get(s.var)
    if not isinstance(t, T.Scalar) or t.kind not in "iu" or stop.type != t or step.type != t:
        return None
    if reads_thread(stop) or reads_thread(step) or not _positive(step):
        return None
    split = _split_start(start, t)
    if split is None:
        return None
    a, tid = split
    rows = block is not None and tuple(block[1:]) == (1, 1)
    if not legal(s.var, s.body, state, keep, rows, rows and _covers(step, block[0])):
        return None
    return a, stop, step, tid


def _split_start(start, t):
    """(a, the thread index as a ``t``) of a start ``a + threadIdx.x``, also written
    ``threadIdx.x`` alone or widened to ``t`` after a signed add, else None."""
    if _is_tid(start):
        return ir.Const(t, start.loc, 0), start
    wide = None
    if isinstance(start, ir.Cast) and start.type == t and isinstance(start.value, ir.BinOp) \
            and start.value.type.kind == "i" and t.kind == "i" \
            and t.dtype.itemsize >= start.value.type.dtype.itemsize:
        wide, start = start, start.value        # int64(a + tid): int32 overflow is undefined
    if not (isinstance(start, ir.BinOp) and start.op == "add"):
        return None
    for a, tid in ((start.lhs, start.rhs), (start.rhs, start.lhs)):
        if _is_tid(tid) and not reads_thread(a):
            if wide is not None:
                a, tid = ir.Cast(t, a.loc, a), ir.Cast(t, tid.loc, tid)
            return a, tid
    return None


def legal(var, body, state, keep, rows, disjoint_i):
    """Whether swapping a loop over ``var`` (its ``body``) with the thread loop cannot be
    seen (the module's rules). ``rows``: blocks of one row (threadIdx.x differs between
    threads); ``disjoint_i``: and a step of at least the row (distinct ``var`` for every
    thread and trip)."""
    if any(_assigns(x, var) for x in body) or exits_loop(body):
        return False
    accesses = []
    for stmt in ir.walk_stmts(body):
        if isinstance(stmt, _REFUSED):
            return False
        if isinstance(stmt, ir.Store):
            accesses.append((stmt.array, stmt.indices, True))
        for node in walk(*_exprs(stmt)):
            if isinstance(node, ir.CallDevice):
                return False
            if isinstance(node, ir.Intrinsic):
                if not (node.op in _SPECIAL or node.op.startswith(_PURE_PREFIXES)
                        or node.op.startswith("atomic")):
                    return False
                if node.op.startswith("atomic"):
                    accesses.append((node.args[0], None, True))
            elif isinstance(node, ir.Load):
                accesses.append((node.array, node.indices, False))
    for space in ("global", "shared"):
        mine = [a for a in accesses if _space(a[0]) == space]
        plain_stores = [a for a in mine if a[2] and a[1] is not None]
        if not plain_stores:
            continue
        if any(a[1] is None for a in mine):          # atomics and plain stores mixed
            return False
        index = [closed(e, state, keep | {var}) for e in plain_stores[0][1]]
        if any(e is None for e in index) or not any(
                _owned(e, var, rows, disjoint_i) for e in index):
            return False
        for array, indices, _ in mine:
            if len(indices) != len(index) or not all(
                    _same(closed(e, state, keep | {var}), f) for e, f in zip(indices, index)):
                return False
    return True


def _exprs(stmt):
    """The expressions a statement holds itself (not those of its nested statements)."""
    out = []
    for _, value in fields(stmt):
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ir.Expr):
                out.append(item)
    return out


def _space(array):
    """'global', 'shared', or None for memory each thread owns or nobody writes."""
    while isinstance(array, ir.View):
        array = array.array
    if isinstance(array, ir.ArrayRef):
        space = array.decl.space
        if space in ("shared", "dynamic_shared"):
            return "shared"
        return None if space in ("local", "const") else "global"
    return "global"


def _strip(e):
    while isinstance(e, ir.Cast) and e.type.kind in "iu" and e.value.type.kind in "iu" \
            and e.type.dtype.itemsize >= e.value.type.dtype.itemsize:
        e = e.value
    return e


def _is_tid(e):
    e = _strip(e)
    return isinstance(e, ir.Intrinsic) and e.op == "threadIdx.x" and not e.args


def _owned(e, var, rows, disjoint_i):
    """An index no other thread uses: the loop variable plus or minus a value the same
    for the block (``disjoint_i``), or threadIdx.x (``rows``)."""
    e = _strip(e)
    if isinstance(e, ir.BinOp) and e.op in ("add", "sub") and not reads_thread(e):
        if _is_var(_strip(e.lhs), var) and not _mentions(e.rhs, var):
            e = _strip(e.lhs)
        elif e.op == "add" and _is_var(_strip(e.rhs), var) and not _mentions(e.lhs, var):
            e = _strip(e.rhs)
    if _is_var(e, var):
        return disjoint_i
    return _is_tid(e) and rows


def _mentions(e, var):
    return any(_is_var(n, var) for n in walk(e))


def _positive(e):
    e = _strip(e)
    if isinstance(e, ir.Const):
        return e.type.kind in "iu" and int(e.value) > 0
    if isinstance(e, ir.Intrinsic):
        return e.op in _POSITIVE_OPS and not e.args
    if isinstance(e, ir.BinOp) and e.op in ("mul", "add"):
        return _positive(e.lhs) and _positive(e.rhs)
    return False


def _covers(e, width):
    """``e`` (positive) is at least ``width``, the block's threads in x."""
    e = _strip(e)
    if isinstance(e, ir.Const):
        return _positive(e) and int(e.value) >= width
    if isinstance(e, ir.Intrinsic):
        return e.op == "blockDim.x" and not e.args
    if isinstance(e, ir.BinOp) and e.op in ("mul", "add"):
        return (_covers(e.lhs, width) and _positive(e.rhs)) or \
            (_covers(e.rhs, width) and _positive(e.lhs))
    return False


def _same(p, q):
    """The same expression, node for node (closed indices, arrays)."""
    if p is q:
        return True
    if type(p) is not type(q) or getattr(p, "type", None) != getattr(q, "type", None):
        return False
    if isinstance(p, ir.ArrayRef):
        return p.decl is q.decl
    for (name, x), (_, y) in zip(fields(p), fields(q)):
        if isinstance(x, (ir.Expr, ir.Stmt)):
            if not _same(x, y):
                return False
        elif isinstance(x, list):
            if len(x) != len(y) or not all(_same(a, b) if isinstance(a, ir.Expr) else a == b
                                           for a, b in zip(x, y)):
                return False
        elif x != y:
            return False
    return True
