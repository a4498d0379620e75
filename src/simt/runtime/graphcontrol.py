"""Conditional and memory nodes of graphs, the runtime half (API.md section 11; guide
3.2.6.6 and the CUDA 12.3+ driver's conditional nodes, guide 3.2.6.7's graph memory
nodes). runtime/graphs.py's Graph methods call these checks; the backends build the
nodes (backends/cuda/graphs.py, backends/hostgraphs.py).

A conditional node runs its body graphs by the value of a condition that kernels of the
graph set with ``simt.graph_set_condition(handle, value)``; the value is set to the
handle's default at the start of every launch of the graph that made the handle (the
driver's CU_GRAPH_COND_ASSIGN_DEFAULT). 'if' runs body 0 when the value is not 0 (body 1,
when asked for, when it is 0); 'while' runs its body again and again while the value is
not 0, reading it before each run; 'switch' runs body ``value`` when it is below n.
"""
import numpy as np

from ..errors import InvalidConfiguration
from ..ir import types as T

KINDS = ("if", "while", "switch")
# what a conditional's body may hold (the driver refuses the rest)
BODY_KINDS = ("kernel", "memcpy", "memset", "empty", "graph", "conditional")


class ConditionalHandle:
    """The condition of one conditional node (cudaGraphConditionalHandle), made by
    ``Graph.conditional_handle``. Pass it to kernels of that graph (or of its bodies):
    ``simt.graph_set_condition(handle, value)`` sets the value there."""

    _simt_type = T.GraphHandle("conditional")    # lang/graphs.py's CONDITIONAL

    def __init__(self, graph, impl, default):
        self.graph = graph
        self.impl = impl              # the backend's handle: .value is what kernels get
        self.default = default
        self.node = None              # the conditional node using it, once added

    def __int__(self):
        return int(self.impl.value)

    __index__ = __int__

    def __repr__(self):
        return f"<simt ConditionalHandle default={self.default} of {self.graph!r}>"


def check_default(default):
    if isinstance(default, bool) or not isinstance(default, (int, np.integer)) or \
            not 0 <= default < 2 ** 32:
        raise ValueError(f"conditional_handle: the default must be an unsigned 32-bit int "
                         f"(0 is false), got {default!r}")
    return int(default)


def check_conditional(graph, kind, handle, n):
    """Refuse a conditional node the driver would: the kind, the body count, a handle of
    another graph or one another node uses already."""
    if kind not in KINDS:
        raise ValueError(f"add_conditional: the kind is {kind!r}; it must be 'if', 'while' "
                         "or 'switch'")
    if not isinstance(handle, ConditionalHandle):
        raise TypeError(f"add_conditional takes a handle made by g.conditional_handle(), got "
                        f"{handle!r}")
    if handle.graph is not graph:
        raise ValueError("add_conditional: the conditional handle was made by another graph; "
                         "make it with conditional_handle() of the graph the node is added "
                         "to (cudaGraphConditionalHandleCreate's hGraph)")
    if handle.node is not None:
        raise ValueError("add_conditional: this conditional handle is used by another "
                         "conditional node already; make one handle per node")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"add_conditional: n, the number of bodies, must be an int, got {n!r}")
    allowed = {"if": (1, 2), "while": (1,)}.get(kind)
    if allowed is not None and n not in allowed:
        raise ValueError(f"add_conditional: an '{kind}' node has "
                         f"{' or '.join(map(str, allowed))} bod{'ies' if kind == 'if' else 'y'}"
                         f" (n={n}); "
                         + ("body 1, when there is one, runs when the condition is 0" if kind
                            == "if" else "its body runs while the condition is not 0"))
    if kind == "switch" and n < 1:
        raise ValueError(f"add_conditional: a 'switch' node needs n >= 1 bodies (one per "
                         f"value it runs), got n={n}")
    return int(n)


def check_body_node(graph, kind):
    """A conditional's body holds kernels, copies and memsets of device memory, empty,
    child and conditional nodes only (the driver's rule for body graphs)."""
    if graph.body_of is not None and kind not in BODY_KINDS:
        raise InvalidConfiguration(
            f"a {kind} node cannot be in the body of a conditional node: bodies hold kernel, "
            "memcpy and memset (of device memory), empty, child graph and conditional nodes "
            "only; put it before or after the conditional node")


def check_kernel_handles(graph, kernel, args):
    """A conditional handle passed to a kernel node must belong to the graph of the node
    or one that holds it (a body's kernels set their parents' conditions)."""
    for i, a in enumerate(args):
        if isinstance(a, ConditionalHandle) and a.graph not in lineage(graph):
            raise ValueError(f"kernel '{kernel.__name__}' in a graph: argument {i} is a "
                             "conditional handle of another graph; a kernel sets the "
                             "conditions of its own graph (and of the graphs whose bodies "
                             "hold it)")


def lineage(graph):
    """``graph`` and the graphs whose conditional bodies hold it, innermost first."""
    out = []
    while graph is not None:
        out.append(graph)
        graph = graph.body_of
    return out


def check_unused_handles(graph):
    """Every handle must be used by a conditional node (the driver may refuse to
    instantiate a graph with a handle no node uses)."""
    for handle in graph.handles:
        if handle.node is None:
            raise InvalidConfiguration(
                f"instantiate: {handle!r} is used by no conditional node; add the node "
                "with g.add_conditional(kind, handle) or do not make the handle")
    for node in graph.nodes:
        for body in node.bodies:
            check_unused_handles(body)


def alloc_size(shape, dtype):
    """(shape, dtype, bytes) of an allocation node's array."""
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0
           for s in shape):
        raise ValueError(f"add_alloc: the shape must be non-negative ints, got {shape!r}")
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes == 0:
        raise ValueError("add_alloc: the allocation is empty; a memory node allocates at "
                         "least one byte")
    return tuple(int(s) for s in shape), dtype, nbytes


def check_free(graph, node):
    if getattr(node, "kind", None) != "alloc" or node.graph is not graph:
        raise ValueError(f"add_free takes an allocation node of this graph (what add_alloc "
                         f"returned), got {node!r}")
    if node.freed:
        raise ValueError("add_free: this allocation node is freed by another free node "
                         "already (a graph allocation is freed once)")


def has_memory_nodes(graph):
    return any(node.kind in ("alloc", "free") for node in graph.nodes)



# what a graph launched from kernels may hold (the driver's rule for device graphs)
# no empty nodes: the H200's driver refused a device-launch graph of one (2026-12-02,
# cuGraphInstantiate: CUDA_ERROR_INVALID_VALUE), so every device refuses them alike
DEVICE_GRAPH_KINDS = ("kernel", "memcpy", "memset", "graph", "conditional")


def check_device_graph(graph):
    """instantiate(device_launch=True): kernel, copy, memset, child and conditional nodes
    only (no host, event, empty or memory nodes), all on one device."""
    for node in graph.nodes:
        if node.kind not in DEVICE_GRAPH_KINDS:
            article = "an" if node.kind[0] in "aeiou" else "a"
            raise InvalidConfiguration(
                f"instantiate(device_launch=True): the graph has {article} {node.kind} node; "
                "a graph launched from kernels holds kernel, memcpy, memset, child graph and "
                "conditional nodes only (the GPU driver refuses the others)")
        for body in node.bodies:
            check_device_graph(body)
