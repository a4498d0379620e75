"""TMA: the Tensor Memory Accelerator's asynchronous copies (sm_90; PTX
``cp.async.bulk.tensor`` and ``cp.async.bulk``), on a tensor map made on the host with
``simt.tensor_map(array, box, swizzle=...)`` (runtime/tensormaps.py).

``simt.tma.load(dst, tmap, coords, bar)`` copies the box at ``coords`` (NumPy axis order,
elements; the box's first element) from global memory into the shared array ``dst``,
swizzled as the map says, out-of-bounds elements filled; the bytes land as transactions of
the barrier's current phase, so the issuing thread declares them first
(``bar.arrive_expect_tx(nbytes)``) and the block waits on the barrier. ``simt.tma.store``
copies a box from shared memory to global memory (out-of-bounds elements are not written),
``commit_group()`` closes a group of stores and ``wait_group(n)`` waits until at most n
groups are pending. ``simt.tma.copy(dst, src, nbytes, bar)`` is a plain bulk copy from
global to shared memory completing on the barrier.

The GPU lowering is inline PTX (backends/cuda/lower/tma.py); the CPU device copies at once
(backends/cpu/lower/tma.py), with the same swizzle, and counts the bytes off the barrier.
"""
import numpy as np

from .arguments import OPTIONAL, bind
from ..ir import nodes as ir
from ..ir import types as T
from .barrier import ArriveWaitBarrier
from .registry import Intrinsic, Static

MAX_WAIT_GROUPS = 63
# the alignment a TMA box in shared memory needs: 128 bytes, and the swizzle pattern's repeat
# (the GPU swizzles by address bits 4..9: 8 rows of the span)
ALIGN = {"none": 128, "32B": 256, "64B": 512, "128B": 1024}


def _tensor_map(fc, value, name, loc):
    tmap = fc.expr(value, loc)
    if not isinstance(tmap.type, T.TensorMap):
        fc.fail(loc, f"simt.tma.{name} takes a tensor map (simt.tensor_map(...), passed to "
                f"the kernel), got {tmap.type}")
    return tmap


def _coords(fc, value, tmap, name, loc):
    """The box's coordinates, one int32 per dimension (NumPy axis order)."""
    ndim = tmap.type.ndim
    coords = fc.expr(value, loc)
    items = coords.items if isinstance(coords, ir.TupleExpr) else [coords]
    if isinstance(coords.type, T.Tuple) and not isinstance(coords, ir.TupleExpr):
        items = [fc.subscript(coords, ir.Const(T.INT64, loc, i), loc, "coords")
                 for i in range(len(coords.type.items))]
    if len(items) != ndim:
        fc.fail(loc, f"simt.tma.{name}: the tensor map is {ndim}-d, so coords needs {ndim} "
                f"coordinates (NumPy axis order), got {len(items)}")
    out = []
    for item in items:
        if not isinstance(item.type, T.Scalar) or item.type.kind not in "iu":
            fc.fail(loc, f"simt.tma.{name}: coordinates are integers, got {item.type}")
        out.append(fc.cast(item, T.INT32, loc))
    return out


def _shared_array(fc, value, tmap, what, name, loc):
    array = fc.expr(value, loc)
    t = array.type
    if not isinstance(t, T.Array) or t.space != "shared":
        fc.fail(loc, f"simt.tma.{name}: the {what} must be a shared array, got {t}")
    if tmap is not None and T.element_type(t.dtype) != T.element_type(tmap.type.dtype):
        fc.fail(loc, f"simt.tma.{name}: the shared array holds {T.element_type(t.dtype)}, "
                f"the tensor map {T.element_type(tmap.type.dtype)}")
    decl = getattr(_root(array), "decl", None)
    if tmap is not None and decl is not None:
        # a view (sc[64:128]) starts where the program says; the array it views starts on
        # the swizzle's repeat, as the GPU needs for the offsets the CPU device swizzles by
        decl.align = max(decl.align, ALIGN[tmap.type.swizzle])
    decl = getattr(array, "decl", None)
    shape = getattr(decl, "shape", None)
    if tmap is not None and shape is not None and int(np.prod(shape)) * t.dtype.itemsize < \
            tmap.type.box_bytes:
        fc.fail(loc, f"simt.tma.{name}: the shared array has {int(np.prod(shape))} elements, "
                f"fewer than the box's {tmap.type.box_bytes // t.dtype.itemsize}")
    return array


def _root(array):
    """The array a view (a slice, a row) is of."""
    while isinstance(array, ir.View):
        array = array.array
    return array


def _barrier(fc, value, name, loc):
    bar = value.value if isinstance(value, Static) else None
    if not isinstance(bar, ArriveWaitBarrier) or bar.completion is not None:
        fc.fail(loc, f"simt.tma.{name} completes on a simt.shared.barrier(count) without a "
                "completion function")
    return bar.storage


def _names(fc, args, kwargs, names, optional, name, loc):
    """The arguments by name (positional or keyword); optional ones default to None."""
    return bind(fc, args, kwargs, [(n, None) for n in names] + [(n, OPTIONAL) for n in optional],
                loc, f"simt.tma.{name}")


def _load_build(fc, args, kwargs, loc):
    dst, tmap, coords, bar, multicast = _names(
        fc, args, kwargs, ["dst", "tmap", "coords", "barrier"], ["multicast"], "load", loc)
    tmap = _tensor_map(fc, tmap, "load", loc)
    dst = _shared_array(fc, dst, tmap, "destination", "load", loc)
    coords = _coords(fc, coords, tmap, "load", loc)
    storage = _barrier(fc, bar, "load", loc)
    operands, attrs = [dst, tmap, storage], {"rank": tmap.type.ndim, "multicast": False}
    if multicast is not None:
        mask = fc.expr(multicast, loc)
        if not (isinstance(mask, ir.Const) and int(mask.value) == 0):
            if not isinstance(mask.type, T.Scalar) or mask.type.kind not in "iu":
                fc.fail(loc, f"simt.tma.load: multicast is a mask of the cluster's blocks (an "
                        f"integer), got {mask.type}")
            operands.append(fc.cast(mask, T.Scalar(np.uint16), loc))
            attrs["multicast"] = True
    return load.node(T.VOID, loc, operands + coords, attrs)


def _store_build(fc, args, kwargs, loc):
    tmap, coords, src = _names(fc, args, kwargs, ["tmap", "coords", "src"], [], "store", loc)
    tmap = _tensor_map(fc, tmap, "store", loc)
    coords = _coords(fc, coords, tmap, "store", loc)
    src = _shared_array(fc, src, tmap, "source", "store", loc)
    return store.node(T.VOID, loc, [src, tmap] + coords, {"rank": tmap.type.ndim})


def _commit_build(fc, args, kwargs, loc):
    if args or kwargs:
        fc.fail(loc, "simt.tma.commit_group() takes no arguments")
    return commit_group.node(T.VOID, loc, [])


def _wait_build(fc, args, kwargs, loc):
    n, read = _names(fc, args, kwargs, ["n"], ["read"], "wait_group", loc)
    groups = fc.constant_int(n, "simt.tma.wait_group(n)'s n", loc)
    if not 0 <= groups <= MAX_WAIT_GROUPS:
        fc.fail(loc, f"simt.tma.wait_group(n): n is 0 to {MAX_WAIT_GROUPS}, got {groups}")
    only_read = bool(fc.static(read, "read", loc)) if read is not None else False
    return wait_group.node(T.VOID, loc, [], {"n": groups, "read": only_read})


def _copy_build(fc, args, kwargs, loc):
    dst, src, nbytes, bar = _names(fc, args, kwargs, ["dst", "src", "nbytes", "barrier"], [],
                                   "copy", loc)
    dst = _shared_array(fc, dst, None, "destination", "copy", loc)
    src = fc.expr(src, loc)
    if not isinstance(src.type, T.Array) or src.type.space != "global":
        fc.fail(loc, f"simt.tma.copy: the source must be a global array, got {src.type}")
    size = fc.expr(nbytes, loc)
    if not isinstance(size.type, T.Scalar) or size.type.kind not in "iu":
        fc.fail(loc, f"simt.tma.copy: nbytes is an integer, got {size.type}")
    if isinstance(size, ir.Const) and (int(size.value) <= 0 or int(size.value) % 16):
        fc.fail(loc, f"simt.tma.copy: nbytes must be a positive multiple of 16, got "
                f"{size.value}")
    storage = _barrier(fc, bar, "copy", loc)
    return copy.node(T.VOID, loc, [dst, src, fc.cast(size, T.INT32, loc), storage])


load = Intrinsic(
    "tma.load", "simt.tma.load(dst, tmap, coords, barrier, multicast=0): copy the box of the "
    "tensor map tmap whose first element is at coords (NumPy axis order) into the shared "
    "array dst (its dtype; 128-byte aligned, 1024 with a 128B swizzle), swizzled as the map "
    "says, out-of-bounds elements filled (zero, or NaN). The bytes complete the barrier's "
    "current phase: declare them first with barrier.arrive_expect_tx(nbytes) or "
    "expect_tx. multicast: a mask of the cluster's blocks that all receive the box (and "
    "the bytes on their barrier at the same offset). GPU: "
    "cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes.",
    _load_build, python_name="simt.tma.load", writes=True)
store = Intrinsic(
    "tma.store", "simt.tma.store(tmap, coords, src): copy the shared array src (laid out as "
    "tma.load leaves it) to the box of tmap at coords; out-of-bounds elements are not "
    "written. Make the block's writes to src visible first (syncthreads()), then close the "
    "group with simt.tma.commit_group() and wait for it with simt.tma.wait_group(0) before "
    "src is written again. GPU: cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group "
    "(after fence.proxy.async.shared::cta).", _store_build, python_name="simt.tma.store")
commit_group = Intrinsic(
    "tma.commit_group", "simt.tma.commit_group(): close the group of this thread's "
    "simt.tma.store calls (cp.async.bulk.commit_group).", _commit_build,
    python_name="simt.tma.commit_group")
wait_group = Intrinsic(
    "tma.wait_group", "simt.tma.wait_group(n, read=False): wait until at most n (a constant, "
    "0 to 63) of this thread's store groups are pending (cp.async.bulk.wait_group n); "
    "read=True waits only until their sources have been read, so that the shared arrays "
    "may be written again (wait_group.read).", _wait_build,
    python_name="simt.tma.wait_group")
copy = Intrinsic(
    "tma.copy", "simt.tma.copy(dst, src, nbytes, barrier): a bulk copy of nbytes (a multiple "
    "of 16; both addresses 16-byte aligned) from the global array src to the shared array "
    "dst, completing as transaction bytes of the barrier's current phase (declare them "
    "with arrive_expect_tx). GPU: "
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.", _copy_build,
    python_name="simt.tma.copy", writes=True)
