"""The front end: a Python function's ``ast`` -> simt's typed IR.

Types are inferred by running the builder to a fixed point: each pass records
the types assigned to every variable (unified as API.md says) and the pass is
repeated until nothing changes; the last pass's IR is the result.
"""
import ast

import numpy as np

from ..ir import nodes as ir
from ..ir import types as T
from ..lang import vectors
from ..lang import loops
from ..lang.registry import Static
from . import unroll
from .source import Source, syntax_nodes
from .errors import fail, warn
from ..errors import CompileError
from . import calls, conditional, definite, foreach, function_values, group_args, lambdas, \
    numba_locals, records, recursion, structs, wraparound
from ..lang import structs as struct_classes


MAX_PASSES = 12


# device functions calling device functions: a chain this deep still compiles within the
# recursion limit runtime/backend.deep_recursion sets (1000 did on every device, 2026-12)
MAX_CALL_DEPTH = 1200


def _too_deep(stack, exc=None):
    """(message, hint) of a chain of device function calls too deep to compile."""
    chain = " -> ".join(f.__name__ for f in stack[:3])
    what = f"Python's recursion limit ({exc})" if exc is not None else \
        f"simt compiles chains of at most {MAX_CALL_DEPTH} calls"
    return (f"device function calls nest {len(stack)} deep here, from '{stack[0].__name__}' "
            f"({chain} -> ...): too deep to compile: {what}",
            "call the deepest functions from a loop instead, or merge functions of the chain")


class FrontEnd:
    """Builds the typed IR of one kernel or device function for given argument types.

    It is the ``Builder`` (lang/registry.py) that the typing rules of lang/ call."""

    def __init__(self, pyfunc, arg_types, is_kernel, stack=(), groups=None, warp=T.WARP32,
                 frames=(), key=None, inline=None, wraparound=False, returns_self=False):
        # a lambda's code (lambdas.py) brings its own source
        self.source = pyfunc.source() if isinstance(pyfunc, lambdas.LambdaCode) else \
            Source(pyfunc)
        if is_kernel:                   # device functions passed to the kernel
            arg_types, groups = group_args.kernel_arguments(arg_types)
        if returns_self:                # a struct method that changes self (structs.py)
            structs.return_self(self.source.fndef)
        self.inline = inline            # a device function's @simt.device(inline=...)
        self.wraparound = wraparound    # numba's negative indices (cuda.jit): wraparound.py
        self.pyfunc, self.key = pyfunc, key
        self.frames = tuple(frames) + (self,)     # the FrontEnds running: recursion.py
        self.warp_facts = warp          # the target's (ir/types.Warp): typing rules ask warp()
        self.is_kernel = is_kernel
        self.stack = tuple(stack) + (pyfunc,)
        fndef = self.source.fndef
        self.all_params = [a.arg for a in fndef.args.args]
        self.syntax = syntax_nodes(fndef)     # for the assigned names and build's check
        self.assigned = _assigned_names(self.syntax)
        self.params_to_copy = set()     # receivers of struct methods that change them
        self.param_names, self.arg_types, self.group_bindings = group_args.parameters(
            self.all_params, list(arg_types), groups or {}, self.assigned)
        self.var_types = {}
        self.function_sets = {}         # name -> the device functions it may hold
        self.lambda_codes = {}          # (line, column) -> LambdaCode: lambdas.py
        self.lambda_values = {}
        self.var_lines = {}
        self.return_type = None
        self.device_cache = {}
        self.declared = None            # the type a return annotation fixes (recursion.py)
        self.depends_on_open = False    # calls a function still being built: not cached
        self.guessed_at = None
        self.function = recursion.stub(self.source.name, [], is_kernel, self.loc(fndef))
    # ------------------------------------------------------------ driver
    def build(self):
        fndef = self.source.fndef
        self._check_signature(fndef)
        definite.check(fndef, self.all_params, self.fail, self.warn, self.syntax)
        self.syntax = None                      # not needed again
        self._start_pass()
        self.declared = recursion.declared_return(self, fndef)
        self.return_type = self.declared
        for _ in range(MAX_PASSES):
            self._start_pass()
            body = self._params_prologue() + self.block(fndef.body)
            if not self.changed:
                break
        unknown = sorted(self.unknown_reads)
        if unknown:
            name, node = unknown[0], self.unknown_reads[unknown[0]]
            self.fail(node, f"variable '{name}' is used before it is assigned",
                      "assign it before the first use on every path")
        if self.is_kernel and self.return_type not in (None, T.VOID):
            self.fail(fndef, "a kernel cannot return a value", "store results into an array")
        recursion.check_settled(self)
        function = self.function        # the object recursive calls already name
        function.__dict__.update(ir.Function(
            name=self.source.name, params=list(zip(self.param_names, self.arg_types)),
            return_type=self.return_type or T.VOID, body=body, locals=dict(self.var_types),
            decls=list(self.decls), is_kernel=self.is_kernel, loc=self.loc(fndef),
            callees=list(self.callees.values()),
            uses_barrier=any(ir.contains_barrier(s) for s in body),
            reads=ir.Reads(self.source.reads), inline=self.inline).__dict__)
        if isinstance(self.pyfunc, lambdas.LambdaCode):  # its reads are its owner's
            function.lambda_owner = id(self.pyfunc.owner_function)      # (runtime/cache.py)
        return function

    def _check_signature(self, fndef):
        args = fndef.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            self.fail(fndef, "kernels and device functions take plain positional parameters",
                      "remove *args, **kwargs, keyword-only parameters and defaults")
        if len(self.param_names) != len(self.arg_types):
            kind = "kernel" if self.is_kernel else "device function"
            given = len(self.arg_types) + len(self.all_params) - len(self.param_names)
            self.fail(fndef, f"{kind} '{self.source.name}' takes {len(self.all_params)} "
                      f"arguments, got {given}")

    def _start_pass(self):
        self.assigned |= self.params_to_copy
        self.changed = False
        self.unknown_reads = {}
        self.static_bindings = dict(self.group_bindings)
        # shared storage a group passed in names (a barrier's): the caller's declaration,
        # listed here too, as the function reads it (back ends place each once)
        self.decls = [group.value.storage.decl for group in self.group_bindings.values()
                      if hasattr(group.value, "storage")]
        self.symbol_decls = {}
        self.callees = {}
        self.prelude = []
        self.temp_count = 0
        self.binding_name = None
        self.loop_depth = 0
        self.return_types_seen = []
        self.guesses = 0                # recursive calls typed before their type was known
        self.pending = {}               # callees to cache once the function they call is done

    def _params_prologue(self):
        out = []
        for index, (name, t) in enumerate(zip(self.param_names, self.arg_types)):
            if name in self.assigned:
                self.assign_type(name, t, self.source.fndef)
                out.append(ir.Assign(self.loc(self.source.fndef), name,
                                     ir.Param(t, self.loc(self.source.fndef), index)))
        return out

    # ------------------------------------------------------------ helpers
    def loc(self, node):
        if isinstance(node, ir.Loc):
            return node
        line = getattr(node, "lineno", self.source.first_line)
        return ir.Loc(self.source.filename, line, getattr(node, "col_offset", 0),
                      getattr(node, "end_col_offset", 0) or 0, self.source.name)

    def fail(self, where, message, hint=None):
        loc = where if isinstance(where, ir.Loc) else self.loc(where)
        fail(self.source, loc, message, hint, kernel=self.source.name)

    def warn(self, where, message, hint=None):
        warn(self.source, self.loc(where), message, hint, kernel=self.source.name)

    def temp(self, prefix="tmp"):
        self.temp_count += 1
        return f"${prefix}{self.temp_count}"

    def pending_name(self):
        return self.binding_name or self.temp("mem")

    def assign_type(self, name, new, node):
        old = self.var_types.get(name)
        merged = T.unify(old, new)
        if merged is None:
            first = self.var_lines.get(name, "?")
            self.fail(node, f"variable '{name}' holds a {old} (line {first}) and is assigned a "
                      f"{new} here", "use a different variable name for the second value")
        if merged != old:
            self.var_types[name] = merged
            self.var_lines.setdefault(name, getattr(node, "lineno", "?"))
            # A type given for the first time needs no other pass: a read before this
            # assignment found no type and asked for one itself (expr_Name). A kernel of
            # straight-line code is then built once, not twice (issue 37 item 1).
            if old is not None:
                self.changed = True
        return merged

    # ------------------------------------------------------------ statements
    def block(self, stmts):
        """The IR of ``stmts``; what building a statement hoists goes right before it (and
        what the statement holding this block hoisted stays before that statement)."""
        outer, self.prelude = self.prelude, []
        out = []
        for stmt in stmts:
            built = self.stmt(stmt)
            out.extend(self.prelude)
            self.prelude = []
            out.extend(built)
        self.prelude = outer
        return out

    def stmt(self, node):
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            self.fail(node, f"'{type(node).__name__}' statements are not supported in kernels",
                      _UNSUPPORTED_HINTS.get(type(node).__name__))
        try:
            return method(node)
        except CompileError:         # already says where and what: not wrapped again
            raise
        except Exception as exc:
            from ..config import config
            if config.debug:
                raise
            if isinstance(exc, RecursionError):
                self.fail(node, *_too_deep(self.stack, exc))
            self.fail(node, f"internal error while compiling this statement: {exc!r}",
                      "please report this; set SIMT_DEBUG=1 for the full traceback")

    def stmt_Pass(self, node):
        return []

    def stmt_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return []                                    # a docstring
        value = self.any(node.value, statement=True)
        if isinstance(value, ir.Stmt):
            return [value]
        if isinstance(value, Static):
            return []
        return [ir.ExprStmt(self.loc(node), value)]

    def stmt_Assign(self, node):
        out = []
        for target in node.targets:
            out.extend(self.assign_to(target, node.value, node))
        return out

    def stmt_AnnAssign(self, node):
        if node.value is None:
            return []
        ann = self.any(node.annotation)
        if isinstance(ann, Static) and isinstance(node.target, ast.Name):
            dtype = calls.as_dtype(ann.value)
            if dtype is not None:
                value = self.cast(self.expr(self.any(node.value), node), T.element_type(dtype),
                                  node)
                return self.bind_name(node.target.id, value, node)
        return self.assign_to(node.target, node.value, node)

    def stmt_AugAssign(self, node):
        op = _BINOPS.get(type(node.op))
        target = node.target
        if isinstance(target, ast.Name):
            current = self.name_expr(target.id, target)
            value = self.binop(op, current, self.expr(self.any(node.value), node), node)
            return self.bind_name(target.id, value, node)
        field = self.field_target(target)
        if field is not None:
            place, name = field
            current = records.by_name(self, place, name, target)
            value = self.binop(op, current, self.expr(self.any(node.value), node), node)
            return [records.assign_field(self, place, name, value, node)]
        if isinstance(target, ast.Subscript):
            array = self.expr(self.any(target.value), target)
            index = self.expr(self.any(target.slice), target)
            out = []
            if not _is_simple(index):
                name = self.temp("idx")
                out += self.bind_name(name, index, node)
                index = self.name_expr(name, node)
            label = ast.unparse(target.value)
            current = self.subscript(array, index, self.loc(node), label)
            value = self.binop(op, current, self.expr(self.any(node.value), node), node)
            return out + [self.store(array, index, value, node, label)]
        if isinstance(target, ast.Attribute):
            self.refuse_attribute_target(target, node)
        self.fail(node, "this augmented assignment target is not supported",
                  "assign to a variable or an array element")

    def assign_to(self, target, value_node, node):
        if isinstance(target, ast.Name):
            self.binding_name = target.id
            value = self.any(value_node)
            self.binding_name = None
            if isinstance(value, ir.ArrayRef) and value.decl.space != "symbol":
                return self.bind_static(target.id, value, node)
            if function_values.is_function(value):          # chosen at run time or not
                return function_values.bind(self, target.id, value, self.loc(node))
            if isinstance(value, Static) and group_args.compile_time(value.value):
                # a cooperative group (lang/cg.py) or a tuple of device functions
                self.static_bindings[target.id] = value
                return []
            return self.bind_name(target.id, self.expr(value, value_node), node)
        field = self.field_target(target)
        if field is not None:
            place, name = field
            value = self.expr(self.any(value_node), value_node)
            return [records.assign_field(self, place, name, value, node)]
        if isinstance(target, ast.Subscript):
            array = self.expr(self.any(target.value), target)
            index = self.expr(self.any(target.slice), target)
            value = self.expr(self.any(value_node), value_node)
            return [self.store(array, index, value, node, ast.unparse(target.value))]
        if isinstance(target, (ast.Tuple, ast.List)):
            return self.unpack(target, value_node, node)
        if isinstance(target, ast.Attribute):
            self.refuse_attribute_target(target, node)
        self.fail(target, f"cannot assign to {type(target).__name__}",
                  "assign to a variable, an array element or a tuple of variables")

    def refuse_attribute_target(self, target, node):
        """``x.attr = ...`` where x is neither a record nor a vector (field_target)."""
        self.fail(node, f"cannot assign to {ast.unparse(target)}",
                  "fields of records and components of vector types can be assigned "
                  "(r.x = 1, a[i].x = 1); nothing else has assignable attributes")

    def unpack(self, target, value_node, node):
        value = self.expr(self.any(value_node), value_node)
        if isinstance(value.type, T.Vector):
            value = vectors.as_tuple(self, value, self.loc(node))
        if not isinstance(value.type, T.Tuple) or len(value.type.items) != len(target.elts):
            self.fail(node, f"cannot unpack {value.type} into {len(target.elts)} names")
        out = []
        reads_names = isinstance(value, ir.TupleExpr) and any(
            isinstance(item, (ir.Var, ir.Param)) for item in value.items)
        if not _is_simple(value) or reads_names:
            # the whole right side is evaluated before any name is bound (a, b = b, a)
            name = self.temp("tuple")
            out += self.bind_name(name, value, node)
            value = self.name_expr(name, node)
        for i, elt in enumerate(target.elts):
            item = calls.tuple_get(self, value, i, self.loc(node))
            if isinstance(elt, ast.Name):
                out += self.bind_name(elt.id, item, node)
            elif isinstance(elt, ast.Subscript):
                array = self.expr(self.any(elt.value), elt)
                index = self.expr(self.any(elt.slice), elt)
                out.append(self.store(array, index, item, node, ast.unparse(elt.value)))
            else:
                self.fail(elt, "nested unpacking is not supported", "unpack in two steps")
        return out

    def bind_static(self, name, value, node):
        if name in self.static_bindings or self.var_types.get(name) is not None:
            self.fail(node, f"'{name}' is bound to a {value.decl.space} array and cannot be "
                      "assigned again", "declare each shared/local/const array once, at the "
                      "top level of the kernel, under its own name")
        value.decl.name = name
        self.static_bindings[name] = value
        self.decls.append(value.decl)
        return []

    def bind_name(self, name, value, node):
        if name in self.static_bindings:
            bound = self.static_bindings[name]
            what = f"a {bound.decl.space} array" if isinstance(bound, ir.ArrayRef) else \
                f"a group ({type(bound.value).__name__})"
            self.fail(node, f"'{name}' names {what} and cannot be reassigned",
                      "use another variable name")
        if isinstance(value.type, T.Void):
            self.fail(node, "this call returns nothing; it cannot be assigned")
        var_type = self.assign_type(name, value.type, node)
        return [ir.Assign(self.loc(node), name, self.cast(value, var_type, node))]

    def field_target(self, target):
        """(record or named tuple, field name) of an ``r.x`` or ``r['x']`` target, else
        None; a vector's component (``v.x``, ``a[i]['x']``) is a field here too."""
        if not records.field_target(target):
            return None
        place = self.expr(self.any(target.value), target)
        if not records.has_parts(place.type):
            if isinstance(target, ast.Subscript):          # a['x'] of an array: refused
                records.by_name(self, place, target.slice.value, target)
            return None
        return place, target.attr if isinstance(target, ast.Attribute) else target.slice.value

    def store(self, array, index, value, node, label):
        loc = self.loc(node)
        if structs.is_struct(array):
            return structs.setitem(self, array, index, value, loc)
        if isinstance(array, ir.Field) and not records.in_memory(array):
            # r.v[k] = x: an element of an array field of a record held in a variable
            return records.assign_field(self, array.record, array.name, value, node,
                                        self.index_list(index, loc))
        if not isinstance(array.type, T.Array):
            self.fail(node, f"cannot assign into a {array.type}", "only arrays can be assigned into")
        if array.type.space == "const":
            self.fail(node, "constant memory is read-only in kernels",
                      "write it from the host with .copy_from(host_array)")
        if array.type.space == "copy":
            self.fail(node, "this array is a field of a copy of a record; writing it would "
                      "change nothing", "write the field through the record: r.v[k] = x "
                      "(a variable) or a[i].v[k] = x (an array element)")
        indices = self.index_list(index, loc)
        if len(indices) != array.type.ndim or any(isinstance(i, tuple) for i in indices):
            self.fail(node, f"assigning into a {array.type.ndim}-d array needs "
                      f"{array.type.ndim} integer indices, got {len(indices)}",
                      "index every dimension (slice assignment is not supported)")
        indices = self.wrap_indices(array, indices, loc)
        value = self.cast(value, array.type.element, node)
        return ir.Store(loc, array, indices, value, label)

    def stmt_If(self, node):
        test = self.any(node.test)
        if isinstance(test, Static):      # a compile-time test (simt.arch() >= (8, 0), a
            #                               module constant): only its branch is compiled
            return self.block(node.body if test.value else node.orelse)
        cond = self.truth(self.expr(test, node.test), node)
        then = self.block(node.body)
        orelse = self.block(node.orelse)
        return [ir.If(self.loc(node), cond, then, orelse)]

    def stmt_While(self, node):
        if node.orelse:
            self.fail(node, "while ... else is not supported", "use a flag variable")
        cond, pre = conditional.guarded(
            self, lambda: self.truth(self.expr(self.any(node.test), node.test), node))
        self.loop_depth += 1
        body = self.block(node.body)
        self.loop_depth -= 1
        return [conditional.loop(self, cond, pre, body, self.loc(node))]

    def stmt_For(self, node):
        if node.orelse:
            self.fail(node, "for ... else is not supported", "use a flag variable")
        it, unroll_request = node.iter, None
        func = self.any(it.func) if isinstance(it, ast.Call) else None
        if not isinstance(func, Static) or func.value in (enumerate, zip):
            return foreach.build(self, node)         # arrays, enumerate(...), zip(...)
        if not isinstance(node.target, ast.Name):
            self.fail(node.target, "the loop variable must be a single name")
        if func.value is loops.unroll:
            it, unroll_request = unroll.parse(self, it)
            func = Static(range)
        if func.value is not range:
            self.fail(it, "kernels can loop over range(...), arrays, enumerate(...) and "
                      "zip(...) only", "write for i in range(n): ... and index arrays with i")
        args = [self.expr(self.any(a), a) for a in it.args]
        if not 1 <= len(args) <= 3 or it.keywords:
            self.fail(it, "range takes 1 to 3 positional arguments")
        for a in args:
            if not (isinstance(a.type, T.Scalar) and a.type.kind in "iub"):
                self.fail(it, f"range needs integers, got {a.type}", "convert with int(...)")
        if len(args) == 1:
            args = [ir.Const(T.WEAK_INT, self.loc(it), 0), args[0]]
        if len(args) == 2:
            args.append(ir.Const(T.WEAK_INT, self.loc(it), 1))
        if isinstance(args[2], ir.Const) and args[2].value == 0:
            self.fail(it, "range() step must not be zero")
        var_type = self.assign_type(node.target.id, T.promote(*[a.type for a in args]), node)
        start, stop, step = (self.cast(a, var_type, it) for a in args)
        self.loop_depth += 1
        body = self.block(node.body)
        self.loop_depth -= 1
        loop = ir.ForRange(self.loc(node), node.target.id, start, stop, step, body,
                           unroll_request)
        unroll.check(self, loop, node)
        return [loop]

    def stmt_Break(self, node):
        if not self.loop_depth:
            self.fail(node, "'break' outside a loop")
        return [ir.Break(self.loc(node))]

    def stmt_Continue(self, node):
        if not self.loop_depth:
            self.fail(node, "'continue' outside a loop")
        return [ir.Continue(self.loc(node))]

    def stmt_Return(self, node):
        if node.value is None:
            return [ir.Return(self.loc(node), None)]
        guesses = self.guesses
        value = self.expr(self.any(node.value), node.value)
        if self.is_kernel:
            self.fail(node, "a kernel cannot return a value", "store results into an array")
        merged = recursion.return_type(self, value, node, self.guesses != guesses)
        if merged is None:
            return [ir.Return(self.loc(node), value)]
        if merged != self.return_type:
            self.return_type = merged
            self.changed = True
        return [ir.Return(self.loc(node), self.cast(value, merged, node))]

    def stmt_Assert(self, node):
        cond = self.truth(self.expr(self.any(node.test), node.test), node)
        message = ""
        if node.msg is not None:
            msg = self.any(node.msg)
            message = str(msg.value) if isinstance(msg, Static) else ast.unparse(node.msg)
        return [ir.Assert(self.loc(node), cond, message or ast.unparse(node.test))]

    # ------------------------------------------------------------ expressions
    def any(self, node, statement=False):
        """Build an expression; the result is an ir.Expr, a Static, or (for
        statement-level calls such as syncthreads) an ir.Stmt."""
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.fail(node, f"{_describe(node)} are not supported in kernels",
                      _UNSUPPORTED_HINTS.get(type(node).__name__))
        result = method(node) if type(node) is not ast.Call else method(node, statement)
        if isinstance(result, ir.Expr) and (isinstance(result.type, T.Array)
                                            or not _long(node)):
            result.set_source(node)
        return result

    def expr(self, value, node):
        """An ir.Expr from what ``any`` built (turning constants into Const)."""
        if isinstance(value, ir.Expr):
            return value
        if isinstance(value, ir.Stmt):
            self.fail(node, "this call is a statement and has no value",
                      "call it on a line of its own")
        return calls.static_to_expr(self, value, node)

    def name_expr(self, name, node):
        return self.expr(self.expr_Name(ast.Name(id=name, lineno=getattr(node, "lineno", 0),
                                                 col_offset=0)), node)

    def expr_Lambda(self, node):
        return lambdas.make(self, node)

    def expr_Constant(self, node):
        return Static(node.value)

    def expr_Name(self, node):
        name = node.id
        if name in self.static_bindings:
            return self.static_bindings[name]
        if name in self.assigned or name.startswith("$"):
            t = self.var_types.get(name)
            if t is None:
                self.unknown_reads.setdefault(name, node)
                self.changed = True
                t = T.WEAK_INT
            return ir.Var(t, self.loc(node), name)
        if name in self.param_names:
            index = self.param_names.index(name)
            return ir.Param(self.arg_types[index], self.loc(node), index)
        found, value = self.source.lookup(name, self.loc(node))
        if not found:
            self.fail(node, f"name '{name}' is not defined")
        if _read_without_call(value):                # from simt import warpSize
            return value.build(self, [], {}, self.loc(node))
        return Static(value, name)

    def expr_Attribute(self, node):
        base = self.any(node.value)
        if isinstance(base, Static) and isinstance(base.value, type) and \
                struct_classes.info_of(base.value) is not None:
            method = structs.class_attribute(base.value, node.attr)
            if method is not None:
                return method
        if isinstance(base, Static):
            found, value = self.source.attribute(base.value, base.name, node.attr,
                                                 self.loc(node))
            if not found:
                self.fail(node, f"{ast.unparse(node.value)} has no attribute '{node.attr}'")
            if _read_without_call(value):
                return value.build(self, [], {}, self.loc(node))
            return Static(value, f"{base.name}.{node.attr}")
        return calls.attribute(self, self.expr(base, node), node.attr, node)

    def expr_Tuple(self, node):
        items = [self.any(e) for e in node.elts]
        if all(isinstance(i, Static) for i in items):
            return Static(tuple(i.value for i in items))
        items = [self.expr(i, node) for i in items]
        return ir.TupleExpr(T.Tuple([i.type for i in items]), self.loc(node), items)

    expr_List = None

    def expr_BinOp(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            self.fail(node, f"operator {type(node.op).__name__} is not supported")
        lhs, rhs = self.any(node.left), self.any(node.right)
        if isinstance(lhs, Static) and isinstance(rhs, Static):
            folded = calls.fold_static(self, node, lhs.value, rhs.value)
            if folded is not None:
                return folded
        return self.binop(op, self.expr(lhs, node), self.expr(rhs, node), node)

    def binop(self, op, lhs, rhs, node):
        return calls.binop(self, op, lhs, rhs, self.loc(node))

    def call_device(self, target, args, loc):
        """A call of @simt.device function target, typed for these arguments (its IR is
        built once per argument types and groups passed: group_args.py)."""
        pyfunc = target.pyfunc
        if len(self.stack) >= MAX_CALL_DEPTH:
            self.fail(loc, *_too_deep(self.stack))
        if isinstance(target, lambdas.LambdaValue):       # its captured values go first
            args = target.captured_args(self, self.loc(loc)) + list(args)
        args, groups = group_args.split(self, args, loc)
        arg_types = tuple(a.type for a in args)
        key = ((arg_types, group_args.key(groups)) if groups else arg_types, self.warp_facts)
        if self.wraparound:
            key += ("wraparound",)
        frame = recursion.open_frame(self, pyfunc, key)
        if frame is not None:
            self.callees[(pyfunc, key)] = frame.function
            return recursion.call_open(self, frame, args, loc)
        function = target.ir_cache.get(key)
        if function is None:
            callee = FrontEnd(pyfunc, arg_types, is_kernel=False, stack=self.stack,
                              groups=groups, warp=self.warp_facts, frames=self.frames, key=key,
                              inline=getattr(target, "inline", None),
                              wraparound=self.wraparound,
                              returns_self=getattr(target, "returns_self", False))
            function = callee.build()
            self.guesses += callee.guesses          # its type may rest on a guess too
            recursion.cache(self, callee, target.ir_cache, key, function)
        self.callees[(pyfunc, key)] = function
        return ir.CallDevice(function.return_type, self.loc(loc), function, args)

    def hoist(self, *stmts):
        self.prelude.extend(stmts)

    def warp(self):
        return self.warp_facts

    def expr_UnaryOp(self, node):
        value = self.any(node.operand)
        if isinstance(value, Static) and isinstance(value.value, (int, float, complex, np.generic)):
            return Static(_UNARY_FOLD[type(node.op)](value.value))
        value = self.expr(value, node)
        return calls.unary(self, type(node.op).__name__, value, self.loc(node))

    def expr_BoolOp(self, node):
        op = "and" if isinstance(node.op, ast.And) else "or"
        first = node.values[0]
        result = self.truth(self.expr(self.any(first), first), first)
        for v in node.values[1:]:
            value, pre = conditional.guarded(
                self, lambda v=v: self.truth(self.expr(self.any(v), v), v))
            result = conditional.logical(self, op, result, value, pre, node)
        return result

    def expr_Compare(self, node):
        left = self.any(node.left)
        if isinstance(left, Static) and len(node.ops) == 1:
            right = self.any(node.comparators[0])
            folded = calls.fold_compare(type(node.ops[0]), left, right)
            if folded is not None:
                return folded
            return calls.compare(self, self.compare_name(node, node.ops[0]),
                                 self.expr(left, node), self.expr(right, node), self.loc(node))
        left = self.expr(left, node)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            name = self.compare_name(node, op)
            # a < b < c: c is evaluated only where a < b (Python's order)
            right, pre = conditional.guarded(self, lambda n=right_node: self.expr(self.any(n), n))
            if result is None:
                self.hoist(*pre)
                result = calls.compare(self, name, left, right, self.loc(node))
            else:
                cmp = calls.compare(self, name, left, right, self.loc(node))
                result = conditional.logical(self, "and", result, cmp, pre, node)
            left = right
        return result

    def compare_name(self, node, op):
        name = _COMPARES.get(type(op))
        if name is None:
            self.fail(node, f"comparison {type(op).__name__} is not supported",
                      "use ==, !=, <, <=, > or >=")
        return name

    def expr_IfExp(self, node):
        test = self.any(node.test)
        if isinstance(test, Static):      # compile time: one side only, as stmt_If
            return self.any(node.body if test.value else node.orelse)
        cond = self.truth(self.expr(test, node.test), node)
        then, then_pre = conditional.guarded(self, lambda: self.any(node.body))
        orelse, else_pre = conditional.guarded(self, lambda: self.any(node.orelse))
        if function_values.is_function(then) and function_values.is_function(orelse) and \
                not (then_pre or else_pre):
            return function_values.choose(self, cond, then, orelse, self.loc(node))
        then, orelse = self.expr(then, node.body), self.expr(orelse, node.orelse)
        t = calls.common_type(self, then.type, orelse.type, node)
        return conditional.choose(self, t, cond, self.cast(then, t, node), then_pre,
                                  self.cast(orelse, t, node), else_pre, node)

    def expr_Subscript(self, node):
        base = self.any(node.value)
        if calls.has_slice(node.slice):        # before the index: a Slice is no expression
            return calls.view(self, self.expr(base, node), node.slice, node,
                              ast.unparse(node.value))
        if isinstance(base, Static) and hasattr(base.value, "_simt_kernel"):
            calls.refuse_launch(self, base.value, node)
        index = self.any(node.slice)
        if isinstance(base, Static) and isinstance(index, Static) and \
                not isinstance(base.value, np.ndarray):     # arrays: see static_to_expr
            try:
                return Static(base.value[index.value])
            except Exception:
                pass
        if isinstance(base, Static) and isinstance(base.value, tuple) and base.value and \
                all(function_values.candidates(v) is not None for v in base.value):
            return function_values.pick(self, base.value, self.expr(index, node),
                                        ast.unparse(node.value), self.loc(node))
        base = self.expr(base, node)
        if isinstance(index, Static) and isinstance(index.value, str):
            return records.by_name(self, base, index.value, node)
        index = self.expr(index, node)
        return self.subscript(base, index, self.loc(node), ast.unparse(node.value))

    def subscript(self, base, index, loc, label):
        return calls.subscript(self, base, index, loc, label)

    def expr_Call(self, node, statement=False):
        return calls.call(self, node, statement)

    # shared with the lang builders ------------------------------------------
    def cast(self, value, t, node):
        return calls.cast(self, value, t, self.loc(node))

    def truth(self, value, node):
        return calls.truth(self, value, node)

    def index(self, value, loc):
        return calls.index(self, value, loc)

    def index_list(self, index, loc):
        return calls.index_list(self, index, loc)

    def wrap_indices(self, array, indices, loc):
        return wraparound.indices(self, array, indices, loc)

    def static(self, value, what, loc):
        if not isinstance(value, Static):
            constant = numba_locals.literal(self, value)      # cuda.jit's N = 100
            if constant is not None:
                return constant
            self.fail(loc, f"{what} must be a compile-time constant",
                      "use a literal or a module-level constant")
        return value.value

    def static_dtype(self, value, loc):
        dtype = calls.as_dtype(value.value) if isinstance(value, Static) else None
        if dtype is None:
            self.fail(loc, "expected a NumPy dtype here (np.float32, np.int32, ...)")
        if dtype.names is not None:
            try:
                T.Record(dtype)
            except TypeError as exc:
                self.fail(loc, str(exc))
        elif dtype.kind not in "biufc" and not T.is_bfloat16_dtype(dtype) and \
                T.float8_storage(dtype) is None:                             # ml_dtypes'
            self.fail(loc, f"kernels cannot hold {dtype} values",
                      "use a bool, integer, floating, complex or record (structured) dtype")
        return dtype

    def constant_int(self, value, what, loc):
        v = self.static(value, what, loc)
        if not isinstance(v, (int, np.integer)):
            self.fail(loc, f"{what} must be an integer constant")
        return int(v)

    def one_arg(self, args, name, loc):
        if len(args) != 1:
            self.fail(loc, f"{name} takes one argument, got {len(args)}")
        return args[0]

    def label_of(self, value):
        return getattr(value, "src", "") or getattr(value, "name", "") or "array"

    def shared_scratch(self, dtype, count, loc):
        """A shared array of ``count`` elements for a typing rule's own use (lang/cg_tiles.py)."""
        decl = ir.MemoryDecl(f"cg_scratch_{len(self.decls)}", "shared", (count,), np.dtype(dtype))
        self.decls.append(decl)
        return ir.ArrayRef(decl.type, self.loc(loc), decl)

    def collective(self, op, pred, result, loc):
        name = self.temp("coll")
        self.assign_type(name, result, loc)
        self.prelude.append(ir.Collective(loc, name, op, pred, result))
        return ir.Var(result, loc, name)


def _assigned_names(nodes):
    """Names assigned in the syntax ``nodes`` (a function's), and names of records whose
    fields are (``r.x = v``: a parameter becomes a variable holding a copy)."""
    names = set()
    for node in nodes:
        kind = type(node)
        if kind is ast.Name:
            if isinstance(node.ctx, ast.Store):
                names.add(node.id)
        elif kind is ast.Attribute or kind is ast.Subscript:    # what field_root takes
            root = records.field_root(node)
            if root is not None:
                names.add(root)
    return names


def _read_without_call(value):
    """Whether ``value`` is a registry entry read as a value (``warpSize``, ``threadIdx.x``)."""
    return getattr(value, "value", False) is True and hasattr(value, "build")


def _long(node):
    """An expression spanning lines or a long line: its IR gets no ``src`` text, as
    unparsing every node of a long sum would take time quadratic in its length."""
    end = getattr(node, "end_lineno", None)
    return end is not None and (end != node.lineno or node.end_col_offset - node.col_offset > 160)


def _is_simple(expr):
    if isinstance(expr, (ir.Const, ir.Var, ir.Param)):
        return True
    return isinstance(expr, ir.TupleExpr) and all(_is_simple(i) for i in expr.items)


def _describe(node):
    return {"Dict": "dict literals", "Set": "set literals", "List": "list literals",
            "ListComp": "list comprehensions", "Lambda": "lambdas", "JoinedStr": "f-strings",
            "Starred": "starred expressions", "Await": "await expressions",
            "GeneratorExp": "generator expressions", "DictComp": "dict comprehensions",
            "SetComp": "set comprehensions", "NamedExpr": "assignment expressions (:=)",
            "Yield": "yield expressions"}.get(type(node).__name__,
                                              f"'{type(node).__name__}' expressions")


_UNSUPPORTED_HINTS = {
    "Dict": "use simt.local.array(n, np.int32) for a per-thread table",
    "List": "use simt.local.array(n, dtype) for a per-thread array, or a tuple of values",
    "ListComp": "use a for loop over range() and a simt.local.array",
    "JoinedStr": "pass values to print() separated by commas",
    "Try": "kernels cannot catch exceptions; check conditions with if",
    "Raise": "use assert cond, 'message' to stop a kernel with an error",
    "With": "with blocks are not supported in kernels",
    "FunctionDef": "define helpers at module level with @simt.device",
    "Global": "use simt.Global(shape, dtype) for device globals",
    "Nonlocal": "pass values as arguments",
    "Delete": "kernel variables cannot be deleted",
}

_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
           ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift",
           ast.RShift: "rshift", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor"}
_COMPARES = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt",
             ast.GtE: "ge"}
_UNARY_FOLD = {ast.USub: lambda v: -v, ast.UAdd: lambda v: +v, ast.Not: lambda v: not v,
               ast.Invert: lambda v: ~v}
