"""Tiles larger than a warp: ``cg.tiled_partition(parent, n)`` for n = 64 ... 1024, as
CUDA 12's cooperative groups allow (the CUDA samples' multi-warp reduction uses them).

A tile of n threads is n / 32 whole warps of consecutive linear thread indices. What CUDA
offers on such a tile, and so simt: ``sync``, ``thread_rank``, ``size`` / ``num_threads``,
``meta_group_rank``, ``meta_group_size``, ``any``, ``all``, ``shfl`` (every member passing
the same source rank), ``cg.reduce``, ``cg.sync``, ``cg.memcpy_async`` and partitioning it
into smaller tiles. ``shfl_up``, ``shfl_down``, ``shfl_xor``, ``ballot``, ``match_any`` and
``match_all`` are for tiles of at most 32 threads in CUDA, and are CompileErrors here.

``sync`` is an ``ir.Barrier`` over the tile (``tile=n``): on the GPU a named barrier
(``barrier.sync id, n`` with id 1 + the tile's index in the block; the GPU has ids 1 to 15
besides syncthreads' 0), on the CPU device a cut between thread loops like syncthreads'.
Collectives go through a shared scratch array of one slot per warp: each warp's lane 0
stores its warp's part, the tile syncs, every member combines its tile's slots in warp
order (so every member gets the same value), and the tile syncs again before the scratch
is reused.
"""
from ..ir import nodes as ir
from ..ir import types as T
from .groups import Group, ThreadBlock, _bin, _const, block_size, flat_rank
from .warp import laneid, shuffle_value, warp_op

NAMED_BARRIERS = 15       # barrier ids 1 to 15 on the GPU (0 is syncthreads')
WARP_ONLY = ("shfl_up", "shfl_down", "shfl_xor", "ballot", "match_any", "match_all")


class BlockTile(Group):
    """cg.tiled_partition(parent, n), n = 64 ... 1024: n consecutive threads (n/32 warps)."""

    methods = ("sync", "thread_rank", "size", "num_threads", "meta_group_rank",
               "meta_group_size", "shfl", "any", "all") + WARP_ONLY
    by_kind = dict.fromkeys(WARP_ONLY, "_warp_only") | {"any": "_vote", "all": "_vote"}

    def __init__(self, parent, n):
        self.parent, self.n = parent, n

    def signature(self):
        return ("BlockTile", self.n, self.parent.signature())

    def lanes(self):
        return None

    # ------------------------------------------------------------ ranks and sizes
    def _thread_rank(self, fc, args, loc):
        return _bin("and", flat_rank(fc, loc), _const(self.n - 1), loc)

    def _size(self, fc, args, loc):
        return _const(self.n, T.INT32, loc)

    _num_threads = _size

    def _meta_group_rank(self, fc, args, loc):
        inside = flat_rank(fc, loc)
        if not isinstance(self.parent, ThreadBlock):
            inside = _bin("and", inside, _const(self.parent.n - 1), loc)
        return _bin("floordiv", inside, _const(self.n), loc)

    def _meta_group_size(self, fc, args, loc):
        if not isinstance(self.parent, ThreadBlock):
            return _const(self.parent.n // self.n, T.INT32, loc)
        return _bin("floordiv", _bin("add", block_size(fc, loc), _const(self.n - 1), loc),
                    _const(self.n), loc)

    def index_in_block(self, fc, loc):
        """This tile's index among the block's tiles of n threads."""
        return _bin("floordiv", flat_rank(fc, loc), _const(self.n), loc)

    # ------------------------------------------------------------ sync and collectives
    def _sync(self, fc, args, loc):
        if args:
            fc.fail(loc, "tile.sync() takes no arguments")
        if self.n * (NAMED_BARRIERS + 1) <= 1024:       # a block may hold 16 such tiles
            fits = ir.Compare(T.BOOL, loc, "lt", self.index_in_block(fc, loc),
                              _const(NAMED_BARRIERS))
            fc.hoist(ir.Assert(loc, fits, f"a block of more than {NAMED_BARRIERS * self.n} "
                               f"threads has more than {NAMED_BARRIERS} tiles of {self.n}, "
                               f"and the GPU has {NAMED_BARRIERS} barriers for them: use "
                               f"tiles of {2 * self.n} or smaller blocks"))
        return ir.Barrier(loc, tile=self.n)

    def _warp_only(self, kind, fc, args, loc):
        size = fc.warp().size
        fc.fail(loc, f"tile.{kind}() is only available on tiles of at most {size} threads (as "
                f"in CUDA's thread_block_tile); this tile has {self.n}",
                f"partition it into warps first: warp = cg.tiled_partition(tile, {size})")

    def across_warps(self, fc, warp_value, combine, loc):
        """Each warp's ``warp_value`` (the same in all its lanes) combined over the warps
        of this tile, in warp order, returned to every member."""
        t = warp_value.type
        size = fc.warp().size
        scratch = fc.shared_scratch(t.dtype, 1024 // size, loc)
        warp = _bin("floordiv", flat_rank(fc, loc), _const(size), loc)
        lane0 = ir.Compare(T.BOOL, loc, "eq", laneid.node(T.INT32, loc, []), _const(0))
        fc.hoist(ir.If(loc, lane0, [ir.Store(loc, scratch, [fc.index(warp, loc)], warp_value)],
                       []))
        fc.hoist(self._sync(fc, [], loc))
        first = _bin("mul", self.index_in_block(fc, loc), _const(self.n // size), loc)
        name = fc.temp("tile")
        fc.hoist(*fc.bind_name(name, self._slot(fc, scratch, first, 0, loc), loc))
        for k in range(1, self.n // size):
            total = combine(ir.Var(t, loc, name), self._slot(fc, scratch, first, k, loc))
            fc.hoist(*fc.bind_name(name, total, loc))
        fc.hoist(self._sync(fc, [], loc))
        return ir.Var(t, loc, name)

    def _slot(self, fc, scratch, first, k, loc):
        index = fc.index(_bin("add", first, _const(k), loc), loc)
        return ir.Load(scratch.type.element, loc, scratch, [index], "tile scratch")

    def _vote(self, kind, fc, args, loc):
        p = fc.truth(fc.expr(fc.one_arg(args, f"tile.{kind}", loc), loc), loc)
        facts = fc.warp()
        mask = _const(facts.full_mask, facts.mask, loc)
        warp = warp_op(fc, "vote." + kind, [mask, p], T.INT32, loc)
        op = "and" if kind == "all" else "or"
        return self.across_warps(fc, warp, lambda a, b: _bin(op, a, b, loc), loc)

    def _shfl(self, fc, args, loc):
        if len(args) != 2:
            fc.fail(loc, "tile.shfl(value, src_rank) takes two arguments")
        v = shuffle_value(fc, args[0], "tile.shfl", loc)
        source = fc.cast(fc.expr(args[1], loc), T.INT32, loc)
        scratch = fc.shared_scratch(v.type.dtype, 1024 // self.n, loc)
        slot = fc.index(self.index_in_block(fc, loc), loc)
        mine = ir.Compare(T.BOOL, loc, "eq", self._thread_rank(fc, [], loc), source)
        fc.hoist(ir.If(loc, mine, [ir.Store(loc, scratch, [slot], v)], []))
        fc.hoist(self._sync(fc, [], loc))
        name = fc.temp("tile")
        fc.hoist(*fc.bind_name(name, ir.Load(v.type, loc, scratch, [slot], "tile scratch"),
                               loc))
        fc.hoist(self._sync(fc, [], loc))
        return ir.Var(v.type, loc, name)
