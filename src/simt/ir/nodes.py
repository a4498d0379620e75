"""simt's typed, structured IR.

A kernel is a Function whose body is a list of statements; control flow is
structured (If, While, ForRange), never gotos, so the CPU back end can split
bodies at barriers and every node keeps the Python line it came from.
Pure Python: this module imports neither llvmlite nor any driver.
"""
import ast
from dataclasses import dataclass, field
from typing import Any, Optional

import simt.ir.types as T


@dataclass
class Loc:
    """A place in the user's source."""
    filename: str
    line: int
    col: int = 0
    end_col: int = 0
    function: str = "?"

    def __str__(self):
        return f"{self.filename}:{self.line}"


# ---------------------------------------------------------------- expressions

@dataclass(eq=False)
class Expr:
    type: T.Type
    loc: Optional[Loc]

    @property
    def src(self):
        """The expression's Python text as ``ast.unparse`` writes it (for labels and
        error messages; "" for an expression the front end did not take from source).
        Written when first read: unparsing each node as it was built was a third of the
        front end's time on long kernels (bench/compile_time.py)."""
        found = self.__dict__.get("_src")
        if found is None or isinstance(found, str):
            return found or ""
        self._src = ast.unparse(found)
        return self._src

    def set_source(self, node):
        """Take ``src`` from the Python ``ast`` node ``node`` (kept until asked for)."""
        self._src = node


@dataclass(eq=False)
class Const(Expr):
    """A compile-time constant of a scalar type."""
    value: Any


@dataclass(eq=False)
class Var(Expr):
    """Read a local variable."""
    name: str


@dataclass(eq=False)
class CheckedVar(Expr):
    """Read ``var`` once ``assigned``, the bool variable that says whether this thread
    assigned it, holds; else stop the launch with a report of an unassigned read (checked
    mode only: ir/assigned.py makes these)."""
    var: Var
    assigned: Var


@dataclass(eq=False)
class Param(Expr):
    """Read kernel/device-function parameter ``index`` (a value, never assigned)."""
    index: int


@dataclass(eq=False)
class Cast(Expr):
    """Convert a scalar to ``type`` (float to int saturates, NaN gives 0). ``explicit``:
    the user's own conversion (``np.int32(v)``), which the narrowing check leaves alone."""
    value: Expr
    explicit: bool = False


@dataclass(eq=False)
class BinOp(Expr):
    """Arithmetic on two operands already of the result type (shifts: rhs may differ).
    ops: add sub mul truediv floordiv mod pow lshift rshift and or xor min max."""
    op: str
    lhs: Expr
    rhs: Expr


@dataclass(eq=False)
class UnaryOp(Expr):
    """neg, invert (bitwise not), not (logical)."""
    op: str
    value: Expr


@dataclass(eq=False)
class Compare(Expr):
    """Comparison of two operands of one type; result bool. ops: eq ne lt le gt ge."""
    op: str
    lhs: Expr
    rhs: Expr


@dataclass(eq=False)
class Logical(Expr):
    """Short-circuit ``and``/``or`` of bools."""
    op: str
    lhs: Expr
    rhs: Expr


@dataclass(eq=False)
class IfExp(Expr):
    """``a if cond else b``: evaluates only the chosen side."""
    cond: Expr
    then: Expr
    orelse: Expr


@dataclass(eq=False)
class ArrayRef(Expr):
    """A statically bound array: shared, local or constant memory, or a module-level symbol."""
    decl: Any


@dataclass(eq=False)
class Load(Expr):
    """Element ``array[indices]`` (one index per dimension)."""
    array: Expr
    indices: list[Expr]
    label: str = ""     # the array as the user wrote it, for error reports


@dataclass(eq=False)
class View(Expr):
    """``array[i]`` with fewer indices than dimensions, or slices: a view."""
    array: Expr
    indices: list       # Expr for an index, (start, stop, step) Exprs-or-None for a slice
    label: str = ""


@dataclass(eq=False)
class ArrayAttr(Expr):
    """``array.shape[dim]`` or ``array.strides[dim]`` (int64), or ``data`` (dim 0): the
    address of element 0 (uint64; cuda.jit's ``a.ctypes.data``)."""
    array: Expr
    attr: str
    dim: int


@dataclass(eq=False)
class TupleExpr(Expr):
    """A tuple built from ``items``."""
    items: list[Expr]


@dataclass(eq=False)
class TupleGet(Expr):
    """Item ``index`` (a constant) of a tuple."""
    tuple: Expr
    index: int


@dataclass(eq=False)
class Field(Expr):
    """Field ``name`` of a record: a scalar or record value, or for a fixed-size array
    field a C-ordered view of it (of the record's own memory when ``record`` is in memory,
    a Load or a Field of one; else of a copy)."""
    record: Expr
    name: str


@dataclass(eq=False)
class MakeRecord(Expr):
    """A record from ``items``: per field in the dtype's order one value, or one per
    element (C order) of an array field; padding bytes are zero."""
    items: list[Expr]


@dataclass(eq=False)
class Replace(Expr):
    """The record ``record`` with field ``name`` (``index``: element ``index`` of that
    array field) set to ``value``; ``r.x = v`` on a variable assigns it back to ``r``."""
    record: Expr
    name: str
    value: Expr
    index: list[Expr] = field(default_factory=list)


@dataclass(eq=False)
class Intrinsic(Expr):
    """A call of a registry intrinsic; ``entry`` (lang/registry.py) holds its lowerings."""
    op: str
    args: list[Expr]
    attrs: dict = field(default_factory=dict)
    entry: Any = None


@dataclass(eq=False)
class CallDevice(Expr):
    """A call of a device function; with ``extern`` (lang/linking.py) set, a call of that
    external device code on a target that links it, ``function`` its fallback elsewhere."""
    function: Any            # Function
    args: list[Expr]
    extern: Any = None


# ----------------------------------------------------------------- statements

@dataclass(eq=False)
class Stmt:
    loc: Optional[Loc]


@dataclass(eq=False)
class Assign(Stmt):
    """``name = value`` (a local variable)."""
    name: str
    value: Expr


@dataclass(eq=False)
class Store(Stmt):
    """``array[indices] = value`` (one index per dimension)."""
    array: Expr
    indices: list[Expr]
    value: Expr
    label: str = ""


@dataclass(eq=False)
class StoreField(Stmt):
    """``place.name = value`` for a record in memory: ``place`` is a Load of a record, or
    a Field of one; only the field's bytes are written. A vector in memory (``place`` of
    a vector type) has its component ``name`` written alone."""
    place: Expr
    name: str
    value: Expr


@dataclass(eq=False)
class ExprStmt(Stmt):
    """An expression evaluated for its effect (an atomic, a device function call)."""
    value: Expr


@dataclass(eq=False)
class If(Stmt):
    """Run ``then`` when ``cond`` (a bool) holds, else ``orelse``."""
    cond: Expr
    then: list[Stmt]
    orelse: list[Stmt]


@dataclass(eq=False)
class While(Stmt):
    """Run ``body`` while ``cond`` (a bool) holds."""
    cond: Expr
    body: list[Stmt]


@dataclass(eq=False)
class ForRange(Stmt):
    """``for var in range(start, stop, step)``; start/stop/step are evaluated once.
    ``unroll``: simt.unroll's request: None (the target decides), 0 (unroll fully) or a
    factor (1: never unroll)."""
    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: list[Stmt]
    unroll: Optional[int] = None


@dataclass(eq=False)
class Break(Stmt):
    """Leave the innermost loop."""


@dataclass(eq=False)
class Continue(Stmt):
    """Go on with the innermost loop's next iteration."""


@dataclass(eq=False)
class Return(Stmt):
    """Leave the function (a kernel: this thread), with ``value`` for a device function."""
    value: Optional[Expr]


@dataclass(eq=False)
class Barrier(Stmt):
    """A block-wide barrier (syncthreads); ``tile`` n > 0: a barrier of the n threads of
    this thread's tile of n (cg.tiled_partition, n >= 64) only. ``cpu_only``: a point where
    the CPU device's thread loops must meet (an arrive/wait barrier's wait), nothing on a GPU.
    ``named``: ``[id]`` or ``[id, count]`` (int32) of a named barrier (simt.barrier_sync):
    on a GPU ``bar.sync id{, count}``; elsewhere a block barrier, the count checked before."""
    tile: int = 0
    cpu_only: bool = False
    named: list = field(default_factory=list)


@dataclass(eq=False)
class Collective(Stmt):
    """``name = op(value)`` over every thread of the block, a barrier too
    (syncthreads_count/_and/_or)."""
    name: str
    op: str
    value: Expr
    type: T.Type


@dataclass(eq=False)
class WarpOp(Stmt):
    """``name = op(args)`` over the lanes of this thread's warp (lang/warp.py lists the
    ops: shfl.*, vote.*, match.*, reduce.*, activemask, syncwarp; exchange: the operands
    the next call of lang/mma.py reads from the other lanes, nothing on a GPU); a warp-scope
    barrier. ``name`` is None for syncwarp and exchange."""
    name: Optional[str]
    op: str
    args: list[Expr]
    type: T.Type


@dataclass(eq=False)
class GridSync(Stmt):
    """``cg.this_grid().sync()``: a barrier over every thread of a cooperative launch;
    ``scope`` 'cluster': ``cg.this_cluster().sync()``, over the threads of the cluster;
    'cluster.arrive' and 'cluster.wait': its two halves (``barrier_arrive()`` counts the
    thread as arrived, ``barrier_wait()`` waits for the cluster's threads to arrive)."""
    scope: str = "grid"


@dataclass(eq=False)
class Print(Stmt):
    """One line of output: ``format`` is a C printf format with %lld / %g / %s."""
    format: str
    args: list[Expr]


@dataclass(eq=False)
class Assert(Stmt):
    """Stop the kernel with ``message`` (an error at the next synchronization) unless ``cond``."""
    cond: Expr
    message: str


@dataclass(eq=False)
class WarpGather(Stmt):
    """CPU device: the end of a thread loop at warp operation ``op``: store this thread's
    operands and ticket in per-thread slots (backends/cpu/warp.py)."""
    op: WarpOp


@dataclass(eq=False)
class WarpResult(Stmt):
    """CPU device: the start of the next thread loop: compute this thread's result of
    ``op`` from its warp's slots."""
    op: WarpOp


# --------------------------------------------------------------- declarations

MAX_ALIGN = 4096   # the largest alignment= of a shared or local array (where the CPU's shared
                   # memory and per-thread slots start)


@dataclass(eq=False)
class MemoryDecl:
    """A statically allocated array: shared, local, const (baked) or a module symbol."""
    name: str
    space: str               # 'shared', 'dynamic_shared', 'local', 'const', 'symbol'
    shape: tuple
    dtype: Any
    data: Any = None         # const: the NumPy values baked in; symbol: the simt.Constant/Global
    symbol: str = ""         # symbol: the global name it is reached by
    align: int = 16          # shared, local: the byte alignment of its start (alignment=,
                             # wgmma's swizzled tiles)
    numba: bool = False      # declared in cuda.jit code: its storage has numba's LLVM name

    @property
    def type(self):
        layout = "C"
        space = {"dynamic_shared": "shared", "symbol": "global"}.get(self.space, self.space)
        if self.space == "symbol" and getattr(self.data, "readonly", False):
            space = "const"
        return T.Array(self.dtype, len(self.shape), layout, space)


class Reads(dict):
    """The global and closure names a function read, with their values: Python objects
    outside the IR (modules among them), so copies of the IR share them."""

    def __deepcopy__(self, memo):
        return self


@dataclass(eq=False)
class Function:
    """A typed kernel or device function."""
    name: str
    params: list             # [(name, Type)]
    return_type: T.Type
    body: list
    locals: dict             # name -> Type
    decls: list              # MemoryDecl
    is_kernel: bool
    loc: Loc
    callees: list = field(default_factory=list)
    array_names: list = field(default_factory=list)   # names of arrays, for error reports
    uses_barrier: bool = False
    reads: Reads = field(default_factory=Reads)       # its dependencies (runtime/cache.py)
    launches: list = field(default_factory=list)      # kernels it may launch (family.py)
    inline: "str | None" = None     # a device function's @simt.device(inline=...): 'always',
    #                                 'never', or None (the target's choice: inlined)


def walk_stmts(body):
    """Every statement in ``body``, nested ones included, depth first."""
    for stmt in body:
        yield stmt
        for child in child_bodies(stmt):
            yield from walk_stmts(child)


def child_bodies(stmt):
    if isinstance(stmt, If):
        return [stmt.then, stmt.orelse]
    if isinstance(stmt, (While, ForRange)):
        return [stmt.body]
    return []


def contains_barrier(stmt):
    """Whether a statement is or holds a block-wide barrier or collective."""
    return any(isinstance(s, (Barrier, Collective, WarpOp, GridSync)) for s in walk_stmts([stmt]))
