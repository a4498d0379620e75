"""Compilation as a list of named stages, each output kept.

A compile runs the front end's stage (``typed_ir``: the Python function typed for its
arguments) and then the stages its back end lists (CPU: ``inlined``, ``llvm_ir``,
``optimized``, ``object``; CUDA: ``llvm_ir``, ``optimized``, ``ptx``). Every output
lands in the binary's ``stages`` dict under its name, so ``kernel.inspect_llvm()`` and
friends read what was made instead of compiling again, and ``SIMT_DUMP=1`` prints each
stage as it is made (``SIMT_DUMP=folder`` writes them to files). Compiled kernels are ``compiler/binary.Binary`` objects.
"""
import os
import sys

from ..config import config
from ..errors import CompileError

FRONT_STAGES = ("typed_ir",)


def typed_ir(pyfunc, arg_types, warp=None, wraparound=False, contract=True):
    """The ``typed_ir`` stage: the kernel's typed IR (device functions it calls included),
    typed for the target's warp facts ``warp`` (an ir.types.Warp; None: the 32-wide one);
    ``wraparound``: numba's negative indices (compiler/wraparound.py); ``contract``:
    products fused into fma as compiler/contract.py says (False under fmad=False)."""
    try:
        from . import family
        from .contract import contract_functions
        from .frontend import FrontEnd          # imported at first compile
        from ..ir import types as T, verify

        def build(kernel_pyfunc, types):
            fn = FrontEnd(kernel_pyfunc, types, is_kernel=True, warp=warp or T.WARP32,
                          wraparound=wraparound).build()
            fn = verify.after("the front end", fn)
            return contract_functions(fn) if contract else fn
        fn = build(pyfunc, arg_types)
        if any(family.launch_nodes(fn)):
            family.resolve(pyfunc, arg_types, fn, build)
    except CompileError as exc:
        if config.debug:
            raise
        raise exc.with_traceback(None) from None     # the message says where
    return fn


def run(stages, value, name):
    """Run ``stages`` ([(stage name, step)]) from ``value``; {stage name: output}."""
    outputs = {}
    for stage, step in stages:
        value = step(value)
        outputs[stage] = value
        if config.dump:
            dump(name, stage, value)
    return outputs


def text(stage, value):
    """A stage's output as text: IR and assembly as they print, object code as a size."""
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes of object code>"
    if stage in FRONT_STAGES or stage == "inlined":
        return format_typed(value)
    return str(value)


def format_typed(fn):
    """The typed IR of a kernel and its device functions as text (ir/printer.py)."""
    from ..ir import printer
    return printer.format_program(fn)


SUFFIXES = {"typed_ir": "simt", "inlined": "simt", "llvm_ir": "ll", "optimized": "ll",
            "ptx": "ptx", "object": "o"}


_dumped = {}          # kernel name -> compiles dumped so far in this process


def dump(name, stage, value):
    """SIMT_DUMP=1 prints a stage on stderr; SIMT_DUMP=folder writes it to
    ``folder/<kernel>.<stage>.<suffix>`` (object code as its bytes; a kernel's second
    compile in a process, another signature or device, as ``<kernel>-2.<stage>...``)."""
    if config.dump in ("1", True):      # True: set from Python (config.dump = True)
        print(f"# simt: {stage} of '{name}'\n{text(stage, value)}\n", file=sys.stderr)
        return
    if stage == "typed_ir":                 # a compile starts: a second one gets name-2
        _dumped[name] = _dumped.get(name, 0) + 1
    count = _dumped.get(name, 1)
    stem = name if count == 1 else f"{name}-{count}"
    os.makedirs(config.dump, exist_ok=True)
    path = os.path.join(config.dump, f"{stem}.{stage}.{SUFFIXES.get(stage, 'txt')}")
    data = value if isinstance(value, (bytes, bytearray)) else text(stage, value).encode()
    with open(path, "wb") as f:
        f.write(data)
