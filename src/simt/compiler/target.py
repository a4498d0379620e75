"""What code generation asks of a device: ``Target``, the one interface both
back ends fill in.

A target is mostly data (address spaces, math-library names, fence scopes, the
texture handle's type) plus the few lowerings that truly
differ between devices. The bookkeeping every target needs is written here once:
the memory layout of a kernel's shared arrays and symbols, the tables that turn
a fault record into a message (array labels, source files, assert messages),
device calls, printf and faults up to the device-specific step.

Codegen (codegen.py, intrinsics.py) calls only the methods declared here. A hook
a target must provide raises NotImplementedError naming the target and the hook;
an optional one has a working default.
"""
import numpy as np
from llvmlite import ir as ll

import simt.fault as fault
from ..ir import callgraph
from ..ir import types as T
from ..lang import bfloat16
from .lltypes import (I64, ArrayValue, const_global, cstring, function, i32, i64, ptr,
                      scalar, static_array)

SPACES = ("global", "shared", "const", "local", "generic", "copy")   # copy: compiler/records.py
# the fault record's last words: where the failing thread is
FAULT_IDS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")


class Target:
    """One device's facts and lowerings, and the bookkeeping of one kernel's compile."""

    name = "?"
    addrspaces = dict.fromkeys(SPACES, 0)   # memory space -> LLVM address space
    math_functions = frozenset()            # math.* names the device's library has
    math_prefix = ""                        # ... under this prefix, with "f" for float32
    fast_math_functions = {}                # fast.* name -> function (else: the math.* one)
    fence_scopes = {}                       # fence scope -> LLVM sync scope (absent: system)
    texture_lltype = I64                    # a texture/surface value (a GPU handle)
    tensor_map_lltype = I64                 # a tensor map value (the GPU: its param address)
    math_aliases = {}                       # math.* name -> the library's name for it
    warp = T.WARP32                         # warp size and lane-mask type (ir/types.Warp)

    def __init__(self, kernel, options):
        self.kernel = kernel
        self.options = options
        self.functions = {}            # id(ir.Function) -> ll.Function
        self.symbols = []              # MemoryDecl of module-level Constant/Global arrays
        self.shared_offsets = {}       # id(MemoryDecl) -> byte offset in static shared memory
        self.shared_static_bytes = 0
        self.uses_dynamic_shared = False
        self.can_fail = False          # has bounds checks or asserts: the runtime checks the record
        self.labels = []               # array names as written, by id, for fault reports
        self.files = []                # (function, filename), by id
        self.messages = []             # assert messages, by id
        self.lines = None              # lineinfo.LineTables when the back end makes line tables
        # ids of the functions on call cycles (compiler/recursion.py)
        self.recursive = callgraph.recursive(kernel) if kernel is not None else frozenset()

    def _missing(self, hook):
        return NotImplementedError(f"the {self.name} target has no lowering for {hook}")

    # ---------------------------------------------------------------- layout
    def addrspace(self, space):
        return self.addrspaces[space]

    def layout_memory(self, functions):
        """Place the static shared arrays of ``functions`` (16-byte aligned, or their
        ``align``) and collect the module-level symbols they use, each once."""
        offset = 0
        for fn in functions:
            for decl in fn.decls:
                if decl.space == "shared" and id(decl) in self.shared_offsets:
                    continue                   # a caller's, named here too (a barrier's)
                if decl.space == "shared":
                    offset = (offset + decl.align - 1) // decl.align * decl.align
                    self.shared_offsets[id(decl)] = offset
                    offset += int(np.prod(decl.shape)) * decl.dtype.itemsize
                elif decl.space == "dynamic_shared":
                    self.uses_dynamic_shared = True
                elif decl.space == "symbol" and all(d.data is not decl.data for d in self.symbols):
                    self.symbols.append(decl)
        self.shared_static_bytes = (offset + 15) // 16 * 16

    def symbol_index(self, decl):
        return next(i for i, d in enumerate(self.symbols) if d.data is decl.data)

    # ---------------------------------------------------------------- fault reports
    def label_id(self, label):
        if label not in self.labels:
            self.labels.append(label)
        return self.labels.index(label)

    def file_id(self, fn, loc=None):
        # code inlined from a device function (ir/inline.py) is reported under that function
        inlined = loc is not None and loc.function != "?"
        key = (loc.function, loc.filename) if inlined else (fn.name, fn.loc.filename)
        if key not in self.files:
            self.files.append(key)
        return self.files.index(key)

    def message_id(self, message):
        self.messages.append(message)
        return fault.message_id(len(self.messages) - 1)

    def emit_error(self, em, code, loc, array=0, dim=0, index=None, extent=None, message=""):
        """Fill the launch's fault record (simt/fault.py) unless a thread did first, and
        end this thread. An assert's message id goes in the ``array`` and ``dim`` words
        (``fault.decode`` reads ``dim``)."""
        self.can_fail = True
        if message:
            array = dim = self.message_id(message)
        words = [i64(loc.line), i64(array), i64(dim), index if index is not None else i64(0),
                 extent if extent is not None else i64(0), i64(self.file_id(em.function, loc))]
        self.record_fault(em, code, words)

    def record_fault(self, em, code, words):
        """Write ``code``, ``words`` (line, array, dim, index, extent, file: i64) and the
        ``FAULT_IDS`` registers into the record if it is still empty; end the thread."""
        raise self._missing("record_fault")

    # ---------------------------------------------------------------- memory
    def declare_memory(self, em, decl):
        """The ArrayValue of a kernel's shared, local, const or module-level array."""
        if decl.space == "local":
            return em.local_array(decl)
        if decl.space == "const":
            return static_array(decl, const_global(em.module, decl, self.addrspace("const")))
        if decl.space == "shared":
            return static_array(decl, self.shared_data(em, decl))
        if decl.space == "dynamic_shared":
            data, nbytes = self.dynamic_shared_data(em)
            count = em.builder.udiv(nbytes, i64(decl.dtype.itemsize))
            return ArrayValue(decl.type, data, [count], [i64(1)])
        return static_array(decl, self.symbol_data(em, decl))

    def shared_data(self, em, decl):
        """Pointer to a static shared array (its offset: ``shared_offsets``)."""
        raise self._missing("shared_data")

    def dynamic_shared_data(self, em):
        """(pointer, size in bytes as i64) of the launch's dynamic shared memory."""
        raise self._missing("dynamic_shared_data")

    def symbol_data(self, em, decl):
        """Pointer to the memory of a module-level Constant or Global."""
        raise self._missing("symbol_data")

    def ordering(self, order, scope):
        """LLVM's text for a memory order (relaxed ... seq_cst) at a scope ('block',
        'device', 'system'): the target's sync scope, if it has one, then the ordering."""
        syncscope = self.fence_scopes.get(scope)
        ordering = "monotonic" if order == "relaxed" else order
        return f'syncscope("{syncscope}") {ordering}' if syncscope else ordering

    def atomic_rmw(self, em, op, address, value, t, scope="device", order="relaxed"):
        """LLVM atomicrmw ``op`` (add, fadd, umin, uinc_wrap ...); returns the old value."""
        return em.builder.atomic_rmw(op, address, value, self.ordering(order, scope))

    def atomic_cas(self, em, address, cmp, new, scope="device", order="relaxed"):
        """Integer compare-and-swap; returns the old value."""
        failure = {"relaxed": "monotonic", "release": "monotonic", "acq_rel": "acquire"}
        pair = em.builder.cmpxchg(address, cmp, new, self.ordering(order, scope),
                                  failure.get(order, order))
        return em.builder.extract_value(pair, 0)

    def check_access(self, em, array, indices, address, access, label, loc, order="relaxed",
                     site=None, scope="device"):
        """Checked mode: check one access ("read", "write", "atomic" ...) of ``array``;
        ``order``, ``scope``: an atomic's memory order and scope; ``site``: the Load or
        Store node, if any."""
        raise self._missing("check_access")

    def emit_fence(self, em, scope):
        em.builder.fence("seq_cst", self.fence_scopes.get(scope))

    def heap_malloc(self, em, nbytes):
        """A pointer (in the global address space) to ``nbytes`` (i64) bytes of the device
        heap, or null when it has no room."""
        raise self._missing("heap_malloc")

    def heap_free(self, em, data, loc):
        """Return ``data`` (a pointer heap_malloc gave, or null) to the device heap."""
        raise self._missing("heap_free")

    # ---------------------------------------------------------------- values
    def special(self, em, op):
        """threadIdx.x ... gridDim.z (i32)."""
        raise self._missing("special")

    def laneid(self, em):
        raise self._missing("laneid")

    def math_call(self, em, name, t, args, ret=None, outs=()):
        """Library function ``name`` of float type ``t`` (mathlower.py has the LLVM
        intrinsics): ``ret`` its LLVM result type (default: ``t``'s), ``outs`` the types of
        what it returns through pointers (sincos, frexp); then the result is the list
        [returned value, *outputs]."""
        if name not in self.math_functions:
            raise NotImplementedError(f"math function {name} on the {self.name} target")
        if t.dtype.itemsize == 2:       # no half versions in libm or libdevice: use float32's
            wide = [bfloat16.to_float(em.builder, a, t) if a.type == args[0].type else a
                    for a in args]
            return bfloat16.from_float(em.builder, self.math_call(em, name, T.FLOAT32, wide), t)
        suffix = "f" if t.dtype == np.float32 else ""
        fname = self.math_prefix + self.math_aliases.get(name, name) + suffix
        return call_with_outputs(em, fname, args, ret or scalar(t), outs)

    def fast_math(self, em, name, args):
        """A fast approximate float32 function (``fast.*`` entries, fastmath=True), or None
        where the device has none: the caller then uses the accurate one."""
        fname = self.fast_math_functions.get(name)
        if fname is None:
            return None
        if name == "sincos":
            return struct_of(em.builder, call_with_outputs(em, fname, args, ll.VoidType(),
                                                         [args[0].type] * 2)[1:])
        return _call(em, fname, args)

    def texture_op(self, em, e):
        raise self._missing("texture_op")

    # ---------------------------------------------------------------- statements
    def emit_print(self, em, fmt, values, types):
        """printf: the format string and a buffer of 64-bit slots, one per value (a
        double as its bits)."""
        b = em.builder
        text = self.string_constant(em, fmt)
        buf = em.alloca(ll.ArrayType(I64, max(1, len(values))), name="print_args")
        for i, v in enumerate(values):
            slot = b.gep(buf, [i32(0), i32(i)], source_etype=buf.allocated_type)
            b.store(b.bitcast(v, I64) if v.type == ll.DoubleType() else v, slot)
        self.call_print(em, text, buf, len(values))

    def string_constant(self, em, text):
        """A generic pointer to ``text``, NUL-terminated, in constant global memory."""
        data = cstring(em.module, text, self.addrspace("global"))
        return em.builder.addrspacecast(data, ptr()) if self.addrspace("global") else data

    def call_print(self, em, text, buf, count):
        """Call the device's printf with the format and the buffer of ``count`` values."""
        raise self._missing("call_print")

    def call_device(self, em, function, args):
        """A call of a device function: arrays go as structs, and come back so."""
        fn = em.device_function(function)
        b = em.builder
        packed = [a.pack(b, self) if isinstance(a, ArrayValue) else a for a in args]
        result = self.device_call(em, fn, packed, function)
        if isinstance(function.return_type, T.Array):
            return ArrayValue.unpack(b, function.return_type, result)
        return result if not isinstance(function.return_type, T.Void) else None

    # whether calls of external device code (simt.declare_device) go to the external
    # symbol, linked in (call_extern); a target that links none runs their fallbacks
    links_device_code = False

    def call_extern(self, em, extern, args):
        """A call of the external device function ``extern`` (lang/linking.py)."""
        raise self._missing("call_extern")

    def device_call(self, em, fn, args, function):
        return em.builder.call(fn, args)

    def emit_return(self, em, value):
        if value is None:
            em.builder.ret_void()
            return
        if isinstance(value, ArrayValue):
            value = value.pack(em.builder, self)
        em.builder.ret(value)

    def emit_trap(self, em, loc):
        """simt.trap(): record where, and end the launch with an error."""
        self.emit_error(em, fault.TRAP, loc)

    # an fma the typed IR made of a * b + c (compiler/contract.py) is a multiply and an add
    # flagged ``contract``, which the back end must fuse, instead of llvm.fma: NVPTX fuses
    # them into the same fma.rn, and LLVM's loop unroller then costs two instructions
    # rather than a call (mathlower._contracted)
    fma_by_flags = False

    # range loops whose step is known only at run time (grid-stride loops) run on a trip
    # counter computed before the loop, which LLVM can unroll (codegen.stmt_ForRange)
    counted_range_loops = False

    def loop_hint(self, em, stmt, back_edge, start, stop, step):
        """Metadata for the back edge of range loop ``stmt`` (unrolling): none by default."""

    def loop_poll(self, em, stmt):
        """Code run once per trip of loop ``stmt`` that may stop the launch (Ctrl-C on
        the CPU device): none by default."""

    def device_launch(self, em, e, grid, block, shared, values):
        """``child[grid, block, shared](values)`` from a kernel (lang/launches.py): grid
        and block three uint32 each, shared a uint32, values the arguments' LLVM values."""
        raise self._missing("launches inside kernels")

    def emit_barrier(self, em, stmt):
        raise self._missing("emit_barrier")

    def emit_collective(self, em, op, value, loc=None):
        """syncthreads_count/_and/_or (``op``: count, and, or) of ``value`` at ``loc``."""
        raise self._missing("emit_collective")

    def emit_warp(self, em, stmt):
        raise self._missing("emit_warp")

    def emit_grid_sync(self, em, stmt):
        raise self._missing("emit_grid_sync")


def _call(em, fname, args, ret=None):
    fnty = ll.FunctionType(ret or args[0].type, [a.type for a in args])
    return em.builder.call(function(em.module, fname, fnty), args)


def call_with_outputs(em, fname, args, ret=None, outs=()):
    """Call ``fname``; with ``outs``, pass a pointer to a stack slot of each type after the
    arguments and return [result, *what the slots hold]."""
    if not outs:
        return _call(em, fname, args, ret)
    slots = [em.alloca(t) for t in outs]
    result = _call(em, fname, list(args) + slots, ret)
    return [result] + [em.builder.load(s, typ=t) for s, t in zip(slots, outs)]


def struct_of(b, values):
    value = ll.Constant(ll.LiteralStructType([v.type for v in values]), ll.Undefined)
    for i, v in enumerate(values):
        value = b.insert_value(value, v, i)
    return value
