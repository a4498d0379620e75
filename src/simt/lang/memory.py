"""Memory spaces kernels may declare: shared, local and constant arrays, and the
storage of module-level symbols (``__constant__`` / ``__device__`` / ``__managed__``), whose
host-side classes, ``simt.Constant``, ``simt.Global`` and ``simt.Managed``, are in
runtime/symbols.py."""
import numpy as np

from ..ir import nodes as ir
from .registry import Intrinsic, Namespace, Static


def _shape_dtype(fc, args, kwargs, loc, what):
    shape = fc.static(args[0] if args else kwargs.get("shape"), f"the shape of {what}", loc)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if not all(isinstance(n, (int, np.integer)) and n > 0 for n in shape):
        fc.fail(loc, f"the shape of {what} must be positive integers, got {shape}",
                "use module-level constants or literals for array sizes")
    dtype = fc.static_dtype(args[1] if len(args) > 1 else kwargs.get("dtype"), loc)
    return tuple(int(n) for n in shape), dtype


LOCAL_MEMORY_LIMIT = 512 * 1024   # bytes of local memory a thread may have (CUDA's limit)


def local_bytes(decl):
    """The bytes of one declared array."""
    return int(np.prod(decl.shape)) * np.dtype(decl.dtype).itemsize


def _keywords(fc, kwargs, space, loc):
    """Refuse keywords other than shape, dtype and alignment; return the alignment asked
    for (CUDA's ``__align__(N)``, numba's ``alignment=N``), None when none is."""
    for name in kwargs:
        if name not in ("shape", "dtype", "alignment"):
            fc.fail(loc, f"simt.{space}.array() has no keyword '{name}'",
                    "pass shape, dtype and alignment only")
    value = kwargs.get("alignment")
    if value is None or (isinstance(value, Static) and value.value is None):
        return None
    value = value.value if isinstance(value, Static) else None
    fix = f"pass a power of two from 1 to {ir.MAX_ALIGN} as a literal or module constant"
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        got = "" if value is None else f", got {value!r}"
        fc.fail(loc, f"{space}.array(alignment=...): the alignment must be a constant "
                f"integer{got}", fix)
    if value <= 0 or value & (value - 1) or value > ir.MAX_ALIGN:
        fc.fail(loc, f"{space}.array(alignment={value}): the alignment must be a power of two "
                f"from 1 to {ir.MAX_ALIGN}", fix)
    return int(value)


def _numba_dynamic(fc, args, kwargs, space):
    """numba's ``cuda.shared.array(0, dtype)``: the dynamic shared array (cuda.jit only)."""
    if space != "shared" or not fc.wraparound:
        return False
    shape = args[0] if args else kwargs.get("shape")
    return isinstance(shape, Static) and shape.value in (0, (0,))


def _array_builder(space):
    def build(fc, args, kwargs, loc):
        alignment = _keywords(fc, kwargs, space, loc)
        if _numba_dynamic(fc, args, kwargs, space):
            if (alignment or 1) > ir.MemoryDecl.align:
                fc.fail(loc, f"shared.array(0, alignment={alignment}): the dynamic shared "
                        f"array starts at a {ir.MemoryDecl.align}-byte boundary; a larger "
                        "alignment is not supported", "drop the keyword, or declare the "
                        "array with a fixed shape")
            return _dynamic_build(fc, args[1:], {k: v for k, v in kwargs.items()
                                                 if k == "dtype"}, loc)
        shape, dtype = _shape_dtype(fc, args, kwargs, loc, f"a {space} array")
        decl = ir.MemoryDecl(fc.pending_name(), space, shape, dtype,
                             align=max(ir.MemoryDecl.align, alignment or 1),
                             numba=fc.wraparound)
        if space == "local" and local_bytes(decl) > LOCAL_MEMORY_LIMIT:
            fc.fail(loc, f"this simt.local.array takes {local_bytes(decl)} bytes per thread; "
                    f"CUDA allows {LOCAL_MEMORY_LIMIT // 1024} KB of local memory per thread",
                    "use a global array (one slice per thread) or shared memory")
        return ir.ArrayRef(decl.type, loc, decl)
    return build


def _dynamic_build(fc, args, kwargs, loc):
    dtype = fc.static_dtype(args[0] if args else kwargs.get("dtype"), loc)
    decl = ir.MemoryDecl(fc.pending_name(), "dynamic_shared", (0,), dtype)
    return ir.ArrayRef(decl.type, loc, decl)


def _array_like_build(fc, args, kwargs, loc):
    host = fc.static(args[0] if args else None, "the host array of simt.const.array_like", loc)
    host = np.ascontiguousarray(host)
    decl = ir.MemoryDecl(fc.pending_name(), "const", host.shape, host.dtype, data=host.copy())
    return ir.ArrayRef(decl.type, loc, decl)


_ARRAY = (ir.ArrayRef,)    # declared memory: the code generator places each MemoryDecl
shared = Namespace(
    "simt.shared", "Shared memory: one array per block, visible to all its threads.",
    array=Intrinsic("shared.array", "simt.shared.array(shape, dtype, alignment=None): a __shared__ "
                    "array of a compile-time shape, uninitialized, one per block; alignment: "
                    "its start's byte alignment (__align__(N)), a power of two up to 4096 "
                    "(default 16).", _array_builder("shared"),
                    lowered_as=_ARRAY),
    dynamic=Intrinsic("shared.dynamic", "simt.shared.dynamic(dtype): the extern __shared__ array "
                      "sized by the launch's shared_bytes (shared_bytes // itemsize elements).",
                      _dynamic_build, lowered_as=_ARRAY))

local = Namespace(
    "simt.local", "Per-thread local arrays.",
    array=Intrinsic("local.array", "simt.local.array(shape, dtype, alignment=None): a per-thread "
                    "array of a compile-time shape, uninitialized; alignment as "
                    "simt.shared.array's.", _array_builder("local"),
                    lowered_as=_ARRAY))

const = Namespace(
    "simt.const", "Constant memory baked into the kernel.",
    array_like=Intrinsic("const.array_like", "simt.const.array_like(host_array): a read-only "
                         "__constant__ copy of a module-level NumPy array, baked in at compile "
                         "time (its contents are part of the cache key).", _array_like_build,
                         lowered_as=_ARRAY))


class _Symbol:
    """A module-level device array reached by kernels through its global name."""

    readonly = False        # Constant: kernels read it from constant memory
    managed = False         # Managed: unified memory on a GPU, the host reads it in place

    def __init__(self, shape, dtype):
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.host = np.zeros(self.shape, self.dtype)      # the CPU device's storage
        self.placements = {}                              # device name -> device-side handle

    @property
    def nbytes(self):
        return self.host.nbytes

    def copy_from(self, host_array, stream=None):
        """cudaMemcpyToSymbol: new contents on every device that holds the symbol."""
        if hasattr(host_array, "dtype") and np.dtype(host_array.dtype) != self.dtype:
            raise TypeError(f"copy_from: cannot copy {host_array.dtype} data into a "
                            f"{self.dtype} symbol; copies do not convert. Convert first: "
                            f".astype(np.{self.dtype})")
        values = np.asarray(host_array, dtype=self.dtype)
        if values.shape != self.shape:
            raise ValueError(f"copy_from: expected shape {self.shape}, got {values.shape}")
        self.host[...] = values
        for handle in self.placements.values():
            handle.write(self.host, stream)

