"""CUDA graphs, the runtime half (API.md sections 4 and 10, guide 3.2.6.6).

A ``Graph`` is work described once (kernels, copies, memsets, host functions, event
records and waits, child graphs) with the dependencies between the pieces; an
instantiated graph (``GraphExec``) is launched into a stream as one piece of work,
which costs far less than launching its pieces one by one. A graph is built with the
explicit API (``g.add_kernel(...)``) or recorded from streams
(``with stream.capture() as g: ...``).

The runtime checks the arguments and compiles the kernels; the device half comes from
the backend (``create_graph``, a stream's ``begin_capture``/``end_capture``): real CUDA
graphs on a GPU (backends/cuda/graphs.py), a recorded DAG replayed in dependency order
on the CPU (backends/hostgraphs.py).

Conditional nodes, memory nodes and device graph launches: runtime/graphcontrol.py.
"""
import weakref
from typing import Any, Sequence, Union

import numpy as np

from . import graphcontrol as control
from .devices import get_device, stream_handle_of
from .arrays import DeviceArray
from .function_args import runtime_args
from ..errors import InvalidConfiguration
from ..ir import types as T


class GraphNode:
    """One node of a Graph: what ``add_*`` returns, given to later nodes as a dependency."""

    def __init__(self, graph, kind, impl):
        self.graph = graph
        self.kind = kind          # 'kernel', 'memcpy', 'memset', 'host', 'empty', 'graph', ...
        self.impl = impl          # the backend's node
        self.kernel = None        # kernel nodes: the Kernel (set_kernel_args compiles with it)
        self.bodies = []          # conditional nodes: the body graphs to fill
        self.array = None         # allocation nodes: the DeviceArray later nodes may use
        self.freed = False        # allocation nodes: a free node frees it

    def __repr__(self):
        return f"<simt GraphNode {self.kind} #{self.graph.nodes.index(self)}>"


# the impl of a Graph being captured: the stream's end_capture gives the real one
CAPTURING = object()

# an add_* method's dependencies: a node, nodes, or none
Deps = Union[GraphNode, Sequence[GraphNode], None]


class Graph:
    """A CUDA graph (cudaGraphCreate): nodes and the dependencies between them.

    Every ``add_*`` method takes ``deps``, the nodes (of this graph) that must finish
    before the new node starts, and returns the new GraphNode. Arrays a node uses are
    kept alive by the graph and by every GraphExec made from it.
    """

    def __init__(self, device=None, _impl=None, _body_of=None):
        self.device = device or get_device()
        self.impl = _impl if _impl is not None else self.device.backend.create_graph()
        if self.impl is CAPTURING:
            self.impl = None
        self.nodes = []
        self.keep = []            # what the nodes point into: arrays, events, host functions
        self.handles = []         # the ConditionalHandles made by this graph
        self.body_of = _body_of   # a conditional's body: the graph holding that node
        self.execs = weakref.WeakSet()    # live execs (one at a time with memory nodes)

    def _add(self, kind, deps, add, *args):
        control.check_body_node(self, kind)
        node = GraphNode(self, kind, add(*args, self._deps(deps)))
        self.nodes.append(node)
        return node

    def _deps(self, deps):
        deps = [deps] if isinstance(deps, GraphNode) else list(deps or ())
        for dep in deps:
            if not isinstance(dep, GraphNode) or dep.graph is not self:
                raise ValueError(f"deps must be nodes of this graph (what its add_* methods "
                                 f"returned), got {dep!r}")
        return [dep.impl for dep in deps]

    def add_kernel(self, kernel: Any, grid: Any, block: Any, args: Sequence[Any],
                   deps: Deps = (), shared_bytes: int = 0) -> "GraphNode":
        """A kernel node: ``kernel[grid, block, shared_bytes](*args)`` (cudaGraphAddKernelNode)."""
        args = tuple(args)
        control.check_kernel_handles(self, kernel, args)
        loaded, grid, block, shared_bytes = _prepare(kernel, self.device, grid, block,
                                                     shared_bytes, args)
        self.keep.append(args)
        node = self._add("kernel", deps, self.impl.add_kernel, kernel, loaded, grid, block,
                         shared_bytes, runtime_args(args))
        node.kernel = kernel
        return node

    def add_memcpy(self, dst: Any, src: Any, deps: Deps = ()) -> "GraphNode":
        """A copy node (cudaGraphAddMemcpyNode) between two contiguous arrays of one dtype
        and size: device arrays of this graph's device or NumPy arrays (pin host memory,
        simt.pinned_array or simt.host_register, for copies that overlap kernels)."""
        (dst_ptr, dst_host), (src_ptr, src_host) = (_memory(a, self.device, what)
                                                    for a, what in ((dst, "dst"), (src, "src")))
        if np.dtype(dst.dtype) != np.dtype(src.dtype) or dst.nbytes != src.nbytes:
            raise ValueError(f"add_memcpy copies between arrays of one dtype and size: dst is "
                             f"{dst.dtype} {tuple(dst.shape)}, src {src.dtype} "
                             f"{tuple(src.shape)}; copies do not convert")
        if isinstance(dst, np.ndarray) and not dst.flags.writeable:
            raise ValueError("add_memcpy: dst is a read-only NumPy array")
        if self.body_of is not None and (dst_host or src_host):
            raise InvalidConfiguration("add_memcpy: a conditional's body copies between "
                                       "device arrays only; copy host memory before or "
                                       "after the conditional node")
        self.keep += [dst, src]
        return self._add("memcpy", deps, self.impl.add_memcpy, dst_ptr, dst_host, src_ptr,
                         src_host, dst.nbytes)

    def add_memset(self, dst: DeviceArray, value: Any, deps: Deps = ()) -> "GraphNode":
        """A memset node (cudaGraphAddMemsetNode): every element of ``dst``, a contiguous
        device array of 1-, 2- or 4-byte elements, set to ``value``."""
        bits, size = element_bits(dst, value, "add_memset")
        self.keep.append(dst)
        return self._add("memset", deps, self.impl.add_memset, dst.ptr, bits, size, dst.size)

    def add_host(self, fn: Any, args: Sequence[Any] = (), deps: Deps = ()) -> "GraphNode":
        """A host node (cudaGraphAddHostNode): ``fn(*args)`` on the host; as in
        Stream.launch_host_func, ``fn`` must not call simt."""
        if not callable(fn):
            raise TypeError(f"add_host needs a callable, got {fn!r}")
        args = tuple(args)
        self.keep.append((fn, args))
        return self._add("host", deps, self.impl.add_host, fn, args)

    def add_empty(self, deps: Deps = ()) -> "GraphNode":
        """An empty node (cudaGraphAddEmptyNode): joins dependencies, does nothing."""
        return self._add("empty", deps, self.impl.add_empty)

    def add_child_graph(self, graph: "Graph", deps: Deps = ()) -> "GraphNode":
        """A node running all of ``graph`` (cudaGraphAddChildGraphNode); the child is
        copied as it is now: nodes added to it later do not reach this node."""
        if not isinstance(graph, Graph) or graph.device != self.device:
            raise ValueError(f"add_child_graph takes a simt.Graph of {self.device.name}, "
                             f"got {graph!r}")
        if control.has_memory_nodes(graph):
            raise InvalidConfiguration("add_child_graph: the graph has allocation or free "
                                       "nodes, which a child graph may not have; add them "
                                       "to this graph instead")
        self.keep += graph.keep
        return self._add("graph", deps, self.impl.add_child, graph.impl)

    def add_event_record(self, event: Any, deps: Deps = ()) -> "GraphNode":
        """A node recording ``event`` once its dependencies are done (cudaGraphAddEventRecordNode)."""
        self.keep.append(_event(event, self.device, "add_event_record"))
        return self._add("event_record", deps, self.impl.add_event_record, event.impl)

    def add_event_wait(self, event: Any, deps: Deps = ()) -> "GraphNode":
        """A node waiting for ``event``'s latest record (cudaGraphAddEventWaitNode)."""
        self.keep.append(_event(event, self.device, "add_event_wait"))
        return self._add("event_wait", deps, self.impl.add_event_wait, event.impl)

    def conditional_handle(self, default: int = 0) -> "control.ConditionalHandle":
        """A condition for one conditional node of this graph
        (cudaGraphConditionalHandleCreate): pass it to the kernels that set it
        (``simt.graph_set_condition(handle, value)``); every launch of the graph starts
        with the value ``default``."""
        default = control.check_default(default)
        handle = control.ConditionalHandle(self, self.impl.conditional_handle(default),
                                           default)
        self.handles.append(handle)
        return handle

    def add_conditional(self, kind: str, handle: "control.ConditionalHandle",
                        deps: Deps = (), n: int = 1) -> "GraphNode":
        """A conditional node (cudaGraphAddNode, CU_GRAPH_NODE_TYPE_CONDITIONAL): 'if' runs
        ``node.bodies[0]`` once when the condition is not 0 (``bodies[1]``, with n=2, when
        it is 0); 'while' runs ``bodies[0]`` while it is not 0, reading it before each run;
        'switch' runs ``bodies[value]`` when value < n. Fill the bodies (simt.Graph
        objects) with their add_* methods before instantiating."""
        n = control.check_conditional(self, kind, handle, n)
        node = self._add("conditional", deps, self.impl.add_conditional, kind, handle.impl, n)
        node.impl, bodies = node.impl
        node.bodies = [Graph(self.device, _impl=body, _body_of=self) for body in bodies]
        handle.node = node
        return node

    def add_alloc(self, shape: Any, dtype: Any = np.float32, deps: Deps = ()) -> "GraphNode":
        """An allocation node (cudaGraphAddMemAllocNode): ``node.array`` is a device array
        that the nodes depending on this one may use, until a free node (add_free) frees
        it; without one it lives after the launch, until the exec's next launch."""
        shape, dtype, nbytes = control.alloc_size(shape, dtype)
        node = self._add("alloc", deps, self.impl.add_alloc, nbytes)
        node.impl, allocation = node.impl
        node.array = DeviceArray(shape, dtype, alloc=allocation, device=self.device)
        self.keep.append(allocation)
        return node

    def add_free(self, node: "GraphNode", deps: Deps = ()) -> "GraphNode":
        """A free node (cudaGraphAddMemFreeNode) of allocation node ``node``: the nodes it
        depends on are the last that may use ``node.array``."""
        control.check_free(self, node)
        free = self._add("free", deps, self.impl.add_free, node.impl, node.array.ptr)
        node.freed = True
        return free

    def instantiate(self, device_launch: bool = False) -> "GraphExec":
        """A GraphExec of this graph as it is now (cudaGraphInstantiate).
        ``device_launch=True``: kernels may launch it (``simt.graph_launch(exe)``;
        CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH; the exec is uploaded at once)."""
        return GraphExec(self, bool(device_launch))

    def __repr__(self):
        return f"<simt Graph of {len(self.nodes)} explicit nodes on {self.device.name}>"


class GraphExec:
    """An instantiated graph (cudaGraphExec_t): launched as one piece of work."""

    def __init__(self, graph, device_launch=False):
        if graph.body_of is not None:
            raise ValueError("instantiate: this graph is the body of a conditional node; "
                             "instantiate the graph that holds the node")
        control.check_unused_handles(graph)
        if device_launch:
            control.check_device_graph(graph)
        if control.has_memory_nodes(graph) and len(graph.execs):
            raise InvalidConfiguration(
                "instantiate: the graph has allocation or free nodes, and another GraphExec "
                "of it is alive; such a graph has one exec at a time (cudaGraphInstantiate's "
                "rule): drop the other (del exe) first")
        self.device = graph.device
        self.graph = graph
        self.keep = list(graph.keep)
        self.device_launch = device_launch
        self.impl = graph.impl.instantiate(device_launch)
        graph.execs.add(self)

    @property
    def _simt_type(self):
        """The kernel type of this exec as an argument (simt.graph_launch)."""
        if not self.device_launch:
            raise InvalidConfiguration("a GraphExec passed to a kernel must be instantiated "
                                       "with g.instantiate(device_launch=True)")
        return T.GraphHandle("exec")

    def __int__(self):
        return int(self.impl.device_value)

    __index__ = __int__

    def upload(self, stream=None):
        """Make the graph ready to launch (cudaGraphUpload) in ``stream``'s order, so
        that its first launch costs no more than the next ones."""
        self.impl.upload(stream_handle_of(stream, self.device, "GraphExec.upload"))

    def launch(self, stream=None):
        """Run the whole graph in ``stream`` (the default stream when None) after the work
        already there (cudaGraphLaunch)."""
        self.impl.launch(stream_handle_of(stream, self.device, "GraphExec.launch"))

    def update(self, graph):
        """Take the parameters of ``graph``'s nodes (cudaGraphExecUpdate): it must have the
        same nodes, of the same kinds, with the same dependencies as the graph this exec
        was made from; only their parameters (kernel arguments and configurations,
        copy and memset addresses and values) change."""
        if not isinstance(graph, Graph) or graph.device != self.device:
            raise ValueError(f"update takes a simt.Graph of {self.device.name}, got {graph!r}")
        self.impl.update(graph.impl)
        self.graph, self.keep = graph, list(graph.keep)

    def set_kernel_args(self, node, *args):
        """New arguments for kernel node ``node`` of the graph this exec was made from
        (cudaGraphExecKernelNodeSetParams); same launch configuration."""
        if not isinstance(node, GraphNode) or node.graph is not self.graph or \
                node.kind != "kernel":
            raise ValueError("set_kernel_args takes a kernel node of the graph this exec was "
                             f"instantiated from (or last updated to), got {node!r}")
        index = self.graph.nodes.index(node)
        grid, block, shared = self.impl.kernel_config(index)
        loaded = _prepare(node.kernel, self.device, grid, block, shared, args)[0]
        self.impl.set_kernel_args(index, node.kernel, loaded, runtime_args(args))
        self.keep.append(args)

    def __repr__(self):
        return f"<simt GraphExec on {self.device.name}>"


def _prepare(kernel, device, grid, block, shared_bytes, args):
    """(loaded kernel, grid, block, shared bytes) of a kernel node, checked as a launch is."""
    if not getattr(kernel, "_simt_kernel", False):
        raise TypeError(f"add_kernel takes a @simt.kernel, got {kernel!r}")
    for a in args:
        if isinstance(a, np.ndarray) and getattr(a, "device_ptr", None) is None:
            raise InvalidConfiguration(
                f"kernel '{kernel.__name__}' in a graph: a NumPy argument is copied in and "
                "out around each launch, which a graph cannot repeat; pass device arrays "
                "(simt.to_device) or mapped memory (simt.mapped_array)")
    return kernel.checked_launch(device, grid, block, shared_bytes, args)


def _memory(array, device, what):
    """(address, is host memory) of a copy operand."""
    if isinstance(array, DeviceArray):
        if array.device != device:
            raise ValueError(f"add_memcpy: {what} lives on {array.device.name}, the graph on "
                             f"{device.name}")
        contiguous = array.is_c_contiguous()
        ptr, host = array.ptr, False
    elif isinstance(array, np.ndarray):
        contiguous = array.flags.c_contiguous
        ptr, host = array.ctypes.data, True
    else:
        raise TypeError(f"add_memcpy: {what} must be a device array or a NumPy array, got "
                        f"{type(array).__name__}")
    if not contiguous:
        raise ValueError(f"add_memcpy: {what} is not C-contiguous; copy it to a contiguous "
                         "array first")
    return ptr, host


def _event(event, device, what):
    if getattr(event, "elapsed_time", None) is None or event.device != device:
        raise TypeError(f"{what} takes a simt.Event of {device.name}, got {event!r}")
    return event


def element_bits(array, value, what):
    """(value's bits as an unsigned int, element size) for a memset of ``array``'s
    elements (cuMemsetD8/D16/D32): a contiguous device array of 1-, 2- or 4-byte elements."""
    if not isinstance(array, DeviceArray):
        raise TypeError(f"{what} takes a device array, got {type(array).__name__}")
    size = array.itemsize
    if size not in (1, 2, 4):
        raise ValueError(f"{what}: CUDA sets 8-, 16- or 32-bit values (cuMemsetD8/D16/D32); "
                         f"{array.dtype} elements are {8 * size}-bit. Fill it with a kernel")
    if not array.is_c_contiguous():
        raise ValueError(f"{what}: the array is not contiguous; set each contiguous piece, "
                         "or use a pitched array with simt.memset")
    scalar = np.array(value, dtype=array.dtype)
    return int(scalar.reshape(()).view(f"u{size}")), size
