"""The IR package on its own (simt/ir): the traversal, the printer, the verifier and the
passes, on typed IR built by the front end. No device, no GPU and no llvmlite.binding
(a subprocess test proves the last), except the SIMT_DUMP test, which compiles."""
import copy
import os
import types
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import simt
from simt.compiler.frontend import FrontEnd
from simt.config import config
from simt.ir import nodes as ir
from simt.ir import printer, types as T, verify
from simt.ir.assigned import check_reads
from simt.ir.fission import Run, fission
from simt.ir.inline import inline_barrier_calls
from simt.ir.regions import Plan
from simt.ir.uniform import Uniformity
from simt.ir.walk import all_functions, children, map_children, replace, walk

SRC = os.path.join(os.path.dirname(__file__), os.pardir, "src")
F32 = T.Array(np.float32, 1, "C")
F32_2D = T.Array(np.float32, 2, "C")


@simt.kernel
def saxpy(a, x, out):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[i] = a * x[i] + 1


@simt.device
def scale(v, k):
    if k < 0:
        return -v
    return v * k


POINT = np.dtype([("x", "<f4"), ("v", "<f4", (2,))])


@simt.kernel
def everything(x, m, out):
    tile = simt.shared.array(32, np.float32)
    t = simt.threadIdx.x
    i = simt.grid(1)
    pair = (i, t)
    row = m[pair[1]]
    tail = x[1:]
    tile[t] = x[i] if i < x.shape[0] and not t == 3 else np.float32(0)
    simt.syncthreads()
    n = simt.syncthreads_count(t > 2)
    k = 0
    while k < n:
        k += 1
        if k == 2:
            continue
        if k > 5:
            break
    v = simt.shfl_down_sync(0xffffffff, tile[t], 1)
    for j in range(3):
        v += scale(row[j] + tail[j], -1.5)
    assert v == v, "nan"
    print("v", v)
    simt.cg.this_grid().sync()
    simt.atomic.add(out, 0, v)
    out[i] = v
    rec = simt.local.array(2, POINT)          # records: MakeRecord, StoreField, Field, Replace
    rec[0] = (v, (v, v))
    rec[0].x += 1.0
    r = rec[0]
    r.v[1] = v
    out[i] = r.x + r.v[1]


@simt.device
def block_sum(tile, t):
    s = 16
    while s > 0:
        if t < s:
            tile[t] += tile[t + s]
        simt.syncthreads()
        s //= 2
    return tile[0]


@simt.device
def first_positive(tile, n):
    for j in range(n):
        simt.syncthreads()
        if tile[j] > 0:
            return tile[j]          # an early return inside a loop
    return np.float32(0)


@simt.kernel
def reduce(x, out):
    tile = simt.shared.array(32, np.float32)
    t = simt.threadIdx.x
    row = simt.blockIdx.x * 32 + t
    tile[t] = x[row]
    simt.syncthreads()
    total = block_sum(tile, t) + x[row] * first_positive(tile, 4)
    if t == 0:
        out[simt.blockIdx.x] = total


def build(kernel, *types):
    """Fresh typed IR of ``kernel``: a deep copy, callees included, safe to break."""
    return copy.deepcopy(FrontEnd(kernel.pyfunc, types, is_kernel=True).build())


def find(fn, cls, where=lambda node: True):
    """The first node of class ``cls`` in ``fn`` or its callees satisfying ``where``."""
    for f in all_functions(fn):
        for node in walk(*f.body):
            if isinstance(node, cls) and where(node):
                return node
    raise LookupError(cls.__name__)


def source_line(text):
    """The line number of ``text`` in this file."""
    with open(__file__) as f:
        return next(n for n, line in enumerate(f, 1) if text in line)


def everything_ir():
    return build(everything, F32, F32_2D, F32)


# ---------------------------------------------------------------- the traversal

def node_classes():
    return {cls for cls in vars(ir).values() if isinstance(cls, type) and
            issubclass(cls, (ir.Expr, ir.Stmt)) and cls not in (ir.Expr, ir.Stmt)}


def brute_force(node, out):
    """Every Expr and Stmt reachable through attributes, lists and tuples."""
    out.append(node)
    for value in vars(node).values():
        items = value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            parts = item if isinstance(item, tuple) else (item,)
            for part in parts:
                if isinstance(part, (ir.Expr, ir.Stmt)):
                    brute_force(part, out)
    return out


def test_walk_visits_every_node():
    """Each node as often as it is held (the IR is a DAG: the front end and inlining
    share leaves such as an argument's Var)."""
    fn = everything_ir()
    for f in all_functions(fn):
        visited = sorted(id(n) for n in walk(*f.body))
        assert visited == sorted(id(n) for s in f.body for n in brute_force(s, []))
    assert list(walk(fn))[1:] == list(walk(*fn.body))       # a Function's children: its body


def test_the_test_kernels_hold_every_node_class():
    checked = check_reads(inline_barrier_calls(build(reduce, F32, F32)))    # checked mode's
    seen = {type(n) for fn in (everything_ir(), checked)
            for f in all_functions(fn) for n in walk(*f.body)}
    assert node_classes() - seen == {ir.WarpGather, ir.WarpResult}   # made by the CPU emitter


def test_children_in_evaluation_order():
    fn = everything_ir()
    binop = find(fn, ir.BinOp)
    assert list(children(binop)) == [binop.lhs, binop.rhs]
    loop = find(fn, ir.ForRange)
    assert list(children(loop)) == [loop.start, loop.stop, loop.step, *loop.body]
    view = find(fn, ir.View, lambda v: isinstance(v.indices[0], tuple))
    start = view.indices[0][0]
    assert list(children(view)) == [view.array, start]       # slice parts that are None: none
    op = find(fn, ir.WarpOp)
    gather = ir.WarpGather(op.loc, op)
    assert list(children(gather)) == [op]
    assert list(walk(gather))[:2] == [gather, op]


def test_map_children_and_replace_keep_source_and_location():
    fn = everything_ir()
    binop = find(fn, ir.BinOp, lambda b: hasattr(b, "src"))
    copied = map_children(binop, lambda child: child)
    assert copied is not binop
    assert (copied.lhs, copied.rhs, copied.loc, copied.src) == (binop.lhs, binop.rhs, binop.loc,
                                                                binop.src)
    swapped = replace(binop, lhs=binop.rhs)
    assert swapped.lhs is binop.rhs and swapped.src == binop.src
    load = find(fn, ir.Load)
    doubled = map_children(load, lambda child: replace(child) if isinstance(child, ir.Var)
                           else child)
    assert doubled.indices is not load.indices and len(doubled.indices) == len(load.indices)


def function(name, *callees):
    return ir.Function(name, [], T.VOID, [], {}, [], False, None, callees=list(callees))


def test_all_functions_each_once_callers_first():
    d = function("d")
    b = function("b", d)
    c = function("c", d, b)
    a = function("a", b, c)
    assert [f.name for f in all_functions(a)] == ["a", "b", "d", "c"]


# ---------------------------------------------------------------- the printer

def code(text):
    """The printed text without its source comments."""
    return "\n".join(line.split("  #")[0].rstrip() for line in text.splitlines())


def test_printer_shows_types_and_nesting():
    fn = build(saxpy, T.FLOAT32, F32, F32)
    text = printer.format_function(fn)
    assert code(text) == textwrap.dedent("""\
        kernel saxpy(%a: float32, %x: float32[:] (C, global), %out: float32[:] (C, global)) -> void:
          var i: int64
          i = (int64(blockIdx.x) * int64(blockDim.x)) + int64(threadIdx.x)
          if i < %x.shape[0]:
            %out[i] = (%a * %x[i]) + float32(1.0)""")
    line = source_line("out[i] = a * x[i] + 1")
    assert text.splitlines()[-1].endswith(f"# {line}: out[i] = a * x[i] + 1")
    assert text.splitlines()[0].endswith(f"# {__file__}:{line - 3}")


def test_printer_prints_every_statement_and_callees():
    text = code(printer.format_program(everything_ir()))
    for expected in ["shared tile: float32[32]", "var pair: (int64, int32)", "pair = (i, t)",
                     "row = %m[int64(pair[1])]", "tail = %x[int64(1):]", "syncthreads()", "= syncthreads_count(t > int32(2))",
                     "while int32(k) < n:", "continue", "break", "= warp.shfl.down(uint32(4294967295), ",
                     "for j in range(0, 3, 1):", "v = v + scale(row[int64(j)] + tail[int64(j)], -1.5)",
                     "assert v == v, 'nan'", "print('v %g\\n', float64(v))", "grid.sync()",
                     "device scale(%v: float32, %k: weak float64) -> float32:",
                     "return -%v", "and (not (t == int32(3)))",
                     "atomic{op='add', label='out'}(%out, v, int64(0))"]:
        assert expected in text, expected


def test_printer_flags_a_statement():
    fn = build(saxpy, T.FLOAT32, F32, F32)
    store = find(fn, ir.Store)
    lines = printer.format_function(fn, mark=store).splitlines()
    flagged = [line for line in lines if line.startswith(">> ")]
    assert len(flagged) == 1 and "%out[i] = " in flagged[0]


# ---------------------------------------------------------------- the verifier

def test_verifier_accepts_front_end_and_inlined_ir():
    for fn in (build(saxpy, T.FLOAT32, F32, F32), everything_ir(), build(reduce, F32, F32)):
        for f in all_functions(fn):
            verify.verify(f)
        for f in all_functions(inline_barrier_calls(fn)):
            verify.verify(f, "inline")


def const(t, value=1):
    return ir.Const(t, None, value)


def set_field(cls, name, value, where=lambda node: True):
    def breaker(fn):
        new = value(fn) if isinstance(value, types.FunctionType) else value
        setattr(find(fn, cls, where), name, new)
    return breaker


def drop_local(name):
    return lambda fn: fn.locals.pop(name)


def append(make):
    return lambda fn: fn.body.append(make())


def shift_by_float(fn):
    binop = find(fn, ir.BinOp, lambda b: b.type.kind == "i")
    binop.op, binop.rhs = "lshift", const(T.FLOAT32)


def of_type(cls, t, *operands):
    """A breaker: the first ``cls`` node gets type ``t`` (comparisons: their operands),
    its ``operands`` constants of ``t``."""
    def breaker(fn):
        node = find(fn, cls, lambda n: getattr(n, "op", "") in ("add", "neg", "lt"))
        if cls is not ir.Compare:
            node.type = t
        for name in operands:
            setattr(node, name, const(t))
    return breaker


def neg(node):
    return isinstance(node, ir.UnaryOp) and node.op == "neg"


def not_(node):
    return isinstance(node, ir.UnaryOp) and node.op == "not"


def tail_view(node):
    return isinstance(node.indices[0], tuple)


def is_var(name):
    return lambda node: isinstance(node, ir.Var) and node.name == name


def is_assign(name):
    return lambda node: node.name == name


BREAKS = {
    # shape
    "expression field": (set_field(ir.Assign, "value", "x"), "field 'value' holds a str 'x', declared Expr"),
    "body field": (lambda fn: find(fn, ir.If).then.append(const(T.INT64)),
                   "field 'then' holds a list of Const, Continue, declared list[Stmt]"),
    "expression type": (set_field(ir.BinOp, "type", np.float32), "is not a simt type"),
    # scope
    "undeclared variable": (drop_local("i"), "variable 'i' is not declared in the locals"),
    "variable type": (set_field(ir.Var, "type", T.FLOAT64, is_var("i")),
                      "variable 'i' is declared int64 but gets a float64"),
    "assigned type": (set_field(ir.Assign, "value", const(T.FLOAT32), is_assign("i")),
                      "variable 'i' is declared int64 but gets a float32"),
    "loop variable undeclared": (drop_local("j"), "variable 'j' is not declared"),
    "collective result": (set_field(ir.Collective, "name", "nope"), "'nope' is not declared"),
    "warp result type": (set_field(ir.WarpOp, "type", T.FLOAT64),
                         "declared float32 but gets a float64"),
    "parameter index": (set_field(ir.Param, "index", 9), "parameter 9 of 3"),
    "parameter type": (set_field(ir.Param, "type", T.INT32, lambda p: p.index == 0),
                       "type int32 for parameter 'x' of type float32[:] (C, global)"),
    "break outside a loop": (append(lambda: ir.Break(None)), "'break' outside a loop"),
    "continue outside a loop": (append(lambda: ir.If(None, const(T.BOOL, True),
                                                     [ir.Continue(None)], [])),
                                "'continue' outside a loop"),
    "kernel returns a value": (append(lambda: ir.Return(None, const(T.INT64))),
                               "a kernel returns a value"),
    "device return type": (set_field(ir.Return, "value", const(T.INT64)),
                           "returns a int64 from a function returning float32"),
    "callee not listed": (lambda fn: fn.callees.clear(), "which is not among the function's callees"),
    "declaration not listed": (lambda fn: fn.decls.clear(), "'tile' is not among the function's declarations"),
    # types
    "call arguments": (lambda fn: find(fn, ir.CallDevice).args.pop(), "1 arguments for 2 parameters"),
    "call argument type": (lambda fn: find(fn, ir.CallDevice).args.__setitem__(1, const(T.INT32)),
                           "argument 'k' is weak float64, gets a int32"),
    "call type": (set_field(ir.CallDevice, "type", T.INT32), "but 'scale' returns float32"),
    "binop operand": (set_field(ir.BinOp, "lhs", const(T.INT32)), "but its lhs has int32"),
    "binop operator": (set_field(ir.BinOp, "op", "frob"), "unknown operator 'frob'"),
    "shift amount": (shift_by_float, "shifts by a float32"),
    "compare operands": (set_field(ir.Compare, "rhs", const(T.FLOAT64)), "compares a"),
    "logical operands": (set_field(ir.Logical, "lhs", const(T.INT64)), "all must be bool"),
    "not operand": (set_field(ir.UnaryOp, "value", const(T.INT32), not_), "both must be bool"),
    "neg type": (set_field(ir.UnaryOp, "type", T.FLOAT64, neg), "but its operand has float32"),
    "bfloat16 arithmetic": (of_type(ir.BinOp, T.BFLOAT16, "lhs", "rhs"),
                            "arithmetic of type bfloat16: it computes in float32"),
    "FP8 negation": (of_type(ir.UnaryOp, T.FLOAT8_E4M3, "value"),
                     "'neg' of type float8_e4m3: it computes in float32"),
    "bfloat16 comparison": (of_type(ir.Compare, T.BFLOAT16, "lhs", "rhs"),
                            "compares bfloat16 values: they compare as float32"),
    "conditional branch": (set_field(ir.IfExp, "orelse", const(T.FLOAT64)), "a branch has float64"),
    "cast of an array": (set_field(ir.Cast, "value", lambda fn: find(fn, ir.Param)),
                         "casts are between scalars"),
    "condition type": (set_field(ir.If, "cond", const(T.INT64)), "the condition has type int64"),
    "range bound": (set_field(ir.ForRange, "stop", const(T.FLOAT64)), "range bound of type float64"),
    "load index count": (lambda fn: find(fn, ir.Load).indices.append(const(T.INT64)),
                         "2 indices for a 1-d array"),
    "store index count": (set_field(ir.Store, "indices", []), "0 indices for a 1-d array"),
    "index type": (lambda fn: find(fn, ir.Load).indices.__setitem__(0, const(T.FLOAT32)),
                   "index 0 is a Const of type float32, not an integer expression"),
    "load type": (set_field(ir.Load, "type", T.FLOAT64), "loading from an array of float32"),
    "store value": (set_field(ir.Store, "value", const(T.FLOAT64)),
                    "stores a float64 into an array of float32"),
    "view dimensions": (set_field(ir.View, "type", F32_2D, tail_view), "with 0 integer indices"),
    "array attribute": (set_field(ir.ArrayAttr, "dim", 3), "shape[3] of type int64 of a 1-d array"),
    "tuple items": (lambda fn: find(fn, ir.TupleExpr).items.pop(), "but items of types"),
    "tuple item": (set_field(ir.TupleGet, "index", 5), "item 5 of a"),
    "warp gather": (lambda fn: fn.body.append(ir.WarpGather(None, find(fn, ir.Barrier))),
                    "field 'op' holds a Barrier Barrier(loc=Loc(filename="),
}


@pytest.mark.parametrize("rule", sorted(BREAKS))
def test_verifier_rejects_broken_ir(rule):
    fn = everything_ir()
    breaker, message = BREAKS[rule]
    breaker(fn)
    with pytest.raises(verify.InvalidIR, match="internal error: invalid IR after test") as info:
        verify.after("test", fn)
    assert message in str(info.value)


def test_the_suite_verifies_ir():
    assert config.verify_ir              # conftest.py sets SIMT_VERIFY_IR=1


def test_verifier_report_names_node_location_and_flags_the_statement():
    fn = build(saxpy, T.FLOAT32, F32, F32)
    store = find(fn, ir.Store)
    store.value.type = T.FLOAT64
    with pytest.raises(verify.InvalidIR) as info:
        verify.verify(fn, "a pass")
    lines = str(info.value).splitlines()
    line = source_line("out[i] = a * x[i] + 1")
    assert lines[0] == ("internal error: invalid IR after a pass in 'saxpy': "
                        "type float64 but its lhs has float32")
    assert lines[1] == f"  BinOp `(%a * %x[i]) + float32(1.0)` at {__file__}:{line}"
    assert [x for x in lines if x.startswith(">> ")][0].startswith(">>     %out[i] = ")


def test_verify_after_follows_the_setting(monkeypatch):
    fn = build(saxpy, T.FLOAT32, F32, F32)
    fn.body.append(ir.Break(None))
    monkeypatch.setattr(config, "verify_ir", False)
    assert verify.after("x", fn) is fn
    monkeypatch.setattr(config, "verify_ir", True)
    with pytest.raises(verify.InvalidIR):
        verify.after("x", fn)


def test_verify_setting_from_the_environment(monkeypatch):
    monkeypatch.delenv("SIMT_VERIFY_IR", raising=False)
    assert not type(config).from_environ().verify_ir
    monkeypatch.setenv("SIMT_VERIFY_IR", "1")
    assert type(config).from_environ().verify_ir


# ---------------------------------------------------------------- the passes

def test_inline_keeps_the_ir_valid():
    fn = build(reduce, F32, F32)
    inlined = inline_barrier_calls(fn)
    verify.after("inline", inlined)
    assert not any(isinstance(n, ir.CallDevice) for n in walk(*inlined.body))
    assert inlined.callees == [] and inlined.uses_barrier
    renamed = [n for n in inlined.locals if n.startswith("$block_sum")]
    assert renamed and all(n in inlined.locals for n in renamed)


def test_uniform_values_are_valid_ir():
    """Recomputed variables replaced by their closed definitions, and each block-level
    value, make valid IR of the kernel."""
    fn = inline_barrier_calls(build(reduce, F32, F32))
    uniform = Uniformity(fn)
    assert uniform.recomputed >= {"t", "row"}

    def substitute(node, state):
        if isinstance(node, ir.Var) and node.name in state:
            return state[node.name]
        return map_children(node, lambda child: substitute(child, state))
    body = [substitute(s, uniform.state(s)) for s in fn.body]
    verify.verify(replace(fn, body=body), "recomputation")
    values = [uniform.block_level(s) for s in ir.walk_stmts(fn.body)]
    exprs = [e for v in values if v is not None for e in (v if isinstance(v, list) else [v])]
    assert exprs
    verify.verify(replace(fn, body=[ir.ExprStmt(None, e) for e in exprs]), "uniform")


def pieces(fn):
    """What fission cuts ``fn``'s body into, described by ``describe``."""
    return describe(fission(fn.body, Uniformity(fn)))


def describe(cut):
    """Runs as (statement classes, hoisted names), regions as (class, uniform or masked,
    their parts)."""
    out = []
    for piece in cut:
        if isinstance(piece, Run):
            out.append(([type(s).__name__ for s in piece.stmts],
                        [s.name for s, _ in piece.hoisted]))
        else:
            how = "masked" if piece.uniform is None else "uniform"
            out.append((type(piece.stmt).__name__, how, [describe(p) for p in piece.parts]))
    return out


def test_fission_cuts_at_barriers_collectives_warp_operations_and_grid_syncs():
    assert pieces(everything_ir()) == [
        (["Assign"] * 5 + ["Store"], []),
        ("Barrier", "masked", []),
        ("Collective", "masked", []),
        (["Assign", "Assign", "While", "WarpGather"], []),
        (["WarpResult", "Assign", "ForRange", "Assert", "Print"], []),
        ("GridSync", "masked", []),
        (["ExprStmt", "Store", "Store", "StoreField", "Assign", "Assign", "Store"], [])]


def test_fission_of_uniform_and_masked_control_flow():
    fn = inline_barrier_calls(build(reduce, F32, F32))
    s = "$block_sum.1.s"
    assert pieces(fn) == [
        (["Assign", "Assign", "Store"], []),
        ("Barrier", "masked", []),
        ([], [s]),                                     # s = 16, once per block
        ("While", "uniform", [[(["If"], []), ("Barrier", "masked", []), ([], [s])]]),
        (["Assign", "Assign", "Assign"], []),
        ("While", "masked", [[("ForRange", "masked", [[("Barrier", "masked", []),
                                                          (["If"], [])]]),
                              (["If", "Assign", "Break"], [])]]),
        (["Assign", "If"], [])]
    uniform = Uniformity(fn)
    plan = Plan(fission(fn.body, uniform), uniform.recomputed | uniform.block_vars)
    assert plan.slot_vars == {"$block_sum.1.ret.2", "$spill.3", "$first_positive.4.j",
                              "$first_positive.4.ret.5", "$first_positive.4.done.6"}


def test_checked_reads_flag_what_may_be_unassigned():
    """Checked mode (ir/assigned.py): a variable some read may find unassigned gets a
    flag, false at the start and set after each assignment, and its reads test it; the
    flags of variables that live across barriers get slots as the variables do."""
    saxpy_ir = build(saxpy, T.FLOAT32, F32, F32)
    assert check_reads(saxpy_ir) is saxpy_ir            # nothing to check: no change
    fn = inline_barrier_calls(build(reduce, F32, F32))
    checked = verify.after("checked reads", check_reads(fn))
    assert not any(isinstance(n, ir.CheckedVar) for n in walk(*fn.body))   # left as it was
    ret = "$first_positive.4.ret.5"                     # assigned in a one-trip while True
    flag = "$assigned." + ret
    assert checked.locals[flag] == T.BOOL and flag not in fn.locals
    assert isinstance(checked.body[0], ir.Assign) and checked.body[0].value.value is False
    reads = [n for n in walk(*checked.body) if isinstance(n, ir.CheckedVar)]
    assert {n.var.name for n in reads} >= {ret} and all(n.assigned.name == "$assigned." +
                                                       n.var.name for n in reads)
    sets = [s for s in ir.walk_stmts(checked.body) if isinstance(s, ir.Assign)
            and s.name == flag and s.value.value is True]
    assert len(sets) == sum(1 for s in ir.walk_stmts(checked.body)
                            if isinstance(s, ir.Assign) and s.name == ret)
    assert f"assigned({ret})" in printer.format_function(checked)
    uniform = Uniformity(checked)
    plan = Plan(fission(checked.body, uniform), uniform.recomputed | uniform.block_vars)
    assert {ret, flag} <= plan.slot_vars


def test_ir_package_imports_no_llvmlite_binding(tmp_path):
    kernel = tmp_path / "kernel_module.py"
    kernel.write_text(textwrap.dedent("""\
        import simt

        @simt.device
        def twice(a, i):
            simt.syncthreads()
            return a[i] * 2

        @simt.kernel
        def k(a):
            i = simt.threadIdx.x
            a[i] = twice(a, i)
        """))
    script = textwrap.dedent("""\
        import sys
        import numpy as np
        import kernel_module
        from simt.compiler.frontend import FrontEnd
        from simt.ir import printer, types as T, verify, walk
        from simt.ir.inline import inline_barrier_calls
        from simt.ir.fission import fission
        from simt.ir.regions import Plan
        from simt.ir.uniform import Uniformity
        fn = FrontEnd(kernel_module.k.pyfunc, [T.Array(np.float32, 1, "C")], True).build()
        fn = inline_barrier_calls(fn)
        verify.verify(fn)
        uniform = Uniformity(fn)
        Plan(fission(fn.body, uniform), uniform.recomputed)
        assert "= %a[int64(i)] * float32(2.0)" in printer.format_program(fn)
        loaded = [m for m in sys.modules if m.startswith("llvmlite.binding")]
        assert not loaded, loaded
        """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(tmp_path)])}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr


def test_dump_prints_the_typed_ir(tmp_path):
    """SIMT_DUMP=1: compiling for the CPU prints the typed IR (after inlining) to stderr."""
    script = textwrap.dedent("""\
        import numpy as np
        import test_ir
        out = np.zeros(4, np.float32)
        test_ir.saxpy[1, 4](np.float32(2), np.ones(4, np.float32), out)
        """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.path.dirname(__file__)]),
           "SIMT_DUMP": "1", "SIMT_CACHE": "0", "SIMT_DEVICE": "cpu"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "# simt: typed_ir of 'saxpy'" in result.stderr
    assert "%out[i] = math.fma{contracted='alone'}(%a, %x[i], float32(1.0))" in result.stderr
    assert result.stdout == ""
