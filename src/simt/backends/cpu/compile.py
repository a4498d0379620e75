"""Typed IR -> object code for the host CPU, with what a launch needs to know: the CPU
back end's stages of compiler/pipeline.py."""
import time

from llvmlite import ir as ll

from ...compiler import pipeline
from ...compiler.lltypes import symbol_part
from .binary import CpuBinary
from .. import hostjit as jit
from .emit import CpuKernelEmitter
from ...ir.assigned import check_reads
from ...ir.inline import inline_barrier_calls
from ...ir import verify
from ...ir.walk import all_functions
from .target import CpuTarget


class _Compile:
    """One compile's stages and what they leave for the binary (target, emitter)."""

    def __init__(self, options):
        self.options = options

    def stages(self):
        return [("inlined", self.inline), ("llvm_ir", self.emit),
                ("optimized", jit.optimize), ("object", jit.emit_object)]

    def inline(self, fn):
        """Device functions holding barriers, inlined (ir/inline.py); in checked mode,
        reads of variables a thread may not have assigned, checked (ir/assigned.py)."""
        fn = verify.after("inline", inline_barrier_calls(fn))
        if self.options.checks:
            fn = verify.after("checked reads", check_reads(fn))
        return fn

    def emit(self, fn):
        module = ll.Module(name=fn.name)
        module.triple = jit.triple()
        module.data_layout = str(jit.target_machine().target_data)
        target = self.target = CpuTarget(fn, self.options)
        target.layout_memory(all_functions(fn))
        self.symbol = f"simt_kernel_{symbol_part(fn.name)}"
        self.emitter = CpuKernelEmitter(target, module, fn, self.options, self.symbol)
        self.emitter.build()
        return str(module)


def compile_kernel(fn, options):
    """The CpuBinary of the typed IR ``fn`` compiled with ``options`` (CompileOptions)."""
    started = time.perf_counter()
    job = _Compile(options)
    stages = pipeline.run(job.stages(), fn, fn.name)
    target = job.target
    return CpuBinary(
        name=fn.name, symbol=job.symbol, object_code=stages["object"],
        params=[t for _, t in fn.params], symbols=[d.symbol for d in target.symbols],
        shared_static_bytes=target.shared_static_bytes, slot_bytes=job.emitter.slot_bytes,
        labels=list(target.labels), files=list(target.files),
        messages=list(target.messages), stages=stages,
        symbol_objects=[d.data for d in target.symbols],
        compile_seconds=time.perf_counter() - started, checked=options.checks,
        read_only=tuple(sorted(job.emitter.read_only)),
        owned=tuple(sorted(job.emitter.owned.items())),
        private=job.emitter.private_groups,
        uses_heap=getattr(target, "uses_heap", False),
        launches_kernels=getattr(target, "launches_kernels", False),
        barriers=job.emitter.plan is not None, block=options.block,
        warps=job.emitter.fibers is not None,
        children=tuple(compile_kernel(child, options.replace(block=None))   # launched with
                       for child in fn.launches))                          # shapes of their own
