"""Bounds checks hoisted out of a block's thread loop (the CPU device with boundscheck).

A check inside the loop over a block's threads is a compare and a branch to a fault per
access, and the branch keeps LLVM from vectorizing the loop: bench's scan ran 3.5x C with
checks on 16 cores against 1.15x without. Most indices are simple functions of the
thread index (``s[tid - off]``, ``x[blockIdx.x * B + tid]``), so before a thread loop
the block computes, once, the range each such index takes over the block's threads
(interval arithmetic in 128 bits, the thread index ranging over ``[0, blockDim)``,
narrowed by the ``if`` conditions around the access that compare a thread index with a
block-wide value: ``if tid >= off``, ``if i < n``). When every range is in bounds (and
every intermediate value fits its type, so that nothing wrapped), the threads run with
those checks left out; otherwise they run as written, so a fault names the same thread
and line as before.

Covered: loads and stores of parameter arrays and of shared and constant arrays
whose indices are built from thread and block indices, parameters, array shapes,
constants and block-wide variables with + - * min max, and // % & >> << by a constant;
variables assigned such values earlier in the loop, and the values uniform.py recomputes,
stand for their definitions; a range loop's variable (bounds the same for the whole block,
a constant step) stands for every value it takes. An access under a condition that reads
memory keeps its check in the loop. Thread loops holding a while loop, nested range loops
or warp functions are left as they are. The body is emitted twice, so a kernel with checks takes
about twice as long to compile (the 2-core machine: bench's transpose_tiled 135 -> 300 ms,
scan_blocks 175 -> 340 ms; without checks 120): once per kernel, the disk cache keeps it.
"""
import dataclasses

from llvmlite import ir as ll

from ...ir import nodes as ir
from ...ir import walk

I128 = ll.IntType(128)
_THREAD = {"threadIdx.x": 0, "threadIdx.y": 1, "threadIdx.z": 2}
_BLOCK = frozenset({"blockIdx.x", "blockIdx.y", "blockIdx.z", "blockDim.x", "blockDim.y",
                    "blockDim.z", "gridDim.x", "gridDim.y", "gridDim.z"})
_ARITH = frozenset({"add", "sub", "mul", "min", "max"})
_BY_CONSTANT = frozenset({"floordiv", "mod", "and", "rshift", "lshift"})
_ARRAY_SPACES = frozenset({"shared", "const", "dynamic_shared"})
_LEFT_ALONE = (ir.While, ir.WarpGather, ir.WarpResult, ir.WarpOp, ir.Collective)
_FLIP = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}
_MIRROR = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
_UNKNOWN = object()        # a variable given a value the ranges cannot follow


@dataclasses.dataclass
class Span:
    """A range loop's variable: every value from ``start`` towards ``stop`` by ``step``."""
    type: object
    start: ir.Expr
    stop: ir.Expr
    step: int


@dataclasses.dataclass
class Site:
    node: object                     # the Load or Store whose checks are hoisted
    array: ir.Expr
    indices: list
    path: list                       # [(condition, the value it has on the way here)]


class _No(Exception):
    """An expression whose range is not followed."""


def thread_loops(em, stmts, body_fn, guards, state=None):
    """The thread loop of ``stmts`` (emitted by ``body_fn``), with the checks of the
    accesses whose ranges the block can check first hoisted out of it."""
    covered = _sites(stmts, state or {}, _block_vars(em))
    slow = []                   # the checked loop's block, made when a check branches to it

    def checked():
        if not slow:
            slow.append(em.new_block("checked"))
        return slow[0]
    ok, proven = _check_ranges(em, covered, checked) if covered else (None, [])
    if ok is None:
        em.thread_loop(body_fn, guards, state=state)
        return
    b = em.builder
    fast, done = em.new_block("in_bounds"), em.new_block("threads_checked")
    slow = checked()
    b.cbranch(ok, fast, slow).set_weights([1 << 20, 1])     # the checked loop: out of the way
    for block, ids in ((fast, frozenset(id(s.node) for s in proven)), (slow, frozenset())):
        em.builder.position_at_end(block)
        em.proven = ids
        try:
            em.thread_loop(body_fn, guards, state=state)
        finally:
            em.proven = frozenset()
        em.builder.branch(done)
    em.builder.position_at_end(done)


def _block_vars(em):
    return em.uniform.block_vars if em.uniform is not None else frozenset()


# ---------------------------------------------------------------- which accesses
def _sites(stmts, state, block_vars):
    if any(isinstance(s, _LEFT_ALONE) for s in ir.walk_stmts(stmts)):
        return []
    loops = [s for s in ir.walk_stmts(stmts) if isinstance(s, ir.ForRange)]
    if any(isinstance(inner, ir.ForRange) for s in loops for inner in ir.walk_stmts(s.body)):
        return []
    found = []
    _walk_stmts(stmts, _Env(dict(state), block_vars), [], found)
    return found


class _Env:
    """Variables as the walk reaches a statement: name -> definition (or _UNKNOWN)."""

    def __init__(self, values, block_vars):
        self.values, self.block_vars = values, block_vars

    def copy(self):
        return _Env(dict(self.values), self.block_vars)


def _walk_stmts(stmts, env, path, found):
    for s in stmts:
        if isinstance(s, ir.Assign):
            _walk_expr(s.value, env, path, found)
            value = _subst(s.value, env)
            env.values[s.name] = value if value is not None else _UNKNOWN
        elif isinstance(s, ir.Store):
            for e in [s.array, *s.indices, s.value]:
                _walk_expr(e, env, path, found)
            _site(s, s.array, s.indices, env, path, found)
        elif isinstance(s, ir.If):
            _walk_expr(s.cond, env, path, found)
            cond = _subst(s.cond, env)
            merged = dict(env.values)
            for branch, value in ((s.then, True), (s.orelse, False)):
                inner = env.copy()
                _walk_stmts(branch, inner, _along(path, cond, value), found)
                for name, v in inner.values.items():
                    if v is not env.values.get(name):
                        merged[name] = _UNKNOWN       # assigned on one path: either value
            env.values = merged
        elif isinstance(s, ir.ForRange):
            for e in (s.start, s.stop, s.step):
                _walk_expr(e, env, path, found)
            bounds = [_subst(e, env) for e in (s.start, s.stop)]
            changed = {s.var} | {n for inner in ir.walk_stmts(s.body)
                                 for n in _names_set(inner)}
            for name in changed:            # values from an earlier trip: not followed
                env.values[name] = _UNKNOWN
            if None not in bounds and all(_point(e) for e in bounds) \
                    and isinstance(s.step, ir.Const) and s.step.value:
                env.values[s.var] = Span(s.stop.type, *bounds, s.step.value)
            _walk_stmts(s.body, env, path, found)
            for name in changed:
                env.values[name] = _UNKNOWN
        else:
            for e in walk.children(s):
                if isinstance(e, ir.Expr):
                    _walk_expr(e, env, path, found)
            for name in _names_set(s):
                env.values[name] = _UNKNOWN


def _names_set(s):
    """The variable a statement other than Assign sets (Collective, WarpOp...)."""
    name = getattr(s, "name", None)
    return [name] if isinstance(name, str) and not isinstance(s, ir.StoreField) else []


def _walk_expr(e, env, path, found):
    if isinstance(e, ir.Logical):
        _walk_expr(e.lhs, env, path, found)
        lhs = _subst(e.lhs, env)
        _walk_expr(e.rhs, env, _along(path, lhs, e.op == "and"), found)
        return
    if isinstance(e, ir.IfExp):
        _walk_expr(e.cond, env, path, found)
        cond = _subst(e.cond, env)
        for part, value in ((e.then, True), (e.orelse, False)):
            _walk_expr(part, env, _along(path, cond, value), found)
        return
    for child in walk.children(e):
        _walk_expr(child, env, path, found)
    if isinstance(e, ir.Load):
        _site(e, e.array, e.indices, env, path, found)


def _along(path, cond, value):
    """The path into a branch; None (accesses there keep their checks) under a condition
    the ranges cannot read."""
    return None if path is None or cond is None else path + [(cond, value)]


def _site(node, array, indices, env, path, found):
    if path is None:
        return
    array = _array(array, env)
    indices = [_subst(i, env) for i in indices]
    if array is not None and all(i is not None for i in indices):
        found.append(Site(node, array, indices, list(path)))


def _array(e, env):
    if isinstance(e, ir.Param):
        return e
    if isinstance(e, ir.ArrayRef) and e.decl.space in _ARRAY_SPACES:
        return e
    return None


def _subst(e, env):
    """``e`` with the loop's variables replaced by their definitions; None when it reads
    something else (memory, a per-thread variable, a call)."""
    if isinstance(e, (ir.Const, ir.Param)):
        return e
    if isinstance(e, ir.Var):
        value = env.values.get(e.name)
        if value is None:
            return e if e.name in env.block_vars else None
        return None if value is _UNKNOWN else value
    if isinstance(e, Span):
        return e
    if isinstance(e, ir.ArrayAttr):
        array = _array(e.array, env)
        return None if array is None or e.attr != "shape" else walk.replace(e, array=array)
    if isinstance(e, ir.Intrinsic):
        return e if (e.op in _THREAD or e.op in _BLOCK) and not e.args else None
    if isinstance(e, ir.TupleGet) and isinstance(e.tuple, ir.TupleExpr):
        return _subst(e.tuple.items[e.index], env)
    if isinstance(e, (ir.Cast, ir.UnaryOp)):
        value = _subst(e.value, env)
        return None if value is None else walk.replace(e, value=value)
    if isinstance(e, (ir.BinOp, ir.Compare, ir.Logical)):
        lhs, rhs = _subst(e.lhs, env), _subst(e.rhs, env)
        return None if lhs is None or rhs is None else walk.replace(e, lhs=lhs, rhs=rhs)
    return None


# ---------------------------------------------------------------- the ranges, once per block
CHAIN = 16        # checks and-ed together before a branch to the checked loop


def _check_ranges(em, covered, checked_loop):
    """(i1: every covered access in bounds for every thread, the sites it covers), or
    (None, []) when none can be followed; every CHAIN checks, a branch to the block
    ``checked_loop()`` when one fails. Sites alike (the same array, indices and conditions,
    as a long kernel's ``a[i + 2]`` read many times) are checked once.

    The branches keep each chain of ``and`` short: LLVM folds a long chain of these
    checks into one ``and`` of hundreds of compares, which its SLP vectorizer tries as a
    vector reduction at every width (20 s on a kernel of 200 array parameters)."""
    ranges = _Ranges(em)
    ok, proven, checked, count = None, [], {}, 0
    for site in covered:
        key = ranges.key_of(site)
        if key not in checked:
            try:
                fine = ranges.site_ok(site)
            except _No:
                fine = None
            checked[key] = fine is not None
            if fine is not None:
                ok = fine if ok is None else em.builder.and_(ok, fine)
                count += 1
            if count == CHAIN:
                more = em.new_block("ranges")
                em.builder.cbranch(ok, more, checked_loop()).set_weights([1 << 20, 1])
                em.builder.position_at_end(more)
                ok, count = ll.Constant(ll.IntType(1), 1), 0
        if checked[key]:
            proven.append(site)
    return ok, proven


class _Ranges:
    """Interval arithmetic on i128 values, emitted at the block level. Each expression's
    range (and each condition's narrowing) is emitted once per set of thread ranges, and
    found again by its structural key (Keys): a kernel with thousands of accesses to a
    few indices would otherwise emit the same arithmetic at each, and LLVM's optimizer
    time grows faster than the code."""

    def __init__(self, em):
        self.em, self.b = em, em.builder
        self.points = {}
        self.keys = Keys()
        self.ranges = {}        # (key of e, thread ranges' ids) -> (lo, hi, what must hold)
        self.narrowed = {}      # (key of cond, value, thread ranges' ids) -> (ranges, needs)
        self._threads = None
        self.empties = {}       # thread ranges' ids -> i1: no thread has them
        self.included = {}      # thread ranges' ids -> ids of the needs in the chain

    def key_of(self, site):
        """Sites with one key have one check: the array, the indices, the conditions."""
        key = self.keys.key
        return (key(site.array), tuple(key(i) for i in site.indices),
                tuple((key(c), v) for c, v in site.path))

    def wide(self, value, t):
        signed = t.kind == "i"
        if value.type.width >= 128:
            return value
        return self.b.sext(value, I128) if signed else self.b.zext(value, I128)

    def const(self, v):
        return ll.Constant(I128, v)

    def threads(self):
        """Each thread index's [lo, hi] over the block (emitted once)."""
        if self._threads is None:
            self._threads = [(self.const(0), self.b.sub(self.b.zext(d, I128), self.const(1)))
                             for d in self.em.block_dims]
        return self._threads

    def site_ok(self, site):
        b = self.b
        need = []
        tr = self.threads()
        for cond, value in site.path:
            tr = self.narrow(cond, value, tr, need)
        array = self.em.expr(site.array)
        fine = ll.Constant(ll.IntType(1), 1)     # a 0-d array's a[()] is always in bounds
        for d, index in enumerate(site.indices):
            lo, hi = self.range(index, tr, need)
            extent = b.sext(array.shape[d], I128)
            this = b.and_(b.icmp_signed(">=", lo, self.const(0)), b.icmp_signed("<", hi, extent))
            fine = b.and_(fine, this)
        # what an earlier site under the same thread ranges needed is in the chain already:
        # (no thread or A and n) and (no thread or B and n) is (no thread or A and B and n)
        included = self.included.setdefault(_ids(tr), set())
        for c in _distinct(need):
            if id(c) not in included:
                fine = b.and_(fine, c)
        included.update(id(c) for c in need)
        return b.or_(self.empty(tr), fine)

    def empty(self, tr):
        """i1: no thread has the ranges ``tr`` (nothing to check); emitted once for each."""
        key = _ids(tr)
        found = self.empties.get(key)
        if found is None:
            b = self.b
            for lo, hi in tr:
                e = b.icmp_signed(">", lo, hi)
                found = e if found is None else b.or_(found, e)
            self.empties[key] = found
        return found

    # ------------------------------------------------------------ conditions
    def narrow(self, cond, value, tr, need):
        """The thread ranges of the threads for which ``cond`` is ``value``; conditions
        it cannot use leave them as they are (more to check, never less)."""
        memo = (self.keys.key(cond), value, _ids(tr))
        found = self.narrowed.get(memo)
        if found is None:
            own = []
            found = self.narrowed[memo] = (self._narrow(cond, value, tr, own), own)
        need.extend(found[1])
        return found[0]

    def _narrow(self, cond, value, tr, need):
        if isinstance(cond, ir.UnaryOp) and cond.op == "not":
            return self.narrow(cond.value, not value, tr, need)
        if isinstance(cond, ir.Logical) and (cond.op == "and") == value:
            return self.narrow(cond.rhs, value, self.narrow(cond.lhs, value, tr, need), need)
        if not isinstance(cond, ir.Compare) or cond.lhs.type != cond.rhs.type \
                or getattr(cond.lhs.type, "kind", None) not in ("i", "u"):
            return tr
        op = cond.op if value else _FLIP[cond.op]
        lhs, rhs = cond.lhs, cond.rhs
        unit = _unit(lhs)
        if unit is None or not _point(rhs):
            unit, lhs, rhs, op = _unit(rhs), rhs, lhs, _MIRROR[op]
            if unit is None or not _point(rhs):
                return tr
        try:
            self.range(lhs, tr, need)            # the compare's values fit their types
            bound = self.range(rhs, tr, need)[0]
        except _No:
            return tr
        axis, offsets = unit
        b = self.b
        for sign, off in offsets:                # t + offsets op bound: t op bound - offsets
            v = self.range(off, tr, need)[0]
            bound = b.sub(bound, v) if sign > 0 else b.add(bound, v)
        lo, hi = tr[axis]
        if op in ("lt", "le", "eq"):
            top = b.sub(bound, self.const(1)) if op == "lt" else bound
            hi = b.select(b.icmp_signed("<", top, hi), top, hi)
        if op in ("gt", "ge", "eq"):
            bottom = b.add(bound, self.const(1)) if op == "gt" else bound
            lo = b.select(b.icmp_signed(">", bottom, lo), bottom, lo)
        return [(lo, hi) if k == axis else r for k, r in enumerate(tr)]

    # ------------------------------------------------------------ values
    def range(self, e, tr, need):
        """[lo, hi] of integer expression ``e`` over the thread ranges ``tr``; what must
        hold for it (each value fits its type) goes into ``need``."""
        if getattr(e.type, "kind", None) not in ("i", "u", "b"):
            raise _No
        if _point(e):
            v = self.point(e)
            return v, v
        memo = (self.keys.key(e), _ids(tr))
        found = self.ranges.get(memo)
        if found is None:
            own = []
            lo, hi = self._fitting(e, tr, own)
            found = self.ranges[memo] = (lo, hi, own)
        need.extend(found[2])
        return found[0], found[1]

    def _fitting(self, e, tr, need):
        """range() of an expression that is not a point, computed."""
        lo, hi = self._range(e, tr, need)
        if e.type.kind != "b":
            bits = e.type.dtype.itemsize * 8
            least, most = (-(1 << bits - 1), (1 << bits - 1) - 1) if e.type.kind == "i" \
                else (0, (1 << bits) - 1)
            b = self.b
            need.append(b.and_(b.icmp_signed(">=", lo, self.const(least)),
                               b.icmp_signed("<=", hi, self.const(most))))
        return lo, hi

    def point(self, e):
        """A value the same for every thread, computed once (at the block level)."""
        key = self.keys.key(e)
        if key not in self.points:
            self.points[key] = self.wide(self.em.expr(e), e.type)
        return self.points[key]

    def _range(self, e, tr, need):
        b = self.b
        if isinstance(e, ir.Intrinsic) and e.op in _THREAD:
            return tr[_THREAD[e.op]]
        if isinstance(e, Span):
            # the last value taken: start + (stop - 1 - start) // step * step for step > 0
            # (an empty loop reads nothing: [start, start] then)
            first, stop = self.point(e.start), self.point(e.stop)
            step = self.const(abs(e.step))
            span = b.sub(b.sub(stop, first), self.const(1)) if e.step > 0 else \
                b.sub(b.sub(first, stop), self.const(1))
            span = self.max(span, self.const(0))
            reach = b.mul(self.divide(span, abs(e.step), need), step)
            if e.step > 0:
                return first, b.add(first, reach)
            return b.sub(first, reach), first
        if isinstance(e, ir.Cast):
            if getattr(e.value.type, "kind", None) not in ("i", "u", "b"):
                raise _No
            return self.range(e.value, tr, need)
        if isinstance(e, ir.UnaryOp) and e.op == "neg":
            lo, hi = self.range(e.value, tr, need)
            return b.neg(hi), b.neg(lo)
        if not isinstance(e, ir.BinOp):
            raise _No
        if e.op in _ARITH:
            (alo, ahi), (blo, bhi) = self.range(e.lhs, tr, need), self.range(e.rhs, tr, need)
            if e.op == "add":
                return b.add(alo, blo), b.add(ahi, bhi)
            if e.op == "sub":
                return b.sub(alo, bhi), b.sub(ahi, blo)
            if e.op == "min":
                return self.min(alo, blo), self.min(ahi, bhi)
            if e.op == "max":
                return self.max(alo, blo), self.max(ahi, bhi)
            products = [b.mul(x, y) for x in (alo, ahi) for y in (blo, bhi)]
            lo, hi = products[0], products[0]
            for p in products[1:]:
                lo, hi = self.min(lo, p), self.max(hi, p)
            return lo, hi
        if e.op not in _BY_CONSTANT or not isinstance(e.rhs, ir.Const) \
                or not isinstance(e.rhs.value, int) or e.rhs.value <= 0:
            raise _No
        k = e.rhs.value
        lo, hi = self.range(e.lhs, tr, need)
        if e.op == "lshift":
            if k >= 64:
                raise _No
            return b.shl(lo, self.const(k)), b.shl(hi, self.const(k))
        need.append(b.icmp_signed(">=", lo, self.const(0)))     # the rest: a non-negative lhs
        if e.op == "floordiv":
            return self.divide(lo, k, need), self.divide(hi, k, need)
        if e.op == "rshift":
            if k >= 64:
                raise _No
            return b.ashr(lo, self.const(k)), b.ashr(hi, self.const(k))
        top = self.const(k - 1 if e.op == "mod" else k)
        return self.const(0), self.min(hi, top)

    def divide(self, x, k, need):
        """x // k for a non-negative x (what the callers need already), in 64 bits: a
        128-bit division by a constant that is not a power of two is a call of libgcc's
        __divti3, which the CPU JIT cannot resolve (the process crashed). x must fit."""
        b = self.b
        need.append(b.icmp_signed("<=", x, self.const((1 << 63) - 1)))
        narrow = b.trunc(x, ll.IntType(64))
        return b.zext(b.udiv(narrow, ll.Constant(ll.IntType(64), k)), I128)

    def min(self, x, y):
        return self.b.select(self.b.icmp_signed("<", x, y), x, y)

    def max(self, x, y):
        return self.b.select(self.b.icmp_signed(">", x, y), x, y)


def _ids(tr):
    """Thread ranges as a dictionary key (the LLVM values live as long as the module)."""
    return tuple(id(v) for pair in tr for v in pair)


def _distinct(values):
    """``values`` without repeats (by identity), in order."""
    seen = set()
    return [v for v in values if id(v) not in seen and not seen.add(id(v))]


class Keys:
    """Structural keys of substituted expressions: two with one key compute the same
    value. Kept per expression object (by id, the objects outliving the Keys), so that
    a definition shared by many expressions is keyed once."""

    def __init__(self):
        self.known = {}          # id(e) -> (e, its key): e kept alive, its id not reused

    def key(self, e):
        found = self.known.get(id(e))
        if found is None:
            found = self.known[id(e)] = (e, self._key(e))
        return found[1]

    def _key(self, e):
        if isinstance(e, Span):
            return ("span", e.type, self.key(e.start), self.key(e.stop), e.step)
        if isinstance(e, ir.ArrayRef):
            return ("ref", id(e.decl))
        own = tuple(_plain(v) for _, v in walk.fields(e)
                    if not isinstance(v, (ir.Expr, ir.Stmt, list)))
        parts = tuple(self.key(c) for c in walk.children(e))
        return (type(e).__name__, e.type, own, parts)


def _plain(value):
    """A field's value as part of a key: an intrinsic's attributes by their items, any
    other value that cannot be a key by its identity."""
    if isinstance(value, dict):
        return tuple(sorted((k, _plain(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return value


def _point(e):
    """Whether ``e`` (substituted) is the same for every thread of the block and safe to
    compute for all of them (no division or shift that could trap or wrap)."""
    if isinstance(e, (ir.Const, ir.Param, ir.Var, ir.ArrayAttr)):
        return True
    if isinstance(e, ir.Intrinsic):
        return e.op in _BLOCK
    if isinstance(e, ir.Cast):
        return getattr(e.value.type, "kind", None) in ("i", "u", "b") and _point(e.value)
    if isinstance(e, ir.UnaryOp):
        return _point(e.value)
    if isinstance(e, (ir.BinOp, ir.Compare, ir.Logical)):
        if isinstance(e, ir.BinOp) and e.op not in _ARITH and e.op not in ("and", "or", "xor"):
            return False
        return _point(e.lhs) and _point(e.rhs)
    return False


def _unit(e):
    """(axis, [(sign, point)]) when ``e`` is a thread index plus or minus values the same
    for the whole block (``tid + base``, ``i - off``), else None."""
    if isinstance(e, ir.Intrinsic) and e.op in _THREAD:
        return _THREAD[e.op], []
    if isinstance(e, ir.Cast) and getattr(e.value.type, "kind", None) in ("i", "u"):
        return _unit(e.value)
    if isinstance(e, ir.BinOp) and e.op in ("add", "sub"):
        inner = _unit(e.lhs)
        if inner is not None and _point(e.rhs):
            return inner[0], inner[1] + [(1 if e.op == "add" else -1, e.rhs)]
        inner = _unit(e.rhs)
        if e.op == "add" and inner is not None and _point(e.lhs):
            return inner[0], inner[1] + [(1, e.lhs)]
    return None
