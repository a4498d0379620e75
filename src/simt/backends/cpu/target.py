"""The CPU target: a kernel becomes one native function that runs a range of
blocks; each block runs its threads as loops (one loop per barrier-free run
of statements, see regions.py and docs/cpu-device.md)."""
from llvmlite import ir as ll

from .. import hostjit as jit
from ...compiler.lltypes import (I8, I32, I64, const, function, i32, i64, memory, ptr,
                                 value_type)
from ...compiler import loopmeta
from ...compiler.target import FAULT_IDS, Target
from . import checked, devlaunch, heap, independent, interrupt, softmath, stack, textures
from ...ir import nodes as ir
from ...ir import types as T
import simt.fault as fault

# a tensor map on the CPU device (args.TensorMapDescriptor): base address, then extents and
# byte strides in NumPy axis order (runtime/tensormaps.py), up to 5 dimensions
TENSOR_MAP_STRUCT = ll.LiteralStructType([ptr(), ll.ArrayType(I64, 5), ll.ArrayType(I64, 5)])

# per-thread context handed to device functions
CTX = ll.LiteralStructType([ll.ArrayType(I32, 12), ptr(), ptr(), I64, ptr()])
SPECIALS = ["threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z",
            "blockDim.x", "blockDim.y", "blockDim.z", "gridDim.x", "gridDim.y", "gridDim.z"]
LIBM = {"exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin", "acos",
        "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma",
        "tgamma", "cbrt", "exp2", "exp10", "atan2", "pow", "hypot", "fmod", "fdim", "remainder",
        "copysign", "j0", "j1", "y0", "y1", "jn", "yn", "logb", "ilogb", "nextafter", "ldexp",
        "scalbn", "lrint", "llrint", "lround", "llround", "sincos", "modf", "frexp", "remquo"}


class CpuTarget(Target):
    """Per-target facts and lowerings for the host CPU: one flat address space, libm.

    Barriers, collectives, warp functions and grid syncs never reach the target's hooks:
    the kernel emitter splits a kernel's threads at them (emit.py, warp.py, cooperative.py).
    """

    name = "cpu"
    math_functions = LIBM
    texture_lltype = textures.TEX_STRUCT     # a texture/surface argument: its descriptor
    tensor_map_lltype = TENSOR_MAP_STRUCT    # a tensor map argument: its description
    texture_op = staticmethod(textures.texture_op)
    device_launch = staticmethod(devlaunch.emit)

    def __init__(self, kernel, options):
        super().__init__(kernel, options)
        self.data_layout = jit.target_machine().target_data

    def kernel_args_type(self, fn):
        """The struct the runtime packs a launch's arguments into: the parameters, then a
        pointer to each module-level symbol."""
        fields = [memory(t) if isinstance(t, T.Vector) else value_type(t, self)
                  for _, t in fn.params]
        return ll.LiteralStructType(fields + [ptr()] * len(self.symbols))

    # ---------------------------------------------------------------- values
    def special(self, em, op):
        return em.specials[op]

    def laneid(self, em):
        """The linear thread index in the block, modulo the warp size."""
        b, sp = em.builder, em.specials
        flat = b.add(b.mul(b.add(b.mul(sp["threadIdx.z"], sp["blockDim.y"]), sp["threadIdx.y"]),
                           sp["blockDim.x"]), sp["threadIdx.x"])
        return b.and_(flat, i32(self.warp.size - 1))

    def math_call(self, em, name, t, args, ret=None, outs=()):
        """libm, and softmath.py for what libm lacks (sinpi, erfinv, norm3d ...)."""
        if name in softmath.FUNCTIONS:
            value = softmath.emit(em.builder, name, args)
            return [None] + value if outs else value
        return super().math_call(em, name, t, args, ret, outs)

    # ---------------------------------------------------------------- memory
    def shared_data(self, em, decl):
        return em.builder.gep(em.shared_base, [i64(self.shared_offsets[id(decl)])],
                              source_etype=I8)

    def dynamic_shared_data(self, em):
        data = em.builder.gep(em.shared_base, [i64(self.shared_static_bytes)], source_etype=I8)
        return data, em.dyn_shared_bytes

    def symbol_data(self, em, decl):
        return em.symbol_pointer(self.symbol_index(decl))

    check_access = staticmethod(checked.check_access)

    def emit_fence(self, em, scope):
        super().emit_fence(em, scope)
        if em.options.checks:
            checked.fence(em, scope)  # what the fence orders, for checked mode's model

    def atomic_rmw(self, em, op, address, value, t, scope="device", order="relaxed"):
        """Every scope is the same on the CPU: one process, coherent memory."""
        if em.block_private:
            return _plain_rmw(em, op, address, value)
        return super().atomic_rmw(em, op, address, value, t, scope, order)

    def heap_malloc(self, em, nbytes):
        """The CPU device's heap (heap.py), through its callback."""
        self.uses_heap = True
        fn = function(em.module, heap.MALLOC, ll.FunctionType(ptr(), [I64]))
        return em.builder.call(fn, [nbytes])

    def heap_free(self, em, data, loc):
        """Freeing what the heap did not hand out is a launch error, not a corrupt heap."""
        b = em.builder
        fn = function(em.module, heap.FREE, ll.FunctionType(I32, [ptr()]))
        bad, ok = em.new_block("bad_free"), em.new_block("freed")
        b.cbranch(b.icmp_unsigned("!=", b.call(fn, [data]), i32(0)), bad, ok)
        b.position_at_end(bad)
        self.emit_error(em, fault.BAD_FREE, loc)
        b.position_at_end(ok)

    # ---------------------------------------------------------------- statements
    def call_print(self, em, text, buf, count):
        fnty = ll.FunctionType(ll.VoidType(), [ptr(), ptr(), I64])
        em.builder.call(function(em.module, "simt_cpu_print", fnty), [text, buf, i64(count)])

    def record_fault(self, em, code, words):
        ids = [em.specials[name] for name in FAULT_IDS]
        em.builder.call(_fail_function(em.module), [em.err_ptr, i64(code)] + words + ids)
        em.abort()

    def emit_return(self, em, value):
        em.thread_return(value)

    def loop_hint(self, em, stmt, back_edge, start, stop, step):
        """A range loop whose trip count is known only at run time is not unrolled at run
        time (``llvm.loop.unroll.runtime.disable``), as gcc -O3 does not: LLVM unrolled
        spmv's row loop (8 to 24 trips) 8 times behind a remainder loop, two mispredicted
        exits a row, and it ran 1.5x slower than rolled (bench/NOTES.md, 2026-11-29)."""
        if loopmeta.constant_trips(start, stop, step, em.locals[stmt.var].kind == "i") is None:
            loopmeta.mark(em.module, back_edge, [loopmeta.rolled_at_run_time(em.module)])

    def loop_poll(self, em, stmt):
        """Ctrl-C (interrupt.py): every trip of a ``while`` loop, and of a range loop
        holding another loop, reads the flag; once it is set the thread records
        INTERRUPTED and ends, which ends the launch. An innermost range loop runs to its
        end: its trips are counted before it starts, and a check in it would cost the
        hot loops of kernels their unrolling (10% in bench's reduction_tree). In checked
        mode every loop reads it (checks make a kernel slower, so an innermost loop of a
        second could become minutes that Ctrl-C could not end) but an innermost one of
        at most SHORT_LOOP trips counted from constants (``for k in range(32)``), whose
        read would keep a tiled matmul's inner loop from vectorizing. In a kernel run as
        warps (independent.py), a spin loop's trip also lets the other warps run."""
        if getattr(em, "fibers", None) is not None:
            independent.spin(em, stmt)
        if isinstance(stmt, ir.ForRange) and not any(
                isinstance(inner, (ir.While, ir.ForRange)) for inner in ir.walk_stmts(stmt.body)) \
                and (not em.options.checks or _short(stmt)):
            return
        b = em.builder
        flag = em.module.globals.get(interrupt.SYMBOL)
        if flag is None:
            flag = ll.GlobalVariable(em.module, I32, interrupt.SYMBOL)
        value = b.load_atomic(flag, "monotonic", 4, typ=I32)
        stop, go = em.new_block("interrupted"), em.new_block("not_interrupted")
        b.cbranch(b.icmp_unsigned("!=", value, i32(0)), stop, go)
        b.position_at_end(stop)
        self.emit_error(em, fault.INTERRUPTED, stmt.loc)
        b.position_at_end(go)

    def device_call(self, em, fn, args, function):
        """Device functions take the thread's context first (and a recursive one the stack
        floor next: stack.py); after one that can fail, a failed call ends this thread
        too."""
        b = em.builder
        em.store_ctx()
        recursive = id(function) in self.recursive
        hidden = [em.ctx, stack.floor(em)] if recursive else [em.ctx]
        result = b.call(fn, hidden + args)
        if em.boundscheck or recursive:
            code = b.load(em.err_ptr, typ=I64)
            ok, bad = em.new_block("call_ok"), em.new_block("call_failed")
            b.cbranch(b.icmp_unsigned("==", code, i64(0)), ok, bad)
            b.position_at_end(bad)
            em.abort()
            b.position_at_end(ok)
        return result


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


SHORT_LOOP = 1024       # trips of an innermost range loop that need no Ctrl-C poll in checked mode


def _short(stmt):
    """Whether range loop ``stmt`` has constant bounds and at most SHORT_LOOP trips."""
    parts = (stmt.start, stmt.stop, stmt.step)
    if not all(isinstance(p, ir.Const) and isinstance(p.value, int) for p in parts):
        return False
    start, stop, step = (p.value for p in parts)
    return step != 0 and len(range(start, stop, step)) <= SHORT_LOOP
