"""CUDA graphs on a GPU: CUgraph / CUgraphExec handles through the driver API
(cuGraphCreate, cuGraphAdd*Node, cuGraphInstantiate, cuGraphLaunch, cuGraphExecUpdate,
cuGraphExecKernelNodeSetParams); a captured graph is what cuStreamEndCapture gives.

runtime/graphs.py checks the arguments and compiles the kernels; this module turns
them into driver node parameters. Host nodes run Python functions through one C
callback, as stream host functions do, but their entries stay while a graph or an
exec that can replay them lives.
"""
import ctypes
import itertools

from . import capture, graphnodes
from .driver import api, call, check, destroy
from .kernels import kernel_values, place_symbols
from ...errors import InvalidConfiguration
from ...runtime.backend import Allocation, running_host_function

_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_hosts = {}                    # key -> (fn, args, error list) of every live host node
_keys = itertools.count(1)


def _run_host_node(key):
    fn, args, errors = _hosts[key]
    try:
        with running_host_function():
            fn(*args)
    except BaseException as exc:      # raised again at the next synchronize
        errors.append(exc)


_trampoline = _HOST_FN(_run_host_node)


class _HostEntry:
    """One host node's entry in ``_hosts``, removed when nothing can replay it."""

    def __init__(self, fn, args, errors):
        self.key = next(_keys)
        _hosts[self.key] = (fn, args, errors)

    def __del__(self):
        _hosts.pop(self.key, None)


_captured = {}                 # capture id -> [_HostEntry] of host functions captured so far


def capture_id(stream):
    """The id of the capture ``stream`` (a CUstream) is in, or None when it is in none."""
    d = api()
    info = call(d.cuStreamGetCaptureInfo, stream)
    if info[0] != d.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE:
        return None
    return int(info[1])


def capture_host(stream, ident, fn, args, errors):
    """Record a host function into capture ``ident`` of ``stream``: its entry lives with
    the graph (take_captured), as the graph may replay it many times. libcuda's
    cuLaunchHostFunc is called directly: cuda.bindings' own wraps the callback in a record
    it frees after the first call, and a graph's second replay then read freed memory."""
    entry = _HostEntry(fn, args, errors)
    _captured.setdefault(ident, []).append(entry)
    launch = _libcuda().cuLaunchHostFunc
    launch.argtypes = [ctypes.c_void_p, _HOST_FN, ctypes.c_void_p]
    err = launch(int(stream), _trampoline, entry.key)
    if err:
        check(api().CUresult(err), "cuLaunchHostFunc")


def _libcuda():
    if not _lib:
        _lib.append(ctypes.CDLL("libcuda.so.1"))
    return _lib[0]


_lib = []


def take_captured(ident):
    """The host entries of capture ``ident`` (for its graph), forgotten here."""
    return _captured.pop(ident, []) if ident is not None else []


class GpuNode:
    def __init__(self, handle, config=None):
        self.handle = handle
        self.config = config         # kernel nodes: (grid, block, shared bytes)


def _wrap(graph, handle):
    """A GpuNode of ``handle`` recorded as ``graph``'s next node."""
    node = GpuNode(handle)
    graph.nodes.append(node)
    return node


def kernel_params(backend, kernel, loaded, grid, block, shared_bytes, args):
    """(CUDA_KERNEL_NODE_PARAMS, what its pointers point into) of one kernel launch."""
    d = api()
    binary = loaded.binary
    if binary.grid_sync:
        raise InvalidConfiguration(f"kernel '{kernel.__name__}' calls grid.sync(), which "
                                   "needs a cooperative launch; simt's graph kernel nodes "
                                   "are plain launches")
    if binary.symbols:
        place_symbols(backend, kernel, loaded)
    if shared_bytes:
        loaded.function.ensure_dynamic_shared(shared_bytes)
    launcher = loaded.launcher
    storage, pointers = launcher.new_buffer()
    launcher.pack(storage, 0, *kernel_values(binary, args))
    p = d.CUDA_KERNEL_NODE_PARAMS()
    p.func = loaded.function.handle
    p.gridDimX, p.gridDimY, p.gridDimZ = grid
    p.blockDimX, p.blockDimY, p.blockDimZ = block
    p.sharedMemBytes = shared_bytes
    p.kernelParams = ctypes.addressof(pointers) if launcher.params else 0
    p.extra = 0
    return p, (storage, pointers)


class GpuGraph:
    """A CUgraph (the backend object behind a simt.Graph)."""

    def __init__(self, backend, handle=None, outer=None):
        backend.make_current()
        self.backend = backend
        self.handle = call(api().cuGraphCreate, 0) if handle is None else handle
        self.outer = outer           # a conditional's body: the graph that holds the node
                                     # (which owns this CUgraph: not destroyed here)
        self.allocations = False     # has allocation nodes (instantiate_flags)
        self.nodes = []              # the nodes added here, in order (not captured ones)
        self.hosts = []              # _HostEntry of every host node, children's included
        self.sources = []            # (binary, name) of kernel nodes that record errors
        self.buffers = []            # kernel parameter buffers: the driver copies them when
                                     # a node is made; kept so no pointer it had dangles

    def _add(self, add, deps, *args, config=None):
        self.backend.make_current()
        handle = call(add, self.handle, [dep.handle for dep in deps], len(deps), *args)
        node = GpuNode(handle, config)
        self.nodes.append(node)
        return node

    def add_kernel(self, kernel, loaded, grid, block, shared_bytes, args, deps):
        params, buffer = kernel_params(self.backend, kernel, loaded, grid, block,
                                       shared_bytes, args)
        self.buffers.append(buffer)
        graph = self
        while loaded.binary.can_fail and graph is not None:     # a body's: the outer's too
            graph.sources.append((loaded.binary, kernel.__name__))
            graph = graph.outer
        return self._add(api().cuGraphAddKernelNode, deps, params,
                         config=(grid, block, shared_bytes))

    def add_memcpy(self, dst, dst_host, src, src_host, nbytes, deps):
        d = api()
        if not nbytes:
            return self.add_empty(deps)
        p = d.CUDA_MEMCPY3D()
        for side, ptr, host in (("src", src, src_host), ("dst", dst, dst_host)):
            if host:
                setattr(p, side + "MemoryType", d.CUmemorytype.CU_MEMORYTYPE_HOST)
                setattr(p, side + "Host", ptr)
            else:
                setattr(p, side + "MemoryType", d.CUmemorytype.CU_MEMORYTYPE_DEVICE)
                setattr(p, side + "Device", d.CUdeviceptr(ptr))
            setattr(p, side + "Pitch", nbytes)
            setattr(p, side + "Height", 1)
        p.WidthInBytes, p.Height, p.Depth = nbytes, 1, 1
        return self._add(d.cuGraphAddMemcpyNode, deps, p, self.backend.context)

    def add_memset(self, ptr, bits, element_size, count, deps):
        d = api()
        if not count:
            return self.add_empty(deps)
        p = d.CUDA_MEMSET_NODE_PARAMS()
        p.dst = d.CUdeviceptr(ptr)
        p.elementSize, p.width, p.height = element_size, count, 1
        p.pitch, p.value = element_size * count, bits
        return self._add(d.cuGraphAddMemsetNode, deps, p, self.backend.context)

    def add_host(self, fn, args, deps):
        d = api()
        entry = _HostEntry(fn, args, self.backend.callback_errors)
        self.hosts.append(entry)
        p = d.CUDA_HOST_NODE_PARAMS()
        p.fn = d.CUhostFn(ctypes.cast(_trampoline, ctypes.c_void_p).value)
        p.userData = entry.key
        return self._add(d.cuGraphAddHostNode, deps, p)

    def add_empty(self, deps):
        return self._add(api().cuGraphAddEmptyNode, deps)

    def add_child(self, graph, deps):
        self.hosts += graph.hosts
        self.sources += graph.sources
        return self._add(api().cuGraphAddChildGraphNode, deps, graph.handle)   # a copy

    def add_event_record(self, event, deps):
        return self._add(api().cuGraphAddEventRecordNode, deps, event.handle)

    def add_event_wait(self, event, deps):
        return self._add(api().cuGraphAddEventWaitNode, deps, event.handle)

    def conditional_handle(self, default):
        self.backend.make_current()
        return graphnodes.GpuCondition(self.backend, self.handle, default)

    def add_conditional(self, kind, condition, n, deps):
        self.backend.make_current()
        handle, bodies = graphnodes.add_conditional(self.backend, self.handle, kind,
                                                    condition, n, deps)
        return _wrap(self, handle), [GpuGraph(self.backend, body, outer=self)
                                     for body in bodies]

    def add_alloc(self, nbytes, deps):
        self.backend.make_current()
        handle, ptr = graphnodes.add_alloc(self.backend, self.handle, nbytes, deps)
        self.allocations = True
        # the graph's memory: nothing to free when the array dies (release does nothing)
        return _wrap(self, handle), Allocation(ptr, nbytes, self.backend, keepalive=self)

    def add_free(self, alloc_node, ptr, deps):
        self.backend.make_current()
        return _wrap(self, graphnodes.add_free(self.handle, ptr, deps))

    def instantiate(self, device_launch=False):
        return GpuGraphExec(self, device_launch)

    def __del__(self):
        if getattr(self, "outer", None) is None:
            destroy("cuGraphDestroy", getattr(self, "handle", None))


class GpuGraphExec:
    """A CUgraphExec. Per-node updates name the nodes of the graph it was made from,
    as the driver wants, whichever graph ``update`` took the parameters of since."""

    def __init__(self, graph, device_launch=False):
        self.backend = graph.backend
        self.origin = graph            # whose node handles cuGraphExec*SetParams takes
        self.graph = graph             # whose parameters it has now (update)
        self.backend.make_current()
        flags = graphnodes.instantiate_flags(device_launch, graph.allocations)
        self.handle = call(api().cuGraphInstantiate, graph.handle, flags)
        self.device_value = 0
        if device_launch:              # a device launch needs the exec on the device
            graphnodes.upload(self.handle, None)
            self.device_value = int(self.handle)

    def upload(self, stream):
        self.backend.make_current()
        graphnodes.upload(self.handle, stream)

    def launch(self, stream):
        backend = self.backend
        backend.make_current()
        if self.graph.sources:
            backend.error_source = self.graph.sources[-1]
        handle = 0 if stream is None else stream
        ident = capture_id(handle) if capture.under_way() else None
        if ident is not None:
            self._capture_into(handle, ident)
        else:
            call(api().cuGraphLaunch, self.handle, handle)

    def _capture_into(self, stream, ident):
        """A launch into a stream under capture is a child graph node of the captured
        graph, as the cpu device records it (the driver refuses cuGraphLaunch there with
        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED): the node copies the graph whose parameters
        this exec has now, and becomes what the stream's next work depends on."""
        d = api()
        info = call(d.cuStreamGetCaptureInfo, stream)
        captured, count = info[2], info[-1]
        deps = list(info[3] or [])[:count]
        node = call(d.cuGraphAddChildGraphNode, captured, deps, len(deps), self.graph.handle)
        _captured.setdefault(ident, []).extend(self.graph.hosts)   # live with the graph
        flags = d.CUstreamUpdateCaptureDependencies_flags.CU_STREAM_SET_CAPTURE_DEPENDENCIES
        try:                                  # CUDA 13: with edge data (None: plain edges)
            call(d.cuStreamUpdateCaptureDependencies, stream, [node], None, 1, flags)
        except TypeError:                     # CUDA 12's bindings
            call(d.cuStreamUpdateCaptureDependencies, stream, [node], 1, flags)

    def update(self, graph):
        self.backend.make_current()
        call(api().cuGraphExecUpdate, self.handle, graph.handle)
        self.graph = graph

    def kernel_config(self, index):
        return self.graph.nodes[index].config

    def set_kernel_args(self, index, kernel, loaded, args):
        grid, block, shared_bytes = self.graph.nodes[index].config
        params, _ = kernel_params(self.backend, kernel, loaded, grid, block, shared_bytes,
                                  args)
        call(api().cuGraphExecKernelNodeSetParams, self.handle,
             self.origin.nodes[index].handle, params)

    def __del__(self):
        destroy("cuGraphExecDestroy", getattr(self, "handle", None))
