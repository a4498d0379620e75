"""Typed IR -> object code for the host CPU, with what a launch needs to know."""
import time
from dataclasses import dataclass, field

from llvmlite import ir as ll

from ...compiler import pipeline
from ...compiler.lltypes import ptr, value_type
from ...compiler.pipeline import Staged
from .. import hostjit as jit
from .emit import CpuKernelEmitter
from ...ir.inline import inline_barrier_calls
from .target import CpuTarget


@dataclass
class CpuBinary(Staged):
    """A kernel compiled for the CPU: object code, its launch metadata and its stages."""
    name: str
    symbol: str
    object_code: bytes
    params: list                  # simt types of the parameters
    symbols: list                 # global names of module-level Constant/Global arrays
    shared_static_bytes: int
    slot_bytes: int               # per thread, for kernels with barriers
    labels: list                  # array names, by id, for error reports
    files: list                   # (function, filename) by id
    messages: list                # assert messages
    stages: dict = field(default_factory=dict)      # stage name -> its output (pipeline.py)
    symbol_objects: list = None   # the Constant/Global objects of ``symbols``, in order
    compile_seconds: float = 0.0


def all_functions(fn):
    seen, order = set(), []

    def visit(f):
        if id(f) in seen:
            return
        seen.add(id(f))
        order.append(f)
        for callee in f.callees:
            visit(callee)
    visit(fn)
    return order


class _Compile:
    """One compile's stages and what they leave for the binary (target, emitter)."""

    def __init__(self, options):
        self.options = options

    def stages(self):
        return [("inlined", inline_barrier_calls),    # device functions holding barriers
                ("llvm_ir", self.emit), ("optimized", jit.optimize),
                ("object", jit.emit_object)]

    def emit(self, fn):
        module = ll.Module(name=fn.name)
        module.triple = jit.triple()
        tm = jit.target_machine()
        module.data_layout = str(tm.target_data)
        target = self.target = CpuTarget(fn, self.options)
        target.data_layout = tm.target_data
        target.messages = []
        target.layout_memory(all_functions(fn))
        target.kernel_args_type = lambda f: args_struct(f, target)
        self.symbol = f"simt_kernel_{fn.name}"
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
        compile_seconds=time.perf_counter() - started)


def args_struct(fn, target):
    fields = [value_type(t, target) for _, t in fn.params]
    fields += [ptr()] * len(target.symbols)
    return ll.LiteralStructType(fields)
