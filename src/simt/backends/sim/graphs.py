"""CUDA graphs and stream capture on the sim device: the host devices' graphs
(backends/hostgraphs.py) and capture (backends/hostcapture.py), with the sim's hooks,
mixed into SimBackend. A graph's launch replays its nodes at once, in their order, on the
calling thread; each kernel node is a checked launch of its own, and a node's error
stops the replay and is kept for the next synchronizing call, as a launch's is. A graph
that a kernel node launches (simt.graph_launch) replays once that kernel's grid has
finished, before the launching graph's next node (sim/devlaunch.py)."""
import ctypes

from ...runtime.backend import refuse_in_host_function
from .. import hostcapture, hostgraphs


class SimGraphs:
    """SimBackend's graph hooks (the contract: runtime/backend.py's create_graph)."""

    interrupt = hostgraphs.Uninterrupted    # Ctrl-C raises KeyboardInterrupt in the replay

    def create_graph(self):
        return hostgraphs.HostGraph(self)

    def graph_node(self, loaded, grid, block, shared_bytes, args):
        """A kernel node's launch, run by calling it; raises the kernel's error."""
        def run():
            error = self.launch(loaded, grid, block, shared_bytes, args,
                                loaded.binary.symbol_objects, loaded.binary.name,
                                in_graph=True)
            if error is not None:
                raise error
        return run

    def host_write(self, start, nbytes, fn):
        """``fn``, a host write of [start, start + nbytes), which marks those bytes
        written (the uninitialized-read check) each time it runs."""
        def run():
            self._mark(start, nbytes)
            fn()
        return run

    def run_graph(self, stream, replay, nodes=None):
        """A graph launch: ``replay`` now (its error kept as a launch's); in a stream
        under capture, a child graph node of ``nodes`` instead."""
        if self.captured(stream):
            stream.capture.record(stream, "graph", replay, nodes)
            return
        self.in_order(stream, lambda: None)           # the legacy default stream's rule
        self.pending.raise_it()
        try:
            replay()
        except Exception as exc:
            self.pending.keep(exc)

    def captured(self, stream):
        """Whether work put in ``stream`` is recorded into a graph being captured."""
        return stream is not None and stream.capture is not None

    def in_order(self, stream, fn):
        """Do ``fn()`` now, or record it in the capture ``stream`` is in; work on the
        legacy default stream (None) is refused while this thread captures a stream."""
        if stream is None:
            self.drain_blocking()
            fn()
        else:
            stream.run(fn)

    def drain_blocking(self):
        """Legacy default-stream rule: nothing is queued anywhere, so nothing to finish;
        but a thread that captures a stream may not use the legacy default stream."""
        refuse_in_host_function("work on the default stream")
        hostcapture.refuse_in_capture("work on the legacy default stream",
                                      "cudaErrorStreamCaptureImplicit")

    def add_device_graph(self, ident, replay):
        """An exec that kernels launch as ``ident`` (simt.graph_launch: Launch.graph_launch;
        ``replay()`` returns the first error or None)."""
        self.device_graphs[ident] = replay

    def remove_device_graph(self, ident):
        self.device_graphs.pop(ident, None)


def set_condition(handle, value):
    """simt.graph_set_condition in a kernel: the handle is the address of its condition's
    32-bit cell (hostgraphs.Condition), which the replay reads after the kernel."""
    ctypes.c_uint32.from_address(handle).value = value
