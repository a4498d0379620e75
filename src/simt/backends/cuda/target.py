"""The CUDA target: what differs on NVIDIA GPUs when lowering typed IR to
LLVM IR for LLVM's NVPTX back end.

Address spaces: global 1, shared 3, const 4; local arrays stay generic (0)
allocas, which NVPTX turns into registers or .local memory. Special registers
and barriers are NVVM intrinsics; math calls go to libdevice
(``__nv_sinf`` ...), linked in by compile.py.
"""
import numpy as np
from llvmlite import ir as ll

import simt.fault as fault
from ...ir import types as T
from ...compiler.lltypes import I8, I32, I64, function, i32, i64, memory, ptr, symbol_part
from ...compiler.target import FAULT_IDS, Target
from . import atomics, checked, devlaunch, externcall, loops, mathcalls, texlower, warp

COLLECTIVE = {"count": "llvm.nvvm.barrier0.popc", "and": "llvm.nvvm.barrier0.and",
              "or": "llvm.nvvm.barrier0.or"}


class CudaTarget(Target):
    """Per-target facts and lowerings for NVIDIA GPUs (NVPTX)."""

    name = "cuda"
    fma_by_flags = True             # compiler/target.py
    arch = "sm_90"                  # the compile's target, set by compile.py
    addrspaces = {"global": 1, "shared": 3, "const": 4, "local": 0, "generic": 0,
                  "copy": 0}
    special_registers = {"threadIdx": "tid", "blockIdx": "ctaid", "blockDim": "ntid",
                         "gridDim": "nctaid"}
    math_functions = mathcalls.LIBDEVICE
    math_aliases = mathcalls.ALIASES
    math_prefix = "__nv_"
    fast_math_functions = mathcalls.FAST
    fence_scopes = {"block": "block", "device": "device"}

    loop_hint = staticmethod(loops.loop_hint)
    counted_range_loops = True
    texture_op = staticmethod(texlower.texture_op)
    laneid = staticmethod(warp.laneid)
    device_launch = staticmethod(devlaunch.emit)
    kernel_entries = ()            # the family's entries by index (compile.py, devlaunch.py)
    links_device_code = True       # external device code is called and linked (linker.py)
    ptx_isa = None                 # a later PTX ISA (major, minor) a lowering's instruction needs

    def __init__(self, kernel, options):
        super().__init__(kernel, options)
        self.shared_globals = {}       # id(MemoryDecl) -> its shared global (shared_data)
        self.check_plan = None         # checked mode: the shared arrays it shadows (checked.py)

    def layout_memory(self, functions):
        super().layout_memory(functions)
        if getattr(self.options, "checks", False):
            self.check_plan = checked.Plan(functions, self.shared_static_bytes)
            self.shared_static_bytes += checked.state_bytes(self.check_plan)
            checked.warn_dropped(self.check_plan, self.kernel)

    def call_extern(self, em, extern, args):
        return externcall.call_extern(em, extern, args)

    @property
    def externs(self):
        """name -> ExternFunction called by the kernel (the compile links their files)."""
        return self.__dict__.setdefault("_externs", {})

    def symbol_global(self, decl):
        """Module global of a Constant (its contents) or a Global (a pointer to its memory);
        the runtime fills both in after loading the module."""
        return f"simt_symbol_{self.symbol_index(decl)}"

    def symbol_table(self):
        """[(Python name, module global, 'array' or 'pointer')] for the runtime."""
        return [(d.symbol, f"simt_symbol_{i}",
                 "array" if getattr(d.data, "readonly", False) else "pointer")
                for i, d in enumerate(self.symbols)]

    # ---------------------------------------------------------------- values
    def special(self, em, op):
        kind, axis = op.split(".")
        name = f"llvm.nvvm.read.ptx.sreg.{self.special_registers[kind]}.{axis}"
        return em.builder.call(function(em.module, name, ll.FunctionType(I32, [])), [])

    # ---------------------------------------------------------------- memory
    def shared_data(self, em, decl):
        # one global per declaration, whichever function names it (a barrier passed to a
        # device function names its kernel's storage there: a second global would be
        # another, uninitialized barrier); named by order, not by the declaration's
        # address: the same kernel gives the same PTX in every process (the driver's JIT
        # cache is keyed by the PTX text)
        if id(decl) in self.shared_globals:
            return self.shared_globals[id(decl)]
        # (cuda.jit code: numba's name, _cudapy_smem_N)
        name, n = "_cudapy_smem" if decl.numba else f"simt_shared_{symbol_part(decl.name)}", 1
        while f"{name}_{n}" in em.module.globals:
            n += 1
        name = f"{name}_{n}"
        gv = _global(em.module, name, decl, self.addrspace("shared"))
        gv.linkage = "internal"
        gv.initializer = ll.Constant(gv.value_type, ll.Undefined)
        self.shared_globals[id(decl)] = gv
        return gv

    def dynamic_shared_data(self, em):
        name = "simt_dynamic_shared"
        gv = em.module.globals.get(name)
        if gv is None:
            gv = ll.GlobalVariable(em.module, ll.ArrayType(I8, 0), name,
                                   addrspace=self.addrspace("shared"))
            gv.linkage = "external"
            gv.align = 16
        size = em.builder.call(ll.InlineAsm(ll.FunctionType(I32, []),
                                            "mov.u32 $0, %dynamic_smem_size;", "=r",
                                            side_effect=False), [])
        data = ll.FormattedConstant(ptr(self.addrspace("shared")), gv.get_reference())
        return data, em.builder.zext(size, I64)

    def symbol_data(self, em, decl):
        module, const = em.module, self.addrspace("const")
        name = self.symbol_global(decl)
        gv = module.globals.get(name)
        if getattr(decl.data, "readonly", False):     # Constant: the array itself, in const space
            if gv is None:
                gv = _global(module, name, decl, const)
                gv.initializer = ll.Constant(gv.value_type, None)   # written after loading
            return gv
        if gv is None:                                # Global: a pointer to one device allocation
            gv = ll.GlobalVariable(module, ptr(self.addrspace("global")), name, addrspace=const)
            gv.initializer = ll.Constant(gv.value_type, None)
            gv.align = 8
        return em.builder.load(gv, typ=gv.value_type)

    def atomic_rmw(self, em, op, address, value, t, scope="device", order="relaxed"):
        return atomics.atomic_rmw(self, em, op, address, value, t, scope, order)

    def atomic_cas(self, em, address, cmp, new, scope="device", order="relaxed"):
        if cmp.type.width == 16:
            return atomics.cas16(em, address, cmp, new, scope, order)
        return super().atomic_cas(em, address, cmp, new, scope, order)

    check_access = staticmethod(checked.check_access)

    def heap_malloc(self, em, nbytes):
        """The CUDA runtime's device malloc (the driver links it when it loads the PTX)."""
        b = em.builder
        raw = b.call(function(em.module, "malloc", ll.FunctionType(ptr(), [I64])), [nbytes])
        space = ptr(self.addrspace("global"))
        null = b.icmp_unsigned("==", b.ptrtoint(raw, I64), i64(0))
        return b.select(null, ll.Constant(space, None), b.addrspacecast(raw, space))

    def heap_free(self, em, data, loc):
        fn = function(em.module, "free", ll.FunctionType(ll.VoidType(), [ptr()]))
        em.builder.call(fn, [em.builder.addrspacecast(data, ptr())])

    # ---------------------------------------------------------------- statements
    def call_print(self, em, text, buf, count):
        fn = function(em.module, "vprintf", ll.FunctionType(I32, [ptr(), ptr()]))
        em.builder.call(fn, [text, buf])

    def record_fault(self, em, code, words, extra=(), ids=None):
        """Into host-mapped memory (readable even when the context is in trouble), then
        PTX ``exit``: the device stays usable and the runtime raises the error at the
        next synchronizing call. simt.trap() ends with ``trap`` instead: the launch fails
        and the context is lost, as CUDA's ``__trap()`` does. ``extra``: (word, value)
        pairs of checked mode's words (the other thread, the index: simt/fault.py);
        ``ids``: the block and thread words (i64) when not this thread's."""
        b = em.builder
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
        if ids is None:
            ids = [b.zext(self.special(em, name), I64) for name in FAULT_IDS]
        for i, w in enumerate(words + ids):
            b.store(w, b.gep(record, [i64(i + 1)], source_etype=I64))
        for i, w in extra:
            b.store(w, b.gep(record, [i64(i)], source_etype=I64))
        b.fence("seq_cst")
        b.branch(done)
        b.position_at_end(done)
        end = "trap;" if code == fault.TRAP else "exit;"
        b.call(ll.InlineAsm(ll.FunctionType(ll.VoidType(), []), end, "", side_effect=True), [])
        b.unreachable()

    def emit_barrier(self, em, stmt):
        if stmt.cpu_only:
            return None
        if self.options.checks and (stmt.tile or stmt.named):
            checked.refuse(em, "tile barriers (cg.tiled_partition of 64 threads or more)"
                           if stmt.tile else "named barriers (simt.barrier_sync)", stmt.loc)
        if stmt.tile:
            return self.tile_barrier(em, stmt.tile)
        if stmt.named:
            return self.named_barrier(em, stmt.named)
        if self.options.checks:
            return checked.barrier(em, stmt.loc)
        fn = function(em.module, "llvm.nvvm.barrier0", ll.FunctionType(ll.VoidType(), []))
        em.builder.call(fn, [])

    def emit_warp(self, em, stmt):
        if not self.options.checks:
            return warp.emit_warp(em, stmt)
        args = [em.expr(a) for a in stmt.args]
        if stmt.op.partition(".")[0] not in ("activemask", "elect", "exchange"):
            checked.own_lane(em, args[0], stmt.loc)
        if stmt.op == "syncwarp":
            return checked.syncwarp(em, args[0])   # orders the warp's lanes' accesses
        return warp.emit_warp(em, stmt, args)

    def emit_grid_sync(self, em, stmt):
        if self.options.checks:         # a block barrier too: checked as one first
            checked.barrier(em, stmt.loc)
        warp.emit_grid_sync(em, stmt)

    def named_barrier(self, em, named):
        """simt.barrier_sync(id) or (id, count): PTX ``bar.sync id`` / ``bar.sync id, count``
        (barrier.sync.aligned: whole warps take part, as CUTLASS's named barriers)."""
        args = [em.expr(e) for e in named]
        name = "llvm.nvvm.barrier.cta.sync.aligned." + ("count" if len(args) == 2 else "all")
        fn = function(em.module, name, ll.FunctionType(ll.VoidType(), [I32] * len(args)))
        em.builder.call(fn, args)

    def tile_barrier(self, em, n):
        """The barrier of this thread's tile of n threads (lang/cg_tiles.py): named barrier
        1 + the tile's index in the block, counting n threads (PTX barrier.sync id, n)."""
        b = em.builder
        tid = [self.special(em, f"threadIdx.{axis}") for axis in "xyz"]
        ntid = [self.special(em, f"blockDim.{axis}") for axis in "xy"]
        rank = b.add(b.mul(b.add(b.mul(tid[2], ntid[1]), tid[1]), ntid[0]), tid[0])
        index = b.add(b.lshr(rank, i32(n.bit_length() - 1)), i32(1))
        fn = function(em.module, "llvm.nvvm.barrier.cta.sync.count",
                      ll.FunctionType(ll.VoidType(), [I32, I32]))
        b.call(fn, [index, i32(n)])

    def emit_collective(self, em, op, value, loc=None):
        if self.options.checks:         # a barrier too: checked as one first
            checked.barrier(em, loc)
        fn = function(em.module, COLLECTIVE[op], ll.FunctionType(I32, [I32]))
        result = em.builder.call(fn, [em.builder.zext(value, I32)])
        if op != "count":
            result = em.builder.zext(em.builder.icmp_unsigned("!=", result, i32(0)), I32)
        return result

    def emit_return(self, em, value):
        if self.options.checks and getattr(em, "kernel_entry", False):
            checked.returned(em)        # excused from the barriers after this
        super().emit_return(em, value)


def _global(module, name, decl, addrspace):
    elem = memory(T.element_type(decl.dtype))
    gv = ll.GlobalVariable(module, ll.ArrayType(elem, int(np.prod(decl.shape))), name,
                           addrspace=addrspace)
    gv.align = decl.align
    return gv
