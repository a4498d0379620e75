"""The group types of cooperative groups (lang/cg.py): thread blocks, tiles, coalesced
groups and the grid, as compile-time values whose methods build IR when called."""
import functools

from ..ir import nodes as ir
from ..ir import types as T
from .indices import blockDim, blockIdx, gridDim, threadIdx
from .vectors import DIM3, make_entry
from .mathlib import math_ns
from .registry import Intrinsic, Static
from .warp import laneid, shuffle_value, warp_op

fns = Intrinsic("fns", "fns(mask, n): the position of the n-th set bit of mask, or -1 (PTX fns); "
                "built by coalesced groups.", public=False)


class Method:
    """A method of a group, bound to it; called in kernels only."""

    kernel_callable = True

    def __init__(self, group, name, build):
        self.group, self.name, self.builder = group, name, build
        self.python_name = f"{type(group).__name__}.{name}"

    def build(self, fc, args, kwargs, loc):
        if kwargs:
            fc.fail(loc, f"{self.python_name}() takes positional arguments only")
        return self.builder(fc, list(args), loc)

    def __call__(self, *args):
        raise RuntimeError(f"{self.python_name}() can only be called inside a kernel")


class Group:
    """Base of the group types; ``compile_time`` lets the front end bind it to a name."""

    compile_time = True
    methods = ()
    by_kind = {}      # method -> the builder that takes its name as a first argument

    def signature(self):
        """What code using this group depends on (device functions are typed per group)."""
        return (type(self).__name__,)

    def __getattr__(self, name):
        if name in type(self).methods:
            handler = type(self).by_kind.get(name)
            if handler is not None:
                return Method(self, name, functools.partial(getattr(self, handler), name))
            return Method(self, name, getattr(self, "_" + name))
        raise AttributeError(f"{type(self).__name__} has no method '{name}' in kernels "
                             f"(it has: {', '.join(type(self).methods)})")


def _bin(op, a, b, loc, t=T.INT32):
    return ir.BinOp(t, loc, op, a, b)


def _const(value, t=T.INT32, loc=None):
    return ir.Const(t, loc, value)


def flat_rank(fc, loc):
    """threadIdx as one int32 rank: x + y * bx + z * bx * by."""
    zy = _bin("add", _bin("mul", threadIdx.read("z", loc), blockDim.read("y", loc), loc),
              threadIdx.read("y", loc), loc)
    return _bin("add", _bin("mul", zy, blockDim.read("x", loc), loc),
                threadIdx.read("x", loc), loc)


def block_size(fc, loc):
    return _bin("mul", _bin("mul", blockDim.read("x", loc), blockDim.read("y", loc), loc),
                blockDim.read("z", loc), loc)


def _dim3(fc, special, loc):
    """A dim3 of int32 components (.x .y .z, or unpacked as a tuple), as threadIdx's are."""
    return make_entry.node(DIM3, loc, [special.read(axis, loc) for axis in "xyz"])


def _no_args(fc, args, name, loc):
    if args:
        fc.fail(loc, f"{name}() takes no arguments")


class ThreadBlock(Group):
    """cg.this_thread_block(): the threads of this block."""

    methods = ("sync", "thread_rank", "size", "num_threads", "group_index", "thread_index",
               "group_dim")

    def _sync(self, fc, args, loc):
        _no_args(fc, args, "thread_block.sync", loc)
        return ir.Barrier(loc)

    def _thread_rank(self, fc, args, loc):
        return flat_rank(fc, loc)

    def _size(self, fc, args, loc):
        return block_size(fc, loc)

    _num_threads = _size

    def _group_index(self, fc, args, loc):
        return _dim3(fc, blockIdx, loc)

    def _thread_index(self, fc, args, loc):
        return _dim3(fc, threadIdx, loc)

    def _group_dim(self, fc, args, loc):
        return _dim3(fc, blockDim, loc)

    def lanes(self):
        return None


class Tile(Group):
    """cg.tiled_partition(parent, n): n consecutive lanes of a warp (n a power of 2, at most
    the warp size: 32 on NVIDIA GPUs)."""

    methods = ("sync", "thread_rank", "size", "num_threads", "meta_group_rank",
               "meta_group_size", "shfl", "shfl_up", "shfl_down", "shfl_xor", "any", "all",
               "ballot", "match_any", "match_all")
    by_kind = {"shfl": "_shuffle", "shfl_up": "_shuffle", "shfl_down": "_shuffle",
               "shfl_xor": "_shuffle", "any": "_vote", "all": "_vote", "ballot": "_vote"}

    def __init__(self, parent, n):
        self.parent, self.n = parent, n

    def signature(self):
        return ("Tile", self.n, self.parent.signature())

    def size_value(self, loc):
        """The tile's size as an int32 expression (a run-time tile's is a variable)."""
        return _const(self.n, T.INT32, loc)

    def low_bits(self, loc):
        """n - 1: a lane's rank in its tile is ``lane & (n - 1)``."""
        return _const(self.n - 1, T.INT32, loc)

    def lane_bits(self, fc, loc):
        """n one bits at the bottom of the warp's mask type."""
        return _const((1 << self.n) - 1, fc.warp().mask, loc)

    def mask(self, fc, loc):
        """The lane mask (the warp's mask type) of this thread's tile."""
        warp = fc.warp()
        if self.n == warp.size:
            return _const(warp.full_mask, warp.mask, loc)
        first = ir.Cast(warp.mask, loc, self.first_lane(fc, loc))
        return _bin("lshift", self.lane_bits(fc, loc), first, loc, warp.mask)

    def first_lane(self, fc, loc):
        lane = laneid.node(T.INT32, loc, [])
        return _bin("and", lane, ir.UnaryOp(T.INT32, loc, "invert", self.low_bits(loc)), loc)

    def _sync(self, fc, args, loc):
        _no_args(fc, args, "tile.sync", loc)
        return ir.WarpOp(loc, None, "syncwarp", [self.mask(fc, loc)], T.VOID)

    def _thread_rank(self, fc, args, loc):
        return _bin("and", laneid.node(T.INT32, loc, []), self.low_bits(loc), loc)

    def _size(self, fc, args, loc):
        return self.size_value(loc)

    _num_threads = _size

    def _meta_group_rank(self, fc, args, loc):
        return meta_group_rank(fc, self.parent, self.size_value(loc), loc)

    def _meta_group_size(self, fc, args, loc):
        return meta_group_size(fc, self.parent, self.size_value(loc), loc)

    def _shuffle(self, kind, fc, args, loc):
        if len(args) != 2:
            fc.fail(loc, f"tile.{kind}(value, {'src_rank' if kind == 'shfl' else 'delta'}) "
                    "takes two arguments")
        from .warp import int32_arg
        v = shuffle_value(fc, args[0], f"tile.{kind}", loc)
        op = {"shfl": "idx", "shfl_up": "up", "shfl_down": "down", "shfl_xor": "bfly"}[kind]
        operands = [self.mask(fc, loc), v, int32_arg(fc, args[1], loc), self.size_value(loc)]
        return warp_op(fc, "shfl." + op, operands, v.type, loc)

    def _vote(self, kind, fc, args, loc):
        if len(args) != 1:
            fc.fail(loc, f"tile.{kind}(predicate) takes one argument")
        p = fc.truth(fc.expr(args[0], loc), loc)
        result = fc.warp().mask if kind == "ballot" else T.INT32
        value = warp_op(fc, "vote." + kind, [self.mask(fc, loc), p], result, loc)
        return self.relative(fc, value, loc) if kind == "ballot" else value

    def relative(self, fc, lanes_mask, loc):
        """A warp lane mask as tile ranks: bit r for the tile's rank r (as CUDA's tiles give)."""
        warp = fc.warp()
        if self.n == warp.size:
            return lanes_mask
        first = ir.Cast(warp.mask, loc, self.first_lane(fc, loc))
        return _bin("rshift", lanes_mask, first, loc, warp.mask)

    def _match_any(self, fc, args, loc):
        v = shuffle_value(fc, fc.one_arg(args, "tile.match_any", loc), "tile.match_any", loc)
        value = warp_op(fc, "match.any", [self.mask(fc, loc), v], fc.warp().mask, loc)
        return self.relative(fc, value, loc)

    def _match_all(self, fc, args, loc):
        v = shuffle_value(fc, fc.one_arg(args, "tile.match_all", loc), "tile.match_all", loc)
        mask_type = fc.warp().mask
        pair = warp_op(fc, "match.all", [self.mask(fc, loc), v],
                       T.Tuple([mask_type, T.INT32]), loc)
        mask = self.relative(fc, ir.TupleGet(mask_type, loc, pair, 0), loc)
        return ir.TupleExpr(pair.type, loc, [mask, ir.TupleGet(T.INT32, loc, pair, 1)])

    def lanes(self):
        return self.n


def meta_group_rank(fc, parent, n, loc):
    """The index of a tile of n (an int32 expression) among its parent's tiles."""
    if isinstance(parent, Tile):
        inside = _bin("and", laneid.node(T.INT32, loc, []), parent.low_bits(loc), loc)
    elif isinstance(parent, ThreadBlock):
        inside = flat_rank(fc, loc)
    else:                                                   # a tile of more than a warp
        inside = _bin("and", flat_rank(fc, loc), _const(parent.n - 1), loc)
    return _bin("floordiv", inside, n, loc)


def meta_group_size(fc, parent, n, loc):
    """How many tiles of n (an int32 expression) the parent holds."""
    if isinstance(parent, ThreadBlock):
        return _bin("floordiv", _bin("add", block_size(fc, loc), _bin("sub", n, _const(1), loc),
                                     loc), n, loc)
    return _bin("floordiv", parent.size_value(loc) if isinstance(parent, Tile) else
                _const(parent.n), n, loc)


class Coalesced(Group):
    """cg.coalesced_threads(): the lanes of this warp that run this call together."""

    methods = ("sync", "thread_rank", "size", "num_threads", "meta_group_rank",
               "meta_group_size", "shfl", "shfl_up", "shfl_down", "any", "all", "ballot",
               "match_any", "match_all")
    by_kind = {"shfl": "_shuffle", "shfl_up": "_shuffle", "shfl_down": "_shuffle"}

    hidden_parts = ("mask_var",)      # passed to device functions as a value: group_args.py

    def __init__(self, mask_var):
        self.mask_var = mask_var

    def mask(self, fc, loc):
        return ir.Var(fc.warp().mask, loc, self.mask_var)

    def _sync(self, fc, args, loc):
        return ir.WarpOp(loc, None, "syncwarp", [self.mask(fc, loc)], T.VOID)

    def _popc(self, value, loc):
        return math_ns.popc.node(T.INT32, loc, [value])

    def _thread_rank(self, fc, args, loc):
        mask_type = fc.warp().mask
        lane = ir.Cast(mask_type, loc, laneid.node(T.INT32, loc, []))
        below = _bin("sub", _bin("lshift", _const(1, mask_type), lane, loc, mask_type),
                     _const(1, mask_type), loc, mask_type)
        return self._popc(_bin("and", self.mask(fc, loc), below, loc, mask_type), loc)

    def _size(self, fc, args, loc):
        return self._popc(self.mask(fc, loc), loc)

    _num_threads = _size

    def _meta_group_rank(self, fc, args, loc):
        return _const(0, T.INT32, loc)

    def _meta_group_size(self, fc, args, loc):
        return _const(1, T.INT32, loc)

    def _lane_of(self, fc, rank, loc):
        """The lane of a rank, or -1 (out of range)."""
        return fns.node(T.INT32, loc, [self.mask(fc, loc), ir.Cast(T.UINT32, loc, rank)])

    def _shuffle(self, kind, fc, args, loc):
        from .warp import int32_arg
        if len(args) != 2:
            fc.fail(loc, f"group.{kind}(value, n) takes two arguments")
        v = shuffle_value(fc, args[0], f"group.{kind}", loc)
        n = int32_arg(fc, args[1], loc)
        rank = self._thread_rank(fc, [], loc)
        source = {"shfl": lambda: n, "shfl_up": lambda: _bin("sub", rank, n, loc),
                  "shfl_down": lambda: _bin("add", rank, n, loc)}[kind]()
        lane = self._lane_of(fc, source, loc)
        own = laneid.node(T.INT32, loc, [])
        valid = ir.Logical(T.BOOL, loc, "and", ir.Compare(T.BOOL, loc, "ge", source, _const(0)),
                           ir.Compare(T.BOOL, loc, "ge", lane, _const(0)))
        lane = ir.IfExp(T.INT32, loc, valid, lane, own)
        return warp_op(fc, "shfl.idx", [self.mask(fc, loc), v, lane, _const(fc.warp().size)],
                       v.type, loc)

    def _any(self, fc, args, loc):
        p = fc.truth(fc.expr(fc.one_arg(args, "group.any", loc), loc), loc)
        return warp_op(fc, "vote.any", [self.mask(fc, loc), p], T.INT32, loc)

    def _all(self, fc, args, loc):
        p = fc.truth(fc.expr(fc.one_arg(args, "group.all", loc), loc), loc)
        return warp_op(fc, "vote.all", [self.mask(fc, loc), p], T.INT32, loc)

    def rank_bit(self, fc, loc):
        """A lane mask (the warp's mask type) with bit ``thread_rank()`` set."""
        mask_type = fc.warp().mask
        rank = ir.Cast(mask_type, loc, self._thread_rank(fc, [], loc))
        return _bin("lshift", _const(1, mask_type), rank, loc, mask_type)

    def packed(self, fc, mask, loc):
        """The members named in the warp lane mask ``mask`` (a subset of the group that
        every lane of ``mask`` holds) as group ranks: bit r for rank r, as CUDA's
        coalesced_group packs its ballots. An or-reduction of each lane's rank bit over
        ``mask`` does it in one warp operation."""
        mask_type = fc.warp().mask
        return warp_op(fc, "reduce.or", [mask, self.rank_bit(fc, loc)], mask_type, loc)

    def _ballot(self, fc, args, loc):
        p = fc.truth(fc.expr(fc.one_arg(args, "group.ballot", loc), loc), loc)
        mask_type = fc.warp().mask
        bit = ir.IfExp(mask_type, loc, p, self.rank_bit(fc, loc), _const(0, mask_type, loc))
        return warp_op(fc, "reduce.or", [self.mask(fc, loc), bit], mask_type, loc)

    def _match_any(self, fc, args, loc):
        v = shuffle_value(fc, fc.one_arg(args, "group.match_any", loc), "group.match_any", loc)
        lanes = warp_op(fc, "match.any", [self.mask(fc, loc), v], fc.warp().mask, loc)
        return self.packed(fc, lanes, loc)

    def _match_all(self, fc, args, loc):
        v = shuffle_value(fc, fc.one_arg(args, "group.match_all", loc), "group.match_all", loc)
        warp = fc.warp()
        pair = warp_op(fc, "match.all", [self.mask(fc, loc), v],
                       T.Tuple([warp.mask, T.INT32]), loc)
        pred = ir.TupleGet(T.INT32, loc, pair, 1)
        # every member matched: the packed mask is ranks 0 .. size - 1
        unused = ir.Cast(warp.mask, loc, _bin("sub", _const(warp.size), self._size(fc, [], loc),
                                              loc))
        everyone = _bin("rshift", _const(warp.full_mask, warp.mask), unused, loc, warp.mask)
        matched = ir.Compare(T.BOOL, loc, "ne", pred, _const(0))
        mask = ir.IfExp(warp.mask, loc, matched, everyone, _const(0, warp.mask, loc))
        return ir.TupleExpr(pair.type, loc, [mask, pred])

    def lanes(self):
        return None


class Grid(Group):
    """cg.this_grid(): every thread of the launch; sync() needs kernel.launch_cooperative."""

    methods = ("sync", "thread_rank", "size", "num_threads", "group_dim")

    def _sync(self, fc, args, loc):
        _no_args(fc, args, "grid.sync", loc)
        return ir.GridSync(loc)

    def _block_rank(self, fc, loc):
        zy = _bin("add", _bin("mul", blockIdx.read("z", loc), gridDim.read("y", loc), loc),
                  blockIdx.read("y", loc), loc)
        return _bin("add", _bin("mul", zy, gridDim.read("x", loc), loc),
                    blockIdx.read("x", loc), loc)

    def _thread_rank(self, fc, args, loc):
        return _bin("add", _bin("mul", self._block_rank(fc, loc), block_size(fc, loc), loc),
                    flat_rank(fc, loc), loc)

    def _size(self, fc, args, loc):
        blocks = _bin("mul", _bin("mul", gridDim.read("x", loc), gridDim.read("y", loc),
                                  loc), gridDim.read("z", loc), loc)
        return _bin("mul", blocks, block_size(fc, loc), loc)

    _num_threads = _size

    def _group_dim(self, fc, args, loc):
        return _dim3(fc, gridDim, loc)


# ------------------------------------------------------------------ free functions
def _group_arg(fc, value, what, loc, kinds=(Group,)):
    if not (isinstance(value, Static) and isinstance(value.value, kinds)):
        names = " or ".join(k.__name__ for k in kinds)
        fc.fail(loc, f"{what} needs a group ({names}) here",
                "bind it first: block = cg.this_thread_block(); tile = cg.tiled_partition(block, 32)")
    return value.value


def _static(value):
    return Static(value)
