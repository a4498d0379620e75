"""The CUDA target: what differs on NVIDIA GPUs when lowering typed IR to
LLVM IR for LLVM's NVPTX back end.

Address spaces: global 1, shared 3, const 4; local arrays stay generic (0)
allocas, which NVPTX turns into registers or .local memory. Special registers,
barriers and clocks are NVVM intrinsics; math calls go to libdevice
(``__nv_sinf`` ...), linked in by compile.py.
"""
import numpy as np
from llvmlite import ir as ll

import simt.fault as fault
from ...ir import types as T
from ...compiler.lltypes import (I8, I32, I64, ArrayValue, i32, i64, memory, ptr, value_type,
                                 static_array, const_global, cstring)
from . import loops

ADDRSPACE = {"global": 1, "shared": 3, "const": 4, "local": 0, "generic": 0}

SREG = {"threadIdx": "tid", "blockIdx": "ctaid", "blockDim": "ntid", "gridDim": "nctaid"}

LIBDEVICE = {"exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin", "acos",
             "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma",
             "tgamma", "cbrt", "exp2", "exp10", "atan2", "pow", "hypot", "fmod", "fdim",
             "remainder", "copysign", "rsqrt", "sqrt", "fabs", "floor", "ceil", "trunc", "rint",
             "round", "fma", "fmin", "fmax", "sinpi", "cospi", "erfinv", "erfcinv", "rcbrt",
             "logb", "j0", "j1", "y0", "y1", "nearbyint"}

FAST = {"exp": "__nv_fast_expf", "exp10": "__nv_fast_exp10f", "log": "__nv_fast_logf",
        "log2": "__nv_fast_log2f", "log10": "__nv_fast_log10f", "sin": "__nv_fast_sinf",
        "cos": "__nv_fast_cosf", "tan": "__nv_fast_tanf", "pow": "__nv_fast_powf",
        "div": "__nv_fast_fdividef"}

FENCE_SCOPE = {"block": "block", "device": "device", "system": None}
COLLECTIVE = {"count": "llvm.nvvm.barrier0.popc", "and": "llvm.nvvm.barrier0.and",
              "or": "llvm.nvvm.barrier0.or"}


class CudaTarget:
    """Per-target facts and lowerings for NVIDIA GPUs (NVPTX)."""

    name = "cuda"
    has_rsqrt = True

    def __init__(self, kernel, options):
        self.kernel = kernel
        self.options = options
        self.symbols = []              # MemoryDecl of module-level Constant/Global arrays
        self.shared_static_bytes = 0
        self.uses_dynamic_shared = False
        self.functions = {}            # id(ir.Function) -> ll.Function
        self.labels = []               # array names as written, for error reports
        self.messages = []             # assert messages, by id
        self.files = []                # (function, filename), by id
        self.can_fail = False          # has bounds checks or asserts: the runtime checks the record

    def addrspace(self, space):
        return ADDRSPACE[space]

    # ---------------------------------------------------------------- layout
    def layout_memory(self, functions):
        total = 0
        for fn in functions:
            for decl in fn.decls:
                if decl.space == "shared":
                    total = (total + 15) // 16 * 16 + int(np.prod(decl.shape)) * decl.dtype.itemsize
                elif decl.space == "dynamic_shared":
                    self.uses_dynamic_shared = True
                elif decl.space == "symbol" and all(d.data is not decl.data for d in self.symbols):
                    self.symbols.append(decl)
        self.shared_static_bytes = (total + 15) // 16 * 16

    def symbol_global(self, decl):
        """Module global of a Constant (its contents) or a Global (a pointer to its memory);
        the runtime fills both in after loading the module."""
        index = next(i for i, d in enumerate(self.symbols) if d.data is decl.data)
        return f"simt_symbol_{index}"

    def symbol_table(self):
        """[(Python name, module global, 'array' or 'pointer')] for the runtime."""
        return [(d.symbol, f"simt_symbol_{i}",
                 "array" if getattr(d.data, "readonly", False) else "pointer")
                for i, d in enumerate(self.symbols)]

    # ---------------------------------------------------------------- lowering hooks
    def special(self, em, op):
        kind, axis = op.split(".")
        name = f"llvm.nvvm.read.ptx.sreg.{SREG[kind]}.{axis}"
        fn = em.module.globals.get(name) or ll.Function(em.module, ll.FunctionType(I32, []), name)
        return em.builder.call(fn, [])

    def declare_memory(self, em, decl):
        module, b = em.module, em.builder
        if decl.space == "shared":
            gv = _global(module, f"simt_shared_{decl.name}_{id(decl):x}", decl, 3)
            gv.linkage = "internal"
            gv.initializer = ll.Constant(gv.value_type, ll.Undefined)
            return static_array(decl, gv)
        if decl.space == "dynamic_shared":
            name = "simt_dynamic_shared"
            gv = module.globals.get(name)
            if gv is None:
                gv = ll.GlobalVariable(module, ll.ArrayType(I8, 0), name, addrspace=3)
                gv.linkage = "external"
                gv.align = 16
            size = b.call(ll.InlineAsm(ll.FunctionType(I32, []), "mov.u32 $0, %dynamic_smem_size;",
                                       "=r", side_effect=False), [])
            count = b.udiv(b.zext(size, I64), i64(decl.dtype.itemsize))
            data = ll.FormattedConstant(ptr(3), gv.get_reference())
            return ArrayValue(decl.type, data, [count], [i64(1)])
        if decl.space == "local":
            count = int(np.prod(decl.shape))
            data = em.alloca(ll.ArrayType(memory(T.Scalar(decl.dtype)), count), name=decl.name)
            return static_array(decl, data)
        if decl.space == "const":
            return static_array(decl, const_global(module, decl, 4))
        name = self.symbol_global(decl)
        gv = module.globals.get(name)
        if getattr(decl.data, "readonly", False):     # Constant: the array itself, in const space
            if gv is None:
                gv = _global(module, name, decl, 4)
                gv.initializer = ll.Constant(gv.value_type, None)   # written after loading
            return static_array(decl, gv)
        if gv is None:                                # Global: a pointer to one device allocation
            gv = ll.GlobalVariable(module, ptr(1), name, addrspace=4)
            gv.initializer = ll.Constant(ptr(1), None)
            gv.align = 8
        return static_array(decl, b.load(gv, typ=ptr(1)))

    def math_call(self, em, name, t, args):
        if name not in LIBDEVICE:
            raise NotImplementedError(f"math function {name} on the GPU")
        fname = f"__nv_{name}{'f' if t.dtype == np.float32 else ''}"
        return _call(em, fname, args[0].type, args)

    def fast_math(self, em, name, args):
        return _call(em, FAST[name], args[0].type, args)

    def atomic_rmw(self, em, op, address, value, t):
        return em.builder.atomic_rmw(op, address, value, "monotonic")

    def emit_fence(self, em, scope):
        em.builder.fence("seq_cst", FENCE_SCOPE.get(scope))

    def texture_op(self, em, e):
        from .texlower import texture_op
        return texture_op(em, e)

    def emit_print(self, em, fmt, values, types):
        b = em.builder
        fmt_ptr = b.addrspacecast(cstring(em.module, fmt, 1), ptr())
        buf = em.alloca(ll.ArrayType(I64, max(1, len(values))), name="printf_args")
        for i, v in enumerate(values):
            slot = b.gep(buf, [i32(0), i32(i)], source_etype=buf.allocated_type)
            b.store(b.bitcast(v, I64) if v.type == ll.DoubleType() else v, slot)
        fnty = ll.FunctionType(I32, [ptr(), ptr()])
        fn = em.module.globals.get("vprintf") or ll.Function(em.module, fnty, "vprintf")
        b.call(fn, [fmt_ptr, buf])

    def emit_error(self, em, code, loc, array=0, dim=0, index=None, extent=None, message=""):
        """Record the first error of a launch in host-mapped memory (readable even when
        the context is in trouble) and end this thread with PTX ``exit``: the device stays
        usable and the runtime raises the error at the next synchronizing call."""
        b = em.builder
        self.can_fail = True
        if message:
            self.messages.append(message)
            array = dim = fault.message_id(len(self.messages) - 1)
        gv = em.module.globals.get("simt_error_record")
        if gv is None:
            gv = ll.GlobalVariable(em.module, ptr(1), "simt_error_record", addrspace=4)
            gv.initializer = ll.Constant(ptr(1), None)
            gv.align = 8
        record = b.load(gv, typ=ptr(1))
        pair = b.cmpxchg(record, i64(0), i64(code), "monotonic", "monotonic")
        first, done = em.new_block("error_first"), em.new_block("error_exit")
        b.cbranch(b.extract_value(pair, 1), first, done)
        b.position_at_end(first)
        ids = [b.zext(self.special(em, f"{k}.{a}"), I64) for k in ("blockIdx", "threadIdx")
               for a in "xyz"]
        words = [i64(loc.line), i64(array), i64(dim), index if index is not None else i64(0),
                 extent if extent is not None else i64(0), i64(self.file_id(em.function))] + ids
        for i, w in enumerate(words):
            b.store(w, b.gep(record, [i64(i + 1)], source_etype=I64))
        b.fence("seq_cst")
        b.branch(done)
        b.position_at_end(done)
        b.call(ll.InlineAsm(ll.FunctionType(ll.VoidType(), []), "exit;", "", side_effect=True), [])
        b.unreachable()

    def file_id(self, fn):
        key = (fn.name, fn.loc.filename)
        if key not in self.files:
            self.files.append(key)
        return self.files.index(key)

    def emit_return(self, em, value):
        if value is None:
            em.builder.ret_void()
            return
        if isinstance(value, ArrayValue):
            value = value.pack(em.builder, self)
        em.builder.ret(value)

    def loop_hint(self, em, stmt, back_edge, start, stop, step):
        loops.loop_hint(em, stmt, back_edge, start, stop, step)

    def emit_barrier(self, em, stmt):
        name = "llvm.nvvm.barrier0"
        fn = em.module.globals.get(name) or ll.Function(em.module, ll.FunctionType(ll.VoidType(), []), name)
        em.builder.call(fn, [])

    def emit_collective(self, em, op, value):
        name = COLLECTIVE[op]
        fn = em.module.globals.get(name) or ll.Function(em.module, ll.FunctionType(I32, [I32]), name)
        result = em.builder.call(fn, [em.builder.zext(value, I32)])
        if op != "count":
            result = em.builder.zext(em.builder.icmp_unsigned("!=", result, i32(0)), I32)
        return result

    def emit_warp(self, em, stmt):
        from .warp import emit_warp
        return emit_warp(em, stmt)

    def emit_grid_sync(self, em, stmt):
        from .warp import emit_grid_sync
        emit_grid_sync(em)

    def laneid(self, em):
        from .warp import laneid
        return laneid(em)

    def call_device(self, em, function, args):
        fn = em.device_function(function)
        b = em.builder
        packed = [a.pack(b, self) if isinstance(a, ArrayValue) else a for a in args]
        result = b.call(fn, packed)
        if isinstance(function.return_type, T.Array):
            return ArrayValue.unpack(b, function.return_type, result)
        return result if not isinstance(function.return_type, T.Void) else None


def _call(em, fname, ret, args):
    fn = em.module.globals.get(fname)
    if fn is None:
        fn = ll.Function(em.module, ll.FunctionType(ret, [a.type for a in args]), fname)
    return em.builder.call(fn, args)


def _global(module, name, decl, addrspace):
    elem = memory(T.Scalar(decl.dtype))
    gv = ll.GlobalVariable(module, ll.ArrayType(elem, int(np.prod(decl.shape))), name,
                           addrspace=addrspace)
    gv.align = 16
    return gv
