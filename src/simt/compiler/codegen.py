"""IR -> LLVM IR, shared by every target.

``FunctionEmitter`` lowers statements and expressions; what differs between
devices (special registers, address spaces, barriers, printf, errors, the
shape of a kernel's entry) is asked of ``self.target``, through the methods
that ``compiler.target.Target`` declares.
"""
import numpy as np
from llvmlite import ir as ll

import simt.fault as fault
from . import loopmeta, mathlower, ops, recordgen
from ..ir import single, types as T
from .lltypes import (I1, I8, I64, ArrayValue, bool_of_byte, const, i64, memory, ptr, scalar,
                      static_array, value_type)
from .intrinsics import lower_intrinsic
from ..lang import bfloat16


class LoopTarget:
    """Where break and continue go in an ordinary (per-thread) loop."""

    def __init__(self, break_bb, continue_bb):
        self.break_bb, self.continue_bb = break_bb, continue_bb

    def emit_break(self, em):
        em.builder.branch(self.break_bb)

    def emit_continue(self, em):
        em.builder.branch(self.continue_bb)


class FunctionEmitter:
    """Emits one IR Function into an LLVM function."""

    device_emitter = None       # the target's FunctionEmitter for device functions

    def __init__(self, target, module, function, llfunc, options):
        self.target = target
        self.module = module
        self.function = function
        self.llfunc = llfunc
        self.options = options
        self.boundscheck = options.boundscheck or options.checks     # checked mode: bounds too
        self.proven = frozenset()    # ids of accesses whose indices a target checked already
        self.access_group = None     # the CPU's thread loop being emitted: its accesses' group
        self.alias = None            # noalias=True where parameters come from memory (the
        #                              CPU): per parameter, (its scope, the others' scopes)
        self.builder = None
        self.entry_builder = None
        self.vars = {}
        self.params = []
        self.decl_values = {}
        self.loops = []
        self.array_labels = []
        self.locals = dict(function.locals)
        self.ssa = {}                # single-assignment local -> its value (ir/single.py)
        self.ssa_names = self.single_assignments(function)
        lines = target.lines         # lineinfo=True: line tables (lineinfo.py), else None
        self.scope = lines.subprogram(llfunc, function) if lines is not None else None

    # ------------------------------------------------------------ scaffolding
    def start(self):
        entry = self.llfunc.append_basic_block("entry")
        self.entry_builder = ll.IRBuilder(entry)
        body = self.llfunc.append_basic_block("body")
        self.builder = ll.IRBuilder(body)
        return entry, body

    def finish_entry(self, body_bb):
        self.entry_builder.branch(body_bb)

    def alloca(self, lltype, name=""):
        """An entry-block stack slot (promoted to a register by LLVM)."""
        b = self.entry_builder
        with b.goto_entry_block():
            slot = b.alloca(lltype, name=name)
        # an opaque pointer, so that llvmlite's typed-pointer checks stay out of the way
        slot.type = ptr()
        return slot

    def new_block(self, name):
        return self.llfunc.append_basic_block(name)

    def single_assignments(self, function):
        """The scalar locals kept as SSA values, not stack slots (ir/single.py); an
        emitter that moves code out of its structured place returns none."""
        return frozenset(name for name in single.single_assignments(function)
                         if isinstance(self.locals.get(name), T.Scalar))

    def var_ptr(self, name):
        """Storage of a local variable (targets may put it elsewhere)."""
        slot = self.vars.get(name)
        if slot is None:
            t = self.locals[name]
            slot = self.alloca(value_type(t, self.target), name=name)
            self.vars[name] = slot
        return slot

    def terminated(self):
        return self.builder.block.is_terminated

    def device_function(self, function):
        """The LLVM function of a device function, emitted on its first call."""
        fn = self.target.functions.get(id(function))
        if fn is None:
            fn = self.device_emitter(self.target, self.module, function, self.options).build()
        return fn

    def local_array(self, decl):
        """A per-thread array: an entry-block stack slot, at its declared alignment; in
        cuda.jit code named as numba names it (``_cudapy_lmem``)."""
        elem = memory(T.element_type(decl.dtype))
        data = self.alloca(ll.ArrayType(elem, int(np.prod(decl.shape))),
                           name="_cudapy_lmem" if decl.numba else decl.name)
        data.align = decl.align
        return static_array(decl, data)

    # ------------------------------------------------------------ statements
    def emit_stmts(self, stmts):
        outer = self.builder.debug_metadata
        for stmt in stmts:
            if self.terminated():
                break               # code after break/continue/return is unreachable
            if self.scope is not None and stmt.loc is not None:
                self.builder.debug_metadata = self.target.lines.location(stmt.loc, self.scope)
            getattr(self, "stmt_" + type(stmt).__name__)(stmt)
        self.builder.debug_metadata = outer     # a loop's latch is its own line again

    def store_var(self, name, value):
        if name in self.ssa_names:
            self.ssa[name] = value
            return
        t = self.locals[name]
        if isinstance(t, T.Array):
            value = value.pack(self.builder, self.target)
        self.builder.store(value, self.var_ptr(name))

    def stmt_Assign(self, s):
        self.store_var(s.name, self.expr(s.value))

    stmt_StoreField = recordgen.store_field

    def stmt_ExprStmt(self, s):
        self.expr(s.value)

    def stmt_Store(self, s):
        array = self.expr(s.array)
        indices = [self.expr(i) for i in s.indices]
        address = self.element_address(array, indices, s.label, s.loc, site=s)
        value = self.expr(s.value)
        if self.options.checks:        # after the value: it may read the same element
            self.target.check_access(self, array, indices, address, "write", s.label, s.loc,
                                     site=s)
        self.store_element(address, value, array.type, parallel=True, scope=array.scope)

    def stmt_If(self, s):
        cond = self.expr(s.cond)
        then_bb, else_bb, merge = (self.new_block(n) for n in ("then", "else", "endif"))
        self.builder.cbranch(cond, then_bb, else_bb if s.orelse else merge)
        self.builder.position_at_end(then_bb)
        self.emit_stmts(s.then)
        if not self.terminated():
            self.builder.branch(merge)
        if s.orelse:
            self.builder.position_at_end(else_bb)
            self.emit_stmts(s.orelse)
            if not self.terminated():
                self.builder.branch(merge)
        else:
            else_bb.parent.blocks.remove(else_bb)
        self.builder.position_at_end(merge)

    def stmt_While(self, s):
        head, body, done = (self.new_block(n) for n in ("while", "while_body", "while_end"))
        self.builder.branch(head)
        self.builder.position_at_end(head)
        self.target.loop_poll(self, s)
        self.builder.cbranch(self.expr(s.cond), body, done)
        self.builder.position_at_end(body)
        self.loops.append(LoopTarget(done, head))
        self.emit_stmts(s.body)
        self.loops.pop()
        if not self.terminated():
            self.builder.branch(head)
        self.builder.position_at_end(done)

    def stmt_ForRange(self, s):
        t = self.locals[s.var]
        start, stop, step = self.expr(s.start), self.expr(s.stop), self.expr(s.step)
        counted = (self.target.counted_range_loops and t.kind == "i"
                   and not isinstance(step, ll.Constant))
        counter = self.alloca(start.type, name=s.var + ".it")
        self.builder.store(start, counter)
        if counted:
            trips = self.range_trips(start, stop, step)
            trip = self.alloca(I64, name=s.var + ".trip")
            self.builder.store(i64(0), trip)
        head, body, latch, done = (self.new_block(n) for n in ("for", "for_body", "for_next", "for_end"))
        self.builder.branch(head)
        self.builder.position_at_end(head)
        it = self.builder.load(counter, typ=start.type)
        if counted:
            runs = self.builder.icmp_unsigned("<", self.builder.load(trip, typ=I64), trips)
        else:
            runs = self.range_cond(it, stop, step, t)
        self.builder.cbranch(runs, body, done)
        self.builder.position_at_end(body)
        self.store_var(s.var, it)
        self.loops.append(LoopTarget(done, latch))
        self.emit_stmts(s.body)
        self.loops.pop()
        if not self.terminated():
            self.builder.branch(latch)
        self.builder.position_at_end(latch)
        self.target.loop_poll(self, s)
        it = self.builder.load(counter, typ=start.type)
        # nsw on signed counters, as CUDA C's `int` loops: without it LLVM cannot count the
        # trips, so it neither unrolls nor widens the loop (a range whose counter would pass
        # the type's maximum is undefined, as in C)
        flags = ["nsw"] if t.kind == "i" and not counted else []
        self.builder.store(self.builder.add(it, step, flags=flags), counter)
        if counted:      # the counter may pass the type's end after the last trip: no nsw
            b = self.builder
            b.store(b.add(b.load(trip, typ=I64), i64(1), flags=["nuw"]), trip)
        back_edge = self.builder.branch(head)
        if s.unroll is not None:
            loopmeta.requested(self.module, back_edge, s.unroll)
        else:
            self.target.loop_hint(self, s, back_edge, start, stop, step)
        self.builder.position_at_end(done)

    def range_trips(self, start, stop, step):
        """The trip count (i64, unsigned) of range(start, stop, step) for signed integers
        and a step known at run time: ceil(|stop - start| / |step|) in the step's direction,
        0 when the range is empty or the step is 0 (which Python refuses; the front end
        refuses a constant 0). Exact for every int64 range: the distance is taken as
        unsigned once it is known to be positive."""
        b = self.builder

        def wide(v):
            return b.sext(v, I64) if v.type.width < 64 else v
        start, stop, step = wide(start), wide(stop), wide(step)
        up = b.icmp_signed(">", step, i64(0))
        distance = b.select(up, b.sub(stop, start), b.sub(start, stop))
        nonempty = b.select(up, b.icmp_signed("<", start, stop), b.icmp_signed(">", start, stop))
        zero_step = b.icmp_signed("==", step, i64(0))
        size = b.select(zero_step, i64(1), b.select(up, step, b.sub(i64(0), step)))
        trips = b.add(b.udiv(b.sub(distance, i64(1)), size), i64(1))
        return b.select(b.and_(nonempty, b.not_(zero_step)), trips, i64(0))

    def range_cond(self, it, stop, step, t):
        """Whether iteration ``it`` of range(start, stop, step) runs."""
        b = self.builder
        cmp = b.icmp_signed if t.kind == "i" else b.icmp_unsigned
        if isinstance(step, ll.Constant):
            # constants are kept as unsigned bit patterns: -2 is 2**64 - 2 here
            negative = step.constant < 0 or step.constant >= 1 << (step.type.width - 1)
            return cmp(">" if negative else "<", it, stop)
        up = b.icmp_signed(">", step, const(step.type, 0)) if t.kind == "i" else const(I1, 1)
        return b.select(up, cmp("<", it, stop), cmp(">", it, stop))

    def stmt_Break(self, s):
        self.loops[-1].emit_break(self)

    def stmt_Continue(self, s):
        self.loops[-1].emit_continue(self)

    def stmt_Return(self, s):
        value = self.expr(s.value) if s.value is not None else None
        self.target.emit_return(self, value)

    def stmt_Barrier(self, s):
        self.target.emit_barrier(self, s)

    def stmt_Collective(self, s):
        self.store_var(s.name, self.target.emit_collective(self, s.op, self.expr(s.value), s.loc))

    def stmt_WarpOp(self, s):
        value = self.target.emit_warp(self, s)
        if s.name is not None:
            self.store_var(s.name, value)

    def stmt_GridSync(self, s):
        self.target.emit_grid_sync(self, s)

    def stmt_Print(self, s):
        values = [self.expr(a) for a in s.args]
        self.target.emit_print(self, s.format, values, [a.type for a in s.args])

    def stmt_Assert(self, s):
        ok, fail = self.new_block("assert_ok"), self.new_block("assert_fail")
        self.builder.cbranch(self.expr(s.cond), ok, fail)
        self.builder.position_at_end(fail)
        self.target.emit_error(self, fault.ASSERT, s.loc, message=s.message)
        self.builder.position_at_end(ok)

    # ------------------------------------------------------------ expressions
    def expr(self, e):
        return getattr(self, "expr_" + type(e).__name__)(e)

    def expr_Const(self, e):
        t = e.type
        if t.kind == "c":
            part = scalar(T.Scalar("f4" if t.dtype.itemsize == 8 else "f8"))
            return ops.make_complex(self.builder, scalar(t), const(part, e.value.real),
                                    const(part, e.value.imag))
        if t.kind == "b":
            return const(I1, int(bool(e.value)))
        if t.is_bfloat16:
            return const(scalar(t), bfloat16.bits(e.value))
        if t.kind in "iu":
            bits = t.dtype.itemsize * 8
            return const(scalar(t), int(e.value) & ((1 << bits) - 1))
        return const(scalar(t), float(e.value))

    def expr_Var(self, e):
        if e.name in self.ssa_names:
            return self.ssa[e.name]
        t = self.locals[e.name]
        value = self.builder.load(self.var_ptr(e.name), typ=value_type(t, self.target))
        if isinstance(t, T.Array):
            return ArrayValue.unpack(self.builder, t, value)
        return value

    def expr_Param(self, e):
        return self.params[e.index]

    def expr_Cast(self, e):
        value = self.expr(e.value)
        result = ops.cast(self.builder, value, e.value.type, e.type)
        if self.options.narrowing and not e.explicit and T.narrows(e.value.type, e.type):
            self.check_narrowing(e, value, result)
        return result

    def check_narrowing(self, e, value, result):
        """narrowing=True: end the thread with a NARROWING fault unless ``result``, the
        implicit conversion ``e`` of ``value``, is the same number."""
        b, source, to = self.builder, e.value.type, e.type
        back = (b.sext if to.kind == "i" else b.zext)(result, value.type)
        fits = b.icmp_unsigned("==", back, value)
        if source.kind == "u" and to.kind == "i":     # a uint above the int's range
            fits = b.and_(fits, b.icmp_signed(">=", result, ll.Constant(result.type, 0)))
        ok_bb, fail_bb = self.new_block("fits"), self.new_block("narrowed")
        b.cbranch(fits, ok_bb, fail_bb)
        b.position_at_end(fail_bb)

        def wide(v, signed):
            return v if v.type.width == 64 else (b.sext if signed else b.zext)(v, I64)
        self.target.emit_error(self, fault.NARROWING, e.loc,
                               dim=fault.narrowing_types(source.dtype.name, to.dtype.name),
                               index=wide(value, source.kind == "i"),
                               extent=wide(result, to.kind == "i"))
        b.position_at_end(ok_bb)

    def expr_BinOp(self, e):
        division = ops.div_flags(self.options, e.type) if e.type.kind == "f" else ()
        return ops.binop(self.builder, e.op, self.expr(e.lhs), self.expr(e.rhs), e.type,
                         self.math_call, ops.arith_flags(self.options), division)

    def expr_UnaryOp(self, e):
        return ops.unary(self.builder, e.op, self.expr(e.value), e.value.type)

    def expr_Compare(self, e):
        if e.lhs.type != e.rhs.type:           # int64 with uint64: exact (calls.compare)
            return ops.mixed_sign_compare(self.builder, e.op, self.expr(e.lhs), e.lhs.type,
                                          self.expr(e.rhs))
        return ops.compare(self.builder, e.op, self.expr(e.lhs), self.expr(e.rhs), e.lhs.type)

    def expr_Logical(self, e):
        lhs = self.expr(e.lhs)
        start = self.builder.block
        rhs_bb, done = self.new_block("logic_rhs"), self.new_block("logic_end")
        if e.op == "and":
            self.builder.cbranch(lhs, rhs_bb, done)
        else:
            self.builder.cbranch(lhs, done, rhs_bb)
        self.builder.position_at_end(rhs_bb)
        rhs = self.expr(e.rhs)
        rhs_end = self.builder.block
        self.builder.branch(done)
        self.builder.position_at_end(done)
        phi = self.builder.phi(I1)
        phi.add_incoming(const(I1, 0 if e.op == "and" else 1), start)
        phi.add_incoming(rhs, rhs_end)
        return phi

    def expr_IfExp(self, e):
        cond = self.expr(e.cond)
        then_bb, else_bb, done = (self.new_block(n) for n in ("ifexp_then", "ifexp_else", "ifexp_end"))
        self.builder.cbranch(cond, then_bb, else_bb)
        self.builder.position_at_end(then_bb)
        a = self.expr(e.then)
        a_end = self.builder.block
        self.builder.branch(done)
        self.builder.position_at_end(else_bb)
        b = self.expr(e.orelse)
        b_end = self.builder.block
        self.builder.branch(done)
        self.builder.position_at_end(done)
        if isinstance(e.type, T.Array):
            a, b = a.pack(self.builder, self.target), b.pack(self.builder, self.target)
        phi = self.builder.phi(a.type)
        phi.add_incoming(a, a_end)
        phi.add_incoming(b, b_end)
        if isinstance(e.type, T.Array):
            return ArrayValue.unpack(self.builder, e.type, phi)
        return phi

    expr_Field = recordgen.load_field
    expr_Replace = recordgen.replace
    expr_MakeRecord = recordgen.make

    def expr_TupleExpr(self, e):
        lltype = value_type(e.type, self.target)
        value = ll.Constant(lltype, ll.Undefined)
        for i, item in enumerate(e.items):
            v = self.expr(item)
            if isinstance(v, ArrayValue):
                v = v.pack(self.builder, self.target)
            value = self.builder.insert_value(value, v, i)
        return value

    def expr_TupleGet(self, e):
        value = self.builder.extract_value(self.expr(e.tuple), e.index)
        if isinstance(e.type, T.Array):
            return ArrayValue.unpack(self.builder, e.type, value)
        return value

    def expr_ArrayRef(self, e):
        value = self.decl_values.get(id(e.decl))
        if value is None:
            # computed once, in the entry block, so that every later use is dominated
            builder, self.builder = self.builder, self.entry_builder
            try:
                value = self.target.declare_memory(self, e.decl)
            finally:
                self.builder = builder
            self.decl_values[id(e.decl)] = value
        return value

    def expr_ArrayAttr(self, e):
        array = self.expr(e.array)
        if e.attr == "data":                 # a generic address (ctypes_data.py)
            data = array.data
            if data.type.addrspace:
                data = self.builder.addrspacecast(data, ll.PointerType())
            return self.builder.ptrtoint(data, ll.IntType(64))
        return (array.shape if e.attr == "shape" else array.strides)[e.dim]

    def expr_Load(self, e):
        array = self.expr(e.array)
        indices = [self.expr(i) for i in e.indices]
        address = self.element_address(array, indices, e.label, e.loc, access="read", site=e)
        return self.load_element(address, array.type, parallel=True, scope=array.scope)

    def expr_View(self, e):
        return self.make_view(self.expr(e.array), e)

    def expr_Intrinsic(self, e):
        return lower_intrinsic(self, e)

    def expr_CallDevice(self, e):
        args = [self.expr(a) for a in e.args]
        if e.extern is not None and self.target.links_device_code:
            return self.target.call_extern(self, e.extern, args)
        return self.target.call_device(self, e.function, args)

    # ------------------------------------------------------------ memory
    def element_address(self, array, indices, label, loc, access=None, site=None,
                        order="relaxed", scope="device"):
        """The address of ``array[indices]``, each index checked when boundscheck is on
        (unless the access, ``site``, is in ``proven``); in checked mode an ``access``
        ("read", "write", "atomic", "atomic_store", "atomic_load", "volatile_load",
        "volatile_store"; the atomics with their memory ``order`` and ``scope``) is
        checked too."""
        b = self.builder
        offset = None
        check = self.boundscheck and id(site) not in self.proven
        for d, index in enumerate(indices):
            if check:
                self.check_index(array, d, index, label, loc)
            term = index if _is_one(array.strides[d]) else b.mul(index, array.strides[d])
            offset = term if offset is None else b.add(offset, term)
        elem = memory(array.type.element)
        address = b.gep(array.data, [offset if offset is not None else i64(0)],
                        source_etype=elem, inbounds=True)
        if access is not None and self.options.checks:
            self.target.check_access(self, array, indices, address, access, label, loc,
                                     order, site=site, scope=scope)
        return address

    def check_index(self, array, dim, index, label, loc):
        extent = array.shape[dim]
        ok = self.builder.icmp_unsigned("<", index, extent)
        ok_bb, fail_bb = self.new_block("in_bounds"), self.new_block("out_of_bounds")
        self.builder.cbranch(ok, ok_bb, fail_bb)
        self.builder.position_at_end(fail_bb)
        self.target.emit_error(self, fault.OUT_OF_BOUNDS, loc, array=self.target.label_id(label),
                               dim=dim, index=index, extent=extent)
        self.builder.position_at_end(ok_bb)

    def load_element(self, address, array_type, parallel=False, scope=None):
        """``parallel``: a plain element access of the kernel's code (a[i]), which the
        target may tag as one of the threads' independent accesses (``access_group``);
        ``scope``: the array's ArrayValue.scope (noalias=True)."""
        t = array_type.element
        if isinstance(t, T.Vector):         # one vector access (ld.global.v4.f32)
            return self._tag(self.builder.load(address, typ=scalar(t),
                                               align=recordgen.element_align(array_type)),
                             parallel, scope)
        value = self._tag(self.builder.load(address, typ=memory(t),
                                            align=recordgen.element_align(array_type)),
                          parallel, scope)
        return bool_of_byte(self.builder, value) if t.dtype.kind == "b" else value

    def store_element(self, address, value, array_type, parallel=False, scope=None):
        if array_type.element.dtype.kind == "b":
            value = self.builder.zext(value, I8)
        self._tag(self.builder.store(value, address, align=recordgen.element_align(array_type)),
                  parallel, scope)

    def _tag(self, access, parallel, scope=None):
        if parallel and self.access_group is not None:
            access.set_metadata("llvm.access.group", self.access_group)
        if scope is not None and self.alias is not None:
            own, others = self.alias[scope]
            access.set_metadata("alias.scope", own)
            access.set_metadata("noalias", others)
        return access

    def make_view(self, array, e):
        b = self.builder
        data_offset = i64(0)
        shape, strides = [], []
        for d, part in enumerate(e.indices):
            extent, stride = array.shape[d], array.strides[d]
            if not isinstance(part, tuple):
                index = self.expr(part)
                if self.boundscheck:
                    self.check_index(array, d, index, e.label, e.loc)
                data_offset = b.add(data_offset, b.mul(index, stride))
                continue
            start, length, step = self.slice_bounds(part, extent)
            data_offset = b.add(data_offset, b.mul(start, stride))
            shape.append(length)
            strides.append(b.mul(stride, step))
        for d in range(len(e.indices), array.type.ndim):
            shape.append(array.shape[d])
            strides.append(array.strides[d])
        data = b.gep(array.data, [data_offset], source_etype=memory(array.type.element))
        view = ArrayValue(e.type, data, shape, strides)
        view.scope = array.scope            # a view of a noalias parameter is that parameter
        return view

    def slice_bounds(self, part, extent):
        """Python's slice rules: (start, length, step) clipped to the extent."""
        b = self.builder
        lo, hi, st = (self.expr(p) if p is not None else None for p in part)
        step = st if st is not None else i64(1)
        zero = i64(0)
        neg = b.icmp_signed("<", step, zero)

        def clip(v, default_pos, default_neg):
            if v is None:
                return b.select(neg, default_neg, default_pos)
            v = b.select(b.icmp_signed("<", v, zero), b.add(v, extent), v)
            low = b.select(neg, i64(-1), zero)
            high = b.select(neg, b.sub(extent, i64(1)), extent)
            v = b.select(b.icmp_signed("<", v, low), low, v)
            return b.select(b.icmp_signed(">", v, high), high, v)
        start = clip(lo, zero, b.sub(extent, i64(1)))
        stop = clip(hi, extent, i64(-1))
        span = b.sub(stop, start)
        adj = b.select(neg, b.add(span, i64(1)), b.sub(span, i64(1)))
        safe_step = b.select(b.icmp_signed("==", step, zero), i64(1), step)
        length = b.sdiv(b.add(adj, safe_step), safe_step)
        length = b.select(b.icmp_signed("<", length, zero), zero, length)
        return start, length, step

    # ------------------------------------------------------------ helpers
    def math_call(self, name, t, args):
        return mathlower.math_value(self, name, t, args)


def alias_scopes(module, symbol, function):
    """@simt.kernel(noalias=True) as LLVM's scoped alias metadata, for targets whose kernels
    read their arrays' pointers from memory (no argument to mark ``noalias``): a domain per
    kernel, a scope per array parameter; an access of parameter i's array is in scope i and
    does not alias scopes j != i. {position: (its scope list, the others' list)}."""
    domain = module.add_metadata([f"simt.noalias.{symbol}"])
    arrays = [i for i, (_, t) in enumerate(function.params) if isinstance(t, T.Array)]
    scopes = {i: module.add_metadata([f"simt.noalias.{symbol}.{i}", domain]) for i in arrays}
    return {i: (module.add_metadata([scopes[i]]),
                module.add_metadata([scopes[j] for j in arrays if j != i]))
            for i in arrays}


def inline_attribute(function, recursive=False):
    """The LLVM attribute of a device function: ``noinline`` for @simt.device(inline=
    'never'), else ``alwaysinline`` (simt's default and inline='always'), or None for a
    function on a call cycle (recursion.py), which cannot be inlined into itself."""
    if function.inline == "never":
        return "noinline"
    return None if recursive else "alwaysinline"


def _is_one(value):
    return isinstance(value, ll.Constant) and value.constant == 1
