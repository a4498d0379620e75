"""Typed IR -> object code for the host CPU, with what a launch needs to know."""
import time
from dataclasses import dataclass

from llvmlite import ir as ll

from ...compiler.binary import Binary
from .. import hostjit as jit
from .emit import CpuKernelEmitter
from ...ir.inline import inline_barrier_calls
from ...ir import printer, verify
from ...ir.walk import all_functions
from .target import CpuTarget


@dataclass
class CpuBinary(Binary):
    """A kernel compiled for the CPU: object code plus its launch metadata."""
    object_code: bytes
    slot_bytes: int               # per thread, for kernels with barriers
    llvm_ir: str = ""
    optimized_ir: str = ""
    compile_seconds: float = 0.0


def compile_kernel(fn, options, pyfunc=None):
    started = time.perf_counter()
    fn = verify.after("the front end", fn)
    fn = verify.after("inline", inline_barrier_calls(fn))   # device functions with barriers
    printer.dump("typed IR", fn)
    module = ll.Module(name=fn.name)
    module.triple = jit.triple()
    tm = jit.target_machine()
    module.data_layout = str(tm.target_data)
    target = CpuTarget(fn, options)
    target.layout_memory(all_functions(fn))
    symbol = f"simt_kernel_{fn.name}"
    emitter = CpuKernelEmitter(target, module, fn, options, symbol)
    emitter.build()
    text = str(module)
    optimized = jit.optimize(text)
    obj = jit.emit_object(optimized)
    return CpuBinary(
        name=fn.name, symbol=symbol, object_code=obj, params=[t for _, t in fn.params],
        symbols=[d.symbol for d in target.symbols],
        shared_static_bytes=target.shared_static_bytes, slot_bytes=emitter.slot_bytes,
        labels=list(target.labels), files=list(target.files),
        messages=list(target.messages), llvm_ir=text,
        optimized_ir=str(optimized) if options.get("keep_ir") else "",
        compile_seconds=time.perf_counter() - started)
