"""Barriers and memory fences."""
from ..ir import nodes as ir
from ..ir import types as T
from .registry import Intrinsic


def _barrier_build(fc, args, kwargs, loc):
    return ir.Barrier(loc)


def _collective_builder(op, result):
    def build(fc, args, kwargs, loc):
        pred = fc.truth(fc.expr(args[0], loc), loc) if args else fc.fail(loc, f"{op} needs a predicate")
        return fc.collective(op, pred, result, loc)
    return build


def _fence_builder(scope):
    def build(fc, args, kwargs, loc):
        return _FENCES[scope].node(T.VOID, loc, [], {"scope": scope}, op="fence")
    return build


def _proxy_fence_build(fc, args, kwargs, loc):
    if args or kwargs:
        fc.fail(loc, "simt.fence_proxy_async() takes no arguments")
    return fence_proxy_async.node(T.VOID, loc, [])


syncthreads = Intrinsic("syncthreads", "__syncthreads(): wait until every thread of the block "
                        "that has not exited arrives; shared and global writes before it are "
                        "visible to the block after it.", _barrier_build, statement=True,
                        lowered_as=(ir.Barrier,))
syncthreads_count = Intrinsic("syncthreads_count", "__syncthreads_count(p): a barrier that "
                              "returns how many threads of the block passed a true p (int32).",
                              _collective_builder("count", T.INT32),
                              lowered_as=(ir.Collective,))
syncthreads_and = Intrinsic("syncthreads_and", "__syncthreads_and(p): a barrier that returns "
                            "whether p was true for every thread (int32 0/1).",
                            _collective_builder("and", T.INT32),
                            lowered_as=(ir.Collective,))
syncthreads_or = Intrinsic("syncthreads_or", "__syncthreads_or(p): a barrier that returns "
                           "whether p was true for any thread (int32 0/1).",
                           _collective_builder("or", T.INT32),
                           lowered_as=(ir.Collective,))
threadfence_block = Intrinsic("threadfence_block", "__threadfence_block(): order this thread's "
                              "memory accesses as seen by its block.", _fence_builder("block"))
threadfence = Intrinsic("threadfence", "__threadfence(): order this thread's memory accesses "
                        "as seen by the whole device.", _fence_builder("device"))
threadfence_system = Intrinsic("threadfence_system", "__threadfence_system(): order this "
                               "thread's memory accesses as seen by the host and other devices.",
                               _fence_builder("system"))
fence_proxy_async = Intrinsic(
    "fence_proxy_async", "simt.fence_proxy_async(): fence.proxy.async.shared::cta (sm_90): "
    "order this thread's ordinary (generic-proxy) shared-memory accesses before the "
    "asynchronous proxy's (a simt.tma.store or wgmma reading the shared array). Every "
    "thread that wrote the array calls it, then the threads meet at a barrier, then one "
    "issues the store. The CPU and sim devices do nothing (their TMA copies are ordinary "
    "accesses).", _proxy_fence_build)
_FENCES = {"block": threadfence_block, "device": threadfence, "system": threadfence_system}
