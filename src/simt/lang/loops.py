"""``simt.unroll``: CUDA's ``#pragma unroll`` (guide B.33) as a wrapper of a loop's range.

``for i in simt.unroll(range(n), factor=None)`` asks for the loop to be unrolled: fully
(``factor=None`` on a trip count known at compile time; on bounds known only at run time
it asks nothing, as nvcc's pragma) or ``factor`` times (``factor=1``: never). The front
end (compiler/unroll.py) records the request on the ``ir.ForRange``; codegen turns it
into LLVM loop metadata on both devices (compiler/loopmeta.py). docs/kernel-options.md is
the user's page.
"""
from ..ir import nodes as ir
from .registry import Intrinsic

FULL = 0                  # ir.ForRange.unroll for factor=None
MAX_FULL_TRIPS = 4096     # a full unroll of more trips than this is refused (code size)
MAX_FACTOR = 1024


def _outside_for(fc, args, kwargs, loc):
    fc.fail(loc, "simt.unroll(...) is only valid as the iterable of a for loop",
            "write: for i in simt.unroll(range(n)): ...")


unroll = Intrinsic(
    "unroll", "for i in simt.unroll(range(...), factor=None): #pragma unroll. factor=None "
    "unrolls the loop fully when its trip count is known at compile time; with bounds "
    "known only at run time it is the plain loop, unrolled as the target unrolls any loop "
    "(nvcc: 'not unrolled at all'); an int factor unrolls it that many times (factor=1: "
    "never), with a remainder loop when the trip count is not a multiple. A hint to LLVM on "
    "both devices; "
    "only valid as a for loop's iterable.", _outside_for, lowered_as=(ir.ForRange,))
