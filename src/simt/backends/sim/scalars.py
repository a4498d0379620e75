"""Python source for the scalar operations of generated sim kernels, with the semantics
of compiler/ops.py: the helpers named ``_k_*`` are values.py's (device.py binds them)."""
import numpy as np

from ...errors import NotSupportedError
from ...ir import nodes as ir
from ...ir import types as T


def literal(value, t):
    if isinstance(t, T.Tuple):
        return "(" + "".join(f"{literal(v, it)}, " for v, it in zip(value, t.items)) + ")"
    if isinstance(t, T.Vector):
        return "(" + "".join(f"{literal(v, t.element)}, " for v in value) + ")"
    kind = t.kind
    if kind == "b":
        return repr(bool(value))
    if kind in "iu":
        return repr(int(value))
    if kind == "c":
        z = complex(value)
        return f"complex({literal(z.real, T.FLOAT64)}, {literal(z.imag, T.FLOAT64)})"
    v = float(value)
    if t.is_bfloat16:                       # held as its 16 bits
        from ...lang.bfloat16 import bits
        return repr(int(bits(v)))
    if v != v:
        return "_k_nan"
    if v in (float("inf"), float("-inf")):
        return "_k_inf" if v > 0 else "(-_k_inf)"
    return repr(round_value(v, t))


def round_value(v, t):
    """A Python constant rounded to t now (float32 constants fold at compile time)."""
    if t.dtype == np.float32:
        return float(np.float32(v))
    if t.dtype == np.float16:
        return float(np.float16(v))
    return v


def wrap_fn(t):
    """The name of the function that wraps a Python int into integer type t."""
    return f"_k_wrap_{t.dtype.name}"


def wrap(x, t):
    """x wrapped into integer type t, written out (a call costs more than the arithmetic)."""
    mask = (1 << t.bits) - 1
    if t.kind == "u":
        return f"(({x}) & {mask})"
    half = 1 << (t.bits - 1)
    return f"((({x}) + {half} & {mask}) - {half})"


def round_fn(t):
    """The rounding of float type t, or None for float64 (Python's own)."""
    name = t.dtype.name
    return {"float32": "_k_f32", "float16": "_k_f16", "complex64": "_k_c64"}.get(name)


def rounded(x, t):
    fn = round_fn(t)
    return f"{fn}({x})" if fn else x


def cast(x, src, dst):
    """Source converting x from scalar type src to dst (compiler/ops.py's cast)."""
    if src.dtype == dst.dtype:
        return x
    if src.is_bfloat16:                     # its 16 bits: exact in float32
        return cast(f"_k_v.bf16_decode({x})", T.FLOAT32, dst)
    if dst.is_bfloat16:                     # rounded once, as compiler/ops.py does
        if src.kind == "c":
            x = f"({x}).real"
        return f"_k_v.bf16_encode({x})"
    sk, dk = src.kind, dst.kind
    if dk == "b":
        return f"({x} != 0)"
    if sk == "c":
        if dk != "c":
            return cast(f"({x}).real", T.FLOAT64, dst)
        return rounded(f"complex({x})", dst)
    if dk == "c":
        return rounded(f"complex({cast(x, src, T.FLOAT64)})", dst)
    if sk == "b":
        return f"int({x})" if dk in "iu" else f"float({x})"
    if sk in "iu" and dk in "iu":
        if dst.bits > src.bits and (sk == dk or sk == "u"):
            return x
        return wrap(x, dst)
    if sk in "iu" and dk == "f":
        if dst.dtype == np.float32:
            return f"_k_i2f32({x})"
        return rounded(f"float({x})", dst)
    if sk == "f" and dk in "iu":
        return f"_k_f2i_{dst.dtype.name}({x})"
    if sk == "f" and dk == "f":
        return x if dst.bits > src.bits else rounded(x, dst)
    raise NotSupportedError(f"the sim device cannot convert {src} to {dst}")


def _const_int(e):
    return isinstance(e, ir.Const) and isinstance(e.value, (int, np.integer)) and \
        not isinstance(e.value, bool)


def binop(op, x, y, t, rhs, exact=False):
    """lhs op rhs in type t; ``exact``: leave a float result unrounded (its store into a
    float32 memoryview rounds it the same way)."""
    if exact:
        return binop(op, x, y, T.FLOAT64, rhs)
    kind = t.kind
    if kind == "b":
        sym = {"and": "&", "or": "|", "xor": "^", "min": "&", "max": "|", "add": "|",
               "mul": "&", "sub": "^"}.get(op)           # i1 arithmetic, as LLVM does it
        if sym is None:
            raise NotSupportedError(f"operator {op} on bool")
        return f"({x} {sym} {y})"
    if kind in "iu":
        if op in ("add", "sub", "mul"):
            return wrap(f"{x} {'+' if op == 'add' else '-' if op == 'sub' else '*'} {y}", t)
        if op in ("and", "or", "xor"):
            return f"({x} {'&' if op == 'and' else '|' if op == 'or' else '^'} {y})"
        if op in ("min", "max"):
            return f"{op}({x}, {y})"
        if op == "floordiv":
            if _const_int(rhs) and int(rhs.value) > 0:
                return f"({x} // {y})"
            return f"_k_fdiv_{t.dtype.name}({x}, {y})"
        if op == "mod":
            if _const_int(rhs) and int(rhs.value) != 0:
                return f"({x} % {y})"
            return f"_k_imod({x}, {y})"
        if op == "lshift":
            return f"_k_shl_{t.dtype.name}({x}, {y})"
        if op == "rshift":
            if _const_int(rhs) and 0 <= int(rhs.value) < t.bits:
                return f"({x} >> {y})"
            return f"_k_shr_{t.dtype.name}({x}, {y})"
        if op == "pow":
            return f"_k_ipow_{t.dtype.name}({x}, {y})"
        raise NotSupportedError(f"operator {op} on {t}")
    if kind == "c":
        if op in ("add", "sub", "mul"):
            sym = {"add": "+", "sub": "-", "mul": "*"}[op]
            return rounded(f"({x} {sym} {y})", t)
        if op == "truediv":
            return rounded(f"_k_cdiv({x}, {y})", t)
        if op == "pow":
            return rounded(f"_k_cpow({x}, {y})", t)
        raise NotSupportedError(f"operator {op} is not supported on complex numbers in kernels")
    sym = {"add": "+", "sub": "-", "mul": "*"}.get(op)
    if sym:
        return rounded(f"({x} {sym} {y})", t)
    if op in ("min", "max"):
        return f"{op}({x}, {y})"
    helper = {"truediv": "_k_truediv", "floordiv": "_k_ffloordiv", "mod": "_k_fmod",
              "pow": "_k_fpow"}.get(op)
    if helper is None:
        raise NotSupportedError(f"operator {op} on {t}")
    return rounded(f"{helper}({x}, {y})", t)
