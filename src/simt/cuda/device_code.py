"""The code of a numba device function alone: ``compile_ptx(fn, sig, device=True)`` and
``inspect_asm`` / ``inspect_llvm`` of a ``cuda.jit(sig, device=True)`` function. simt
compiles device functions only into the kernels that call them, so this compiles a
wrapper kernel that calls the function once with its own parameters and stores the
result in ``out[0]``: the PTX and LLVM IR hold the function's code, inlined there (or
called, for ``inline='never'``)."""
from ..errors import NotSupportedError
from ..ir import nodes as ir
from ..ir import types as T
from ..ir import walk

MAX_ARGS = 8


def _wrapper(fn, nargs):
    """A kernel body ``out[0] = fn(a0, ..., a{nargs-1})`` (closures: simt reads fn from
    the wrapper's closure as it reads any name)."""
    if nargs == 0:
        def wrap0(out):
            out[0] = fn()
        return wrap0
    if nargs == 1:
        def wrap1(out, a0):
            out[0] = fn(a0)
        return wrap1
    if nargs == 2:
        def wrap2(out, a0, a1):
            out[0] = fn(a0, a1)
        return wrap2
    if nargs == 3:
        def wrap3(out, a0, a1, a2):
            out[0] = fn(a0, a1, a2)
        return wrap3
    if nargs == 4:
        def wrap4(out, a0, a1, a2, a3):
            out[0] = fn(a0, a1, a2, a3)
        return wrap4
    if nargs == 5:
        def wrap5(out, a0, a1, a2, a3, a4):
            out[0] = fn(a0, a1, a2, a3, a4)
        return wrap5

    if nargs == 6:
        def wrap6(out, a0, a1, a2, a3, a4, a5):
            out[0] = fn(a0, a1, a2, a3, a4, a5)
        return wrap6
    if nargs == 7:
        def wrap7(out, a0, a1, a2, a3, a4, a5, a6):
            out[0] = fn(a0, a1, a2, a3, a4, a5, a6)
        return wrap7

    def wrap8(out, a0, a1, a2, a3, a4, a5, a6, a7):
        out[0] = fn(a0, a1, a2, a3, a4, a5, a6, a7)
    return wrap8


def _statement(fn, nargs):
    """A kernel body calling fn for its effects (a function returning nothing)."""
    if nargs == 0:
        def call0(out):
            fn()
        return call0
    if nargs == 1:
        def call1(out, a0):
            fn(a0)
        return call1
    if nargs == 2:
        def call2(out, a0, a1):
            fn(a0, a1)
        return call2
    if nargs == 3:
        def call3(out, a0, a1, a2):
            fn(a0, a1, a2)
        return call3
    if nargs == 4:
        def call4(out, a0, a1, a2, a3):
            fn(a0, a1, a2, a3)
        return call4
    if nargs == 5:
        def call5(out, a0, a1, a2, a3, a4):
            fn(a0, a1, a2, a3, a4)
        return call5

    if nargs == 6:
        def call6(out, a0, a1, a2, a3, a4, a5):
            fn(a0, a1, a2, a3, a4, a5)
        return call6
    if nargs == 7:
        def call7(out, a0, a1, a2, a3, a4, a5, a6):
            fn(a0, a1, a2, a3, a4, a5, a6)
        return call7

    def call8(out, a0, a1, a2, a3, a4, a5, a6, a7):
        fn(a0, a1, a2, a3, a4, a5, a6, a7)
    return call8


def wrapper_kernel(Dispatcher, fn, arg_types, options):
    """(the wrapper Dispatcher, its argument types, the function's return dtype or None)
    for device function ``fn`` called with ``arg_types`` (simt types), compiled with
    ``options`` (simt's); ``Dispatcher``: cuda.jit's kernel class."""
    arg_types = tuple(arg_types)
    if len(arg_types) > MAX_ARGS:
        raise NotSupportedError(f"the code of device function '{fn.__name__}' alone is made "
                                f"for at most {MAX_ARGS} parameters; it has "
                                f"{len(arg_types)}: compile a kernel that calls it instead")
    probe_out = T.Array(T.INT32.dtype, 1, "C")
    probe = Dispatcher(_statement(fn, len(arg_types)), cache=False, **options)
    typed = probe.typed_ir((probe_out,) + arg_types)
    returns = next((node.type for node in walk.walk(typed) if isinstance(node, ir.CallDevice)),
                   T.VOID)
    if isinstance(returns, T.Void):
        return probe, (probe_out,) + arg_types, None
    if not isinstance(returns, T.Scalar):
        raise NotSupportedError(f"the code of device function '{fn.__name__}' alone is made "
                                f"for functions returning a number, not {returns}: compile a "
                                "kernel that calls it instead")
    kernel = Dispatcher(_wrapper(fn, len(arg_types)), cache=False, **options)
    return kernel, (T.Array(returns.dtype, 1, "C"),) + arg_types, returns.dtype
