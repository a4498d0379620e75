"""Emitting kernels and device functions for the CPU target.

A kernel becomes ``i32 kernel(args, launch, first_block, last_block, shared,
slots)``: it runs blocks [first_block, last_block) and returns 0, or 1 after
recording an error. Threads of a block run as loops; with barriers, each
barrier-free run gets its own loop and threads keep their state in slots.
"""
import numpy as np
from llvmlite import ir as ll

from ...ir import nodes as ir
from ...ir import types as T
from ...compiler import loopmeta
from ...compiler.codegen import FunctionEmitter, alias_scopes, inline_attribute
from ...compiler.flat import counted_loop
from ...compiler.lltypes import (I1, I8, I32, I64, ArrayValue, const, i32, i64, memory, ptr,
                                 static_array, symbol_part, value_type)
from . import checked, checkscan, cluster, cooperative, guards, hoist, independent, stack, warp
from . import lower  # noqa: F401  (registers this target's lowerings)
from .lower.warpspec import named_barrier_refused
from ...ir.assigned import display_name
from ...ir import disjoint, interchange, intervals
from ...ir.fission import Run, fission
from ...ir.regions import Plan
from .target import CTX, SPECIALS
from ...ir.uniform import Uniformity

# a block has at most 1024 threads: the thread loops' indices and the flat thread index never
# wrap, and saying so lets LLVM see the x loop's accesses as consecutive (and vectorize it)
_NO_WRAP = ["nuw", "nsw"]


class MaskedLoop:
    """break/continue in a loop that holds a barrier: per-thread flags."""

    def __init__(self, em, loop_flag, cont_flag):
        self.em, self.loop_flag, self.cont_flag = em, loop_flag, cont_flag

    def emit_break(self, em):
        em.builder.store(const(I8, 0), em.var_ptr(self.loop_flag))
        em.builder.branch(em.thread_next)

    def emit_continue(self, em):
        em.builder.store(const(I8, 1), em.var_ptr(self.cont_flag))
        em.builder.branch(em.thread_next)


class CpuEmitterBase(FunctionEmitter):
    """What kernels and device functions share on the CPU."""

    def __init__(self, target, module, function, llfunc, options):
        super().__init__(target, module, function, llfunc, options)
        self.specials = {}
        self.block_private = False      # lowering an atomic on shared memory

    def expr_Intrinsic(self, e):
        # atomics on shared memory need no lock on the CPU (target.atomic_rmw)
        private = (e.op.startswith("atomic") and e.args
                   and getattr(e.args[0].type, "space", None) == "shared")
        outer, self.block_private = self.block_private, bool(private)
        try:
            return super().expr_Intrinsic(e)
        finally:
            self.block_private = outer

    def expr_CheckedVar(self, e):
        checked.unassigned_read(self, self.expr(e.assigned), display_name(e.var.name), e.loc)
        return self.expr(e.var)


class CpuKernelEmitter(CpuEmitterBase):

    def __init__(self, target, module, function, options, symbol):
        plan = uniform = pieces = None
        swapped = {}
        if function.uses_barrier:
            uniform = Uniformity(function)
            pieces = fission(function.body, uniform)
        fibers = independent.plan(function, pieces, options)
        if pieces is not None:
            if fibers is None and not options.checks:
                # block-stride loops outside their thread loops (ir/interchange.py)
                pieces, swapped = interchange.apply(pieces, function, uniform, options.block)
            plan = Plan(pieces, uniform.recomputed | uniform.block_vars)
        if fibers is None:
            fnty = ll.FunctionType(I32, [ptr(), ptr(), I64, I64, ptr(), ptr()])
            llfunc = ll.Function(module, fnty, symbol)
            noalias = (0, 4, 5)
        else:       # one warp of one block; the other warps change shared memory and
            # slots while it waits (so neither is noalias), the entry runs it (independent.py)
            llfunc = ll.Function(module, independent.signature(), symbol + ".warp")
            llfunc.linkage = "internal"
            independent.entry(module, symbol, llfunc)
            noalias = (0,)
        for index in noalias:
            llfunc.args[index].add_attribute("noalias")
        super().__init__(target, module, function, llfunc, options)
        self.locals.update(swapped)
        self.swapped = tuple(swapped)   # the block-level variables of swapped loops
        self.plan, self.uniform, self.pieces, self.fibers = plan, uniform, pieces, fibers
        self.fiber_state = None    # the scheduler's state (fibers.py), in a warp function
        self.has_return = any(isinstance(s, ir.Return) for s in ir.walk_stmts(function.body))
        self.pending = {}          # recomputed values not yet computed in this thread loop
        self.shadows = None        # slot variable -> its register, inside a thread loop
        self.shadow_regs, self.written = {}, set()
        self.flag_count = 0
        self.slot_layout = {}
        self.slot_bytes = 0
        self.warp_counter = None   # warp.py's ticket counter, made at the first warp operation
        self.checks = options.checks
        self.read_only = checked.read_only_params(function) if self.checks else frozenset()
        # checked mode: the parameters only written, at indices that may be disjoint
        self.owned = dict(disjoint.owned_specs(function)) if self.checks else {}
        # checked mode: shared-memory reads no write can race with (checked but not recorded)
        self.unrecorded = intervals.unrecorded_reads(function) if self.checks else frozenset()
        # checked mode: shared accesses no other thread's access may meet in their
        # intervals, by group (checked.private_groups; the launch decides: PRIVATE)
        self.private_groups, self.private = checked.private_groups(function) \
            if self.checks else ((), {})
        # checked mode: shared accesses before any barrier (checkscan never covers them)
        self.first_interval = intervals.before_any_barrier(function) if self.checks \
            else frozenset()
        self.flag_sites = {}       # checked mode: a flag -> the site of the branch that sets it
        self.flag_syncwarps = {}   # checked mode: an if's flag -> (then, else) call syncwarp
        self.run_guards = []       # checked mode: the guards of the syncwarp run being made
        if self.plan is not None or self.checks:
            # split at barriers, values kept in slots, or checked mode's shadows: every
            # local keeps its stack slot
            self.ssa_names = frozenset()

    # ------------------------------------------------------------ entry
    def build(self):
        entry, body = self.start()
        args, launch, first, last, shared, slots = self.llfunc.args[:6]
        eb = self.entry_builder
        fields = [eb.load(eb.gep(launch, [i64(i)], source_etype=I64), typ=I64) for i in range(8)]
        gx, gy, gz, bx, by, bz, dyn, err = fields
        if self.options.block is not None:
            # made for one block shape (Kernel.binary_for): the thread loops' extents are
            # constants, so LLVM vectorizes a row of threads without run-time trip checks
            bx, by, bz = (i64(d) for d in self.options.block)
        self.err_ptr = eb.inttoptr(err, ptr())
        self.dyn_shared_bytes = dyn
        self.shared_base = shared
        self.slots = slots
        self.block_dims = (bx, by, bz)
        self.nthreads = eb.mul(eb.mul(bx, by), bz)
        if self.fibers is not None:            # first: the block, last: the warp
            self.fiber_state = self.llfunc.args[6]
            independent.lanes(self, last)
        for name, v in zip(SPECIALS[6:], (bx, by, bz, gx, gy, gz)):
            self.specials[name] = eb.trunc(v, I32)
        self.args_type = self.target.kernel_args_type(self.function)
        self.args_ptr = args
        if self.options.noalias:
            self.alias = alias_scopes(self.module, self.llfunc.name, self.function)
        self.params = [self.load_param(i, t) for i, (_, t) in enumerate(self.function.params)]
        self.ctx = None
        self.abort_bb = self.new_block("abort")
        ll.IRBuilder(self.abort_bb).ret(i32(1))
        if self.plan is not None:
            for name in sorted(self.plan.slot_vars):
                self.add_slot(name, value_type(self.locals[name], self.target))
        self.block_loop(first, last, gx, gy)
        self.finish_entry(body)
        return self.llfunc

    def load_param(self, index, t):
        eb = self.entry_builder
        field = eb.gep(self.args_ptr, [i32(0), i32(index)], source_etype=self.args_type)
        if isinstance(t, T.Vector):         # an array of components in the struct
            return eb.load(field, typ=value_type(t, self.target), align=t.dtype.itemsize)
        value = eb.load(field, typ=value_type(t, self.target))
        if isinstance(t, T.Array):
            array = ArrayValue.unpack(eb, t, value)
            if t.layout in ("C", "F") and t.ndim > 1:
                array.strides = _contiguous(eb, array.shape, t.layout)
            elif t.layout in ("C", "F"):
                array.strides = [i64(1)]
            if self.alias is not None:
                array.scope = index
            return array
        if isinstance(t, T.Scalar) and t.kind == "b":
            return value
        return value

    def symbol_pointer(self, index):
        eb = self.entry_builder
        field = eb.gep(self.args_ptr, [i32(0), i32(len(self.function.params) + index)],
                       source_etype=self.args_type)
        return eb.load(field, typ=ptr())

    # ------------------------------------------------------------ slots
    def add_slot(self, name, lltype, align=None):
        """Room for ``lltype`` per thread (16-byte aligned for a vector, else 8); an
        ``align`` given (a local array's) puts each thread's at a multiple of it."""
        size = lltype.get_abi_size(self.target.data_layout)
        if align and size % align:    # threads' slots are lltype-sized apart: pad the type
            lltype = ll.ArrayType(I8, (size + align - 1) // align * align)
            size = lltype.get_abi_size(self.target.data_layout)
        align = align or (16 if isinstance(lltype, ll.VectorType) else 8)  # vector loads
        size = (size + align - 1) // align * align
        self.slot_bytes = (self.slot_bytes + align - 1) // align * align
        eb = self.entry_builder
        base = eb.gep(self.slots, [eb.mul(self.nthreads, i64(self.slot_bytes))], source_etype=I8)
        self.slot_layout[name] = (base, lltype)
        self.slot_bytes += size

    def var_ptr(self, name):
        if self.shadows is not None and name in self.plan.slot_vars:
            return self.shadow(name)
        if name in self.slot_layout:
            base, lltype = self.slot_layout[name]
            return self.builder.gep(base, [self.flat_tid], source_etype=lltype)
        return super().var_ptr(name)

    def shadow(self, name):
        """Inside a thread loop a slot variable lives in a register: loaded from its slot
        at the top of the loop's body, stored back at its end if the run assigns it (slots
        in memory would keep LLVM from keeping it in a register or vectorizing the loop)."""
        reg = self.shadows.get(name)
        if reg is None:
            base, lltype = self.slot_layout[name]
            reg = self.shadow_regs.get(name)
            if reg is None:
                reg = self.shadow_regs[name] = self.alloca(lltype, name=name + ".reg")
            b = self.recompute_builder
            b.store(b.load(b.gep(base, [self.flat_tid], source_etype=lltype), typ=lltype), reg)
            self.shadows[name] = reg
        return reg

    def store_var(self, name, value):
        super().store_var(name, value)
        if self.shadows is not None and name in self.shadows:
            self.written.add(name)

    def new_flag(self, kind, loc=None):
        self.flag_count += 1
        name = f"${kind}{self.flag_count}"
        self.add_slot(name, I8)
        if loc is not None and self.checks:
            self.flag_sites[name] = checked.site(self, loc)
        return name

    def local_array(self, decl):
        """In a kernel with barriers a per-thread array lives in the thread's slots (its
        address depends on the thread, so it is not kept across thread loops)."""
        if self.plan is None:
            return super().local_array(decl)
        self.decl_values.pop(id(decl), None)
        name = f"$local.{decl.name}.{id(decl)}"
        if name not in self.slot_layout:
            elem = memory(T.element_type(decl.dtype))
            self.add_slot(name, ll.ArrayType(elem, int(np.prod(decl.shape))), decl.align)
        return static_array(decl, self.var_ptr(name))

    def expr_ArrayRef(self, e):
        if e.decl.space == "local" and self.plan is not None:
            return self.local_array(e.decl)
        return super().expr_ArrayRef(e)

    # ------------------------------------------------------------ loops over blocks and threads
    def block_loop(self, first, last, gx, gy):
        if self.fibers is not None:            # one warp of block ``first``
            self.grid_block(first, gx, gy)
            self.builder.ret(i32(0))
            return
        blocks = ("blocks", "block_body", None, "blocks_done")
        with counted_loop(self, last, "block", blocks, start=first) as c:
            self.grid_block(c, gx, gy)
        self.builder.ret(i32(0))

    def grid_block(self, c, gx, gy):
        """One block of the grid, ``c`` its linear index."""
        b = self.builder
        self.specials["blockIdx.x"] = b.trunc(b.urem(c, gx), I32)
        rest = b.udiv(c, gx)
        self.specials["blockIdx.y"] = b.trunc(b.urem(rest, gy), I32)
        self.specials["blockIdx.z"] = b.trunc(b.udiv(rest, gy), I32)
        self.block_lin = c
        if self.checks:
            checked.block_start(self)
        body = self.function.body
        shape = None if self.plan is not None or self.checks or self.fibers \
            else guards.split(body)
        if shape is not None:
            guards.emit(self, *shape, body)      # `if i < n:` kernels: guards.py
        elif self.plan is None:
            self.threads(body, [])
        else:
            self.exited = None
            if self.has_return:
                self.exited = self.new_flag("exited")
                self.thread_loop(lambda: self.builder.store(const(I8, 0), self.var_ptr(self.exited)),
                                 [], check_exit=False)
            self.emit_pieces(self.pieces, [])
        if self.checks:
            checked.settle(self)

    def threads(self, stmts, guards, state=None):
        """The thread loop running ``stmts``; with bounds checks, those the block can check
        before it are hoisted out (hoist.py); in checked mode, the reads one look per
        element can stand for are checked before it too (checkscan.py)."""
        if self.boundscheck and not self.checks:
            hoist.thread_loops(self, stmts, lambda: self.emit_stmts(stmts), guards, state)
        elif self.checks and self.boundscheck:      # both: a loop in up to four versions
            checkscan.thread_loops(self, stmts, lambda: hoist.thread_loops(
                self, stmts, lambda: self.emit_stmts(stmts), guards, state))
        elif self.checks:
            checkscan.thread_loops(self, stmts, lambda: self.thread_loop(
                lambda: self.emit_stmts(stmts), guards, state=state))
        else:
            self.thread_loop(lambda: self.emit_stmts(stmts), guards, state=state)

    def thread_loop(self, body_fn, guards, check_exit=True, state=None):
        """Run body_fn's code once per thread of the block that passes the guards.
        ``state``: the recomputed values (uniform.py) as they stand at this point."""
        if self.fibers is not None:
            independent.lane_loop(self, body_fn, guards, check_exit, state)
            return
        b = self.builder
        bx, by, bz = (b.trunc(d, I32) for d in self.block_dims)
        blocks = {n: self.new_block(n) for n in
                  ("z_head", "y_init", "y_head", "x_init", "x_head", "thread", "recompute", "run",
                   "write_back", "x_next", "y_next", "z_next", "threads_done")}

        def loop(extent, counter, names):
            return counted_loop(self, extent, counter, [blocks[n] for n in names.split()],
                                signed=False, flags=_NO_WRAP)
        z = loop(bz, "tz", "z_head y_init z_next threads_done")
        y = loop(by, "ty", "y_head x_init y_next z_next")
        x = loop(bx, "tx", "x_head thread x_next y_next")
        with z as tz, y as ty, x as tx:
            group = self.thread_body(body_fn, guards, check_exit, state, blocks,
                                     (tz, ty, tx), (by, bx))
        # the thread loop is not unrolled at run time either, as gcc's row loops are not
        # (a vectorized one never is): see CpuTarget.loop_hint
        rolled = [loopmeta.rolled_at_run_time(self.module)]
        if group is not None:
            loopmeta.parallel(self.module, x.back_edge, group, rolled)
        else:
            loopmeta.mark(self.module, x.back_edge, rolled)

    def thread_body(self, body_fn, guards, check_exit, state, blocks, tids, dims, flat=None):
        """One thread's pass through the thread loop: its index, guards and recomputed values,
        body_fn's code, the write-back of its slots. Returns the x loop's access group."""
        b = self.builder
        (tz, ty, tx), (by, bx) = tids, dims
        self.specials.update({"threadIdx.x": tx, "threadIdx.y": ty, "threadIdx.z": tz})
        if flat is None:
            flat = b.add(b.mul(b.add(b.mul(tz, by, flags=_NO_WRAP), ty, flags=_NO_WRAP), bx,
                               flags=_NO_WRAP), tx, flags=_NO_WRAP)
        self.flat_tid = b.zext(flat, I64)
        if self.checks:
            checked.thread_start(self, self.block_lin)
        self.thread_next = blocks["write_back"]
        ok = self.guard(guards, check_exit)
        if ok is None:
            b.branch(blocks["recompute"])
        else:
            b.cbranch(ok, blocks["recompute"], blocks["x_next"])
        self.pending = dict(state or {})
        self.recompute_builder = ll.IRBuilder(blocks["recompute"])
        if self.plan is not None:
            self.shadows, self.written = {}, set()
        b.position_at_end(blocks["run"])
        # the threads between two barriers touch no element another one writes (else the
        # kernel has a data race, undefined in CUDA): their element accesses form one
        # group, and the x loop is parallel for them; any other memory access in the loop
        # (an atomic, a record field, a slot, the fault record) leaves it unmarked in effect
        group = self.access_group = loopmeta.AccessGroup(self.module) \
            if not self.checks else None
        try:
            body_fn()
        finally:
            self.access_group = None
            if self.checks:
                checked.thread_end(self)
        if not self.terminated():
            self.builder.branch(blocks["write_back"])
        self.recompute_builder.branch(blocks["run"])
        b = self.builder
        b.position_at_end(blocks["write_back"])
        for name in sorted(self.written):
            base, lltype = self.slot_layout[name]
            b.store(b.load(self.shadows[name], typ=lltype),
                    b.gep(base, [self.flat_tid], source_etype=lltype))
        self.pending, self.shadows = {}, None
        return group

    # ------------------------------------------------------------ recomputed values
    def expr_Var(self, e):
        value = self.pending.pop(e.name, None)
        if value is not None:
            # computed at the top of the thread loop's body, where it dominates every use
            builder, self.builder = self.builder, self.recompute_builder
            try:
                self.store_var(e.name, self.expr(value))
            finally:
                self.recompute_builder, self.builder = self.builder, builder
        return super().expr_Var(e)

    def stmt_Assign(self, s):
        value = self.expr(s.value)
        self.pending.pop(s.name, None)      # the run assigns it itself from here on
        self.store_var(s.name, value)

    def guard(self, guards, check_exit):
        if self.plan is None:
            return None
        b = self.builder
        ok = None
        checks = ([(self.exited, 0)] if check_exit and self.exited else []) + list(guards)
        for flag, expected in checks:
            value = b.load(self.var_ptr(flag), typ=I8)
            this = b.icmp_unsigned("==", value, const(I8, expected))
            ok = this if ok is None else b.and_(ok, this)
        return ok

    def thread_return(self, value):
        if self.plan is not None:
            self.builder.store(const(I8, 1), self.var_ptr(self.exited))
        self.builder.branch(self.thread_next)

    def abort(self):
        self.builder.branch(self.abort_bb)

    def store_ctx(self):
        b = self.builder
        if self.ctx is None:
            self.ctx = self.alloca(CTX, name="ctx")
            eb = self.entry_builder
            eb.store(self.shared_base, eb.gep(self.ctx, [i32(0), i32(1)], source_etype=CTX))
            eb.store(self.err_ptr, eb.gep(self.ctx, [i32(0), i32(2)], source_etype=CTX))
            eb.store(self.dyn_shared_bytes, eb.gep(self.ctx, [i32(0), i32(3)], source_etype=CTX))
            eb.store(self.args_ptr, eb.gep(self.ctx, [i32(0), i32(4)], source_etype=CTX))
        for i, name in enumerate(SPECIALS):
            b.store(self.specials[name], b.gep(self.ctx, [i32(0), i32(0), i32(i)], source_etype=CTX))

    # ------------------------------------------------------------ regions (kernels with barriers)
    def emit_pieces(self, pieces, guards):
        """Lower what ir/fission.py cut a barrier kernel's statements into."""
        for piece in pieces:
            if isinstance(piece, Run):
                self.emit_run(piece, guards)
                continue
            s, uniform, parts = piece.stmt, piece.uniform, piece.parts
            if isinstance(s, ir.Barrier) and self.fibers is not None:
                independent.barrier(self, s, guards)
                continue
            if isinstance(s, ir.Collective) and self.fibers is not None:
                independent.collective(self, s, guards)
                continue
            if isinstance(s, ir.Barrier) and s.named and guards:
                named_barrier_refused(s)
            if self.checks and isinstance(s, (ir.Barrier, ir.Collective)):
                checked.barrier(self, s, guards, self.flag_sites)
            if isinstance(s, ir.Collective):
                self.masked_collective(s, guards)
            elif isinstance(s, ir.If) and uniform is not None:
                self.uniform_if(uniform, parts, guards)
            elif isinstance(s, ir.If):
                self.masked_if(s, parts, guards)
            elif isinstance(s, ir.While) and uniform is not None:
                self.uniform_while(uniform, parts[0], guards)
            elif isinstance(s, ir.While):
                self.masked_while(s, parts[0], guards)
            elif isinstance(s, ir.ForRange) and uniform is not None:
                self.uniform_for(s, uniform, parts[0], guards)
            elif isinstance(s, ir.ForRange):
                self.masked_for(s, parts[0], guards)
            elif isinstance(s, ir.GridSync) and s.scope != "grid":
                cluster.emit_cluster_sync(self, s)
            elif isinstance(s, ir.GridSync):
                cooperative.emit_grid_sync(self, s)

    def emit_run(self, run, guards):
        """The run's uniform assignments, then its thread loop."""
        gathers = bool(run.stmts) and isinstance(run.stmts[-1], ir.WarpGather)
        if gathers:
            warp.prepare(self)
        for s, value in run.hoisted:
            self.store_var(s.name, self.expr(value))
        if not run.stmts:
            return
        first = run.stmts[0]
        if self.checks and isinstance(first, ir.WarpResult) and first.op.op == "syncwarp":
            checked.syncwarp_start(self)
            self.run_guards = guards
        if isinstance(first, (ir.WarpGather, ir.WarpResult)):
            first = first.op
        self.threads(run.stmts, guards, state=self.uniform.state(first))
        if gathers:
            warp.advance(self)

    def uniform_if(self, cond, parts, guards):
        """An if holding a barrier whose condition is the same for the whole block."""
        b = self.builder
        then_bb, else_bb, done = (self.new_block(n) for n in ("uif_then", "uif_else", "uif_end"))
        b.cbranch(self.expr(cond), then_bb, else_bb)
        for bb, pieces in zip((then_bb, else_bb), parts):
            self.builder.position_at_end(bb)
            self.emit_pieces(pieces, guards)
            self.builder.branch(done)
        self.builder.position_at_end(done)

    def uniform_while(self, cond, body, guards):
        """A while loop holding a barrier whose condition is the same for the whole block."""
        head, body_bb, done = self.new_block("uwhile"), self.new_block("uwhile_body"), self.new_block("uwhile_end")
        self.builder.branch(head)
        self.builder.position_at_end(head)
        self.builder.cbranch(self.expr(cond), body_bb, done)
        self.builder.position_at_end(body_bb)
        self.emit_pieces(body, guards)
        self.builder.branch(head)
        self.builder.position_at_end(done)

    def uniform_for(self, s, bounds, body, guards):
        """A range loop holding a barrier with the same bounds for the whole block: one
        loop around its thread loops, its variable one value per block."""
        t = self.locals[s.var]
        start, stop, step = (self.expr(e) for e in bounds)
        counter = self.alloca(start.type, name=s.var + ".block")
        b = self.builder
        b.store(start, counter)
        # a step known at run time (a swapped grid-stride loop): trips counted, as
        # stmt_ForRange counts them, since the counter may pass the type's end at the last
        counted = t.kind == "i" and not isinstance(step, ll.Constant)
        if counted:
            trips = self.range_trips(start, stop, step)
            trip = self.alloca(I64, name=s.var + ".trip")
            b.store(i64(0), trip)
        head, body_bb, done = self.new_block("ufor"), self.new_block("ufor_body"), self.new_block("ufor_end")
        b.branch(head)
        b.position_at_end(head)
        it = b.load(counter, typ=start.type)
        runs = b.icmp_unsigned("<", b.load(trip, typ=I64), trips) if counted \
            else self.range_cond(it, stop, step, t)
        b.cbranch(runs, body_bb, done)
        b.position_at_end(body_bb)
        self.store_var(s.var, it)
        self.emit_pieces(body, guards)
        b = self.builder
        flags = ["nsw"] if t.kind == "i" and not counted else []
        b.store(b.add(b.load(counter, typ=start.type), step, flags=flags), counter)
        if counted:
            b.store(b.add(b.load(trip, typ=I64), i64(1), flags=["nuw"]), trip)
        back_edge = b.branch(head)
        if s.unroll is not None:
            loopmeta.requested(self.module, back_edge, s.unroll)
        b.position_at_end(done)

    def masked_if(self, s, parts, guards):
        flag = self.new_flag("if", s.loc)
        if self.checks:
            checked.branches(self, flag, s)

        def choose():
            b = self.builder
            value = b.select(self.expr(s.cond), const(I8, 1), const(I8, 2))
            b.store(value, self.var_ptr(flag))
        self.thread_loop(choose, guards, state=self.uniform.state(s))
        self.emit_pieces(parts[0], guards + [(flag, 1)])
        self.emit_pieces(parts[1], guards + [(flag, 2)])

    def masked_loop(self, s, guards, init, test, body, step=None):
        """A loop holding a barrier: every thread keeps its own 'still looping' flag;
        the loop ends when no thread is left in it."""
        loop_flag = self.new_flag("loop", s.loc)
        cont_flag = self.new_flag("cont", s.loc) if _continues(s.body) else None
        state = self.uniform.state(s)

        def start():
            init()
            self.builder.store(const(I8, 1), self.var_ptr(loop_flag))
        self.thread_loop(start, guards, state=state)
        b = self.builder
        any_p = self.alloca(I1, name="any_thread")
        head, go, done = self.new_block("mloop"), self.new_block("mloop_body"), self.new_block("mloop_end")
        b.branch(head)
        b.position_at_end(head)
        if self.fibers is not None and isinstance(s, ir.While):
            independent.spin(self, s)
        b = self.builder
        b.store(const(I1, 0), any_p)
        inside = guards + [(loop_flag, 1)]

        def check():
            b = self.builder
            if cont_flag is not None:
                b.store(const(I8, 0), self.var_ptr(cont_flag))
            keep = test()
            b = self.builder
            b.store(b.zext(keep, I8), self.var_ptr(loop_flag))
            b.store(b.or_(b.load(any_p, typ=I1), keep), any_p)
        self.thread_loop(check, inside, state=state)
        b = self.builder
        b.cbranch(b.load(any_p, typ=I1), go, done)
        b.position_at_end(go)
        self.loops.append(MaskedLoop(self, loop_flag, cont_flag))
        body(inside + ([(cont_flag, 0)] if cont_flag is not None else []))
        self.loops.pop()
        if step is not None:
            self.thread_loop(step, inside, state=state)
        self.builder.branch(head)
        self.builder.position_at_end(done)

    def masked_while(self, s, body, guards):
        self.masked_loop(s, guards, lambda: None, lambda: self.expr(s.cond),
                         lambda g: self.emit_pieces(body, g))

    def masked_for(self, s, body, guards):
        t = self.locals[s.var]
        lltype = value_type(t, self.target)
        names = [self.new_hidden(f"{s.var}.{part}", t, lltype) for part in ("it", "stop", "step")]

        def init():
            for name, e in zip(names, (s.start, s.stop, s.step)):
                self.builder.store(self.expr(e), self.var_ptr(name))

        def load(name):
            return self.builder.load(self.var_ptr(name), typ=lltype)

        def test():
            it = load(names[0])
            keep = self.range_cond(it, load(names[1]), load(names[2]), t)
            b = self.builder
            this, after = self.new_block("for_set"), self.new_block("for_tested")
            b.cbranch(keep, this, after)
            b.position_at_end(this)
            self.store_var(s.var, it)
            b.branch(after)
            b.position_at_end(after)
            return keep

        def step():
            b = self.builder
            b.store(b.add(load(names[0]), load(names[2])), self.var_ptr(names[0]))
        self.masked_loop(s, guards, init, test, lambda g: self.emit_pieces(body, g), step)

    def new_hidden(self, base, t, lltype):
        self.flag_count += 1
        name = f"${base}{self.flag_count}"
        self.locals[name] = t
        self.add_slot(name, lltype)
        return name

    def stmt_WarpGather(self, s):
        warp.gather(self, s.op)

    def stmt_WarpResult(self, s):
        warp.result(self, s.op)

    def masked_collective(self, s, guards):
        b = self.builder
        acc = self.alloca(I32, name="collective")
        b.store(i32(1 if s.op == "and" else 0), acc)

        def gather():
            b = self.builder
            p = b.zext(self.expr(s.value), I32)
            old = b.load(acc, typ=I32)
            new = {"count": b.add, "and": b.and_, "or": b.or_}[s.op](old, p)
            b.store(new, acc)
        self.thread_loop(gather, guards, state=self.uniform.state(s))

        def scatter():
            self.store_var(s.name, self.builder.load(acc, typ=I32))
        self.thread_loop(scatter, guards, state=self.uniform.state(s))


def _continues(body):
    """Whether a loop body holds a continue of its own (not of a nested loop)."""
    for s in body:
        if isinstance(s, ir.Continue):
            return True
        if isinstance(s, ir.If) and (_continues(s.then) or _continues(s.orelse)):
            return True
    return False


def _contiguous(b, shape, layout):
    n = len(shape)
    strides = [None] * n
    step = i64(1)
    order = range(n - 1, -1, -1) if layout == "C" else range(n)
    for d in order:
        strides[d] = step
        step = b.mul(step, shape[d])
    return strides


class CpuDeviceEmitter(CpuEmitterBase):
    """A device function: ``ret f(ctx, params...)``, inlined into its callers (those
    holding barriers were inlined into the kernel's IR before, ir/inline.py)."""

    def __init__(self, target, module, function, options):
        params = [value_type(t, target) for _, t in function.params]
        ret = value_type(function.return_type, target)
        name = f"simt.device.{symbol_part(function.name)}.{len(target.functions)}"
        recursive = id(function) in target.recursive
        hidden = [ptr(), I64] if recursive else [ptr()]       # ctx (, stack floor: stack.py)
        llfunc = ll.Function(module, ll.FunctionType(ret, hidden + params), name)
        llfunc.linkage = "internal"
        attribute = inline_attribute(function, recursive)
        if attribute is not None:
            llfunc.attributes.add(attribute)
        super().__init__(target, module, function, llfunc, options)
        target.functions[id(function)] = llfunc
        self.ret_type = ret
        self.stack_floor = llfunc.args[1] if recursive else None
        self.first_param = len(hidden)

    def build(self):
        entry, body = self.start()
        eb = self.entry_builder
        ctx = self.llfunc.args[0]
        self.ctx = ctx
        for i, name in enumerate(SPECIALS):
            self.specials[name] = eb.load(eb.gep(ctx, [i32(0), i32(0), i32(i)], source_etype=CTX), typ=I32)
        self.shared_base = eb.load(eb.gep(ctx, [i32(0), i32(1)], source_etype=CTX), typ=ptr())
        self.err_ptr = eb.load(eb.gep(ctx, [i32(0), i32(2)], source_etype=CTX), typ=ptr())
        self.dyn_shared_bytes = eb.load(eb.gep(ctx, [i32(0), i32(3)], source_etype=CTX), typ=I64)
        self.args_ptr = eb.load(eb.gep(ctx, [i32(0), i32(4)], source_etype=CTX), typ=ptr())
        self.params = []
        for arg, (_, t) in zip(self.llfunc.args[self.first_param:], self.function.params):
            self.params.append(ArrayValue.unpack(eb, t, arg) if isinstance(t, T.Array) else arg)
        if self.stack_floor is not None:
            stack.guard(self, self.function.loc)
        self.emit_stmts(self.function.body)
        if not self.terminated():
            self.ret_default()
        self.finish_entry(body)
        return self.llfunc

    def symbol_pointer(self, index):
        eb = self.entry_builder
        args_type = self.target.kernel_args_type(self.target.kernel)
        field = eb.gep(self.args_ptr, [i32(0), i32(len(self.target.kernel.params) + index)],
                       source_etype=args_type)
        return eb.load(field, typ=ptr())

    def ret_default(self):
        if isinstance(self.ret_type, ll.VoidType):
            self.builder.ret_void()
        else:
            self.builder.ret(ll.Constant(self.ret_type, None))

    def thread_return(self, value):
        if value is None:
            self.builder.ret_void()
            return
        if isinstance(value, ArrayValue):
            value = value.pack(self.builder, self.target)
        self.builder.ret(value)

    def abort(self):
        self.ret_default()

    def store_ctx(self):
        pass


CpuEmitterBase.device_emitter = CpuDeviceEmitter
