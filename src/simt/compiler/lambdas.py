"""``lambda`` in kernels and device functions (issue 35 item 2): ``sq = lambda v: v * v``.

A lambda is a device function whose body is one expression. Like a C++ lambda with
``[=]``, it captures by value, where it is created, every local variable of the
enclosing function its body reads: ``lambda v: v * scale`` copies ``scale`` into a
variable of its own (``$lambda<line>.<column>.scale``) as the ``lambda`` expression is
evaluated, so a later ``scale = 0.0`` does not change what the lambda computes. Names that
are no locals (module globals, closure names, simt) are read as the enclosing function
reads them.

It is compiled as a device function (a ``LambdaCode``, one per ``lambda`` expression and
build of the function holding it) whose parameters are the captured names followed by
its own; each call passes the captured values first. The value (a ``LambdaValue``) is a
compile-time function value like a ``@simt.device`` function (function_values.py): bound
to names, held in tuples, chosen at run time, passed to device functions, which are then
specialised for it. Passed on, its captured values travel as hidden arguments
(``hidden_parts``, group_args.py). Captured compile-time values (device functions,
groups, other lambdas) travel in its signature, their own run-time parts as captures.

A limit: one ``lambda`` expression holds one set of captured values, the latest it was
evaluated with (a lambda made in a loop and kept from an earlier iteration sees the
values of the last one).
"""
import ast
import copy

from ..ir import nodes as ir
from ..lang.registry import Static
from . import group_args


class LambdaCode:
    """The code of one ``lambda`` expression as the front end builds device functions:
    ``pyfunc`` (itself), ``ir_cache`` and a source whose ``fndef`` is the lambda
    written as ``def`` with the captured names first."""

    _simt_device = True

    def __init__(self, node, captured, definer):
        self.node, self.captured, self.definer = node, tuple(captured), definer
        owner = definer.source
        self.__name__ = f"<lambda at line {node.lineno}:{node.col_offset + 1} in '{owner.name}'>"
        self.pyfunc = self
        self.ir_cache = {}
        self.params = [a.arg for a in node.args.args]
        # the function whose dependencies its reads are (a lambda in a lambda: the outer's)
        self.owner_function = getattr(definer.pyfunc, "owner_function", definer.function)

    def source(self):
        return LambdaSource(self)


class LambdaSource:
    """The Source (source.py) of a lambda: its file, lines and names are those of the
    function it is written in; what its body reads from Python is that function's
    dependency (its ``reads``: the disk cache's key)."""

    def __init__(self, code):
        owner = code.definer.source
        self.owner = getattr(owner, "owner", owner)
        self.pyfunc, self.filename = owner.pyfunc, owner.filename
        self.first_line, self.name = owner.first_line, code.__name__
        self.reads = {}
        node = code.node
        arguments = ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in code.captured] +
                                  list(node.args.args), vararg=None, kwonlyargs=[],
                                  kw_defaults=[], kwarg=None, defaults=[])
        body = [ast.copy_location(ast.Return(value=node.body), node.body)]
        self.fndef = ast.copy_location(ast.FunctionDef(
            name="lambda", args=arguments, body=body, decorator_list=[], returns=None,
            type_params=[]), node)

    def line_text(self, line):
        return self.owner.line_text(line)

    def lookup(self, name, loc):
        return self.owner.lookup(name, loc)

    def attribute(self, base, name, attr, loc):
        return self.owner.attribute(base, name, attr, loc)


class LambdaValue:
    """A lambda as a value: its code, the variables holding its captured run-time values
    (attributes ``cap0``, ``cap1``...: its ``hidden_parts``) and its captured
    compile-time values."""

    _simt_device = True
    compile_time = True

    def __init__(self, code, captures):
        """``captures``: per captured name, a variable name or a (Static value, {its
        part: our part}) pair."""
        self.code, self.pyfunc, self.ir_cache = code, code, code.ir_cache
        self.__name__ = code.__name__
        self.statics = {}
        parts = []
        for name, held in captures:
            if isinstance(held, str):
                parts.append(f"cap{len(parts)}")
                setattr(self, parts[-1], held)
                self.statics[name] = None
            else:
                value, renamed = held
                mine = {}
                for part, variable in renamed.items():
                    parts.append(f"cap{len(parts)}")
                    setattr(self, parts[-1], variable)
                    mine[part] = parts[-1]
                self.statics[name] = (value, mine)
        self.hidden_parts = tuple(parts)

    def signature(self):
        statics = tuple((name, group_args.signature(held[0]))
                        for name, held in self.statics.items() if held is not None)
        return ("lambda", self.code, statics)     # the code itself: an id could be reused

    def arity(self):
        return len(self.code.params)

    def captured_args(self, fc, loc):
        """What a call passes for the captured names, in the enclosing scope ``fc``."""
        out, parts = [], iter(self.hidden_parts)
        for name, held in self.statics.items():
            if held is None:
                variable = getattr(self, next(parts))
                out.append(ir.Var(fc.var_types[variable], loc, variable))
                continue
            value, mine = held
            filled = copy.copy(value)
            for part, ours in mine.items():
                setattr(filled, part, getattr(self, ours))
                next(parts)
            out.append(Static(filled, name))
        return out


def make(fc, node):
    """The value of the ``lambda`` expression ``node`` in front end ``fc``."""
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        fc.fail(node, "a lambda in a kernel takes plain positional parameters",
                "remove *args, **kwargs, keyword-only parameters and defaults")
    loc = fc.loc(node)
    captures = [(name, _capture(fc, node, name, loc)) for name in _free_names(node)
                if _is_local(fc, name)]
    key = (node.lineno, node.col_offset)
    code = fc.lambda_codes.get(key)
    names = tuple(name for name, _ in captures)
    if code is None or code.captured != names:
        code = fc.lambda_codes[key] = LambdaCode(node, names, fc)
    value = LambdaValue(code, captures)
    known = fc.lambda_values.get((key, value.signature()))
    if known is not None and _same_parts(known, value):
        return Static(known, code.__name__)     # one object per lambda: function sets
    fc.lambda_values[key, value.signature()] = value
    return Static(value, code.__name__)


def _same_parts(a, b):
    return all(getattr(a, p) == getattr(b, p) for p in a.hidden_parts) and \
        a.hidden_parts == b.hidden_parts


def _is_local(fc, name):
    return name in fc.static_bindings or name in fc.assigned or name in fc.param_names


def _capture(fc, node, name, loc):
    """Copy the local ``name`` where the lambda is made: a variable name, or for a
    compile-time value (Static value, {its run-time part: the copy's variable})."""
    prefix = f"$lambda{node.lineno}.{node.col_offset}.{name}"
    bound = fc.static_bindings.get(name)
    if isinstance(bound, Static):
        renamed = {}
        for holder, part in group_args.holders(bound.value):
            if holder is not bound.value:
                fc.fail(node, f"the lambda reads '{name}', which holds functions or groups "
                        "with run-time parts inside a tuple; a lambda cannot capture that",
                        f"pass '{name}' to the lambda as an argument")
            renamed[part] = f"{prefix}.{part}"
            _copy(fc, renamed[part], ir.Var(fc.var_types[getattr(holder, part)], loc,
                                            getattr(holder, part)), loc)
        return bound.value, renamed
    if bound is not None:
        fc.fail(node, f"the lambda reads '{name}', a shared or local array of the enclosing "
                "function; a lambda cannot capture it", f"pass '{name}' to the lambda as an "
                "argument")
    _copy(fc, prefix, fc.name_expr(name, node), loc)
    return prefix


def _copy(fc, variable, value, loc):
    fc.assign_type(variable, value.type, loc)
    fc.hoist(ir.Assign(loc, variable, value))


def _free_names(node):
    """The names a lambda's body reads that none of its parameters (nor those of the
    lambdas inside it) bind, in the order of first reading."""
    bound = {a.arg for a in node.args.args}
    out = []

    def visit(n, bound):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            if n.id not in bound and n.id not in out:
                out.append(n.id)
        elif isinstance(n, ast.Lambda):
            visit(n.body, bound | {a.arg for a in n.args.args})
        else:
            for child in ast.iter_child_nodes(n):
                visit(child, bound)
    visit(node.body, bound)
    return out
