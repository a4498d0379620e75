"""What keeps compile time linear in a kernel's length (issue 37 item 1; the timings live in
bench/compile_time.py, not here): locals assigned once become SSA values instead of stack
slots (ir/single.py), and the CPU's hoisted bounds checks emit one range check per
distinct access (backends/cpu/hoist.py)."""
import re

import numpy as np
import pytest

import simt
from conftest import poison
from kernelsource import kernel_from_lines
from simt.compiler.frontend import FrontEnd
from simt.ir import types as T
from simt.ir.single import single_assignments

F32 = T.Array(np.float32, 1, "C")


def names(kernel, *types):
    return single_assignments(FrontEnd(kernel.pyfunc, types, is_kernel=True).build())


@simt.kernel
def straight(a, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        t = a[i] * 2.0
        u = t + a[i]
        out[i] = u


@simt.kernel
def shapes(a, out, flag):
    i = simt.grid(1)
    if i >= out.shape[0]:
        return
    acc = a[i]                      # assigned twice
    acc = acc + 1.0
    if flag > 0:
        y = a[i] * 3.0              # read under a later test of the same condition
    z = np.float32(0.0)
    if flag > 0:
        z = y
    s = np.float32(0.0)
    for k in range(4):              # a loop variable
        w = a[i] + k                # read below it in the same body
        s += w
        last = w                    # read after the loop
    out[i] = acc + z + s + last


def test_straight_line_locals_are_single_assignments():
    assert names(straight, F32, F32) == {"i", "t", "u"}


def test_locals_that_stay_in_stack_slots():
    found = names(shapes, F32, F32, T.Scalar(np.int32))
    assert {"i", "w"} <= found
    assert not found & {"acc", "y", "z", "s", "k", "last"}


@pytest.mark.parametrize("flag", [1, 0])
def test_kernel_with_both_kinds_of_locals(device, rng, flag):
    n = 300
    a = rng.standard_normal(n).astype(np.float32)
    out = poison(n, np.float32)
    shapes[(n + 127) // 128, 128](a, out, np.int32(flag))
    z = a * 3.0 if flag else np.zeros_like(a)
    s = sum(a + np.float32(k) for k in range(4))
    expected = a + np.float32(1) + z + s + (a + np.float32(3))
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_single_assignments_have_no_stack_slot(device):
    if device.kind != "cpu":
        pytest.skip("the CPU device's LLVM IR")
    text = straight.inspect_llvm("void(float32[::1], float32[::1])")
    assert re.search(r'%"(t|u)" = alloca', text) is None, text


def repeated_reads(tmp_path, count):
    """A kernel reading a[i + k % 4] ``count`` times."""
    lines = ["acc = a[i]"] + [f"acc = acc + a[i + {k % 4}] * {k}.0" for k in range(count)]
    lines.append("out[0, i] = acc")
    return kernel_from_lines(tmp_path, f"reads_{count}", "a, out", lines)


def test_alike_accesses_share_one_hoisted_check(device, tmp_path, rng):
    """The block-level range checks of 64 reads of four indices are those of 8 reads:
    each distinct access is checked once (there were 64 checks, and LLVM's optimizer
    slowed down faster than the kernel grew)."""
    if device.kind != "cpu":
        pytest.skip("the hoisting is the CPU device's")
    sig = "void(float32[::1], float32[:, ::1])"
    texts = []
    with simt.use_device(device.name, boundscheck=True):
        for count in (8, 64):
            kernel = repeated_reads(tmp_path, count)
            texts.append(kernel.inspect_llvm(sig))
            n = 200
            a = rng.standard_normal(n + 4).astype(np.float32)
            out = poison((1, n), np.float32)
            kernel[2, 128](a, out)
            expected = a[:n].astype(np.float64)
            for k in range(count):
                expected = expected + a[k % 4:k % 4 + n] * np.float32(k)
            np.testing.assert_allclose(out[0], expected, rtol=1e-4, atol=1e-3)
    few, many = (text.count(" i128 ") for text in texts)
    assert many == few, (few, many)


def test_expression_source_text_made_on_demand():
    """``src`` (labels, error messages) is the ast.unparse text, made at its first read
    and carried by walk.replace."""
    from simt.ir import nodes as ir
    from simt.ir.walk import replace
    fn = FrontEnd(straight.pyfunc, (F32, F32), is_kernel=True).build()
    doubled = next(s.value for s in ir.walk_stmts(fn.body)
                   if isinstance(s, ir.Assign) and s.name == "t")
    assert not isinstance(doubled.__dict__["_src"], str)       # not unparsed yet
    assert doubled.src == "a[i] * 2.0"
    assert replace(doubled, op="add").src == "a[i] * 2.0"
    assert ir.Const(T.Scalar(np.int32), None, 1).src == ""


def test_long_check_chains_branch_to_the_checked_loop(device, tmp_path, rng):
    """40 distinct accesses: their block-level checks are chains of at most CHAIN, each
    ending in a branch to the checked loop (one and of hundreds of compares cost LLVM's
    SLP vectorizer 20 s), and the kernel's results are right."""
    if device.kind != "cpu":
        pytest.skip("the hoisting is the CPU device's")
    from simt.backends.cpu.hoist import CHAIN
    lines = ["acc = a[i]"] + [f"acc = acc + a[i + {k}]" for k in range(1, 40)]
    lines.append("out[0, i] = acc")
    kernel = kernel_from_lines(tmp_path, "distinct_40", "a, out", lines)
    with simt.use_device(device.name, boundscheck=True):
        text = kernel.inspect_llvm("void(float32[::1], float32[:, ::1])")
        n = 200
        a = rng.standard_normal(n + 40).astype(np.float32)
        out = poison((1, n), np.float32)
        kernel[2, 128](a, out)
    assert text.count('\nranges') >= 40 // CHAIN, text.count('\nranges')
    expected = sum(a[k:k + n].astype(np.float64) for k in range(40))
    np.testing.assert_allclose(out[0], expected, rtol=1e-4, atol=1e-4)


def long_sum(tmp_path, terms):
    """out[0, i] = a[i]*b[i] + a[i+1]*b[i+2] + ... in one expression of ``terms`` products
    (a chain of terms - 1 adds, as deep as it is long)."""
    sum_text = " + ".join(f"a[i + {k % 8}] * b[i + {(3 * k) % 8}]" for k in range(terms))
    return kernel_from_lines(tmp_path, f"sum_{terms}", "a, b, out",
                             [f"out[0, i] = {sum_text}"])


def test_a_long_sum_is_contracted_in_one_walk(tmp_path, monkeypatch):
    """compiler/contract.py asks whether the operands of each add are pure: remembered
    per node, a 300-term sum's nodes are each visited a few times, not once per add
    above them (quadratic: 5 s of a 400-term sum's compile). The fmas are as before:
    every add of a product."""
    from simt.compiler import contract
    from simt.ir import nodes as ir, walk
    kernel = long_sum(tmp_path, 300)
    fn = FrontEnd(kernel.pyfunc, (F32, F32, T.Array(np.float32, 2, "C")),
                  is_kernel=True).build()
    nodes = sum(1 for _ in walk.walk(*fn.body))
    visits = []
    real = walk.children

    def counted(node):
        visits.append(1)
        return real(node)
    monkeypatch.setattr(walk, "children", counted)
    monkeypatch.setattr(contract, "children", counted, raising=False)
    contract.contract_functions(fn)
    monkeypatch.undo()
    assert len(visits) <= 4 * nodes, (len(visits), nodes)
    fmas = [n for n in walk.walk(*fn.body) if isinstance(n, ir.Intrinsic)
            and n.op == "math.fma" and n.attrs.get("contracted")]
    assert len(fmas) == 299


def test_a_long_sum_computes_its_sum(device, tmp_path, rng):
    kernel = long_sum(tmp_path, 400)
    n = 300
    a = rng.standard_normal(n + 8).astype(np.float32)
    b = rng.standard_normal(n + 8).astype(np.float32)
    out = poison((1, n), np.float32)
    kernel[3, 128](a, b, out)
    expected = sum(a[k % 8:k % 8 + n].astype(np.float64) * b[(3 * k) % 8:(3 * k) % 8 + n]
                   for k in range(400))
    np.testing.assert_allclose(out[0], expected, rtol=1e-4, atol=1e-3)


def test_straight_line_code_is_typed_in_one_pass(monkeypatch):
    """The front end builds a function again while a pass changed a type a read had seen;
    a variable typed for the first time at its assignment is no such change, so
    straight-line code is built once (it was built twice, every time)."""
    passes = []
    real = FrontEnd._params_prologue

    def counted(self):
        passes.append(1)
        return real(self)
    monkeypatch.setattr(FrontEnd, "_params_prologue", counted)
    FrontEnd(straight.pyfunc, (F32, F32), is_kernel=True).build()
    assert len(passes) == 1
    passes.clear()
    FrontEnd(widened.pyfunc, (F32, F32), is_kernel=True).build()
    assert len(passes) == 2         # x: an int, then a float32 read at the loop's top


@simt.kernel
def widened(a, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        x = 0
        for k in range(3):
            x = x + a[i]
        out[i] = x


def test_a_widened_variable_is_typed_again(device, rng):
    n = 200
    a = rng.standard_normal(n).astype(np.float32)
    out = poison(n, np.float32)
    widened[2, 128](a, out)
    np.testing.assert_allclose(out, 3 * a, rtol=1e-6)


def test_no_garbage_collection_during_a_compile(tmp_path, rng):
    """Python's collector is off while a kernel compiles (runtime/backend.py's
    collector_paused: its full collections walked every object the compile had made, a
    quadratic cost; this compile met 70-80 collections), and on again after it; a
    collector the program turned off stays off."""
    import gc
    lines = ["acc = a[i]"] + [f"acc = acc * 0.5 + a[i + {k % 4}]" for k in range(200)]
    lines.append("out[0, i] = acc")
    kernel = simt.kernel(cache=False)(
        kernel_from_lines(tmp_path, "collected", "a, out", lines).pyfunc)
    simt.get_device()               # started before: its start is no part of a compile
    collections = []

    def seen(phase, info):
        if phase == "start":
            collections.append(info["generation"])
    gc.callbacks.append(seen)
    try:
        kernel.compile("void(float32[::1], float32[:, ::1])")
    finally:
        gc.callbacks.remove(seen)
    assert len(collections) <= 1, collections     # the one as the collector comes back
    assert gc.isenabled()
    gc.disable()
    try:
        simt.kernel(cache=False)(kernel.pyfunc).compile("void(float64[::1], float32[:, ::1])")
        assert not gc.isenabled()
    finally:
        gc.enable()
    n = 100
    a = rng.standard_normal(n + 4).astype(np.float32)
    out = poison((1, n), np.float32)
    kernel[1, 128](a, out)
    expected = a[:n].astype(np.float64)
    for k in range(200):
        expected = expected * 0.5 + a[k % 4:k % 4 + n]
    np.testing.assert_allclose(out[0], expected, rtol=1e-4, atol=1e-4)
