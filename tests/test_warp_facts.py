"""Warp width and lane-mask type are target data (ir/types.Warp): the front end types a
kernel for the facts it is given, so a 64-wide device with uint64 masks is a new ``Warp``
on its target, with no change to lang/. The real devices all report NVIDIA's 32 lanes."""
import types

import numpy as np
import pytest

import simt
from simt import cg
from simt.compiler import pipeline
from simt.errors import CompileError
from simt.ir import nodes as ir
from simt.ir import types as T
from simt.ir.walk import all_functions, walk

WIDE = T.Warp(64, T.UINT64)
ARRAYS = (T.Array(np.dtype(np.int32), 1, "C"), T.Array(np.dtype(np.uint64), 1, "C"))


def collectives(a, out):
    i = simt.threadIdx.x
    out[0] = simt.warpSize
    out[1] = simt.ballot_sync(simt.activemask(), a[i] > 0)
    out[2] = simt.shfl_sync(0xFFFFFFFF, a[i], 0)
    out[3] = simt.shfl_xor_sync(0xFFFFFFFF, a[i], 1, 64)
    simt.syncwarp()
    tile = cg.tiled_partition(cg.this_thread_block(), 64)
    out[4] = tile.ballot(a[i] > 1)
    out[5] = cg.reduce(tile, a[i], cg.plus)
    out[6] = cg.coalesced_threads().ballot(a[i] > 2)


def warp_ops(fn):
    return [node for f in all_functions(fn) for node in walk(*f.body)
            if isinstance(node, ir.WarpOp)]


def test_a_64_wide_warp_types_masks_as_uint64_and_widths_up_to_64():
    fn = pipeline.typed_ir(collectives, ARRAYS, warp=WIDE)
    ops = warp_ops(fn)
    by_op = {}
    for op in ops:
        by_op.setdefault(op.op, []).append(op)
    assert all(op.args[0].type == T.UINT64 for op in ops if op.op != "activemask")
    assert by_op["activemask"][0].type == T.UINT64
    assert {op.type for op in by_op["vote.ballot"]} == {T.UINT64}
    widths = [op.args[3] for op in by_op["shfl.idx"] + by_op["shfl.bfly"]]
    assert {w.value for w in widths if isinstance(w, ir.Const)} == {64}
    # syncwarp() and the warp-sized tile (a Tile: its ballot is allowed) name all 64 lanes
    every = (T.UINT64, 2**64 - 1)
    (syncwarp,) = by_op["syncwarp"]
    assert (syncwarp.args[0].type, syncwarp.args[0].value) == every
    tile_ballot = by_op["vote.ballot"][1].args[0]
    assert (tile_ballot.type, tile_ballot.value) == every


def test_the_same_kernel_on_a_32_wide_warp_refuses_width_64():
    with pytest.raises(CompileError, match="width must be a power of 2 from 1 to 32, got 64"):
        pipeline.typed_ir(collectives, ARRAYS)


def test_kernel_typed_ir_is_cached_per_warp_facts():
    kernel = simt.kernel(collectives)
    wide = kernel.typed_ir(ARRAYS, WIDE)
    assert kernel.typed_ir(ARRAYS, WIDE) is wide
    assert (tuple(ARRAYS), WIDE) in kernel.ir_cache


def test_warp_size_lowers_to_the_targets_size():
    import simt.backends.cpu.compile, simt.backends.cuda.compile  # noqa: F401 (lowerings)
    from simt.lang.indices import warpSize
    em = types.SimpleNamespace(target=types.SimpleNamespace(warp=WIDE))
    for target in ("cpu", "cuda"):
        assert warpSize.lowering_for(target)(em, None).constant == 64


def test_every_device_reports_32_lanes_and_uint32_masks():
    from simt.backends.cpu.target import CpuTarget
    from simt.backends.cuda.target import CudaTarget
    from simt.runtime.devices import BACKENDS, backend_class
    assert CpuTarget.warp == CudaTarget.warp == T.WARP32 == T.Warp(32, T.UINT32)
    assert T.WARP32.full_mask == 0xFFFFFFFF
    assert all(backend_class(kind).warp == T.WARP32 for kind in BACKENDS)


def test_warp_facts_must_fit_their_mask():
    with pytest.raises(ValueError, match="64 lanes"):
        T.Warp(64, T.UINT32)
    with pytest.raises(ValueError, match="48 lanes"):
        T.Warp(48, T.UINT64)
