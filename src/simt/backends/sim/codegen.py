"""Typed IR -> Python source for the sim device.

A kernel becomes three nested functions: ``launch(L)`` (once per launch: binds the
arrays and constants), ``block(B)`` (once per block: its shared memory, the device
functions) and the kernel itself, one call per thread, named as the user's function and
with the user's parameter and variable names, so that pdb and tracebacks show the
user's names. A kernel with barriers or warp functions is a generator that yields at
each one (schedule.py resumes it). Each generated line remembers the user's line it
came from: compile.py gives the compiled code those line numbers and file names.

Scalars are Python values; values.py makes each dtype wrap and round as on the other
devices. Array accesses call the array's ``ld``/``st`` (memory.py), which check the
index, races and initialization, with a site number that names the user's line.
"""
import keyword
import re

from ...errors import NotSupportedError
from ...ir import nodes as ir
from ...ir import types as T
from ...ir.assigned import display_name
from .lower import lower_intrinsic
from .scalars import binop, cast, literal, wrap

SYNC_NODES = (ir.Barrier, ir.Collective, ir.WarpOp, ir.GridSync)
_RECORD_NODES = (ir.Field, ir.StoreField, ir.Replace, ir.MakeRecord)


def _cannot_run(node):
    """The NotSupportedError for an IR node the sim device has no code for."""
    if isinstance(node, _RECORD_NODES):
        place = getattr(node, "place", None)         # a StoreField's: a vector's component
        vector = place is not None and isinstance(place.type, T.Vector)
        what = "vector types (float3, int4 ...)" if vector else "records (NumPy structured dtypes)"
        struct = _struct_of(node)
        if struct is not None:
            what = f"values of @simt.struct {struct.class_name} (records underneath)"
        return NotSupportedError(f"{what} are not built on the sim device yet: run the kernel "
                                 f"on the 'cpu' device, which has the same semantics ({node.loc})")
    return NotSupportedError(f"the sim device cannot run {type(node).__name__} ({node.loc})")


def _struct_of(node):
    """The Struct type a record node works on, else None."""
    for part in (node, getattr(node, "record", None), getattr(node, "place", None)):
        if isinstance(getattr(part, "type", None), T.Struct):
            return part.type
    return None


class Site:
    """Where an access or a check is: the user's line, file and the array's name (and
    an atomic's memory order and scope)."""

    order = "relaxed"
    scope = "device"

    def __init__(self, loc, label="", order="relaxed", scope="device"):
        self.file = loc.filename if loc else "?"
        self.line = loc.line if loc else 0
        self.function = loc.function if loc else "?"
        self.label = label
        if order != "relaxed":
            self.order = order
        if scope != "device":
            self.scope = scope

    def __str__(self):
        return f"{self.file}:{self.line}"


class Source:
    """Lines of Python, each with the (file, line) of the user's code it came from."""

    def __init__(self):
        self.lines = []          # (indent, text, file, line)

    def add(self, indent, text, loc):
        file = loc.filename if loc else None
        self.lines.append((indent, text, file, loc.line if loc else 0))

    def text(self):
        return "\n".join("    " * i + t for i, t, _, _ in self.lines) + "\n"

    def places(self):
        """(file, line) per generated line, from 1."""
        return [(f, n) for _, _, f, n in self.lines]


def py_name(name):
    """A Python identifier for an IR name ($-temporaries and keywords made safe)."""
    out = re.sub(r"\W", "_", name.replace("$", "_s_"))
    if keyword.iskeyword(out) or out[:1].isdigit():
        out = "_v_" + out
    return out


def is_sync(fn):
    return any(isinstance(s, SYNC_NODES) for s in ir.walk_stmts(fn.body))


class Generator:
    """The Python source of one kernel (after ir/inline.py inlined the device functions
    with barriers): ``generate()`` returns (Source, sites, [(name, MemoryDecl)])."""

    def __init__(self, kernel, warp, narrowing=False):
        self.kernel = kernel
        self.warp = warp         # the device's warp facts (ir/types.Warp)
        self.narrowing = narrowing      # check implicit narrowing conversions (options)
        self.src = Source()
        self.sites = []          # Site per site number
        self.decls = {}          # id(MemoryDecl) -> (name, decl)
        self.functions = {}      # id(Function) -> python name
        self.files = {}          # python name -> the file of its user's function
        self.consts = {}         # python name -> value (NumPy arrays for const memory)
        self.hoisted = {}        # the text of a block-uniform expression -> its name
        self.hoisting = False
        self.layouts = []        # dtypes whose records.Layout generated code names _k_lay<i>

    # ---------------------------------------------------------------- structure
    def generate(self):
        fns = self._device_functions(self.kernel)
        loc = self.kernel.loc
        self.src.add(0, "def _k_launch(_k_L):", loc)
        self.src.add(1, "_k_bdim, _k_gdim = _k_L.block, _k_L.grid", loc)
        body_at = len(self.src.lines)
        self.src.add(1, "def _k_block(_k_B):", loc)
        self.src.add(2, "_k_bid = _k_B.index", loc)
        for fn in fns:
            self._function(fn, 2)
        self._function(self.kernel, 2)
        self.src.add(2, f"return {self.functions[id(self.kernel)]}", loc)
        # what the launch and the block bind, now that the bodies named them
        launch_lines, block_lines = [], []
        for name, decl in self.decls.values():
            if decl.space in ("shared", "dynamic_shared"):
                block_lines.append(f"{name} = _k_B.shared({name}_d)")
            elif decl.space != "local":
                launch_lines.append(f"{name} = _k_L.static({name}_d)")
        block_lines += [f"{name} = {text}" for text, name in self.hoisted.items()]
        block_at = [text for _, text, _, _ in self.src.lines].index("_k_bid = _k_B.index") + 1
        self._insert(block_at, 2, block_lines, loc)
        self._insert(body_at, 1, launch_lines, loc)
        self.src.add(1, "return _k_block", loc)
        return self.src, self.sites, list(self.decls.values())

    def _insert(self, at, indent, lines, loc):
        file = loc.filename
        self.src.lines[at:at] = [(indent, text, file, loc.line) for text in lines]

    def _device_functions(self, kernel):
        order, seen = [], set()

        def visit(fn):
            for node in _walk_exprs(fn.body):
                if isinstance(node, ir.CallDevice) and id(node.function) not in seen:
                    seen.add(id(node.function))
                    visit(node.function)
                    order.append(node.function)
        visit(kernel)
        # not a name of the kernel's parameters or variables, which would hide it there
        used = {py_name(kernel.name)} | {py_name(n) for n, _ in kernel.params} | \
            {py_name(n) for n in kernel.locals}
        for i, fn in enumerate(order):
            name = py_name(fn.name)          # specializations of one function: one name each
            self.functions[id(fn)] = name if name not in used else f"{name}_{i}"
            used.add(self.functions[id(fn)])
            self.files[self.functions[id(fn)]] = fn.loc.filename
            if is_sync(fn):
                raise NotSupportedError(f"device function {fn.name!r} holds a barrier or warp "
                                        "function the inliner left: the sim device needs it "
                                        "inlined")
        self.functions[id(kernel)] = py_name(kernel.name)
        self.files[py_name(kernel.name)] = kernel.loc.filename
        return order

    def _function(self, fn, indent):
        self.fn = fn
        names = [py_name(n) for n, _ in fn.params]
        if fn.is_kernel:           # its parameters: names of the launch (pdb shows them)
            if names:
                self.src.lines.insert(1, (1, f"{''.join(n + ', ' for n in names)}= _k_L.params",
                                          fn.loc.filename, fn.loc.line))
            names = []
        params = ", ".join(["_k_t"] + names)
        self.src.add(indent, f"def {self.functions[id(fn)]}({params}):", fn.loc)
        start = len(self.src.lines)
        if any(getattr(n, "op", "") == "builtin.breakpoint" for n in _walk_exprs(fn.body)):
            self.src.add(indent + 1, "threadIdx, blockIdx, blockDim, gridDim = _k_t.dims()",
                         fn.body[0].loc if fn.body else fn.loc)
        self._block(fn.body, indent + 1)
        if fn.is_kernel and is_sync(fn):
            self.src.add(indent + 1, "return", fn.loc)
            self.src.add(indent + 1, "yield", fn.loc)
        if len(self.src.lines) == start:
            self.src.add(indent + 1, "pass", fn.loc)

    def _block(self, body, indent):
        start = len(self.src.lines)
        for s in body:
            self.stmt(s, indent)
        if len(self.src.lines) == start:
            self.src.add(indent, "pass", None)

    def site(self, loc, label="", order="relaxed", scope="device"):
        self.sites.append(Site(loc, label, order, scope))
        return len(self.sites) - 1

    # ---------------------------------------------------------------- statements
    def stmt(self, s, i):
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise _cannot_run(s)
        method(s, i)

    def emit(self, i, text, loc):
        self.src.add(i, text, loc)

    def stmt_Assign(self, s, i):
        t = self.fn.locals.get(s.name, s.value.type)
        self.emit(i, f"{py_name(s.name)} = {self.convert(s.value, t)}", s.loc)

    def stmt_Store(self, s, i):
        site = self.site(s.loc, s.label)
        v, element = s.value, s.array.type.element
        if element == T.FLOAT32 and isinstance(v, ir.BinOp) and v.type == T.FLOAT32 and \
                v.op in ("add", "sub", "mul", "truediv"):
            value = binop(v.op, self.expr(v.lhs), self.expr(v.rhs), v.type, v.rhs, exact=True)
        else:
            value = self.convert(v, element)
        idx = ", ".join(self.expr(x) for x in s.indices)
        self.emit(i, f"{self.expr(s.array)}.st({site}, {value}, {idx})", s.loc)

    def stmt_StoreField(self, s, i):
        """``a[i].x = v``: a vector element's component alone, or a record's field (its
        bytes alone: records.py)."""
        place = s.place
        if not (isinstance(place.type, T.Vector) and isinstance(place, ir.Load)):
            load, path = _record_place(place)
            if load is None:
                raise _cannot_run(s)
            site = self.site(s.loc, load.label)
            idx = "".join(f", {self.expr(x)}" for x in load.indices)
            self.emit(i, f"{self.expr(load.array)}.st_field({site}, {path + (s.name,)!r}, "
                         f"{self.expr(s.value)}{idx})", s.loc)
            return
        site = self.site(s.loc, place.label)
        j = "xyzw".index(s.name)
        value = self.convert(s.value, place.type.element)
        idx = ", ".join(self.expr(x) for x in place.indices)
        self.emit(i, f"{self.expr(place.array)}.st_part({site}, {j}, {value}, {idx})", s.loc)

    def stmt_ExprStmt(self, s, i):
        self.emit(i, self.expr(s.value), s.loc)

    def stmt_If(self, s, i):
        self.emit(i, f"if {self.expr(s.cond)}:", s.loc)
        self._block(s.then, i + 1)
        if s.orelse:
            self.emit(i, "else:", s.loc)
            self._block(s.orelse, i + 1)

    def stmt_While(self, s, i):
        self.emit(i, f"while {self.expr(s.cond)}:", s.loc)
        self._block(s.body, i + 1)

    def stmt_ForRange(self, s, i):
        var = py_name(s.var)
        self.emit(i, f"for {var} in _k_range({self.expr(s.start)}, {self.expr(s.stop)}, "
                     f"{self.expr(s.step)}):", s.loc)
        self._block(s.body, i + 1)

    def stmt_Break(self, s, i):
        self.emit(i, "break", s.loc)

    def stmt_Continue(self, s, i):
        self.emit(i, "continue", s.loc)

    def stmt_Return(self, s, i):
        if s.value is None and self.fn.is_kernel and is_sync(self.fn):
            self.emit(i, "return True", s.loc)     # returned: excused from later barriers
        elif s.value is None:
            self.emit(i, "return", s.loc)
        else:
            self.emit(i, f"return {self.convert(s.value, self.fn.return_type)}", s.loc)

    def stmt_Barrier(self, s, i):
        if s.cpu_only:        # an arrive/wait barrier's wait: the wait itself yields
            return
        if not s.named:
            self.emit(i, f"yield ('bar', {self.site(s.loc)}, None)", s.loc)
            return
        ident = self.expr(s.named[0])           # bar.sync id, count (None: the whole block)
        count = self.expr(s.named[1]) if len(s.named) > 1 else "None"
        self.emit(i, f"yield ('nbar', {self.site(s.loc)}, ({ident}, {count}))", s.loc)

    def stmt_Collective(self, s, i):
        self.emit(i, f"{py_name(s.name)} = yield ('bar', {self.site(s.loc)}, "
                     f"({s.op!r}, {self.expr(s.value)}))", s.loc)

    def stmt_GridSync(self, s, i):
        """grid.sync(); cluster.sync() and barrier_wait() (its barrier_arrive() counts for
        nothing here: the wait is the whole barrier, which orders more than a GPU's, never
        less: docs/sim-device.md)."""
        if s.scope == "cluster.arrive":
            self.emit(i, "pass", s.loc)
            return
        scope = None if s.scope == "grid" else "'cluster'"
        self.emit(i, f"yield ('grid', {self.site(s.loc)}, {scope})", s.loc)

    def stmt_WarpOp(self, s, i):
        args = "".join(f"{self.expr(a)}, " for a in s.args)
        types = tuple(a.type.dtype.str if isinstance(a.type, T.Scalar) else "" for a in s.args)
        call = f"yield ('warp', {self.site(s.loc)}, ({s.op!r}, ({args}), {types!r}))"
        if s.op == "exchange":        # every lane's operands, for the call after it (_k_x)
            self.emit(i, f"_k_x = {call}", s.loc)
            return
        self.emit(i, call if s.name is None else f"{py_name(s.name)} = {call}", s.loc)

    def stmt_Print(self, s, i):
        args = "".join(f"{self.expr(a)}, " for a in s.args)
        self.emit(i, f"_k_printf({s.format!r}, ({args}))", s.loc)

    def stmt_Assert(self, s, i):
        self.emit(i, f"if not {self.expr(s.cond)}:", s.loc)
        self.emit(i + 1, f"_k_L.assert_failed(_k_t, {self.site(s.loc, s.message)})", s.loc)

    # ---------------------------------------------------------------- expressions
    def expr(self, e):
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            raise _cannot_run(e)
        if self.hoisting or self.fn is not self.kernel or \
                not _block_uniform(e, self.narrowing) or isinstance(e, (ir.Const, ir.Intrinsic)):
            return method(e)
        self.hoisting = True         # the block computes it once, not each thread
        text = method(e)
        self.hoisting = False
        return self.hoisted.setdefault(text, f"_k_u{len(self.hoisted)}")

    def convert(self, e, t):
        """e's value as type t (values keep their own type across assignments)."""
        if isinstance(t, T.Scalar) and isinstance(e.type, T.Scalar) and \
                t.dtype != e.type.dtype:
            return cast(self.expr(e), e.type, t)
        return self.expr(e)

    def expr_Const(self, e):
        return literal(e.value, e.type)

    def expr_Var(self, e):
        return py_name(e.name)

    def expr_CheckedVar(self, e):
        site = self.site(e.loc, display_name(e.var.name))
        return (f"({py_name(e.var.name)} if {py_name(e.assigned.name)} else "
                f"_k_L.unassigned(_k_t, {site}))")

    def expr_Param(self, e):
        name = self.fn.params[e.index][0]
        if self.fn.is_kernel and name in self.fn.locals:
            # the kernel assigns a variable of the parameter's name, which the thread's
            # function binds: read the launch's value itself, not that unbound local
            return f"_k_L.params[{e.index}]"
        return py_name(name)

    def expr_Cast(self, e):
        if self.narrowing and _checked_cast(e):        # the check returns the new value
            site = self.site(e.loc, f"{e.value.type.dtype.name}>{e.type.dtype.name}")
            return f"_k_L.narrowed(_k_t, {site}, {self.expr(e.value)})"
        return cast(self.expr(e.value), e.value.type, e.type)

    def expr_BinOp(self, e):
        return binop(e.op, self.expr(e.lhs), self.expr(e.rhs), e.type, e.rhs)

    def expr_UnaryOp(self, e):
        x, t = self.expr(e.value), e.type
        if e.op == "not":
            return f"(not {x})"
        if e.op == "invert":
            if t.kind == "b":
                return f"(not {x})"
            return wrap(f"~{x}", t) if t.kind == "u" else f"(~{x})"
        if t.kind == "b" or e.value.type.kind == "b":
            return f"(-int({x}))"
        if t.kind in "iu":
            return wrap(f"-{x}", t)
        return f"(-{x})"

    def expr_Compare(self, e):
        sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[e.op]
        lhs, rhs = self.expr(e.lhs), self.expr(e.rhs)
        if e.lhs.type.kind == "c" and e.op not in ("eq", "ne"):
            join = " and " if e.op == "eq" else " or "
            return f"(({lhs}).real {sym} ({rhs}).real{join}({lhs}).imag {sym} ({rhs}).imag)"
        return f"({lhs} {sym} {rhs})"

    def expr_Logical(self, e):
        return f"({self.expr(e.lhs)} {e.op} {self.expr(e.rhs)})"

    def expr_IfExp(self, e):
        return (f"({self.convert(e.then, e.type)} if {self.expr(e.cond)} else "
                f"{self.convert(e.orelse, e.type)})")

    def expr_ArrayRef(self, e):
        decl = e.decl
        key = id(decl)
        if key not in self.decls:
            name = f"_k_m{len(self.decls)}_{py_name(decl.name)}"
            self.decls[key] = (name, decl)
        name = self.decls[key][0]
        if decl.space == "local":
            return f"_k_t.local({name}_d)"
        return name

    def expr_Load(self, e):
        site = self.site(e.loc, e.label)
        idx = ", ".join(self.expr(x) for x in e.indices)
        return f"{self.expr(e.array)}.ld({site}, {idx})"

    def expr_View(self, e):
        parts = []
        for index in e.indices:
            if isinstance(index, tuple):
                parts.append("slice(" + ", ".join("None" if p is None else self.expr(p)
                                                  for p in index) + ")")
            else:
                parts.append(self.expr(index))
        return f"{self.expr(e.array)}.view({self.site(e.loc, e.label)}, ({', '.join(parts)},))"

    def expr_ArrayAttr(self, e):
        if e.attr == "data":
            raise NotSupportedError(f"a.ctypes.data (cuda.jit) at {e.loc.filename}:"
                                    f"{e.loc.line}: the sim device's arrays have no machine "
                                    "addresses; run this kernel on the cpu or cuda device")
        return f"{self.expr(e.array)}.{e.attr}[{e.dim}]"

    def expr_TupleExpr(self, e):
        return "(" + "".join(f"{self.expr(x)}, " for x in e.items) + ")"

    def expr_TupleGet(self, e):
        return f"{self.expr(e.tuple)}[{e.index}]"

    # ---------------------------------------------------------------- records (records.py)
    def layout(self, dtype):
        """The name generated code knows the records.Layout of ``dtype`` by (a record's
        fields; ``.dtype``, the dtype itself)."""
        for k, known in enumerate(self.layouts):
            if known is dtype or (known == dtype and repr(known) == repr(dtype)):
                return f"_k_lay{k}"
        self.layouts.append(dtype)
        return f"_k_lay{len(self.layouts) - 1}"

    def expr_Field(self, e):
        load, path = _record_place(e.record)
        if load is not None and not isinstance(load.array.type, T.Array) or \
                load is not None and load.array.type.space == "copy":
            load = None
        if load is not None:           # in memory: the field's bytes alone
            site = self.site(e.loc, load.label)
            idx = "".join(f", {self.expr(x)}" for x in load.indices)
            method = "field_view" if isinstance(e.type, T.Array) else "ld_field"
            return f"{self.expr(load.array)}.{method}({site}, {path + (e.name,)!r}{idx})"
        lay = self.layout(e.record.type.dtype)
        if isinstance(e.type, T.Array):
            label = f"{display_name(getattr(e.record, 'name', 'record'))}.{e.name}"
            return f"_k_rec.value_view(_k_L, {self.expr(e.record)}, {lay}, {e.name!r}, {label!r})"
        return f"_k_rec.field({self.expr(e.record)}, {lay}, {e.name!r})"

    def expr_Replace(self, e):
        lay = self.layout(e.record.type.dtype)
        new = self.expr(e.value)
        if not e.index:
            return f"_k_rec.replace({self.expr(e.record)}, {lay}, {e.name!r}, {new})"
        site = self.site(e.loc, e.name)
        idx = "".join(f"{self.expr(x)}, " for x in e.index)
        return (f"_k_rec.replace({self.expr(e.record)}, {lay}, {e.name!r}, {new}, ({idx}), "
                f"_k_L.index_fault({site}))")

    def expr_MakeRecord(self, e):
        from ...ir import records
        lay = self.layout(e.type.dtype)
        items = "".join(f"{self.convert(x, T.element_type(dt))}, "
                        for x, (_, _, dt) in zip(e.items, records.slots(e.type.dtype)))
        return f"_k_rec.make({lay}, ({items}))"

    def expr_CallDevice(self, e):
        args = "".join(f", {self.convert(a, t)}" for a, (_, t) in zip(e.args, e.function.params))
        return f"{self.functions[id(e.function)]}(_k_t{args})"

    def expr_Intrinsic(self, e):
        return lower_intrinsic(self, e)


def _record_place(e):
    """(the Load, field names) of a record in memory: a Load of a record, or a Field of
    one (a vector's component included); else (None, ())."""
    path = ()
    while isinstance(e, ir.Field):
        path = (e.name,) + path
        e = e.record
    if isinstance(e, ir.Load) and isinstance(e.type, (T.Record, T.Vector)) and \
            (path or isinstance(e.type, T.Record)):
        return e, path
    return None, ()


def _checked_cast(e):
    """Whether narrowing=True checks the conversion ``e`` (an ir.Cast)."""
    return not e.explicit and T.narrows(e.value.type, e.type)


def _block_uniform(e, narrowing=False):
    """Whether ``e`` is the same for every thread of a block and cannot fail: sums and
    products of constants and blockIdx, blockDim, gridDim (with ``narrowing``, no
    conversion that the narrowing check may fail)."""
    if isinstance(e, ir.Const):
        return True
    if isinstance(e, ir.Intrinsic):
        op = e.entry.op if e.entry is not None else e.op
        return op.partition(".")[0] in ("blockIdx", "blockDim", "gridDim")
    if isinstance(e, ir.Cast):             # between integers: it cannot raise
        kinds = getattr(e.type, "kind", ""), getattr(e.value.type, "kind", "")
        return kinds[0] in ("i", "u") and kinds[1] in ("i", "u", "b") and \
            not (narrowing and _checked_cast(e)) and _block_uniform(e.value, narrowing)
    if isinstance(e, ir.BinOp):
        return e.op in ("add", "sub", "mul") and _block_uniform(e.lhs, narrowing) and \
            _block_uniform(e.rhs, narrowing)
    return False


def _walk_exprs(body):
    from ...ir.walk import walk
    return walk(*body)
