"""Inlining device functions that hold barriers, on the CPU device's structured IR.

The CPU device runs a block's threads as loops split at barriers and warp operations
(emit.py, regions.py); it can only split what it sees in the kernel's own body. A
``@simt.device`` function that (directly or through its calls) holds ``syncthreads``, a
barrier collective, a warp function or a group sync is therefore inlined into the kernel
before the split: each call is hoisted out of its expression into a statement of its own
(``x = f(a) + 1`` -> ``$r = f(a)`` inlined, then ``x = $r + 1``; operands evaluated before
the call and that read memory are computed into temporaries first, so the order stays the
one code generation uses on every device), parameters become the argument values (arrays by reference), every variable
of the callee gets a name of its own per call, and ``return`` becomes structured control
flow (see ``_Returns``). Other device functions stay ordinary LLVM functions. A
recursive device function cannot be inlined: one that holds barriers is refused here.
"""
import itertools

from . import nodes as ir
import simt.ir.types as T
from .walk import all_functions, children, fields, map_children, replace
from .callgraph import holds_barrier, recursive
from ..errors import NotSupportedError
from .uniform import BLOCK_OPS, THREAD_OPS


def inline_barrier_calls(kernel):
    """``kernel`` with every call of a device function holding barriers inlined (a new
    Function; the IR of the kernel and of its callees is left as it is)."""
    needs = _Needs()
    if not any(needs(f) for f in kernel.callees):
        return kernel
    _refuse_recursive(kernel, needs)
    inliner = _Inliner(kernel, needs)
    body = inliner.block(kernel.body)
    callees = [f for f in inliner.callees if not needs(f)]
    return replace(
        kernel, body=body, locals=inliner.locals, decls=inliner.decls, callees=callees,
        uses_barrier=any(ir.contains_barrier(s) for s in body))


def holds_barriers(kernel):
    """Whether the kernel holds a barrier or collective, in its body or in its calls."""
    return _Needs()(kernel)


class _Needs:
    """Whether a device function holds a barrier or collective, itself or in its calls."""

    def __init__(self):
        self.known = {}

    def __call__(self, function):
        key = id(function)
        if key not in self.known:
            self.known[key] = holds_barrier(function)
        return self.known[key]


def _refuse_recursive(kernel, needs):
    cycle = recursive(kernel)
    for f in all_functions(kernel):
        if id(f) in cycle and needs(f):
            raise NotSupportedError(
                f"device function '{f.name}' ({f.loc}) calls itself (directly or through "
                "others) and holds barriers or warp functions (itself or in its calls): "
                "this device runs such functions only inlined into the kernel, which a "
                "recursion cannot be. Move the barrier out of the recursion, or run the "
                "kernel on a CUDA GPU device.")


def _unsupported(call, where, hint):
    f = call.function
    raise NotSupportedError(
        f"device function '{f.name}' ({f.loc}) holds barriers or warp functions and is called "
        f"{where} at {call.loc}: the CPU device runs such a call only where it is evaluated "
        f"unconditionally, as a statement of its own (CUDA GPU devices support it here). {hint}")


class _Inliner:
    """Rewrites statement lists of the kernel (and of inlined bodies), inlining calls."""

    def __init__(self, kernel, needs):
        self.needs = needs
        self.locals = dict(kernel.locals)
        self.decls = list(kernel.decls)
        self.callees = list(kernel.callees)
        self.counter = itertools.count(1)

    def new_var(self, base, t):
        name = f"${base}.{next(self.counter)}"
        self.locals[name] = t
        return name

    # ------------------------------------------------------------ statements
    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s):
        pre = []
        if isinstance(s, ir.ExprStmt) and self.is_target(s.value):
            self.inline(self.hoist_args(s.value, pre), pre, want_value=False)
            return pre
        if isinstance(s, ir.While) and self.holds_target(s.cond):
            _unsupported(self.first_target(s.cond), "in a while condition",
                         "Compute the condition into a variable before the loop and again at "
                         "the end of its body.")
        skip = "cond" if isinstance(s, ir.While) else None
        return pre + [replace(s, **self.fields(s, pre, skip))]

    def fields(self, node, pre, skip=None):
        """New values of ``node``'s expression and body fields, evaluated in field order
        (the order code generation evaluates them in)."""
        changes, cells = {}, []
        for name, value in fields(node):
            if name == skip:
                continue
            if isinstance(value, ir.Expr):
                changes[name] = self.expr(value, pre, cells)
            elif isinstance(value, list) and value and isinstance(value[0], ir.Stmt):
                changes[name] = self.block(value)
                continue
            elif isinstance(value, list):
                changes[name] = self.expr_list(value, pre, cells)
            else:
                continue
            cells.append((changes, name))
        return changes

    # ------------------------------------------------------------ expressions
    def is_target(self, e):
        return isinstance(e, ir.CallDevice) and self.needs(e.function)

    def holds_target(self, e):
        return self.first_target(e) is not None

    def first_target(self, e):
        if self.is_target(e):
            return e
        for child in children(e):
            found = self.first_target(child)
            if found is not None:
                return found
        return None

    def expr(self, e, pre, earlier=()):
        """``e`` with the calls to inline replaced by their results (their bodies go to
        ``pre``); ``earlier``: cells (container, key) of the values evaluated before it,
        spilled into temporaries if ``e`` holds such a call."""
        if not self.holds_target(e):
            return e
        if earlier:
            self.spill(earlier, pre)
        if isinstance(e, ir.Logical) and self.holds_target(e.rhs):
            _unsupported(self.first_target(e.rhs), f"on the right of '{e.op}'",
                         "Call it before the condition and use the variable.")
        if isinstance(e, ir.IfExp) and (self.holds_target(e.then) or
                                        self.holds_target(e.orelse)):
            _unsupported(self.first_target(e), "in a branch of a conditional expression",
                         "Call it in an if statement instead.")
        if self.is_target(e):
            return self.inline(self.hoist_args(e, pre), pre, want_value=True)
        return replace(e, **self.fields(e, pre))

    def expr_list(self, items, pre, earlier):
        """A list of expressions (or View slice triples), evaluated in order; each item
        sees the values before it (``earlier`` and the items so far) as cells to spill."""
        out = []
        for item in items:
            cells = earlier + [(out, k) for k in range(len(out)) if not isinstance(out[k], tuple)]
            if isinstance(item, tuple):
                parts = []
                for p in item:
                    parts.append(None if p is None else self.expr(p, pre, cells))
                    if p is not None:
                        cells = cells + [(parts, len(parts) - 1)]
                out.append(tuple(parts))
            elif isinstance(item, ir.Expr):
                out.append(self.expr(item, pre, cells))
            else:
                out.append(item)
        return out

    def spill(self, cells, pre):
        """Compute values evaluated before a call into temporaries if the call could
        change them (they read memory)."""
        for container, key in cells:
            value = container[key]
            if isinstance(value, ir.Expr) and not _stable(value):
                name = self.new_var("spill", value.type)
                pre.append(ir.Assign(value.loc, name, value))
                container[key] = ir.Var(value.type, value.loc, name)

    def hoist_args(self, call, pre):
        args = self.expr_list(call.args, pre, [])
        return replace(call, args=args)

    # ------------------------------------------------------------ inlining one call
    def inline(self, call, pre, want_value):
        f = call.function
        tag = f"{f.name}.{next(self.counter)}"
        params = []
        for (pname, t), arg in zip(f.params, call.args):
            if isinstance(arg, (ir.Const, ir.Var, ir.Param, ir.ArrayRef)):
                params.append(arg)
            else:
                name = f"${tag}.arg.{pname}"
                self.locals[name] = t
                pre.append(ir.Assign(arg.loc, name, arg))
                params.append(ir.Var(t, arg.loc, name))
        names = {n: f"${tag}.{n}" for n in f.locals}
        for old, new in names.items():
            self.locals[new] = f.locals[old]
        body = [_renamed(s, names, params) for s in f.body]
        result = None
        if f.return_type != T.VOID:
            result = self.new_var(f"{tag}.ret", f.return_type)
        body = _Returns(self, result, tag).convert(body)
        self._adopt(f)
        pre.extend(self.block(body))              # nested calls of the callee
        if want_value:
            if result is None:
                _unsupported(call, "for a value", "It returns nothing.")
            return ir.Var(f.return_type, call.loc, result)
        return None

    def _adopt(self, f):
        for decl in f.decls:
            if all(decl is not d for d in self.decls):
                self.decls.append(decl)
        for callee in f.callees:
            if all(callee is not c for c in self.callees):
                self.callees.append(callee)


def _stable(e):
    """Whether a value cannot change while a device function runs: it reads no memory
    and calls nothing (the callee cannot assign the caller's variables)."""
    if isinstance(e, (ir.Load, ir.CallDevice)):
        return False
    if isinstance(e, ir.Intrinsic) and e.op not in THREAD_OPS + BLOCK_OPS:
        return False
    return all(_stable(c) for c in children(e))


def _renamed(node, names, params):
    """A copy of a callee's node: its variables renamed by ``names``, its parameters
    replaced by the argument values ``params``."""
    if isinstance(node, ir.Param):
        return params[node.index]
    if isinstance(node, ir.Var):
        return replace(node, name=names[node.name])
    new = map_children(node, lambda child: _renamed(child, names, params))
    if isinstance(new, ir.Stmt):
        for field in ("name", "var"):             # the variable a statement assigns
            if isinstance(getattr(new, field, None), str):
                setattr(new, field, names[getattr(new, field)])
    return new


class _Returns:
    """``return`` in an inlined body as structured control flow.

    A return in tail position (the body's last statement, or the last of an ``if`` that
    is) becomes an assignment of the result. Any other return also leaves: the body is
    wrapped in a one-trip ``while True`` loop, the return sets ``$done`` and breaks, and
    after each loop of the callee that holds a return, ``if $done: break`` carries the
    exit outwards. The CPU device runs these loops masked, per thread."""

    def __init__(self, inliner, result, tag):
        self.inliner, self.result, self.tag = inliner, result, tag
        self.done = None
        self.wrapped = False

    def convert(self, body):
        out = self.block(body, tail=True, in_loop=False)
        if not self.wrapped:
            return out
        loc = body[0].loc if body else None
        true = ir.Const(T.BOOL, loc, True)
        init = [ir.Assign(loc, self.done, ir.Const(T.BOOL, loc, False))] if self.done else []
        return init + [ir.While(loc, true, out + [ir.Break(loc)])]

    def block(self, stmts, tail, in_loop):
        out = []
        for k, s in enumerate(stmts):
            last = tail and k == len(stmts) - 1
            if isinstance(s, ir.Return):
                out.extend(self.leave(s, last, in_loop))
                break                             # the rest is unreachable
            out.append(self.nested(s, last, in_loop))
            if isinstance(s, (ir.While, ir.ForRange)) and _returns(s.body):
                cond = ir.Var(T.BOOL, s.loc, self.done)
                out.append(ir.If(s.loc, cond, [ir.Break(s.loc)], []))
        return out

    def nested(self, s, last, in_loop):
        if isinstance(s, ir.If):
            return replace(s, then=self.block(s.then, last, in_loop),
                                       orelse=self.block(s.orelse, last, in_loop))
        if isinstance(s, (ir.While, ir.ForRange)):
            return replace(s, body=self.block(s.body, False, True))
        return s

    def leave(self, s, last, in_loop):
        out = []
        if s.value is not None and self.result is not None:
            out.append(ir.Assign(s.loc, self.result, s.value))
        if last:
            return out
        self.wrapped = True
        if in_loop:
            if self.done is None:
                self.done = self.inliner.new_var(f"{self.tag}.done", T.BOOL)
            out.append(ir.Assign(s.loc, self.done, ir.Const(T.BOOL, s.loc, True)))
        return out + [ir.Break(s.loc)]


def _returns(body):
    return any(isinstance(s, ir.Return) for s in ir.walk_stmts(body))
