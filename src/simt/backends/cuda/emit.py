"""Emitting kernels and device functions for NVIDIA GPUs.

A kernel becomes a ``ptx_kernel`` function whose parameters are its arguments
flattened (params.py): an array is its global data pointer, its extents and,
for non-contiguous layouts, its strides. Device functions are separate
internal LLVM functions taking arrays as structs, always inlined unless
@simt.device(inline="never") asks otherwise.
"""
from llvmlite import ir as ll

from ...ir import types as T
from ...compiler.codegen import FunctionEmitter, inline_attribute
from ...compiler.lltypes import ArrayValue, symbol_part, value_type
from . import checked, params as P
from . import lower  # noqa: F401  (registers this target's lowerings)


class CudaEmitterBase(FunctionEmitter):
    """What kernels and device functions share on the GPU: how device functions are
    emitted (``device_emitter``, set below)."""


class CudaKernelEmitter(CudaEmitterBase):
    kernel_entry = True            # a kernel's return ends its thread (checked mode: checked.py)

    def __init__(self, target, module, function, options, symbol):
        types = [lt for _, t in function.params for lt in P.llvm_types(t)]
        llfunc = ll.Function(module, ll.FunctionType(ll.VoidType(), types), symbol)
        llfunc.calling_convention = "ptx_kernel"
        _grid_constants(module, llfunc, function)
        if options.noalias:
            _restrict(llfunc, function)
        super().__init__(target, module, function, llfunc, options)

    def build(self):
        entry, body = self.start()
        args = iter(self.llfunc.args)
        self.params = [P.unflatten(self.entry_builder, t, args, self.target)
                       for _, t in self.function.params]
        if self.options.checks:
            checked.prologue(self)
        self.emit_stmts(self.function.body)
        if not self.terminated():
            if self.options.checks:
                checked.ended(self)
            self.builder.ret_void()
        self.finish_entry(body)
        return self.llfunc


def _grid_constants(module, llfunc, function):
    """Tensor maps travel by value (``.param .align 64 .b8 [128]``) as grid constants:
    their address is a param-space address (cvta.param) that cp.async.bulk.tensor reads,
    as CUDA C's ``const __grid_constant__ CUtensorMap``, not a local copy."""
    position = 0
    for _, t in function.params:
        count = len(P.llvm_types(t))
        if isinstance(t, T.TensorMap):
            arg = llfunc.args[position]
            arg.attributes.add("byval")
            arg.attributes.align = P.TENSOR_MAP.align
            index = module.add_metadata([ll.Constant(ll.IntType(32), position + 1)])
            module.add_named_metadata("nvvm.annotations", [llfunc, "grid_constant", index])
        position += count


def _restrict(llfunc, function):
    """@simt.kernel(noalias=True): each array parameter's data pointer is ``noalias``, as
    CUDA C's ``__restrict__``: LLVM may keep loads across stores, and reads of arrays the
    kernel never writes become ``ld.global.nc`` (the read-only data cache)."""
    position = 0
    for _, t in function.params:
        types = P.llvm_types(t)
        if isinstance(t, T.Array) and isinstance(types[0], ll.PointerType):
            llfunc.args[position].add_attribute("noalias")
        position += len(types)


class CudaDeviceEmitter(CudaEmitterBase):
    """A device function: ``ret f(params...)``, inlined into its callers."""

    def __init__(self, target, module, function, options):
        params = [value_type(t, target) for _, t in function.params]
        self.ret_type = value_type(function.return_type, target)
        name = f"simt_device_{symbol_part(function.name)}_{len(target.functions)}"
        llfunc = ll.Function(module, ll.FunctionType(self.ret_type, params), name)
        llfunc.linkage = "internal"
        # a recursive one is a real call (.func) whatever its inline option
        attribute = inline_attribute(function, id(function) in target.recursive)
        if attribute is not None:
            llfunc.attributes.add(attribute)
        super().__init__(target, module, function, llfunc, options)
        target.functions[id(function)] = llfunc

    def build(self):
        entry, body = self.start()
        eb = self.entry_builder
        self.params = [ArrayValue.unpack(eb, t, arg) if isinstance(t, T.Array) else arg
                       for arg, (_, t) in zip(self.llfunc.args, self.function.params)]
        self.emit_stmts(self.function.body)
        if not self.terminated():
            if isinstance(self.ret_type, ll.VoidType):
                self.builder.ret_void()
            else:
                self.builder.ret(ll.Constant(self.ret_type, None))
        self.finish_entry(body)
        return self.llfunc


CudaEmitterBase.device_emitter = CudaDeviceEmitter
