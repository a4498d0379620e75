"""``simt.asm(template, constraints, *args, result=..., volatile=False, fallback=None)``:
inline PTX, CUDA C's ``asm volatile(...)``, with LLVM's inline-asm constraints.

The typing rule checks the call against its constraints here, once for every device:
``template`` and ``constraints`` are compile-time strings; each output constraint
(``=r``, ``=&l``...) has a dtype of ``result`` and each input (``r``, ``l``, ``f``, ``d``,
``h``, ``n``, or a digit tying it to that output) an argument of its type (an array for
``l`` passes the generic address of its first element, as a pointer in CUDA C); ``$N``
in the template names an operand that exists. The node it builds holds the inputs and,
with a ``fallback`` (a ``@simt.device`` function taking the same arguments and returning
the same result), a call of the fallback as its last argument; the inputs are then bound to
temporaries first, so each is evaluated once whichever one a device runs. The GPU's
lowering (backends/cuda/lower/asm.py) makes an LLVM ``InlineAsm`` call of the inputs; the
CPU and sim devices' lowerings evaluate the fallback call, and without one are a
CompileError at the line (PTX runs on GPUs only).
"""
import inspect
import re

import numpy as np

from ..ir import nodes as ir
from ..ir.inline import holds_barriers
from ..ir import types as T
from .registry import Intrinsic, Static

# constraint letter -> (what it holds, for messages; the type a Python literal becomes;
# whether a type fits it)
LETTERS = {
    "r": ("a 32-bit integer (int32, uint32)", T.INT32,
          lambda t: t.kind in "iu" and t.bits == 32),
    "l": ("a 64-bit integer (int64, uint64)", T.INT64,
          lambda t: t.kind in "iu" and t.bits == 64),
    "f": ("a float32", T.FLOAT32, lambda t: t.kind == "f" and t.bits == 32),
    "d": ("a float64", T.FLOAT64, lambda t: t.kind == "f" and t.bits == 64),
    "h": ("a 16-bit value (int16, uint16, float16, bfloat16)", T.Scalar(np.int16),
          lambda t: t.bits == 16 and t.kind in "iuf"),
}
CASTS = {"r": "np.int32(...) or simt.float_as_int(x)", "l": "np.int64(...)",
         "f": "np.float32(...) or simt.int_as_float(x)", "d": "np.float64(...)",
         "h": "np.int16(...) or np.float16(...)"}
OPERAND = re.compile(r"\$(?:(\d+)|\{(\d+)(?::\w+)?\})")


def _strings(fc, args, loc):
    if len(args) < 2:
        fc.fail(loc, "simt.asm(template, constraints, *args) needs the PTX template and the "
                "constraint string", 'e.g. simt.asm("add.s32 $0, $1, $2;", "=r,r,r", a, b, '
                "result=np.int32)")
    texts = []
    for value, what in zip(args[:2], ("template", "constraints")):
        if not (isinstance(value, Static) and isinstance(value.value, str)):
            fc.fail(loc, f"simt.asm: the {what} must be a compile-time string",
                    "write a string literal, or name a module-level string constant")
        texts.append(value.value)
    return texts


def parse_constraints(fc, text, loc):
    """(outputs, inputs, clobbers): lists of the constraint codes, in order."""
    outputs, inputs, clobbers = [], [], []
    codes = [c.strip() for c in text.split(",")] if text.strip() else []
    for code in codes:
        if code.startswith("~"):
            clobbers.append(code)
        elif code.startswith("="):
            if inputs or clobbers:
                fc.fail(loc, f"simt.asm: the output constraint {code!r} comes after an input "
                        "or clobber", "list the outputs first: \"=r,=r,r,r,~{memory}\"")
            outputs.append(code)
        elif code.startswith("+"):
            fc.fail(loc, f"simt.asm: read-write constraints ({code!r}) are not LLVM's",
                    "write an output \"=r\" and an input \"0\" tied to it, passing the value")
        else:
            if clobbers:
                fc.fail(loc, f"simt.asm: the input constraint {code!r} comes after a clobber",
                        "list the clobbers (~{memory}) last")
            inputs.append(code)
    for code in outputs:
        if code.lstrip("=&") not in LETTERS:
            fc.fail(loc, f"simt.asm: unknown output constraint {code!r}",
                    "outputs are =r, =l, =f, =d or =h (=&r: written before the inputs are read)")
    for code in inputs:
        if code not in LETTERS and code != "n" and not (code.isdigit() and
                                                         int(code) < len(outputs)):
            fc.fail(loc, f"simt.asm: unknown input constraint {code!r}",
                    "inputs are r (32-bit int), l (64-bit int), f (float32), d (float64), "
                    "h (16 bits), n (a compile-time integer) or the number of an output "
                    "they share a register with")
    return outputs, inputs, clobbers


def _result_types(fc, result, outputs, loc):
    """The result's type (VOID, a Scalar or a Tuple) and one scalar type per output."""
    value = result.value if isinstance(result, Static) else result
    if not isinstance(result, Static):
        fc.fail(loc, "simt.asm: result= must be a dtype, a tuple of dtypes or None")
    dtypes = [] if value is None else list(value) if isinstance(value, (tuple, list)) else [value]
    types = [T.element_type(fc.static_dtype(Static(d), loc)) for d in dtypes]
    if len(types) != len(outputs):
        fc.fail(loc, f"simt.asm: the constraints name {len(outputs)} output(s) "
                f"({', '.join(outputs) or 'none'}) and result= gives {len(types)} dtype(s)",
                "give one dtype per =constraint: result=np.int32, result=(np.int32, np.int32), "
                "or result=None without outputs")
    for i, (code, t) in enumerate(zip(outputs, types)):
        what, _, fits = LETTERS[code.lstrip("=&")]
        if not isinstance(t, T.Scalar) or t.kind == "b" or not fits(t):
            fc.fail(loc, f"simt.asm: output ${i} ({code!r}) holds {what}, and result= gives "
                    f"{t} for it", "match the dtype to the constraint letter")
    if value is None:
        return T.VOID, types
    return (T.Tuple(types) if isinstance(value, (tuple, list)) else types[0]), types


def _input(fc, value, code, index, out_types, loc):
    """Argument ``index`` (operand $index) checked against its constraint ``code``."""
    if code == "n":
        if not (isinstance(value, Static) and isinstance(value.value, (int, np.integer))
                and not isinstance(value.value, bool)):
            fc.fail(loc, f"simt.asm: operand ${index} ('n') must be a compile-time integer")
        return ir.Const(T.INT32 if -2**31 <= value.value < 2**31 else T.INT64, loc,
                        int(value.value))
    v = fc.expr(value, loc)
    t = v.type
    if isinstance(t, T.Array):
        if code != "l":
            fc.fail(loc, f"simt.asm: operand ${index} is an array, which passes its address: "
                    f"its constraint must be 'l', not {code!r}",
                    "pass a[i:] for the address of element i")
        return v
    if code.isdigit():
        want = out_types[int(code)]
        if _literal_fits(t, want):
            return fc.cast(v, want, loc)
        if t != want:
            fc.fail(loc, f"simt.asm: operand ${index} is tied to output ${code} ({want}) and "
                    f"is a {t}", f"pass a {want}")
        return v
    what, literal, fits = LETTERS[code]
    if isinstance(t, T.Scalar) and t.weak and t.kind in "iuf":
        if not _literal_fits(t, literal):
            fc.fail(loc, f"simt.asm: operand ${index} ({code!r}) holds {what}, and this is a "
                    f"float literal", f"convert with {CASTS[code]}")
        return fc.cast(v, literal, loc)
    if not isinstance(t, T.Scalar) or t.kind in "bc" or not fits(t):
        fc.fail(loc, f"simt.asm: operand ${index} ({code!r}) holds {what}, and the argument "
                f"is a {t}", f"convert it: {CASTS[code]}")
    return v


def _literal_fits(t, want):
    """Whether ``t`` is a Python literal that may become a ``want`` (an int anything, a
    float only a float)."""
    return isinstance(t, T.Scalar) and t.weak and (t.kind in "iu" or t.kind == want.kind == "f")


def _weakly_equal(returned, wanted):
    """Whether a fallback's result type is the asm's, but for Python literals in it."""
    if isinstance(returned, T.Tuple) and isinstance(wanted, T.Tuple):
        return len(returned.items) == len(wanted.items) and all(
            _weakly_equal(r, w) for r, w in zip(returned.items, wanted.items))
    return returned == wanted or (isinstance(wanted, T.Scalar) and _literal_fits(returned, wanted))


def _check_operands(fc, template, count, loc):
    for m in OPERAND.finditer(template.replace("$$", "")):
        n = int(m.group(1) or m.group(2))
        if n >= count:
            fc.fail(loc, f"simt.asm: the template names ${n}, and there are {count} operands "
                    f"($0 to ${count - 1})" if count else
                    f"simt.asm: the template names ${n}, and there are no operands",
                    "outputs are numbered first, then inputs, in constraint order")


def _reusable(fc, value, loc):
    """An expression read twice (by the asm and by the fallback call): a variable read,
    parameter or constant as it is, anything else bound to a temporary first."""
    if isinstance(value, ir.Var):
        return lambda: ir.Var(value.type, loc, value.name)
    if isinstance(value, ir.Param):
        return lambda: ir.Param(value.type, loc, value.index)
    if isinstance(value, ir.Const):
        return lambda: ir.Const(value.type, loc, value.value)
    if isinstance(value, ir.ArrayRef):
        return lambda: ir.ArrayRef(value.type, loc, value.decl)
    name = fc.temp("asm")
    fc.hoist(*fc.bind_name(name, value, loc))
    t = value.type
    return lambda: ir.Var(t, loc, name)


def _fallback_call(fc, fallback, inputs, result_type, loc):
    function = fc.static(fallback, "simt.asm's fallback=", loc)
    if not hasattr(function, "_simt_device"):
        fc.fail(loc, f"simt.asm: fallback= must be a @simt.device function, got {function!r}")
    wanted = len(inspect.signature(function.pyfunc).parameters)
    if wanted != len(inputs):
        fc.fail(loc, f"simt.asm: the fallback '{function.__name__}' takes {wanted} "
                f"argument(s) and the asm has {len(inputs)} input(s)",
                "the fallback takes the asm's arguments, in order")
    makers = [_reusable(fc, v, loc) for v in inputs]
    call = fc.call_device(function, [make() for make in makers], loc)
    returned = call.type
    if returned != result_type and _weakly_equal(returned, result_type):
        call = fc.cast(call, result_type, loc)
    elif returned != result_type:
        fc.fail(loc, f"simt.asm: the fallback '{function.__name__}' returns {returned} and "
                f"the asm's result is {result_type}",
                "return the same types (convert with np.int32(...) ...), or nothing for "
                "result=None")
    if result_type == T.VOID and holds_barriers(call.function):
        fc.fail(loc, f"simt.asm: the fallback '{function.__name__}' holds barriers or warp "
                "functions, and an asm without results cannot have such a fallback: the CPU "
                "and sim devices inline it, which needs a call with a value",
                "give the asm an output the PTX sets (\"=r\", result=np.int32) and return a "
                "value from the fallback")
    return [make() for make in makers], call


def _asm_build(fc, args, kwargs, loc):
    template, constraints = _strings(fc, args, loc)
    options = dict(kwargs)
    result = options.pop("result", Static(None))
    volatile = fc.static(options.pop("volatile", Static(False)), "volatile=", loc)
    fallback = options.pop("fallback", Static(None))
    if options:
        fc.fail(loc, f"simt.asm() has no argument {', '.join(sorted(options))}",
                "its keywords are result=, volatile= and fallback=")
    outputs, inputs, clobbers = parse_constraints(fc, constraints, loc)
    result_type, out_types = _result_types(fc, result, outputs, loc)
    values = args[2:]
    if len(values) != len(inputs):
        fc.fail(loc, f"simt.asm: the constraints name {len(inputs)} input(s) "
                f"({', '.join(inputs) or 'none'}) and {len(values)} argument(s) are given",
                "pass one argument per input constraint, in order")
    operands = [_input(fc, v, code, len(outputs) + i, out_types, loc)
                for i, (v, code) in enumerate(zip(values, inputs))]
    _check_operands(fc, template, len(outputs) + len(inputs), loc)
    has_fallback = not (isinstance(fallback, Static) and fallback.value is None)
    attrs = {"template": template, "constraints": ",".join(outputs + inputs + clobbers),
             "volatile": bool(volatile),
             "fallback": has_fallback, "outputs": len(outputs)}
    if has_fallback:
        operands, call = _fallback_call(fc, fallback, operands, result_type, loc)
        operands.append(call)
    return asm.node(result_type, loc, operands, attrs)


asm = Intrinsic(
    "asm", "simt.asm(template, constraints, *args, result=None, volatile=False, "
    "fallback=None): inline PTX (CUDA C's asm volatile), with LLVM's inline-asm "
    "constraints: outputs first (=r 32-bit int, =l 64-bit int, =f float32, =d float64, "
    "=h 16 bits), then one input per argument (the same letters, n a compile-time integer, "
    "or an output's number to share its register), then clobbers (~{memory}); $0, $1... "
    "in the template are the operands in that order. result= gives the outputs' dtypes: "
    "None (no outputs), a dtype, or a tuple of dtypes (the call returns a tuple). "
    "volatile=True keeps the asm where it is even if its results are unused (an asm "
    "without outputs always is). The CPU and sim devices run fallback, a @simt.device "
    "function taking the same arguments and returning the same result; without one, "
    "compiling for them is a CompileError at the line.", _asm_build)


def no_fallback(device):
    """(message, hint) of the CompileError for an asm without a fallback on ``device``."""
    return (f"simt.asm is PTX, which runs only on GPUs, and has no fallback= for the "
            f"{device} device",
            "give fallback=f, a @simt.device function taking the asm's arguments and "
            "returning its result (None for result=None), which the cpu and sim devices run "
            "instead")
