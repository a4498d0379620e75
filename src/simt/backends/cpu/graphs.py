"""CUDA graphs on the CPU device: a recorded DAG replayed in dependency order.

Nodes are made in an order where every dependency comes first (``add_*`` takes nodes
that exist, and capture records in issue order), so that order is the replay order:
an instantiated graph is a flat list of callables, child graphs spliced in, run one
after the other as one piece of stream work. Kernel nodes are made at
instantiation (arguments packed once: CpuBackend.graph_node), which is what makes a
replay cheaper than launching the kernels one by one.

Stream capture (``CpuCapture``) turns the work a capturing stream would queue into
nodes: each depends on the stream's previous node; an event recorded in a capturing
stream carries that stream's position, and a stream that waits for such an event joins
the capture from there (how work spread over several streams is captured, as in CUDA).
"""
import collections
import ctypes
import threading

from ...errors import CudaError
from ...runtime.backend import running_host_function
from ..hostmem import fill   # noqa: F401  (device.py calls graphs.fill)
from . import interrupt


class Node:
    """One node: its kind, the nodes it depends on, and what replays it."""

    __slots__ = ("kind", "deps", "work", "config", "kernel")

    def __init__(self, kind, deps, work, config=None, kernel=None):
        self.kind, self.deps, self.work, self.config = kind, list(deps), work, config
        self.kernel = kernel          # kernel nodes: the Kernel (an update may not change it)

    def runnable(self):
        """The callable an exec runs for this node (None: nothing to run)."""
        return self.work() if self.kind == "event_record" else self.work


class EventRecord:
    """An event record node of one exec: each launch gives the event a new record at
    once (as cudaEventRecord does at the call), completed when the replay reaches it."""

    def __init__(self, event):
        self.event = event
        self.marks = collections.deque()

    def at_launch(self):
        self.marks.append(self.event.new_record())

    def __call__(self):
        self.marks.popleft().complete()


def _host_call(fn, args):
    def run():
        with running_host_function():
            fn(*args)
    return run


def _event_wait(event):
    def run():
        mark = event.mark
        if mark is not None:
            mark.done.wait()
    return run


class CpuGraph:
    """A graph of the CPU device (the backend object behind a simt.Graph)."""

    def __init__(self, backend):
        self.backend = backend
        self.nodes = []

    def node(self, kind, deps, work, config=None, kernel=None):
        node = Node(kind, deps, work, config, kernel)
        self.nodes.append(node)
        return node

    def add_kernel(self, kernel, loaded, grid, block, shared_bytes, args, deps):
        work = self.backend.graph_node(loaded, grid, block, shared_bytes, args)
        return self.node("kernel", deps, work, (grid, block, shared_bytes), kernel)

    def add_memcpy(self, dst, dst_host, src, src_host, nbytes, deps):
        return self.node("memcpy", deps, lambda: ctypes.memmove(dst, src, nbytes))

    def add_memset(self, ptr, bits, element_size, count, deps):
        return self.node("memset", deps, lambda: fill(ptr, bits, element_size, count))

    def add_host(self, fn, args, deps):
        return self.node("host", deps, _host_call(fn, args))

    def add_empty(self, deps):
        return self.node("empty", deps, None)

    def add_child(self, graph, deps):
        return self.node("graph", deps, None, list(graph.nodes))    # copied as it is now

    def add_event_record(self, event, deps):
        return self.node("event_record", deps, lambda: EventRecord(event))

    def add_event_wait(self, event, deps):
        return self.node("event_wait", deps, _event_wait(event))

    def instantiate(self):
        return CpuGraphExec(self)


def _flatten(nodes, out):
    """The runnables of ``nodes`` in replay order, child graphs spliced in."""
    for node in nodes:
        if node.kind == "graph":
            _flatten(node.config, out)
        else:
            run = node.runnable()
            if run is not None:
                out.append((node, run))
    return out


def _shape(nodes):
    """The topology of a node list: kinds and dependency positions, children included."""
    index = {id(node): i for i, node in enumerate(nodes)}
    return [(node.kind, node.kernel, [index.get(id(d)) for d in node.deps],
             _shape(node.config) if node.kind == "graph" else None) for node in nodes]


def _replay(runs):
    """One launch of a graph: its runnables in order, as one launch for Ctrl-C (the flag
    is cleared once, at the start, as interrupt.starting() says). Ctrl-C ends the replay
    after the node it stopped (a graph in a stream would otherwise run the rest of its
    nodes, kernels that poll a flag still set ending at once, the rest as if nothing
    happened); so does a node's error. Either way the event records the replay did not
    reach complete, as theirs are made at launch and waiters would wait for ever."""
    done = 0
    interrupt.starting()
    try:
        for run in runs:
            if interrupt.FLAG.value:
                interrupt.stopped("a graph")
                return
            run()
            done += 1
    finally:
        interrupt.ended()
        for run in runs[done:]:
            if isinstance(run, EventRecord):
                run()


class CpuGraphExec:
    """An instantiated graph: the flat list of what to run, replayed per launch."""

    def __init__(self, graph):
        self.backend = graph.backend
        self._build(graph)

    def _build(self, graph):
        self.nodes = list(graph.nodes)
        pairs = _flatten(self.nodes, [])
        self.runs = [run for _, run in pairs]
        self.position = {id(node): i for i, (node, _) in enumerate(pairs)}
        self.records = [run for run in self.runs if isinstance(run, EventRecord)]

    def launch(self, stream):
        for record in self.records:
            record.at_launch()
        runs = self.runs               # updates after this launch do not reach it
        self.backend.run_graph(stream, lambda: _replay(runs))

    def update(self, graph):
        if _shape(graph.nodes) != _shape(self.nodes):
            raise CudaError("GraphExec.update: the new graph does not have the same nodes, "
                            "of the same kinds (kernel nodes: of the same kernels), with the "
                            "same dependencies as the graph this exec was made from "
                            "(cudaGraphExecUpdateErrorTopologyChanged); only parameters may "
                            "change. Instantiate the new graph instead")
        self._build(graph)

    def kernel_config(self, index):
        return self.nodes[index].config

    def set_kernel_args(self, index, kernel, loaded, args):
        grid, block, shared_bytes = self.nodes[index].config
        runs = list(self.runs)
        runs[self.position[id(self.nodes[index])]] = self.backend.graph_node(
            loaded, grid, block, shared_bytes, args)
        self.runs = runs


# -- stream capture ------------------------------------------------------------------

class _Capturing(threading.local):
    depth = 0                # captures this thread has begun and not ended


capturing = _Capturing()


def refuse_in_capture(what, error="cudaErrorStreamCaptureUnsupported", captured=False):
    """CUDA refuses synchronizing calls, and work on the legacy default stream, in a
    thread that captures a stream (or on a ``captured`` stream, from any thread): what
    they would wait for is only being recorded."""
    if capturing.depth or captured:
        if error == "cudaErrorStreamCaptureImplicit":
            why = ("work on the legacy default stream waits for the capturing stream, "
                   "whose work is only recorded; put the work in the captured stream, or "
                   "make it in a Stream(non_blocking=True)")
        else:
            why = ("captured work is recorded into the graph, not run, so nothing can wait "
                   "for it; end the `with stream.capture()` block first, then launch the "
                   "graph and wait for that")
        raise CudaError(f"{what} while this thread captures a stream ({error}): {why}")


class CpuCapture:
    """One capture under way: the graph it records and where each joined stream is."""

    def __init__(self, origin):
        self.graph = CpuGraph(origin.backend)
        self.origin = origin
        self.tails = {origin: []}     # stream -> the nodes its next node depends on
        self.active = True

    def record(self, stream, kind, work, config=None, kernel=None):
        node = self.graph.node(kind, self.tails[stream], work, config, kernel)
        self.tails[stream] = [node]

    def join(self, stream, nodes):
        """``stream`` waited for an event recorded in this capture at ``nodes``."""
        if stream.capture is None:
            stream.capture = self
            self.tails[stream] = list(nodes)
        else:
            tail = self.tails[stream]
            self.tails[stream] = tail + [n for n in nodes if n not in tail]

    def end(self, check=True):
        """The recorded graph (``check``: every stream that joined must have been joined
        back); every stream leaves the capture either way."""
        self.active = False
        for stream in self.tails:
            stream.capture = None
        if not check:
            return None
        seen, todo = set(), list(self.tails[self.origin])
        while todo:
            node = todo.pop()
            if id(node) not in seen:
                seen.add(id(node))
                todo += node.deps
        for stream, tail in self.tails.items():
            if any(id(node) not in seen for node in tail):
                raise CudaError("stream capture ended with work of another stream not joined "
                                "back into the capturing one (cudaErrorStreamCaptureUnjoined): "
                                "record an event in that stream after its work and have the "
                                "capturing stream wait for it before the block ends")
        return self.graph
