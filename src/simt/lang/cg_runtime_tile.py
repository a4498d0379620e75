"""``cg.tiled_partition(parent, n)`` with n computed at run time (CUDA's
``tiled_partition(parent, n)`` returning a ``thread_group``): n a power of 2 from 1 to 32
(and no larger than the parent tile), checked when the partition is made.

A run-time tile is a ``Tile`` whose size is an int32 variable, not a constant: its mask is
``(full >> (32 - n)) << (lane & ~(n - 1))``, its shuffles pass n as the width, and
``cg.reduce`` and the scans run the butterfly or the up-sweep for every power of 2 below
the warp size, each step kept only where it stays inside the tile (lang/cg.py, cg_scan.py).
Its meta-group rank and size are computed with the partition, so the tile stands on its
own (three variables) when it is passed to a device function (group_args.py).
"""
from ..ir import nodes as ir
from ..ir import types as T
from .groups import Tile, _bin, _const, meta_group_rank, meta_group_size
from .warp import int32_arg


class RuntimeTile(Tile):
    """A tile of n consecutive lanes of a warp, n known at run time."""

    hidden_parts = ("n_var", "rank_var", "count_var")

    def __init__(self, n_var, rank_var, count_var):
        self.parent, self.n = None, None
        self.n_var, self.rank_var, self.count_var = n_var, rank_var, count_var

    def signature(self):
        return ("RuntimeTile",)

    def size_value(self, loc):
        return ir.Var(T.INT32, loc, self.n_var)

    def low_bits(self, loc):
        return _bin("sub", self.size_value(loc), _const(1), loc)

    def lane_bits(self, fc, loc):
        warp = fc.warp()
        unused = ir.Cast(warp.mask, loc, _bin("sub", _const(warp.size), self.size_value(loc),
                                              loc))
        return _bin("rshift", _const(warp.full_mask, warp.mask, loc), unused, loc, warp.mask)

    def _meta_group_rank(self, fc, args, loc):
        return ir.Var(T.INT32, loc, self.rank_var)

    def _meta_group_size(self, fc, args, loc):
        return ir.Var(T.INT32, loc, self.count_var)

    def lanes(self):
        return None


def partition(fc, parent, value, loc):
    """The run-time tile of ``parent`` of size ``value`` (an ir expression), checked."""
    n = fc.temp("tile_n")
    fc.hoist(*fc.bind_name(n, int32_arg(fc, value, loc), loc))
    size = ir.Var(T.INT32, loc, n)
    limit = parent.size_value(loc) if isinstance(parent, Tile) else _const(fc.warp().size)
    power_of_2 = ir.Compare(T.BOOL, loc, "eq", _bin("and", size, _bin("sub", size, _const(1),
                                                                      loc), loc), _const(0))
    in_range = ir.Logical(T.BOOL, loc, "and", ir.Compare(T.BOOL, loc, "ge", size, _const(1)),
                          ir.Compare(T.BOOL, loc, "le", size, limit))
    fc.hoist(ir.Assert(loc, ir.Logical(T.BOOL, loc, "and", in_range, power_of_2),
                       "cg.tiled_partition(parent, n): n must be a power of 2 from 1 to 32 "
                       "and no larger than the parent tile"))
    rank, count = fc.temp("tile_rank"), fc.temp("tile_count")
    fc.hoist(*fc.bind_name(rank, meta_group_rank(fc, parent, size, loc), loc))
    fc.hoist(*fc.bind_name(count, meta_group_size(fc, parent, size, loc), loc))
    return RuntimeTile(n, rank, count)
