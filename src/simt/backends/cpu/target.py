"""The CPU target: a kernel becomes one native function that runs a range of
blocks; each block runs its threads as loops (one loop per barrier-free run
of statements, see regions.py and docs/cpu-device.md)."""
import numpy as np
from llvmlite import ir as ll

import simt.fault as fault
from ...ir import nodes as ir
from ...ir import types as T
from ...compiler.codegen import FunctionEmitter
from ...compiler.lltypes import (I1, I8, I32, I64, ArrayValue, const, i32, i64, memory, ptr,
                                 static_array, const_global, cstring,
                                 scalar, value_type)
from ...ir.regions import Plan
from .textures import TEX_STRUCT, texture_op

# the launch record the runtime passes: [i64 x 8]
LAUNCH_FIELDS = ("gx", "gy", "gz", "bx", "by", "bz", "dyn_shared", "err")
# per-thread context handed to device functions
CTX = ll.LiteralStructType([ll.ArrayType(I32, 12), ptr(), ptr(), I64, ptr()])
SPECIALS = ["threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z",
            "blockDim.x", "blockDim.y", "blockDim.z", "gridDim.x", "gridDim.y", "gridDim.z"]
LIBM = {"exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin", "acos",
        "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma",
        "tgamma", "cbrt", "exp2", "exp10", "atan2", "pow", "hypot", "fmod", "fdim", "remainder",
        "copysign"}


class CpuTarget:
    """Per-target facts and lowerings for the host CPU."""

    name = "cpu"
    has_rsqrt = False
    texture_lltype = TEX_STRUCT          # a texture/surface argument: its descriptor

    def __init__(self, kernel, options):
        self.kernel = kernel
        self.options = options
        self.symbols = []              # MemoryDecl of module-level Constant/Global, hidden args
        self.shared_offsets = {}
        self.shared_static_bytes = 0
        self.functions = {}            # id(ir.Function) -> ll.Function
        self.files = []                # function name + file, for error reports
        self.labels = []               # array names as written, for error reports

    def addrspace(self, space):
        return 0

    # ---------------------------------------------------------------- layout
    def layout_memory(self, functions):
        offset = 0
        for fn in functions:
            for decl in fn.decls:
                if decl.space == "shared":
                    size = int(np.prod(decl.shape)) * decl.dtype.itemsize
                    offset = (offset + 15) // 16 * 16
                    self.shared_offsets[id(decl)] = offset
                    offset += size
                elif decl.space == "symbol" and all(d.data is not decl.data for d in self.symbols):
                    self.symbols.append(decl)
        self.shared_static_bytes = (offset + 15) // 16 * 16

    def symbol_index(self, decl):
        return next(i for i, d in enumerate(self.symbols) if d.data is decl.data)

    def file_id(self, fn, loc=None):
        # code inlined from a device function (inline.py) is reported under that function
        inlined = loc is not None and loc.function != "?"
        key = (loc.function, loc.filename) if inlined else (fn.name, fn.loc.filename)
        if key not in self.files:
            self.files.append(key)
        return self.files.index(key)

    # ---------------------------------------------------------------- lowering hooks
    def special(self, em, op):
        return em.specials[op]

    def declare_memory(self, em, decl):
        b = em.builder
        if decl.space in ("shared", "dynamic_shared"):
            if decl.space == "shared":
                data = b.gep(em.shared_base, [i64(self.shared_offsets[id(decl)])], source_etype=I8)
                return static_array(decl, data)
            data = b.gep(em.shared_base, [i64(self.shared_static_bytes)], source_etype=I8)
            count = b.udiv(em.dyn_shared_bytes, i64(decl.dtype.itemsize))
            return ArrayValue(decl.type, data, [count], [i64(1)])
        if decl.space == "local":
            return em.local_array(decl)
        if decl.space == "const":
            return static_array(decl, const_global(em.module, decl))
        data = em.symbol_pointer(self.symbol_index(decl))
        return static_array(decl, data)

    def math_call(self, em, name, t, args):
        if name not in LIBM:
            raise NotImplementedError(f"math function {name} on the CPU")
        suffix = "f" if t.dtype == np.float32 else ""
        fnty = ll.FunctionType(args[0].type, [a.type for a in args])
        fname = name + suffix
        fn = em.module.globals.get(fname) or ll.Function(em.module, fnty, fname)
        if name == "copysign":
            fn = em.module.declare_intrinsic("llvm.copysign", [args[0].type], fnty)
        return em.builder.call(fn, args)

    def fast_math(self, em, name, args):
        if name == "div":
            return em.builder.fdiv(args[0], args[1])
        return self.math_call(em, name, T.FLOAT32, args)

    def atomic_rmw(self, em, op, address, value, t):
        if em.block_private:
            return _plain_rmw(em, op, address, value)
        return em.builder.atomic_rmw(op, address, value, "monotonic")

    def emit_fence(self, em, scope):
        em.builder.fence("seq_cst")

    def texture_op(self, em, e):
        return texture_op(em, e)

    def emit_print(self, em, fmt, values, types):
        b = em.builder
        fmt_ptr = cstring(em.module, fmt)
        with em.entry_builder.goto_entry_block():
            buf = em.entry_builder.alloca(I64, size=i64(max(1, len(values))), name="print_args")
        for i, v in enumerate(values):
            slot = b.gep(buf, [i64(i)], source_etype=I64)
            b.store(b.bitcast(v, I64) if v.type == ll.DoubleType() else v, slot)
        fnty = ll.FunctionType(ll.VoidType(), [ptr(), ptr(), I64])
        fn = em.module.globals.get("simt_cpu_print") or ll.Function(em.module, fnty, "simt_cpu_print")
        b.call(fn, [fmt_ptr, buf, i64(len(values))])

    def emit_error(self, em, code, loc, array=0, dim=0, index=None, extent=None, message=""):
        b = em.builder
        fail = _fail_function(em.module)
        sp = em.specials
        ids = [sp[n] for n in SPECIALS[3:6] + SPECIALS[0:3]]
        args = [em.err_ptr, i64(code), i64(loc.line), i64(array), i64(dim),
                index if index is not None else i64(0), extent if extent is not None else i64(0),
                i64(self.file_id(em.function, loc))] + ids
        if message:
            em.messages.append(message)
            args[4] = i64(fault.message_id(len(em.messages) - 1))
        b.call(fail, args)
        em.abort()

    def emit_return(self, em, value):
        em.thread_return(value)

    def emit_barrier(self, em, stmt):
        raise AssertionError("barriers are split out before code generation on the CPU")

    def emit_collective(self, em, op, value):
        raise AssertionError("collectives are split out before code generation on the CPU")

    def emit_warp(self, em, stmt):
        raise AssertionError("warp functions are split out before code generation on the CPU")

    def emit_grid_sync(self, em, stmt):
        raise AssertionError("grid syncs are split out before code generation on the CPU")

    def laneid(self, em):
        """The linear thread index in the block, modulo 32."""
        b, sp = em.builder, em.specials
        flat = b.add(b.mul(b.add(b.mul(sp["threadIdx.z"], sp["blockDim.y"]), sp["threadIdx.y"]),
                           sp["blockDim.x"]), sp["threadIdx.x"])
        return b.and_(flat, i32(31))

    def call_device(self, em, function, args):
        fn = em.device_function(function)
        b = em.builder
        em.store_ctx()
        packed = [a.pack(b, self) if isinstance(a, ArrayValue) else a for a in args]
        result = b.call(fn, [em.ctx] + packed)
        if em.boundscheck:
            code = b.load(em.err_ptr, typ=I64)
            ok, bad = em.new_block("call_ok"), em.new_block("call_failed")
            b.cbranch(b.icmp_unsigned("==", code, i64(0)), ok, bad)
            b.position_at_end(bad)
            em.abort()
            b.position_at_end(ok)
        if isinstance(function.return_type, T.Array):
            return ArrayValue.unpack(b, function.return_type, result)
        return result if not isinstance(function.return_type, T.Void) else None


def _plain_rmw(em, op, address, value):
    """An atomic on shared memory: one OS thread runs every thread of a block in turn,
    and no other block sees its shared memory, so a plain load, op and store is atomic
    (and several of them can be vectorized or kept in registers). Returns the old value."""
    b = em.builder
    old = b.load(address, typ=value.type)
    if op in ("add", "sub", "and", "or", "xor"):
        new = {"add": b.add, "sub": b.sub, "and": b.and_, "or": b.or_, "xor": b.xor}[op](old, value)
    elif op in ("fadd", "fsub"):
        new = (b.fadd if op == "fadd" else b.fsub)(old, value)
    elif op == "xchg":
        new = value
    elif op in ("min", "max", "umin", "umax"):
        cmp = b.icmp_unsigned if op.startswith("u") else b.icmp_signed
        new = b.select(cmp("<" if op.endswith("min") else ">", value, old), value, old)
    elif op in ("fmin", "fmax"):
        name = "llvm.minnum" if op == "fmin" else "llvm.maxnum"
        fnty = ll.FunctionType(value.type, [value.type, value.type])
        new = b.call(em.module.declare_intrinsic(name, [value.type], fnty), [old, value])
    elif op == "uinc_wrap":
        new = b.select(b.icmp_unsigned(">=", old, value), const(value.type, 0),
                       b.add(old, const(value.type, 1)))
    elif op == "udec_wrap":
        wrap = b.or_(b.icmp_unsigned("==", old, const(value.type, 0)),
                     b.icmp_unsigned(">", old, value))
        new = b.select(wrap, value, b.sub(old, const(value.type, 1)))
    else:
        return b.atomic_rmw(op, address, value, "monotonic")
    b.store(new, address)
    return old


def _fail_function(module):
    """void simt.fail(err, code, line, array, dim, index, extent, file, b.xyz, t.xyz):
    the first error of a launch wins; its details go into the error record."""
    name = "simt.fail"
    if name in module.globals:
        return module.globals[name]
    fnty = ll.FunctionType(ll.VoidType(), [ptr()] + [I64] * 7 + [I32] * 6)
    fn = ll.Function(module, fnty, name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    fn.attributes.add("cold")
    entry, store, done = (fn.append_basic_block(n) for n in ("entry", "store", "done"))
    b = ll.IRBuilder(entry)
    err = fn.args[0]
    pair = b.cmpxchg(err, i64(0), fn.args[1], "monotonic", "monotonic")
    b.cbranch(b.extract_value(pair, 1), store, done)
    b.position_at_end(store)
    for i, value in enumerate(list(fn.args[2:8]) + [b.sext(a, I64) for a in fn.args[8:]]):
        b.store(value, b.gep(err, [i64(i + 1)], source_etype=I64))
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
    return fn
