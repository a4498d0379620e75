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
from ..ir.walk import all_functions, map_children, walk
from ..lang.registry import REGISTRY

FLOATS = (T.FLOAT32, T.FLOAT64)


def contract_functions(fn):
    """Rewrite ``fn`` and the device functions it calls in place; returns ``fn``."""
    for f in all_functions(fn):
        f.body = [_rewrite(s) for s in f.body]
    return fn


def _rewrite(node):
    """``node`` with its fusable adds made fmas, outermost first (so that ``t + t + c``
    is seen whole before ``t + t`` could fuse on its own)."""
    if isinstance(node, ir.BinOp) and node.op in ("add", "sub") and node.type in FLOATS:
        fused = _fused(node)
        if fused is not None:
            return fused
    return map_children(node, _rewrite)


def _fused(e):
    """The fma that ``e`` (an add or sub of float type) becomes, or None (``t + t`` itself
    stays: it is exact, and LLVM writes the same product twice as one)."""
    lhs, rhs, sub = e.lhs, e.rhs, e.op == "sub"
    if _doubled(e) is not None:
        return None
    two = ir.Const(e.type, e.loc, 2.0)
    if _doubled(lhs) is not None:                           # (t + t) +- c
        return _fma(e, _rewrite(_doubled(lhs)), two, _signed(_rewrite(rhs), sub))
    if not sub and _doubled(rhs) is not None and _pure(lhs):     # c + (t + t)
        return _fma(e, _rewrite(_doubled(rhs)), two, _rewrite(lhs))
    if _is_product(lhs, e.type):                            # a*b +- c
        return _fma(e, _rewrite(lhs.lhs), _rewrite(lhs.rhs), _signed(_rewrite(rhs), sub))
    if _is_product(rhs, e.type) and _pure(lhs):             # c + a*b, c - a*b
        return _fma(e, _signed(_rewrite(rhs.lhs), sub), _rewrite(rhs.rhs), _rewrite(lhs))
    return None


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


def _doubled(e):
    """t where ``e`` is t + t' with t and t' the same value (one pure expression twice, or
    the same two factors in either order), else None."""
    if not (isinstance(e, ir.BinOp) and e.op == "add" and e.type in FLOATS):
        return None
    p, q = e.lhs, e.rhs
    if not (_pure(p) and _pure(q)):
        return None
    if _same(p, q):
        return p
    if _is_product(p, e.type) and _is_product(q, e.type) and \
            _same(p.lhs, q.rhs) and _same(p.rhs, q.lhs):
        return p
    return None


def _pure(e):
    """No call in ``e`` whose evaluation could be seen to move (math functions may)."""
    return not any(isinstance(n, ir.CallDevice) or
                   (isinstance(n, ir.Intrinsic) and not n.op.startswith("math."))
                   for n in walk(e))


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
