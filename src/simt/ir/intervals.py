"""Barrier intervals: which reads of a shared array no thread can race with.

An *interval* is the code a block's threads run between two of its barriers (or from
the kernel's start): everything reachable from a barrier, or the entry, along the
control flow without passing another barrier. A thread's plain read races only with
another thread's write of the same element in the same interval (a barrier orders
everything before it against everything after it, and another block's shared memory is
other memory). So when no statement of any interval that holds a read of a static
shared array writes that array, the read can race with nothing: checked mode still
checks what it reads (written, by whom, before which barrier) but need not keep it on
record for a later write (backends/cpu/checked.py).

Conservative by construction: an array used in any way other than ``a[i]`` reads,
``a[i] = v`` writes, atomics on ``a`` and ``a.shape`` (a view, a call, an assignment
to a variable) keeps all its reads on record, and so does an array of dynamic shared
memory (all of them share one memory). The barriers are the statements checked mode
orders accesses at: ``Barrier`` (block, tile, named) and ``Collective``.
"""
from . import nodes as ir
from .walk import walk

_CUTS = (ir.Barrier, ir.Collective)


def unrecorded_reads(function):
    """The ids of the ``Load`` nodes of ``function`` that read a static shared array
    no statement of their intervals writes."""
    graph = _Flow(function.body)
    labels = graph.intervals()
    loads, writes, unfit = {}, {}, set()
    for node, exprs in graph.exprs.items():
        for expr in exprs:
            _uses(expr, node, loads, writes, unfit)
    found = set()
    for decl_id, sites in loads.items():
        if decl_id in unfit:
            continue
        written = set()
        for node in writes.get(decl_id, ()):
            written |= labels[node]
        found.update(id(load) for load, node in sites if not labels[node] & written)
    return frozenset(found)


def before_any_barrier(function):
    """The ids of the shared array accesses (Load, Store) of ``function`` that only the
    kernel's first interval reaches: no barrier of the block can come before them."""
    graph = _Flow(function.body)
    labels = graph.intervals()
    found = set()
    for node, exprs in graph.exprs.items():
        if labels[node] == {None}:
            for expr in exprs:
                found.update(id(e) for e in walk(expr) if isinstance(e, (ir.Load, ir.Store))
                             and _direct_array(e) is not None)
    return frozenset(found)


def _uses(root, node, loads, writes, unfit):
    """Sort the uses of shared arrays under ``root`` (evaluated at flow node ``node``)."""
    direct = set()
    for expr in walk(root):
        target = _direct_array(expr)
        if target is None:
            continue
        direct.add(id(target))
        decl = target.decl
        if isinstance(expr, ir.Load):
            loads.setdefault(id(decl), []).append((expr, node))
        elif not isinstance(expr, ir.ArrayAttr):
            writes.setdefault(id(decl), []).append(node)
    for expr in walk(root):
        if isinstance(expr, ir.ArrayRef) and id(expr) not in direct:
            unfit.add(id(expr.decl))          # a view, a call's argument, a variable


def _direct_array(expr):
    """The ArrayRef of a static shared array that ``expr`` reads or writes directly."""
    if isinstance(expr, (ir.Load, ir.ArrayAttr, ir.Store)):
        array = expr.array
    elif isinstance(expr, ir.Intrinsic) and expr.op.startswith("atomic") and expr.args:
        array = expr.args[0]
    else:
        return None
    if isinstance(array, ir.ArrayRef) and array.decl.space == "shared":
        return array
    return None


class _Flow:
    """The statements of a body as a control-flow graph: one node per simple statement
    and per head of a compound one (its condition, its range's bounds); a flow node is
    the statement object itself. ``exprs``: what each node evaluates."""

    def __init__(self, body):
        self.succ, self.exprs = {}, {}
        self.entry = self._seq(body, None, None)

    def _node(self, stmt, exprs):
        self.succ[stmt] = []
        self.exprs[stmt] = exprs
        return stmt

    def _seq(self, stmts, after, loop):
        """The entry of ``stmts`` followed by ``after`` (None: the end of the kernel);
        ``loop``: (head, exit) of the innermost loop."""
        for stmt in reversed(stmts):
            after = self._stmt(stmt, after, loop)
        return after

    def _stmt(self, stmt, after, loop):
        if isinstance(stmt, ir.If):
            node = self._node(stmt, [stmt.cond])
            node_succ = [self._seq(stmt.then, after, loop), self._seq(stmt.orelse, after, loop)]
        elif isinstance(stmt, (ir.While, ir.ForRange)):
            head = [stmt.cond] if isinstance(stmt, ir.While) else [stmt.start, stmt.stop,
                                                                   stmt.step]
            node = self._node(stmt, head)
            node_succ = [self._seq(stmt.body, node, (node, after)), after]
        else:
            node = self._node(stmt, [stmt])         # a simple statement holds no body
            if isinstance(stmt, ir.Break):
                node_succ = [loop[1]] if loop else []
            elif isinstance(stmt, ir.Continue):
                node_succ = [loop[0]] if loop else []
            elif isinstance(stmt, ir.Return):
                node_succ = []
            else:
                node_succ = [after]
        self.succ[node] = [s for s in node_succ if s is not None]
        return node

    def intervals(self):
        """Each node's intervals: the barriers (and the entry, None) from which it is
        reached without passing another barrier. A barrier belongs to the intervals it
        ends (what it evaluates, a collective's value, is computed before it)."""
        labels = {node: set() for node in self.succ}
        starts = [(None, [self.entry] if self.entry is not None else [])]
        starts += [(node, self.succ[node]) for node in self.succ if isinstance(node, _CUTS)]
        for label, first in starts:
            stack = list(first)
            while stack:
                node = stack.pop()
                if label in labels[node]:
                    continue
                labels[node].add(label)
                if not isinstance(node, _CUTS):
                    stack.extend(self.succ[node])
        return labels
