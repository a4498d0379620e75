"""CUDA graphs on the host devices (CPU, sim): a recorded DAG replayed in dependency order.

Nodes are made in an order where every dependency comes first (``add_*`` takes nodes
that exist, and capture records in issue order), so that order is the replay order:
an instantiated graph is a flat list of callables, child graphs spliced in, run one
after the other as one piece of stream work. Kernel nodes are made at
instantiation (arguments packed once: the backend's graph_node), which is what makes a
replay cheaper than launching the kernels one by one.

Stream capture (hostcapture.py) records what a capturing stream would queue as nodes of
a HostGraph.

What differs between the devices comes from the backend: ``graph_node`` (a kernel
node's launch), ``host_write`` (a copy or memset that marks what it writes),
``run_graph`` and ``captured`` (a launch in stream order, or into a capture), ``alloc``,
``add_device_graph``/``remove_device_graph`` (execs that kernels launch) and
``interrupt`` (how Ctrl-C stops a replay: backends/cpu/interrupt.py's flag, or
``Uninterrupted`` where Python raises KeyboardInterrupt itself).

A conditional handle is a 32-bit cell whose address kernels get (lower/graphs.py stores
to it); a conditional node replays its bodies' runnables as the cell says, and a graph's
cells are set to their defaults at the start of each of its runs (a body's at each run of
the body). The cells belong to the graph, so its execs take turns, whichever stream they
are launched in, as one exec's launches do. An allocation node's memory is allocated when
the node is added (CUDA fixes its address then too) and lives with the graph; free nodes
have nothing to do.
"""
import collections
import ctypes
import functools
import threading

from ..errors import CudaError
from ..runtime.backend import running_host_function
from .hostmem import fill   # noqa: F401  (device.py calls graphs.fill)


class Uninterrupted:
    """The interrupt hooks of a device whose replays run Python on the calling thread,
    where Ctrl-C raises KeyboardInterrupt by itself: no flag is ever set."""

    FLAG = ctypes.c_int32(0)

    @staticmethod
    def starting():
        pass

    @staticmethod
    def ended():
        pass

    @staticmethod
    def stopped(what):
        pass


class Condition:
    """A conditional handle's cell and default (``value``: the address kernels get)."""

    def __init__(self, default):
        self.default = default
        self.cell = ctypes.c_uint32(default)
        self.value = ctypes.addressof(self.cell)

    def reset(self):
        self.cell.value = self.default


class _Interrupted(Exception):
    """A Ctrl-C seen between two runs of a conditional's body (a while loop may not end)."""


class _Order:
    """The order of launches that must not overlap: (lock, latest _Turn)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.last = None


class Node:
    """One node: its kind, the nodes it depends on, and what replays it."""

    __slots__ = ("kind", "deps", "work", "config", "kernel")

    def __init__(self, kind, deps, work, config=None, kernel=None):
        self.kind, self.deps, self.work, self.config = kind, list(deps), work, config
        self.kernel = kernel          # kernel nodes: the Kernel (an update may not change it)

    def runnable(self):
        """The callable an exec runs for this node (None: nothing to run). Kernel and
        event record nodes hold a maker: each exec gets its own launch (packed arguments,
        launch record) and its own records, so two execs of one graph may run at once."""
        return self.work() if self.kind in ("kernel", "event_record") else self.work


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


class HostGraph:
    """A graph of a host device (the backend object behind a simt.Graph)."""

    def __init__(self, backend):
        self.backend = backend
        self.nodes = []
        self.conditions = []          # the Conditions of the handles this graph made
        self.order = _Order()         # its execs' launches, when it has conditional nodes

    def node(self, kind, deps, work, config=None, kernel=None):
        node = Node(kind, deps, work, config, kernel)
        self.nodes.append(node)
        return node

    def add_kernel(self, kernel, loaded, grid, block, shared_bytes, args, deps):
        make = functools.partial(self.backend.graph_node, loaded, grid, block, shared_bytes,
                                 args)
        return self.node("kernel", deps, make, (grid, block, shared_bytes), kernel)

    def add_memcpy(self, dst, dst_host, src, src_host, nbytes, deps):
        copy = functools.partial(ctypes.memmove, dst, src, nbytes)
        return self.node("memcpy", deps, copy if dst_host else
                         self.backend.host_write(dst, nbytes, copy))

    def add_memset(self, ptr, bits, element_size, count, deps):
        return self.node("memset", deps, self.backend.host_write(
            ptr, element_size * count, functools.partial(fill, ptr, bits, element_size, count)))

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

    def conditional_handle(self, default):
        condition = Condition(default)
        self.conditions.append(condition)
        return condition

    def add_conditional(self, kind, condition, n, deps):
        bodies = [HostGraph(self.backend) for _ in range(n)]
        return self.node("conditional", deps, None, (kind, condition, bodies)), bodies

    def add_alloc(self, nbytes, deps):
        return self.node("alloc", deps, None), self.backend.alloc(nbytes)

    def add_free(self, alloc_node, ptr, deps):
        return self.node("free", deps, None)

    def instantiate(self, device_launch=False):
        return HostGraphExec(self, device_launch)


def _body_runs(graph):
    """What one run of a conditional's body replays: its cells reset, then its nodes."""
    runs = [run for _, run in _flatten(graph.nodes, [])]
    return [condition.reset for condition in graph.conditions] + runs


def _conditional(kind, condition, bodies):
    """The runnable of a conditional node (runtime/graphcontrol.py has the semantics)."""
    interrupt = bodies[0].backend.interrupt
    bodies = [_body_runs(body) for body in bodies]
    cell = condition.cell

    def run_body(runs):
        for run in runs:
            run()

    def run():
        if kind == "if":
            if cell.value or len(bodies) > 1:
                run_body(bodies[0] if cell.value else bodies[1])
        elif kind == "switch":
            if cell.value < len(bodies):
                run_body(bodies[cell.value])
        else:
            while cell.value:
                if interrupt.FLAG.value:
                    raise _Interrupted
                run_body(bodies[0])
    return run


def _has_conditionals(nodes):
    return any(node.kind == "conditional" or
               node.kind == "graph" and _has_conditionals(node.config) for node in nodes)


def _flatten(nodes, out):
    """The runnables of ``nodes`` in replay order, child graphs spliced in."""
    for node in nodes:
        if node.kind == "graph":
            _flatten(node.config, out)
        elif node.kind == "conditional":
            out.append((node, _conditional(*node.config)))
        else:
            run = node.runnable()
            if run is not None:
                out.append((node, run))
    return out


def _shape(nodes):
    """The topology of a node list: kinds and dependency positions, children included."""
    index = {id(node): i for i, node in enumerate(nodes)}
    return [(node.kind, node.kernel, [index.get(id(d)) for d in node.deps], _inner(node))
             for node in nodes]


def _inner(node):
    if node.kind == "graph":
        return _shape(node.config)
    if node.kind == "conditional":
        kind, _, bodies = node.config
        return kind, [_shape(body.nodes) for body in bodies]
    return None


class _Turn:
    """One launch's place in the order of an exec's launches (CUDA runs a graph exec one
    launch at a time, each after the launches made before it, whatever their streams)."""

    __slots__ = ("before", "done", "skipped")

    def __init__(self, before):
        self.before = before          # the previous launch's turn (None once this one ran)
        self.done = threading.Event()
        self.skipped = False

    def wait(self):
        """Until this launch has finished (a skipped one: until the one before it has)."""
        turn = self
        while turn is not None:
            turn.done.wait()
            if not turn.skipped:
                return
            turn = turn.before

    def finish(self):
        self.before = None
        self.done.set()

    def skip(self):
        """The launch was refused before it was queued: later ones wait for the one before."""
        self.skipped = True
        self.done.set()


def _replay_runs(runs, interrupt):
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
    except _Interrupted:
        interrupt.stopped("a graph")
    finally:
        interrupt.ended()
        for run in runs[done:]:
            if isinstance(run, EventRecord):
                run()


class HostGraphExec:
    """An instantiated graph: the flat list of what to run, replayed per launch, one
    launch at a time in the order of the ``launch`` calls (cudaGraphLaunch's rule: a
    replay shares its kernels' packed arguments and launch records with every other)."""

    def __init__(self, graph, device_launch=False):
        self.backend = graph.backend
        self.order = _Order()         # this exec's launches (the graph's: _build)
        self._build(graph)
        self.device_value = 0
        if device_launch:             # kernels launch it by this id (devlaunch.py)
            self.device_value = id(self)
            self.backend.add_device_graph(self.device_value, self._device_replay)

    def _build(self, graph):
        self.nodes = list(graph.nodes)
        pairs = _flatten(self.nodes, [])
        resets = [condition.reset for condition in graph.conditions]
        self.runs = resets + [run for _, run in pairs]
        self.position = {id(node): i + len(resets) for i, (node, _) in enumerate(pairs)}
        self.records = [run for run in self.runs if isinstance(run, EventRecord)]
        if _has_conditionals(self.nodes):
            self.order = graph.order    # the cells are the graph's: its execs take turns

    def _device_replay(self):
        """A launch from a kernel (simt.graph_launch): the nodes, now, on this thread;
        the first error, or None."""
        try:
            for run in self.runs:
                run()
        except CudaError as error:
            return error
        return None

    def upload(self, stream):
        """Nothing to upload: the replay list is made at instantiation."""

    def __del__(self):
        if getattr(self, "device_value", 0):
            try:
                self.backend.remove_device_graph(self.device_value)
            except (AttributeError, TypeError):     # at exit, the module may be gone
                pass

    def launch(self, stream):
        if self.backend.captured(stream):
            # recorded into the graph being captured as a child graph: a copy of this one,
            # which the execs of that graph make their own launches of
            self.backend.run_graph(stream, None, list(self.nodes))
            return
        for record in self.records:
            record.at_launch()
        runs = self.runs               # updates after this launch do not reach it
        turn = self._take_turn()
        try:
            self.backend.run_graph(stream, lambda: self._replay(runs, turn, self.backend.interrupt))
        except BaseException:
            turn.skip()
            raise

    def _take_turn(self):
        with self.order.lock:
            turn = self.order.last = _Turn(self.order.last)
        return turn

    @staticmethod
    def _replay(runs, turn, interrupt):
        try:
            if turn.before is not None:
                turn.before.wait()
            _replay_runs(runs, interrupt)
        finally:
            turn.finish()

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
