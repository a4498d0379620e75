"""The driver side of conditional nodes, memory nodes and device launches of graphs
(runtime/graphcontrol.py has the semantics): cuGraphConditionalHandleCreate and
cuGraphAddNode with CU_GRAPH_NODE_TYPE_CONDITIONAL (CUDA 12.3+, switch and two-body if
12.8+), cuGraphAddMemAllocNode / cuGraphAddMemFreeNode, and the instantiation flags
(CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH, _AUTO_FREE_ON_LAUNCH) with cuGraphUpload.

The driver fills what a node gives back into the parameter struct passed in: the body
graphs (``conditional.phGraph_out``, owned by the node) and the allocation's address
(``dptr``, fixed for the graph's life)."""
from .driver import api, call
from ...errors import CudaError

_TYPES = {"if": "CU_GRAPH_COND_TYPE_IF", "while": "CU_GRAPH_COND_TYPE_WHILE",
          "switch": "CU_GRAPH_COND_TYPE_SWITCH"}


class GpuCondition:
    """A CUgraphConditionalHandle; ``value`` is what kernels get (a 64-bit integer)."""

    def __init__(self, backend, graph_handle, default):
        d = api()
        self.handle = call(d.cuGraphConditionalHandleCreate, graph_handle, backend.context,
                           default, d.CU_GRAPH_COND_ASSIGN_DEFAULT)
        self.value = int(self.handle)


def add_node(graph_handle, deps, params):
    """cuGraphAddNode, whichever signature the bindings have."""
    d = api()
    handles = [dep.handle for dep in deps]
    try:                                  # CUDA 13: with edge data (None: plain edges)
        return call(d.cuGraphAddNode, graph_handle, handles, None, len(handles), params)
    except TypeError:                     # CUDA 12's bindings
        return call(d.cuGraphAddNode, graph_handle, handles, len(handles), params)


def add_conditional(backend, graph_handle, kind, condition, n, deps):
    """(node handle, [CUgraph of each body]) of a new conditional node."""
    d = api()
    params = d.CUgraphNodeParams()
    params.type = d.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
    params.conditional.handle = condition.handle
    params.conditional.type = getattr(d.CUgraphConditionalNodeType, _TYPES[kind])
    params.conditional.size = n
    params.conditional.ctx = backend.context
    node = add_node(graph_handle, deps, params)
    bodies = list(params.conditional.phGraph_out or ())[:n]
    if len(bodies) != n:
        raise CudaError(f"cuGraphAddNode made a conditional node but gave back {len(bodies)} "
                        f"of its {n} body graphs (cuda-bindings did not read phGraph_out); "
                        "update cuda-bindings")
    return node, bodies


def add_alloc(backend, graph_handle, nbytes, deps):
    """(node handle, address) of a new allocation node of ``nbytes`` on the backend's GPU."""
    d = api()
    params = d.CUDA_MEM_ALLOC_NODE_PARAMS()
    params.poolProps.allocType = d.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    params.poolProps.location.type = d.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    params.poolProps.location.id = backend.index
    params.bytesize = nbytes
    handles = [dep.handle for dep in deps]
    node = call(d.cuGraphAddMemAllocNode, graph_handle, handles, len(handles), params)
    return node, int(params.dptr)


def add_free(graph_handle, ptr, deps):
    d = api()
    handles = [dep.handle for dep in deps]
    return call(d.cuGraphAddMemFreeNode, graph_handle, handles, len(handles),
                d.CUdeviceptr(ptr))


def instantiate_flags(device_launch, has_allocations):
    """cuGraphInstantiate's flags: a device launch, or allocations a launch left unfreed
    freed at the next launch (runtime/graphs.py refuses both at once, as the driver does)."""
    flags = api().CUgraphInstantiate_flags
    if device_launch:
        return int(flags.CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)
    if has_allocations:
        return int(flags.CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
    return 0


def upload(exec_handle, stream):
    call(api().cuGraphUpload, exec_handle, 0 if stream is None else stream)
