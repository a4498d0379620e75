"""Float contraction decided in the typed IR: which ``a*b + c`` become one fma.

nvcc contracts a product feeding an add (``-fmad=true``, its default), and so did simt's
LLVM targets, through fast-math ``contract`` flags, while the sim device rounded both
steps: a kernel gave different last bits on cpu and sim (issue 36 item 7). Deciding here,
before any back end, makes every device compute the same thing (DESIGN.md: "Float
contraction is decided in the IR, the same way for both targets"); code generation then
gives LLVM no ``contract`` flag (outside fastmath=True) and the sim computes ``math.fma``
exactly. The rules, for float32 and float64 (docs/math.md):

- ``a*b + c``, ``c + a*b`` -> fma(a, b, c); ``a*b - c`` -> fma(a, b, -c);
  ``c - a*b`` -> fma(-a, b, c), the product written in the same expression (``acc += a*b``
  too); a product held in a variable first is rounded, as C compilers may do either;
- ``t + t + c`` with ``t`` one value or the same product twice (``a*b + b*a + c``, a complex
  square's imaginary part) -> fma(t, 2, c), which rounds as ``(t + t) + c`` does;
- an operand that would move past a call (a device function, an intrinsic other than a
  math function) stays unfused, so evaluation order is never changed where it could show.
"""
from ..ir import nodes as ir, types as T
from ..ir.walk import all_functions, children, map_children, walk
from ..lang.registry import REGISTRY

FLOATS = (T.FLOAT32, T.FLOAT64)


def contract_functions(fn):
    """Rewrite ``fn`` and the device functions it calls in place; returns ``fn``.

    Each fma is marked ``contracted``: ``"alone"`` where the kernel (with every function
    it calls, which may be inlined into it) has no product left rounded, else True. A GPU
    lowers the former as a contract-flagged multiply and add, the latter as
    llvm.fmuladd (mathlower._contracted says why)."""
    functions = list(all_functions(fn))
    for f in functions:
        pass_ = _Contract()
        f.body = [pass_.rewrite(s) for s in f.body]
    fmas, rounded = [], False
    for node in walk(*[s for f in functions for s in f.body]):
        if isinstance(node, ir.BinOp) and node.op == "mul" and node.type in FLOATS:
            rounded = True
        elif getattr(node, "attrs", None) and node.attrs.get("contracted"):
            fmas.append(node)
    if not rounded:
        for node in fmas:
            node.attrs["contracted"] = "alone"
    return fn


class _Contract:
    """One function's rewrite. Whether an expression is pure is asked of every add and
    of its operands on the way down: it is remembered per node, so a long sum (a chain
    of 2,000 adds) is walked once, not once per add (that was quadratic: 5 s of a
    400-term sum's compile)."""

    def __init__(self):
        self.purity = {}            # id(node) -> (node, pure): the node kept alive

    def rewrite(self, node):
        """``node`` with its fusable adds made fmas, outermost first (so that ``t + t +
        c`` is seen whole before ``t + t`` could fuse on its own)."""
        if isinstance(node, ir.BinOp) and node.op in ("add", "sub") and \
                node.type in FLOATS:
            fused = self.fused(node)
            if fused is not None:
                return fused
        kids = children(node)
        if not kids:
            return node
        done = [self.rewrite(k) for k in kids]
        if all(a is b for a, b in zip(kids, done)):
            return node                 # nothing fused below: the node itself, not a copy
        made = iter(done)               # map_children visits them in children's order
        return map_children(node, lambda _: next(made))

    def fused(self, e):
        """The fma that ``e`` (an add or sub of float type) becomes, or None (``t + t``
        itself stays: it is exact, and LLVM writes the same product twice as one)."""
        lhs, rhs, sub = e.lhs, e.rhs, e.op == "sub"
        rewrite, doubled = self.rewrite, self.doubled
        if doubled(e) is not None:
            return None
        two = ir.Const(e.type, e.loc, 2.0)
        if doubled(lhs) is not None:                                # (t + t) +- c
            return _fma(e, rewrite(doubled(lhs)), two, _signed(rewrite(rhs), sub))
        if not sub and doubled(rhs) is not None and self.pure(lhs):  # c + (t + t)
            return _fma(e, rewrite(doubled(rhs)), two, rewrite(lhs))
        if _is_product(lhs, e.type):                                # a*b +- c
            return _fma(e, rewrite(lhs.lhs), rewrite(lhs.rhs), _signed(rewrite(rhs), sub))
        if _is_product(rhs, e.type) and self.pure(lhs):             # c + a*b, c - a*b
            return _fma(e, _signed(rewrite(rhs.lhs), sub), rewrite(rhs.rhs), rewrite(lhs))
        return None

    def doubled(self, e):
        """t where ``e`` is t + t' with t and t' the same value (one pure expression
        twice, or the same two factors in either order), else None."""
        if not (isinstance(e, ir.BinOp) and e.op == "add" and e.type in FLOATS):
            return None
        p, q = e.lhs, e.rhs
        alike = _same(p, q) or (_is_product(p, e.type) and _is_product(q, e.type) and
                                _same(p.lhs, q.rhs) and _same(p.rhs, q.lhs))
        # _same looks no further than the two differ (at once, nearly always); purity
        # is asked only of the pairs that are alike
        return p if alike and self.pure(p) and self.pure(q) else None

    def pure(self, e):
        """No call in ``e`` whose evaluation could be seen to move (math functions may):
        each node's answer computed once, children first, without recursion."""
        purity = self.purity
        hit = purity.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        stack = [(e, False)]
        while stack:
            node, expanded = stack.pop()
            hit = purity.get(id(node))
            if hit is not None and hit[0] is node:
                continue
            kids = children(node)
            if not expanded:
                stack.append((node, True))
                stack.extend((k, False) for k in kids)
                continue
            purity[id(node)] = (node, not _moves(node) and all(
                purity[id(k)][1] for k in kids))
        return purity[id(e)][1]


def _fma(e, a, b, c):
    node = REGISTRY["math.fma"].node(e.type, e.loc, [a, b, c])
    node.attrs["contracted"] = True           # written as a * b + c (mathlower.py)
    if "_src" in e.__dict__:
        node._src = e._src
    return node


def _signed(value, negate):
    return ir.UnaryOp(value.type, value.loc, "neg", value) if negate else value


def _is_product(e, t):
    return isinstance(e, ir.BinOp) and e.op == "mul" and e.type == t


def _moves(node):
    """A call whose evaluation could be seen to move (a device function, an intrinsic
    other than a math function)."""
    return isinstance(node, ir.CallDevice) or \
        (isinstance(node, ir.Intrinsic) and not node.op.startswith("math."))


def _same(p, q):
    """p and q compute the same value: the same variables, parameters, constants, loads
    and arithmetic (for pure expressions, with nothing between them that writes)."""
    if type(p) is not type(q) or p.type != q.type:
        return False
    if isinstance(p, ir.Var):
        return p.name == q.name
    if isinstance(p, ir.Param):
        return p.index == q.index
    if isinstance(p, ir.Const):
        return p.value == q.value
    if isinstance(p, ir.ArrayRef):
        return p.decl is q.decl
    if isinstance(p, (ir.BinOp, ir.UnaryOp, ir.Cast, ir.Load)):
        fields_p, fields_q = _parts(p), _parts(q)
        return len(fields_p) == len(fields_q) and all(
            _same(x, y) if isinstance(x, ir.Expr) else x == y
            for x, y in zip(fields_p, fields_q))
    return False


def _parts(e):
    """What distinguishes an expression of one of _same's classes: its operator and
    operands (a load: its array and indices)."""
    if isinstance(e, ir.BinOp):
        return (e.op, e.lhs, e.rhs)
    if isinstance(e, ir.UnaryOp):
        return (e.op, e.value)
    if isinstance(e, ir.Cast):
        return (e.value,)
    return (e.array, *e.indices)
