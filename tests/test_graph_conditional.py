"""Graph conditional nodes (if, while, switch) whose conditions kernels set with
simt.graph_set_condition, memory nodes (add_alloc, add_free), GraphExec.upload and device
graph launches (simt.graph_launch): API.md section 11, issue 35 item 10."""
import numpy as np
import pytest

import simt
from simt.errors import CompileError, InvalidConfiguration, LaunchError, NotSupportedError
from conftest import poison, random_array




N = 256
CFG = (N // 64, 64)


@simt.kernel
def halve(x):
    i = simt.grid(1)
    if i < x.shape[0]:
        x[i] = x[i] * np.float32(0.5)


@simt.kernel
def above(x, h, tol, count):
    """Condition: max |x| > tol (one thread); counts the tests."""
    m = np.float32(0.0)
    for j in range(x.shape[0]):
        m = max(m, abs(x[j]))
    count[0] += 1
    simt.graph_set_condition(h, m > tol)


@simt.kernel
def set_to(h, flags, k):
    simt.graph_set_condition(h, flags[k])


@simt.kernel
def scale(y, x, a):
    i = simt.grid(1)
    if i < y.shape[0]:
        y[i] = a * x[i]


@simt.kernel
def add_into(y, a, b):
    i = simt.grid(1)
    if i < y.shape[0]:
        y[i] = a[i] + b[i]


def _halvings(x, tol):
    ref, runs = x.copy(), 0
    while True:
        ref *= np.float32(0.5)
        runs += 1
        if not np.abs(ref).max() > tol:
            return ref, runs


def test_while_runs_its_body_until_a_kernel_clears_the_condition(device, rng):
    x0 = random_array(rng, N, np.float32) * np.float32(100)
    x = simt.to_device(x0)
    count = simt.to_device(np.zeros(1, np.int32))
    g = simt.Graph()
    h = g.conditional_handle(default=1)
    loop = g.add_conditional("while", h)
    body = loop.bodies[0]
    body.add_kernel(above, 1, 1, (x, h, np.float32(0.5), count),
                    deps=body.add_kernel(halve, *CFG, (x,)))
    exe = g.instantiate()
    exe.upload()
    exe.launch()
    simt.synchronize()
    ref, runs = _halvings(x0, np.float32(0.5))
    np.testing.assert_array_equal(x.copy_to_host(), ref)
    assert count.copy_to_host()[0] == runs
    # the next launch starts from the default again: one more run of the body
    exe.launch()
    simt.synchronize()
    assert count.copy_to_host()[0] == runs + 1
    np.testing.assert_array_equal(x.copy_to_host(), ref * np.float32(0.5))


def test_while_with_a_false_default_never_runs(device, rng):
    x0 = random_array(rng, N, np.float32)
    x = simt.to_device(x0)
    g = simt.Graph()
    h = g.conditional_handle()                 # default 0
    g.add_conditional("while", h).bodies[0].add_kernel(halve, *CFG, (x,))
    g.instantiate().launch()
    simt.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), x0)


@pytest.mark.parametrize("flag", [0, 7])
def test_if_with_else_runs_the_body_the_kernel_chose(device, rng, flag):
    a, b = (random_array(rng, N, np.float32) for _ in range(2))
    da, db = simt.to_device(a), simt.to_device(b)
    y = simt.to_device(poison(N, np.float32))
    g = simt.Graph()
    h = g.conditional_handle(default=1)
    setter = g.add_kernel(set_to, 1, 1, (h, simt.to_device(np.array([flag], np.uint32)), 0))
    node = g.add_conditional("if", h, deps=setter, n=2)
    node.bodies[0].add_kernel(scale, *CFG, (y, da, np.float32(3)))
    node.bodies[1].add_kernel(add_into, *CFG, (y, da, db))
    g.instantiate().launch()
    simt.synchronize()
    want = 3 * a if flag else a + b
    np.testing.assert_allclose(y.copy_to_host(), want, rtol=1e-6)


@pytest.mark.parametrize("value", [0, 2, 3, 100])
def test_switch_runs_body_value_or_none(device, rng, value):
    x0 = random_array(rng, N, np.float32)
    x = simt.to_device(x0)
    outs = [simt.to_device(poison(N, np.float32)) for _ in range(3)]
    g = simt.Graph()
    h = g.conditional_handle()
    flags = simt.to_device(np.array([value], np.uint32))
    node = g.add_conditional("switch", h, deps=g.add_kernel(set_to, 1, 1, (h, flags, 0)), n=3)
    assert len(node.bodies) == 3
    for k, body in enumerate(node.bodies):
        body.add_kernel(scale, *CFG, (outs[k], x, np.float32(k + 1)))
    g.instantiate().launch()
    simt.synchronize()
    for k, out in enumerate(outs):
        got = out.copy_to_host()
        if k == value:
            np.testing.assert_allclose(got, (k + 1) * x0, rtol=1e-6)
        else:
            np.testing.assert_array_equal(got.view(np.uint32), poison(N, np.float32).view(np.uint32))


def test_switch_inside_while_sets_its_own_and_the_outer_condition(device, rng):
    """A body's kernel sets its graph's handle and the outer loop's: nested conditionals."""
    x0 = random_array(rng, N, np.float32) * np.float32(50)
    x = simt.to_device(x0)
    count = simt.to_device(np.zeros(1, np.int32))
    g = simt.Graph()
    outer = g.conditional_handle(default=1)
    body = g.add_conditional("while", outer).bodies[0]
    inner = body.conditional_handle(default=0)
    pick = body.add_conditional("switch", inner, n=1)
    pick.bodies[0].add_kernel(halve, *CFG, (x,))
    body.add_kernel(above, 1, 1, (x, outer, np.float32(2.0), count), deps=pick)
    g.instantiate().launch()
    simt.synchronize()
    # the inner default 0 runs body 0 each time round: the loop halves until max |x| <= 2
    ref, runs = _halvings(x0, np.float32(2.0))
    np.testing.assert_array_equal(x.copy_to_host(), ref)
    assert count.copy_to_host()[0] == runs


def test_alloc_and_free_nodes_give_kernels_scratch_memory(device, rng):
    a = random_array(rng, N, np.float32)
    x = simt.to_device(a)
    y = simt.to_device(poison(N, np.float32))
    g = simt.Graph()
    scratch = g.add_alloc(N, np.float32)
    assert scratch.array.shape == (N,) and scratch.array.dtype == np.float32
    k1 = g.add_kernel(scale, *CFG, (scratch.array, x, np.float32(2)), deps=scratch)
    k2 = g.add_kernel(add_into, *CFG, (y, scratch.array, x), deps=k1)
    g.add_free(scratch, deps=k2)
    exe = g.instantiate()
    exe.launch()
    simt.synchronize()
    np.testing.assert_allclose(y.copy_to_host(), 3 * a, rtol=1e-6)
    b = random_array(rng, N, np.float32)
    x.copy_from(b)
    exe.launch()
    simt.synchronize()
    np.testing.assert_allclose(y.copy_to_host(), 3 * b, rtol=1e-6)


def test_an_allocation_without_a_free_node_is_read_by_a_later_copy(device, rng):
    a = random_array(rng, (4, 64), np.float32)
    x = simt.to_device(a.ravel())
    out = simt.to_device(poison(4 * 64, np.float32))
    g = simt.Graph()
    node = g.add_alloc((4, 64), np.float32)
    k = g.add_kernel(scale, *CFG, (node.array.ravel(), x, np.float32(-1)), deps=node)
    g.add_memcpy(out, node.array.ravel(), deps=k)
    g.instantiate().launch()
    simt.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), -a.ravel())


@simt.kernel
def launch_graph(exe, x):
    if simt.grid(1) == 0:
        simt.graph_launch(exe)
    i = simt.grid(1)
    if i < x.shape[0]:
        x[i] = x[i] + np.float32(1)


def test_a_kernel_node_launches_a_device_graph(device, rng):
    a, b = random_array(rng, N, np.float32), random_array(rng, N, np.float32)
    da, db = simt.to_device(a), simt.to_device(b)
    y = simt.to_device(poison(N, np.float32))
    child = simt.Graph()
    child.add_kernel(scale, *CFG, (y, db, np.float32(4)))
    child_exe = child.instantiate(device_launch=True)
    child_exe.upload()
    g = simt.Graph()
    g.add_kernel(launch_graph, *CFG, (child_exe, da))
    g.instantiate().launch()
    simt.synchronize()
    np.testing.assert_allclose(y.copy_to_host(), 4 * b, rtol=1e-6)
    np.testing.assert_allclose(da.copy_to_host(), a + 1, rtol=1e-6)


def test_a_device_graph_launch_outside_a_graph_fails_naming_the_line(device, rng):
    x = simt.to_device(random_array(rng, N, np.float32))
    child = simt.Graph()
    child.add_kernel(scale, *CFG, (simt.to_device(poison(N, np.float32)), x, np.float32(2)))
    exe = child.instantiate(device_launch=True)
    # the CPU device reports it at the line; CUDA's driver refuses the launch itself
    with pytest.raises(LaunchError, match=r"graph launch \(simt.graph_launch\).*"
                                          r"(cudaErrorInvalidValue|cudaErrorNotSupported)") \
            as info:
        launch_graph[CFG](exe, x)
        simt.synchronize()
    if device.kind == "cuda":
        assert "must itself run as a kernel node of a graph" in str(info.value)
    else:
        assert "test_graph_conditional.py" in str(info.value)


# ------------------------------------------------------------------------------- errors
def test_a_conditional_handle_of_another_graph_is_refused(device):
    g, other = simt.Graph(), simt.Graph()
    h = other.conditional_handle()
    with pytest.raises(ValueError, match="made by another graph"):
        g.add_conditional("if", h)
    with pytest.raises(ValueError, match="argument 0 is a conditional handle of another"):
        g.add_kernel(set_to, 1, 1, (h, simt.to_device(np.zeros(1, np.uint32)), 0))


@pytest.mark.parametrize("kind, n, message", [
    ("switch", 0, r"'switch' node needs n >= 1"),
    ("while", 2, r"'while' node has 1 body \(n=2\)"),
    ("if", 3, r"'if' node has 1 or 2 bodies \(n=3\)"),
    ("until", 1, r"the kind is 'until'")])
def test_wrong_kind_or_body_count_is_refused(device, kind, n, message):
    g = simt.Graph()
    with pytest.raises(ValueError, match=message):
        g.add_conditional(kind, g.conditional_handle(), n=n)


def test_handle_misuse_is_refused(device):
    g = simt.Graph()
    h = g.conditional_handle()
    g.add_conditional("if", h)
    with pytest.raises(ValueError, match="used by another conditional node"):
        g.add_conditional("while", h)
    g.conditional_handle()
    with pytest.raises(InvalidConfiguration, match="used by no conditional node"):
        g.instantiate()
    with pytest.raises(ValueError, match="unsigned 32-bit"):
        g.conditional_handle(default=-1)


def test_what_a_body_may_not_hold_is_refused(device):
    g = simt.Graph()
    body = g.add_conditional("if", g.conditional_handle()).bodies[0]
    with pytest.raises(InvalidConfiguration, match="host node cannot be in the body"):
        body.add_host(print)
    with pytest.raises(InvalidConfiguration, match="alloc node cannot be in the body"):
        body.add_alloc(4, np.float32)
    with pytest.raises(InvalidConfiguration, match="copies between device arrays only"):
        body.add_memcpy(simt.to_device(np.zeros(4, np.float32)), np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="body of a conditional node"):
        body.instantiate()


def test_memory_node_misuse_is_refused(device):
    g = simt.Graph()
    node = g.add_alloc(16, np.int32)
    with pytest.raises(ValueError, match="an allocation node of this graph"):
        g.add_free(g.add_empty())
    g.add_free(node)
    with pytest.raises(ValueError, match="freed by another free node already"):
        g.add_free(node)
    with pytest.raises(InvalidConfiguration, match="which a child graph may not have"):
        simt.Graph().add_child_graph(g)
    exe = g.instantiate()
    with pytest.raises(InvalidConfiguration, match="one exec at a time"):
        g.instantiate()
    del exe
    g.instantiate()
    with pytest.raises(ValueError, match="shape must be non-negative"):
        g.add_alloc((-1,), np.float32)


def test_device_launch_misuse_is_refused(device, rng):
    g = simt.Graph()
    g.add_host(print)
    with pytest.raises(InvalidConfiguration, match="has a host node"):
        g.instantiate(device_launch=True)
    only_empty = simt.Graph()
    only_empty.add_empty()
    with pytest.raises(InvalidConfiguration, match="has an empty node"):
        only_empty.instantiate(device_launch=True)
    plain = simt.Graph()
    plain.add_empty()
    x = simt.to_device(random_array(rng, N, np.float32))
    with pytest.raises(InvalidConfiguration, match="instantiated with "
                                                   r"g.instantiate\(device_launch=True\)"):
        launch_graph[CFG](plain.instantiate(), x)


def test_graph_set_condition_takes_a_handle(device):
    @simt.kernel
    def wrong(flags):
        simt.graph_set_condition(flags[0], 1)

    with pytest.raises(CompileError, match="must be a graph's conditional handle") as info:
        wrong[1, 1](simt.to_device(np.zeros(1, np.uint64)))
    assert "simt.graph_set_condition(flags[0], 1)" in str(info.value)


# ---------------------------------------------------------------- on the sim device
@pytest.mark.parametrize("test", [test_while_runs_its_body_until_a_kernel_clears_the_condition,
                                  test_switch_inside_while_sets_its_own_and_the_outer_condition,
                                  test_alloc_and_free_nodes_give_kernels_scratch_memory,
                                  test_a_kernel_node_launches_a_device_graph,
                                  test_a_device_graph_launch_outside_a_graph_fails_naming_the_line],
                         ids=lambda test: test.__name__[5:])
def test_sim(test, rng):
    """The cpu device's graphs on the sim device: conditions set by kernels, memory nodes,
    graphs launched by kernels."""
    with simt.use_device("sim") as sim:
        test(sim, rng)
