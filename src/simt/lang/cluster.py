"""Thread block clusters (compute capability 9.0): ``cg.this_cluster()`` with ``sync()``,
the split ``barrier_arrive()`` / ``barrier_wait()``, ``block_rank()``, ``num_blocks()``,
``dim_blocks()``, ``block_index()``, ``thread_rank()`` and ``map_shared_rank(shared_array,
rank)``, the same shared array of another block of the cluster (distributed shared memory).

A launch names its cluster shape with ``kernel[grid, block, shared, stream, (x, y, z)]``, or
the kernel fixes it with ``@simt.kernel(cluster_dims=(x, y, z))``; a kernel launched without
one is in clusters of one block, as in CUDA. On the GPU: %cluster_ctarank, %cluster_nctarank,
%cluster_nctaid, %cluster_ctaid, ``barrier.cluster.arrive``/``wait`` and ``mapa`` (the mapped
array is a generic address). On the CPU device the blocks of a cluster run at once, one OS
thread each (backends/cpu/cluster.py). docs/clusters.md.
"""
from ..ir import nodes as ir
from ..ir import types as T
from .groups import Group, block_size, flat_rank
from .vectors import DIM3, make_entry
from .registry import Intrinsic, Static


NO_BLOCK = ("cluster.map_shared_rank: the rank is not a block of this cluster (ranks are 0 to "
            "cluster.num_blocks() - 1)")


class Cluster(Group):
    """cg.this_cluster(): the blocks of this block's cluster."""

    methods = ("sync", "barrier_arrive", "barrier_wait", "block_rank", "num_blocks",
               "dim_blocks", "block_index", "thread_rank", "map_shared_rank")

    def _sync(self, fc, args, loc):
        _none(fc, args, "sync", loc)
        return ir.GridSync(loc, scope="cluster")

    def _barrier_arrive(self, fc, args, loc):
        _none(fc, args, "barrier_arrive", loc)
        return ir.GridSync(loc, scope="cluster.arrive")

    def _barrier_wait(self, fc, args, loc):
        _none(fc, args, "barrier_wait", loc)
        return ir.GridSync(loc, scope="cluster.wait")

    def _dim_blocks(self, fc, args, loc):
        _none(fc, args, "dim_blocks", loc)
        return _dim3(dim_blocks, loc)

    def _block_index(self, fc, args, loc):
        _none(fc, args, "block_index", loc)
        return _dim3(block_index, loc)

    def _thread_rank(self, fc, args, loc):
        """block_rank() * threads per block + the thread's rank in its block, as CUDA's."""
        _none(fc, args, "thread_rank", loc)
        first = ir.BinOp(T.INT32, loc, "mul", block_rank.node(T.INT32, loc, []),
                         block_size(fc, loc))
        return ir.BinOp(T.INT32, loc, "add", first, flat_rank(fc, loc))

    def _block_rank(self, fc, args, loc):
        _none(fc, args, "block_rank", loc)
        return block_rank.node(T.INT32, loc, [])

    def _num_blocks(self, fc, args, loc):
        _none(fc, args, "num_blocks", loc)
        return num_blocks.node(T.INT32, loc, [])

    def _map_shared_rank(self, fc, args, loc):
        if len(args) != 2:
            fc.fail(loc, "cluster.map_shared_rank(shared_array, rank) takes a shared array and "
                    "a block rank")
        array = fc.expr(args[0], loc)
        if not isinstance(array.type, T.Array) or array.type.space != "shared":
            fc.fail(loc, f"cluster.map_shared_rank maps shared arrays, got {array.type}")
        rank = fc.cast(fc.expr(args[1], loc), T.INT32, loc)
        return map_shared_rank.node(array.type.with_(space="generic"), loc, [array, rank])


def _dim3(entry, loc):
    """A dim3 of the entry's three int32 components, one node per axis."""
    return make_entry.node(DIM3, loc, [entry.node(T.INT32, loc, [], {"axis": axis})
                                       for axis in "xyz"])


def _none(fc, args, name, loc):
    if args:
        fc.fail(loc, f"cluster.{name}() takes no arguments")


def _this_cluster(fc, args, kwargs, loc):
    if args or kwargs:
        fc.fail(loc, "cg.this_cluster() takes no arguments")
    return Static(Cluster(), "cluster")


this_cluster = Intrinsic(
    "cg.this_cluster", "cg.this_cluster(): the blocks of this block's cluster (launch option "
    "cluster=(x, y, z) or @simt.kernel(cluster_dims=(x, y, z)); compute capability 9.0). "
    "Methods: sync(); barrier_arrive() and barrier_wait(), sync() in two halves; "
    "block_rank(), num_blocks(); dim_blocks() and block_index() (dim3: the cluster's shape "
    "and this block's place in it); thread_rank() (block_rank() * threads per block + the "
    "thread's rank in its block); map_shared_rank(shared_array, rank). A kernel launched "
    "without a cluster shape is in clusters of one block.",
    _this_cluster, python_name="cg.this_cluster", lowered_as=())
block_rank = Intrinsic("cluster.block_rank", "cluster.block_rank(): this block's rank in its "
                       "cluster.", public=False)
num_blocks = Intrinsic("cluster.num_blocks", "cluster.num_blocks(): the blocks of the "
                       "cluster.", public=False)
dim_blocks = Intrinsic("cluster.dim_blocks", "cluster.dim_blocks(): the cluster's shape in "
                       "blocks, one axis (attrs['axis']).", public=False)
block_index = Intrinsic("cluster.block_index", "cluster.block_index(): this block's index in "
                        "its cluster, one axis (attrs['axis']).", public=False)
map_shared_rank = Intrinsic("cluster.map_shared_rank", "cluster.map_shared_rank(a, rank): "
                            "shared array a of the cluster's block of that rank.", public=False)
