"""Random typed expressions for the fuzzer, with the names and values they read.

Types are NumPy's: the generator asks NumPy (through the evaluator's operators) what an
operation gives, and drops the operations NumPy refuses. Every expression is well-defined:
divisors are never zero nor -1, shift counts and powers stay small, floats reach an integer
cast only clamped and only when bit-exact (``Expr.exact``).
"""
import random
import warnings

import numpy as np

import fuzz_ref as ref
from fuzz_ast import FLOATS, INTS, Expr

DTYPES = INTS + FLOATS + ("bool", "float16")
ARITH = ["+", "-", "*", "//", "%", "/", "&", "|", "^", "<<", ">>", "**"]
COMPARE = ["<", "<=", "==", "!=", ">", ">="]
MAX_DEPTH = 3


def sample(e):
    """A value of ``e``'s type for asking NumPy what an operation gives."""
    if e.dtype is None:
        return e.args[0]
    return e.dtype.type(1)


def dtype_pair(a, b):
    """{'i', 'u64'} for a signed integer beside a uint64 (NumPy 2 compares those exactly)."""
    kinds = set()
    for e in (a, b):
        if e.dtype is not None and e.dtype.kind in "iu":
            kinds.add("u64" if e.dtype == np.uint64 else e.dtype.kind)
    return kinds


def probe(fn, *args):
    """The dtype NumPy gives ``fn(*args)``, or None where it refuses or warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            value = fn(*args)
        except (TypeError, OverflowError, ValueError, ZeroDivisionError, RuntimeWarning,
                DeprecationWarning):
            return None
    return value.dtype if isinstance(value, np.generic) else None


class ExprGenerator:
    """Expressions over the names in scope; ``n`` (threads in the grid) sizes the loads."""

    def __init__(self, seed, features):
        self.features = features
        self.rng = random.Random(seed)
        self.seed = seed
        self.counter = 0
        self.scopes = [[]]
        self.params = []
        self.values = []
        self.exact = {}
        self.functions = []
        self.in_function = False
        self.n = 0

    # names and scopes ------------------------------------------------------------------
    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def visible(self):
        return [v for scope in self.scopes for v in scope]

    def declare(self, name, dtype, flags=frozenset()):
        self.scopes[-1].append((name, dtype, flags))

    def nested(self, make):
        self.scopes.append([])
        try:
            return make()
        finally:
            self.scopes.pop()

    # values ----------------------------------------------------------------------------
    def int_values(self, dtype, size):
        info = np.iinfo(dtype)
        low = max(info.min, -20)
        small = [self.rng.randint(low, 20) for _ in range(size)]
        edges = [info.min, info.max, 0, 1, info.max // 2 + 1, info.min // 2]
        out = []
        for k in range(size):
            pick = self.rng.random()
            if pick < 0.6:
                out.append(small[k])
            elif pick < 0.85:
                out.append(self.rng.randint(int(info.min), int(info.max)))
            else:
                out.append(int(self.rng.choice(edges)))
        return np.array(out, dtype=object).astype(dtype)

    def values_of(self, dtname, size):
        dtype = np.dtype(dtname)
        if dtype.kind == "b":
            return np.array([self.rng.random() < 0.5 for _ in range(size)])
        if dtype.kind == "f":
            return np.array([self.rng.randint(-128, 128) / 8 for _ in range(size)], dtype)
        return self.int_values(dtype, size)

    def param(self, role, dtname, value):
        name = {"in": "a", "scalar": "s", "out": "o", "acc": "acc"}[role] + str(len(self.params))
        self.params.append((name, role, dtname))
        self.values.append(value)
        return name

    def literal(self, partner):
        """A weak Python literal that NumPy accepts beside a value of dtype ``partner``."""
        if partner.kind == "f":
            if self.rng.random() < 0.3:
                return Expr("lit", (self.rng.randint(-9, 9),), None)
            return Expr("lit", (self.rng.choice([0.5, -2.25, 3.0, 1.5, -0.125, 7.0, 100.0]),),
                        None)
        if partner.kind == "b":
            return Expr("lit", (self.rng.randint(0, 9),), None)
        info = np.iinfo(partner)
        if self.rng.random() < 0.15:
            value = int(self.rng.choice([info.min, info.max]))
        else:
            value = self.rng.randint(max(int(info.min), -9), 9)
        return Expr("lit", (value,), None)

    # expressions -----------------------------------------------------------------------
    def leaf(self):
        pick = self.rng.random()
        inputs = [p for p in self.params if p[1] == "in"]
        scalars = [p for p in self.params if p[1] == "scalar"]
        names = self.visible()
        if self.in_function:
            name, dtype, flags = self.rng.choice(names)
            return Expr("var", (name,), dtype, flags)
        if pick < 0.45 and names:
            name, dtype, flags = self.rng.choice(names)
            return Expr("var", (name,), dtype, flags)
        if pick < 0.85 or not scalars:
            name, _, dtname = self.rng.choice(inputs)
            offset = self.rng.choice([0, 0, 1, 3, 31, 32, 33])
            return Expr("load", (name, offset, self.n), np.dtype(dtname))
        name, _, dtname = self.rng.choice(scalars)
        return Expr("var", (name,), np.dtype(dtname))

    def expr(self, depth=0):
        """A typed expression (never a lone weak literal)."""
        if depth >= MAX_DEPTH or self.rng.random() < 0.3:
            return self.leaf()
        for _ in range(20):
            makers = [self.binary] * 6 + [self.unary, self.cast, self.math, self.minmax,
                                          self.select, self.compare]
            if "call" in self.features and (self.functions or not self.in_function):
                makers.append(self.call)
            make = self.rng.choice(makers)
            e = make(depth)
            if e is not None:
                return e
        return self.leaf()

    def operand(self, depth, partner):
        if self.rng.random() < 0.3:
            return self.literal(partner.dtype)
        return self.expr(depth + 1)

    def binary(self, depth):
        sym = self.rng.choice(ARITH)
        a = self.expr(depth + 1)
        b = self.operand(depth, a)
        if sym in ("//", "%", "/"):
            b = self.divisor(b, a)
        elif sym in ("<<", ">>"):
            if b.dtype is None or b.dtype.kind == "f":
                b = Expr("lit", (self.rng.randint(0, 7),), None)
            else:
                b = self.combine("&", b, Expr("lit", (7,), None))
        elif sym == "**":           # small non-negative integer powers
            if b.dtype is None or b.dtype.kind not in "iu":
                b = Expr("lit", (self.rng.randint(0, 3),), None)
            else:
                b = self.combine("&", b, Expr("lit", (3,), None))
        if b is None:
            return None
        if self.rng.random() < 0.3:
            a, b = b, a
            if sym in ("//", "%", "/", "<<", ">>", "**"):
                return None
        if sym in ("//", "%") and not (a.exact and b.exact):
            return None
        e = self.combine(sym, a, b)
        if e is not None and sym == "**" and e.is_float:
            e.flags = e.flags | {"inx"}       # pow is not correctly rounded
        return e

    def divisor(self, b, a):
        """``b`` made nonzero and never -1 (INT_MIN // -1 has no value)."""
        if b.dtype is None:
            value = b.args[0]
            if isinstance(value, float):
                return Expr("lit", (value if value != 0 else 2.0,), None)
            if a.dtype is not None and a.dtype.kind == "u" and value < 0:
                value = -value
            return Expr("lit", (value if abs(value) >= 2 else value + 3,), None)
        if b.dtype.kind == "f":
            d = self.combine("+", Expr("un", ("abs", b), b.dtype, b.flags),
                             Expr("lit", (0.5,), None))
        else:
            d = self.combine("+", self.combine("&", b, Expr("lit", (7,), None)),
                             Expr("lit", (2,), None))
        if d is not None and d.dtype.kind == "i" and self.rng.random() < 0.3:
            d = Expr("un", ("-", d), d.dtype, d.flags)
        return d

    def combine(self, sym, a, b):
        if a is None or b is None or (a.dtype is None and b.dtype is None):
            return None
        dtype = probe(ref.apply_bin, sym, sample(a), sample(b))
        if dtype is None:
            return None
        flags = a.flags | b.flags
        if dtype.kind == "f":
            if sym in ("*",):
                flags |= {"mul"}
            elif sym in ("+", "-"):
                flags |= {"add"}
        if sym in COMPARE and not (a.exact and b.exact):
            return None
        if sym in COMPARE and "cmp64" not in self.features and dtype_pair(a, b) == {"i", "u64"}:
            return None
        return Expr("bin", (sym, a, b), dtype, frozenset(flags) if dtype.kind == "f" else
                    frozenset())

    def compare(self, depth):
        a = self.expr(depth + 1)
        return self.combine(self.rng.choice(COMPARE), a, self.operand(depth, a))

    def condition(self, depth=1):
        """A branch condition: a comparison, an exact value's truth, or two joined."""
        for _ in range(20):
            e = self.compare(depth)
            if self.rng.random() < 0.15:
                e = self.expr(depth)
                e = e if e.exact else None
            if e is not None:
                pick = self.rng.random()
                if pick < 0.15:
                    e = self.combine(self.rng.choice(["&", "|", "^"]), e,
                                     self.compare(depth)) or e
                elif pick < 0.3:
                    other = self.compare(depth)
                    if other is not None:
                        e = Expr("boolop", (self.rng.choice(["and", "or"]), e, other),
                                 np.dtype(bool))
                elif pick < 0.35:
                    e = Expr("un", ("not", e), np.dtype(bool))
                elif pick < 0.45:
                    e = self.chain(depth) or e
                return e
        if self.in_function:            # a device function sees only its parameters
            name, dtype, _ = self.visible()[0]
            same = Expr("var", (name,), dtype)
            return Expr("bin", ("==", same, same), np.dtype(bool))
        return Expr("bin", ("<", Expr("var", ("lane",), np.dtype("int32")),
                            Expr("lit", (self.rng.randint(0, 31),), None)), np.dtype(bool))

    def chain(self, depth):
        """``a < b <= c``: Python's chained comparison, b evaluated once."""
        a, b, c = (self.expr(depth + 1) for _ in range(3))
        ops = [self.rng.choice(COMPARE), self.rng.choice(COMPARE)]
        if self.combine(ops[0], a, b) is None or self.combine(ops[1], b, c) is None:
            return None
        return Expr("chain", (a, ops[0], b, ops[1], c), np.dtype(bool))

    def unary(self, depth):
        a = self.expr(depth + 1)
        sym = self.rng.choice(["-", "~", "abs", "not"])
        if sym == "not" and not a.exact:
            return None
        dtype = probe(ref.apply_un, sym, sample(a))
        if dtype is None:
            return None
        return Expr("un", (sym, a), dtype, a.flags if dtype.kind == "f" else frozenset())

    def cast(self, depth):
        return self.to_type(self.expr(depth + 1), np.dtype(self.rng.choice(DTYPES)))

    def to_type(self, a, dtype):
        """``a`` converted to ``dtype``; floats are clamped first, and only exact ones."""
        if a.dtype == dtype:
            return a
        if a.is_float and dtype.kind != "f":
            if not a.exact:
                return None
            low, high = (-100.0, 100.0) if dtype.kind in "ib" else (0.0, 200.0)
            a = Expr("minmax", ("min", Expr("minmax", ("max", a, Expr("lit", (low,), None)),
                                            a.dtype, a.flags), Expr("lit", (high,), None)),
                     a.dtype, a.flags)
        return Expr("cast", (dtype.name, a), dtype, a.flags if dtype.kind == "f" else
                    frozenset())

    def math(self, depth):
        a = self.expr(depth + 1)
        if a.dtype.kind == "b":
            return None
        fn = self.rng.choice(list(ref.MATH))
        if fn in ("sqrt", "log"):
            a = Expr("un", ("abs", a), a.dtype, a.flags)
            if fn == "log":
                a = self.combine("+", a, Expr("lit", (1,), None))
        elif fn == "exp":
            lim = (Expr("lit", (-10,), None), Expr("lit", (10,), None))
            a = Expr("minmax", ("min", Expr("minmax", ("max", a, lim[0]), a.dtype, a.flags),
                                lim[1]), a.dtype, a.flags)
        if a is None:
            return None
        dtype = probe(ref.apply_math, fn, sample(a))
        flags = a.flags | ({"inx"} if fn != "sqrt" else set())
        return Expr("math", (fn, a), dtype, frozenset(flags))

    def minmax(self, depth):
        a = self.expr(depth + 1)
        b = self.operand(depth, a)
        if b.dtype is None:
            dtype = probe(ref.apply_bin, "+", sample(a), b.args[0])
            if dtype is None or dtype != a.dtype or a.dtype.kind == "b":
                return None
        else:
            dtype = np.result_type(a.dtype, b.dtype)
        return Expr("minmax", (self.rng.choice(["min", "max"]), a, b), dtype,
                    a.flags | b.flags)

    def select(self, depth):
        a = self.expr(depth + 1)
        b = self.to_type(self.expr(depth + 1), a.dtype)
        if b is None:
            return None
        return Expr("sel", (self.condition(depth + 1), a, b), a.dtype, a.flags | b.flags)

    def call(self, depth):
        """A call of a device function (made here, or one made before; inside a function,
        only one made before it, so calls nest and never recurse)."""
        fresh = not self.functions or self.rng.random() < 0.5
        if not self.in_function and len(self.functions) < 3 and fresh:
            self.functions.append(self.function())
        name, params, body, ret = self.rng.choice(self.functions)
        args = []
        for _, dtype in params:
            arg = self.typed(dtype, depth + 1)
            if not arg.exact:
                arg = Expr("cast", (dtype.name, Expr("lit", (3,), None)), dtype)
            args.append(arg)
        return Expr("call", (name, tuple(args)), ret.dtype, ret.flags)

    def function(self):
        """('func', name, [(param, dtype)], [assign statements], return expr)."""
        name = self.fresh("f")
        params = [(self.fresh("p"), np.dtype(self.rng.choice(DTYPES)))
                  for _ in range(self.rng.randint(1, 3))]
        saved, self.scopes, self.in_function = self.scopes, [list(
            (p, t, frozenset()) for p, t in params)], True
        try:
            body = [self.stmt_assign(1) for _ in range(self.rng.randint(0, 2))]
            ret = self.expr()
            early = self.to_type(self.expr(), ret.dtype) if self.rng.random() < 0.4 else None
            if early is not None:
                body.append(("if", [(self.condition(), [("return", early)])], None))
                ret = Expr(ret.op, ret.args, ret.dtype, ret.flags | early.flags)
        finally:
            self.scopes, self.in_function = saved, False
        return (name, params, body, ret)

    def typed(self, dtype, depth=0):
        for _ in range(10):
            e = self.to_type(self.expr(depth), dtype)
            if e is not None:
                return e
        return Expr("cast", (dtype.name, Expr("lit", (1,), None)), dtype)
