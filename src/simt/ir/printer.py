"""A readable text form of typed IR, for ``SIMT_DUMP`` (compiler/pipeline.py) and
internal-error reports.

One statement per line, nested bodies indented, Python-like syntax. Types appear where
they are decided: parameters, locals, memory declarations, constants (``int32(3)``; a
bare literal is weak) and casts (``float32(x)``). Parameters read as ``%name``, kernel
variables by their name. A statement that starts a new source line carries that line
as a comment (``# 12: y[i] = a * x[i]``).
"""
import linecache

from . import nodes as ir
from .walk import all_functions

INDENT = "  "
COMMENT_COLUMN = 48

_BINOPS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
           "pow": "**", "lshift": "<<", "rshift": ">>", "and": "&", "or": "|", "xor": "^"}
_COMPARES = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_UNARY = {"neg": "-", "invert": "~", "not": "not "}
_COMPOUND = (ir.BinOp, ir.Compare, ir.Logical, ir.IfExp, ir.UnaryOp)


def format_program(fn):
    """The kernel and every device function it calls, each as ``format_function`` prints it."""
    return "\n\n".join(format_function(f) for f in all_functions(fn))


def format_function(fn, mark=None):
    """``fn`` as text; the statement ``mark`` (if given) is flagged with ``>>``."""
    return "\n".join(_Printer(fn, mark).function())


def format_expr(e, fn=None):
    """One expression as text (``fn`` names its parameters)."""
    return _Printer(fn, None).expr(e)


class _Printer:
    def __init__(self, fn, mark):
        self.fn, self.mark = fn, mark
        self.lines = []
        self.last_line = None

    # ------------------------------------------------------------ function
    def function(self):
        fn = self.fn
        params = ", ".join(f"%{name}: {t!r}" for name, t in fn.params)
        kind = "kernel" if fn.is_kernel else "device"
        self.emit(0, f"{kind} {fn.name}({params}) -> {fn.return_type!r}:    # {fn.loc}", None)
        for decl in fn.decls:
            shape = ", ".join(map(str, decl.shape))
            self.emit(1, f"{decl.space} {decl.name}: {decl.dtype}[{shape}]", None)
        for name, t in fn.locals.items():
            self.emit(1, f"var {name}: {t!r}", None)
        self.block(fn.body, 1)
        return self.lines

    def emit(self, depth, text, stmt):
        prefix = ""
        if self.mark is not None:          # a column for the flag
            prefix = ">> " if stmt is self.mark else "   "
        line = prefix + INDENT * depth + text
        loc = getattr(stmt, "loc", None)
        if loc is not None and loc.line != self.last_line:
            self.last_line = loc.line
            source = linecache.getline(loc.filename, loc.line).strip()
            if source:
                line = f"{line.ljust(COMMENT_COLUMN)}  # {loc.line}: {source}"
        self.lines.append(line)

    # ------------------------------------------------------------ statements
    def block(self, stmts, depth):
        if not stmts:
            self.emit(depth, "pass", None)
        for s in stmts:
            self.stmt(s, depth)

    def stmt(self, s, depth):
        if isinstance(s, ir.If):
            self.emit(depth, f"if {self.expr(s.cond)}:", s)
            self.block(s.then, depth + 1)
            if s.orelse:
                self.emit(depth, "else:", None)
                self.block(s.orelse, depth + 1)
        elif isinstance(s, ir.While):
            self.emit(depth, f"while {self.expr(s.cond)}:", s)
            self.block(s.body, depth + 1)
        elif isinstance(s, ir.ForRange):
            bounds = ", ".join(self.expr(e) for e in (s.start, s.stop, s.step))
            loop = f"range({bounds})"
            if s.unroll is not None:
                loop = f"unroll({loop}, factor={s.unroll or None})"
            self.emit(depth, f"for {s.var} in {loop}:", s)
            self.block(s.body, depth + 1)
        else:
            self.emit(depth, self.simple(s), s)

    def simple(self, s):
        """A statement without a body, as one line."""
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            return f"<{type(s).__name__}>"
        return method(s)

    def stmt_Assign(self, s):
        return f"{s.name} = {self.expr(s.value)}"

    def stmt_Store(self, s):
        return f"{self.subscript(s.array, s.indices)} = {self.expr(s.value)}"

    def stmt_StoreField(self, s):
        return f"{self.operand(s.place)}.{s.name} = {self.expr(s.value)}"

    def stmt_ExprStmt(self, s):
        return self.expr(s.value)

    def stmt_Break(self, s):
        return "break"

    def stmt_Continue(self, s):
        return "continue"

    def stmt_Return(self, s):
        return "return" if s.value is None else f"return {self.expr(s.value)}"

    def stmt_Barrier(self, s):
        if s.named:
            return f"barrier_sync({', '.join(self.expr(e) for e in s.named)})"
        return f"tile_sync({s.tile})" if s.tile else "syncthreads()"

    def stmt_GridSync(self, s):
        names = {"grid": "grid.sync()", "cluster": "cluster.sync()",
                 "cluster.arrive": "cluster.barrier_arrive()",
                 "cluster.wait": "cluster.barrier_wait()"}
        return names[s.scope]

    def stmt_Collective(self, s):
        return f"{s.name} = syncthreads_{s.op}({self.expr(s.value)})"

    def stmt_WarpOp(self, s):
        call = f"warp.{s.op}({self.args(s.args)})"
        return call if s.name is None else f"{s.name} = {call}"

    def stmt_WarpGather(self, s):
        return f"warp.gather {self.simple(s.op)}"

    def stmt_WarpResult(self, s):
        return f"warp.result {self.simple(s.op)}"

    def stmt_Print(self, s):
        return f"print({', '.join([repr(s.format)] + [self.expr(a) for a in s.args])})"

    def stmt_Assert(self, s):
        return f"assert {self.expr(s.cond)}, {s.message!r}"

    # ------------------------------------------------------------ expressions
    def expr(self, e):
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            return f"<{type(e).__name__}>"
        return method(e)

    def operand(self, e):
        text = self.expr(e)
        return f"({text})" if isinstance(e, _COMPOUND) else text

    def args(self, items):
        return ", ".join(self.expr(a) for a in items)

    def subscript(self, array, indices):
        parts = []
        for index in indices:
            if isinstance(index, tuple):
                start, stop, step = ("" if p is None else self.expr(p) for p in index)
                parts.append(f"{start}:{stop}" + (f":{step}" if step else ""))
            else:
                parts.append(self.expr(index))
        return f"{self.operand(array)}[{', '.join(parts)}]"

    def expr_Const(self, e):
        weak = getattr(e.type, "weak", False)
        return repr(e.value) if weak else f"{e.type!r}({e.value!r})"

    def expr_Var(self, e):
        return e.name

    def expr_CheckedVar(self, e):
        return f"assigned({e.var.name})"

    def expr_Param(self, e):
        params = self.fn.params if self.fn is not None else []
        return f"%{params[e.index][0]}" if e.index < len(params) else f"%{e.index}"

    def expr_Cast(self, e):
        return f"{e.type!r}({self.expr(e.value)})"

    def expr_BinOp(self, e):
        if e.op in ("min", "max"):
            return f"{e.op}({self.expr(e.lhs)}, {self.expr(e.rhs)})"
        return f"{self.operand(e.lhs)} {_BINOPS.get(e.op, e.op)} {self.operand(e.rhs)}"

    def expr_UnaryOp(self, e):
        return f"{_UNARY.get(e.op, e.op)}{self.operand(e.value)}"

    def expr_Compare(self, e):
        return f"{self.operand(e.lhs)} {_COMPARES.get(e.op, e.op)} {self.operand(e.rhs)}"

    def expr_Logical(self, e):
        return f"{self.operand(e.lhs)} {e.op} {self.operand(e.rhs)}"

    def expr_IfExp(self, e):
        return f"{self.operand(e.then)} if {self.operand(e.cond)} else {self.operand(e.orelse)}"

    def expr_ArrayRef(self, e):
        return getattr(e.decl, "name", "<decl>")

    def expr_Load(self, e):
        return self.subscript(e.array, e.indices)

    def expr_View(self, e):
        return self.subscript(e.array, e.indices)

    def expr_ArrayAttr(self, e):
        return f"{self.operand(e.array)}.{e.attr}[{e.dim}]"

    def expr_TupleExpr(self, e):
        items = [self.expr(i) for i in e.items]
        return f"({', '.join(items)}{',' if len(items) == 1 else ''})"

    def expr_TupleGet(self, e):
        return f"{self.operand(e.tuple)}[{e.index}]"

    def expr_MakeRecord(self, e):
        return f"record({self.args(e.items)})"

    def expr_Field(self, e):
        return f"{self.operand(e.record)}.{e.name}"

    def expr_Replace(self, e):
        index = "".join(f"[{self.expr(i)}]" for i in e.index)
        return f"replace({self.expr(e.record)}, {e.name}{index}={self.expr(e.value)})"

    def expr_Intrinsic(self, e):
        attrs = ", ".join(f"{k}={v!r}" for k, v in e.attrs.items())
        name = e.op + (f"{{{attrs}}}" if attrs else "")
        if not e.args and "." in e.op and not attrs:
            return name                    # a special register: threadIdx.x
        return f"{name}({self.args(e.args)})"

    def expr_CallDevice(self, e):
        return f"{getattr(e.function, 'name', '<function>')}({self.args(e.args)})"
