"""Thread and block indices: threadIdx, blockIdx, blockDim, gridDim, warpSize, grid();
the compile target: arch()."""
from ..ir import nodes as ir
from ..ir import types as T
from .registry import Intrinsic, Static


def _reader(entry):
    def build(fc, args, kwargs, loc):
        return entry.node(T.INT32, loc, [])
    return build


class Dim3Special:
    """One of CUDA's built-in dim3 variables; ``.x``, ``.y``, ``.z`` are int32."""

    def __init__(self, name, doc):
        self.__name__ = name
        self.__doc__ = doc
        for axis in "xyz":
            entry = Intrinsic(f"{name}.{axis}", f"{doc} ({axis} component, int32)", None,
                              value=True)
            entry.build = _reader(entry)
            setattr(self, axis, entry)

    def read(self, axis, loc):
        """The int32 IR read of one component."""
        return getattr(self, axis).node(T.INT32, loc, [])

    def __repr__(self):
        return f"<simt {self.__name__}>"


threadIdx = Dim3Special("threadIdx", "Index of this thread within its block")
blockIdx = Dim3Special("blockIdx", "Index of this block within the grid")
blockDim = Dim3Special("blockDim", "Threads per block in each dimension")
gridDim = Dim3Special("gridDim", "Blocks in the grid in each dimension")

warpSize = Intrinsic("warpSize", "Threads per warp (32), int32", None, value=True)
warpSize.build = _reader(warpSize)


def _arch(fc, args, kwargs, loc):
    if args or kwargs:
        fc.fail(loc, "simt.arch() takes no arguments")
    return Static(fc.warp().arch, "simt.arch()")


arch = Intrinsic(
    "arch", "simt.arch(): the compute capability the kernel is compiled for, (major, minor), "
    "a compile-time constant (CUDA's __CUDA_ARCH__): (9, 0) for sm_90, the kernel's "
    "arch= option where given, (0, 0) on the cpu and sim devices. `if simt.arch() >= (8, 0):` "
    "compiles one branch only.", _arch, lowered_as=())


def _as64(special, axis, loc):
    return ir.Cast(T.INT64, loc, special.read(axis, loc))


def _global_index(fc, axis, loc):
    block = ir.BinOp(T.INT64, loc, "mul", _as64(blockIdx, axis, loc), _as64(blockDim, axis, loc))
    return ir.BinOp(T.INT64, loc, "add", block, _as64(threadIdx, axis, loc))


def _global_size(fc, axis, loc):
    return ir.BinOp(T.INT64, loc, "mul", _as64(blockDim, axis, loc), _as64(gridDim, axis, loc))


def _grid_builder(one_axis):
    def build(fc, args, kwargs, loc):
        ndim = fc.constant_int(args[0] if args else None, "the number of dimensions", loc)
        if ndim not in (1, 2, 3):
            fc.fail(loc, "simt.grid(ndim) takes 1, 2 or 3", "write simt.grid(1) for a 1D grid")
        items = [one_axis(fc, axis, loc) for axis in "xyz"[:ndim]]
        return items[0] if ndim == 1 else ir.TupleExpr(T.Tuple([T.INT64] * ndim), loc, items)
    return build


grid = Intrinsic("grid", "simt.grid(ndim): this thread's absolute index in the grid, int64 "
                 "(a tuple for ndim 2 or 3): blockIdx * blockDim + threadIdx.",
                 _grid_builder(_global_index), lowered_as=(ir.BinOp, ir.Cast, ir.TupleExpr))
gridsize = Intrinsic("gridsize", "simt.gridsize(ndim): total threads in the grid along each "
                     "dimension, int64: blockDim * gridDim.", _grid_builder(_global_size),
                     lowered_as=(ir.BinOp, ir.Cast, ir.TupleExpr))
