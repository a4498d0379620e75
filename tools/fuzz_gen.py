"""Random, well-defined kernels: one seed, one program (statements here, expressions in
fuzz_expr.py).

Well-defined by construction: barriers and warp functions sit at the kernel's top level or in
loops every thread runs alike (every thread of the block reaches them, none has returned),
shuffles read only lanes that exist, atomics on shared targets combine with order-independent
operators and their old value is not used; atomics on a thread's own element keep it.
"""
import numpy as np

from fuzz_ast import FLOATS, INTS, Expr, Program
from fuzz_expr import DTYPES, ExprGenerator
from fuzz_more import ANY_WEIGHTS, KINDS, TOP_WEIGHTS, MoreStatements, ml_dtypes

BLOCKS = [32, 64, 128, 96, 40, 50, 17, 33, 256]
ATOMIC_FNS = ["add", "sub", "min", "max", "and_", "or_", "xor"]
ATOMIC_DTYPES = ["int32", "uint32", "int64", "uint64"]


class Generator(MoreStatements, ExprGenerator):
    """A kernel: its launch, its arguments and its statements."""

    def __init__(self, seed, features):
        super().__init__(seed, features)
        self.threads = self.rng.choice(BLOCKS)
        self.blocks = self.rng.choice([1, 1, 2, 3])
        self.n = self.threads * self.blocks
        self.loop_depth = 0
        self.returned = False
        self.no_return = False
        self.weak_vars = set()                   # assigned a literal first (stmt_weak)
        self.readonly = {"tid", "gid", "lane"}   # and the scalar parameters, loop variables
        self.shape = (self.threads,)
        if "shape2d" in features and self.rng.random() < 0.3:
            pairs = [(x, self.threads // x) for x in range(1, self.threads + 1)
                     if self.threads % x == 0]
            self.shape = self.rng.choice(pairs)

    # statements ------------------------------------------------------------------------
    def block(self, budget, top, depth):
        return [self.statement(top, depth) for _ in range(budget)]

    def statement(self, top, depth):
        kinds = {"assign": 5, "reassign": 3, "store": 2, "atomic": 0.4, "own": 0.8,
                 "local": 0.4, "weak": 0.5, "tuple": 0.4}
        if depth < 2:
            kinds.update({"if": 2, "for": 1, "while": 0.7})
        kinds.update(ANY_WEIGHTS)
        if ml_dtypes is None:
            kinds.pop("lowp")
        if top:
            kinds.update({"shared": 1, "synccount": 0.4, "warp": 4, "voteif": 0.4,
                          "satomic": 0.6, "atomic": 0.8, "uloop": 0.6 if depth < 2 else 0})
            kinds.update(TOP_WEIGHTS)
        if self.loop_depth and not top:
            kinds["jump"] = 1
        if self.returned:
            kinds = {k: w for k, w in kinds.items() if k not in COLLECTIVES}
        elif not self.no_return:
            kinds["return"] = 0.3
        kinds = {k: w for k, w in kinds.items() if k in self.features or k not in FEATURES}
        kind = self.rng.choices(list(kinds), list(kinds.values()))[0]
        return getattr(self, "stmt_" + kind)(depth)

    def sub_block(self, depth):
        return self.nested(lambda: self.block(self.rng.randint(1, 3), False, depth + 1))

    def stmt_assign(self, depth):
        name = self.fresh("v")
        e = self.expr()
        self.declare(name, e.dtype, e.flags)
        return ("assign", name, e)

    def stmt_reassign(self, depth):
        names = [v for v in self.visible() if v[0] not in self.readonly]
        if not names:
            return self.stmt_assign(depth)
        name, dtype, flags = self.rng.choice(names)
        var = Expr("var", (name,), dtype, flags)
        if name in self.weak_vars:
            # v's type is the least one its assignments agree on (API.md): an update written
            # through v itself could lower it, so a typed cast pins it
            e = self.expr()
            if e.is_float and dtype.kind != "f" or not e.flags <= flags:
                return self.stmt_assign(depth)
            e = self.to_type(e, dtype)
            return ("assign", name, e if e.op == "cast" else Expr("cast", (dtype.name, e), dtype,
                                                                 e.flags))
        aug = self.rng.random() < 0.5
        if aug:
            e = self.combine(self.rng.choice(["+", "-", "*", "^", "&", "|"]), var,
                             self.operand(1, var))
            aug = e is not None and e.dtype == dtype
        else:
            e = self.expr()
        e = e and self.to_type(e, dtype)
        if e is None or (dtype.kind == "f" and not e.flags <= flags):
            return self.stmt_assign(depth)
        return ("aug" if aug else "assign", name, e)

    def stmt_store(self, depth):
        e = self.expr()
        dtname = e.dtype.name
        if self.rng.random() < 0.3:
            dtname = self.rng.choice(FLOATS + ("float16",) if e.is_float else DTYPES)
        arr = self.param("out", dtname, self.values_of(dtname, self.n))
        self.exact[arr] = e.exact
        return ("store", arr, e)

    def stmt_if(self, depth):
        arms = [(self.condition(), self.sub_block(depth))
                for _ in range(self.rng.choice([1, 1, 2, 3]))]
        orelse = self.sub_block(depth) if self.rng.random() < 0.5 else None
        return ("if", arms, orelse)

    def stmt_for(self, depth):
        var = self.fresh("i")
        lit = lambda v: Expr("lit", (v,), None)          # noqa: E731
        if self.rng.random() < 0.5:
            bounds = self.rng.choice([[lit(self.rng.randint(0, 6))],
                                      [lit(self.rng.randint(-3, 2)), lit(self.rng.randint(0, 5))],
                                      [lit(6), lit(self.rng.randint(-2, 2)), lit(-2)],
                                      [lit(0), lit(7), lit(3)]])
            dtype = None
        else:
            count = self.to_type(self.expr(1), np.dtype("int32"))
            if count is None:
                count = Expr("var", ("tid",), np.dtype("int32"))
            bounds = [self.combine("&", count, lit(3))]
            dtype = np.dtype("int32")
        self.loop_depth += 1

        def body():
            if dtype is not None:
                self.declare(var, dtype)
                self.readonly.add(var)
            return self.block(self.rng.randint(1, 3), False, depth + 1)
        stmts = self.nested(body)
        self.loop_depth -= 1
        return ("for", var, bounds, stmts)

    def stmt_while(self, depth):
        self.loop_depth += 1
        stmts = self.sub_block(depth)
        self.loop_depth -= 1
        cond = self.condition(2) if self.rng.random() < 0.3 else None
        return ("while", self.fresh("w"), self.rng.randint(1, 5), cond, stmts)

    def stmt_uloop(self, depth):
        """A loop every thread runs the same number of times, with barriers and warp
        functions inside (each shared phase ends with a barrier, so a next trip may write)."""
        saved, self.loop_depth, self.no_return = self.loop_depth, 0, True
        try:
            body = self.nested(lambda: self.block(self.rng.randint(2, 4), True, depth + 1))
        finally:
            self.loop_depth, self.no_return = saved, False
        return ("uloop", self.fresh("r"), self.rng.randint(1, 3), body)

    def stmt_tuple(self, depth):
        """``x, y = e1, e2``: both values are computed before either name changes."""
        names = [v for v in self.visible() if v[0] not in self.readonly | self.weak_vars]
        if len(names) < 2:
            return self.stmt_assign(depth)
        targets = self.rng.sample(names, 2)
        values = []
        for name, dtype, flags in targets:
            other = self.rng.choice(names)
            e = Expr("var", (other[0],), other[1], other[2]) if self.rng.random() < 0.5 \
                else self.expr(1)
            e = self.to_type(e, dtype)
            if e is None or (dtype.kind == "f" and not e.flags <= flags):
                return self.stmt_assign(depth)
            values.append(e)
        return ("tuple", [t[0] for t in targets], values)

    def stmt_jump(self, depth):
        return ("if", [(self.condition(), [(self.rng.choice(["break", "continue"]),)])], None)

    def stmt_return(self, depth):
        """``if cond: return``; no barrier or warp function may follow it."""
        self.returned = True
        return ("if", [(self.condition(), [("return", None)])], None)

    def stmt_own(self, depth):
        """An atomic on the thread's own element: its old value is defined, so it is kept."""
        fn = self.rng.choice(["add", "sub", "exch", "min", "max", "and_", "or_", "xor", "cas",
                              "inc", "dec"])
        choices = (["uint32", "uint64"] if fn in ("inc", "dec") else
                   ATOMIC_DTYPES + (list(FLOATS) if fn in ("add", "sub", "exch", "min", "max",
                                                           "cas") else []))
        dtype = np.dtype(self.rng.choice(choices))
        acc = self.param("acc", dtype.name, self.values_of(dtype.name, self.n))
        args = [self.typed(dtype)]
        if fn == "cas":
            current = Expr("load", (acc, 0, self.n), dtype)
            args.insert(0, current if self.rng.random() < 0.5 else self.typed(dtype))
        if not all(a.exact for a in args):
            return self.stmt_assign(depth)
        var = self.fresh("v")
        self.declare(var, dtype)
        return ("own", var, fn, acc, args)

    def stmt_weak(self, depth):
        """``v = <literal>`` then typed updates in a loop: v has the typed values' type (the
        unification rule of API.md), so the literal is converted to it."""
        dtype = np.dtype(self.rng.choice(INTS + FLOATS))
        var = self.fresh("v")
        start = self.literal(dtype) if dtype.kind != "f" or self.rng.random() < 0.5 else \
            Expr("lit", (self.rng.randint(-3, 3),), None)
        update = self.typed(dtype, 1)      # made before v exists: its type is its own
        flags = frozenset({"add"}) if dtype.kind == "f" else frozenset()
        self.declare(var, dtype, flags)
        self.weak_vars.add(var)
        sym = "+" if dtype.kind == "f" else self.rng.choice(["+", "^", "|", "-"])
        step = self.combine(sym, Expr("var", (var,), dtype, flags), update)
        if update.dtype != dtype or step is None or step.dtype != dtype or \
                not step.flags <= flags:
            return ("assign", var, Expr("cast", (dtype.name, start), dtype))
        trips = Expr("lit", (self.rng.randint(0, 4),), None)
        return ("seq", [("weak", var, dtype.name, start),
                        ("for", self.fresh("i"), [trips], [("aug", var, step)])])

    def stmt_local(self, depth):
        """A per-thread array: filled, one element rewritten, one read back."""
        dtype = np.dtype(self.rng.choice(DTYPES))
        size = self.rng.choice([1, 2, 4, 8])
        fill, value = self.typed(dtype), self.typed(dtype)
        stmt = ("local", self.fresh("la"), dtype.name, size, fill, self.index(size), value,
                self.index(size), self.fresh("v"))
        self.declare(stmt[-1], dtype, fill.flags | value.flags)
        return stmt

    def index(self, size):
        """An int32 index in [0, size)."""
        return self.combine("&", self.typed(np.dtype("int32"), 1), Expr("lit", (size - 1,), None))

    def stmt_shared(self, depth):
        dtype = np.dtype(self.rng.choice(DTYPES))
        value = self.typed(dtype)
        var = self.fresh("v")
        self.declare(var, dtype, value.flags)
        offset = self.rng.choice([0, 1, 5, self.threads - 1, self.rng.randrange(self.threads)])
        # dynamic shared memory: every such array is the same bytes, safe between barriers
        tag = "dshared" if "dynamic" in self.features and self.rng.random() < 0.3 else "shared"
        return (tag, self.fresh("sh"), dtype.name, self.threads, value, offset, var)

    def stmt_synccount(self, depth):
        stmt = ("synccount", self.rng.choice(["count", "and", "or"]), self.fresh("v"),
                self.condition())
        self.declare(stmt[2], np.dtype("int32"))
        return stmt

    def stmt_voteif(self, depth):
        kind = self.rng.choice(["any", "all"])
        return ("voteif", kind, self.condition(), self.sub_block(depth), self.sub_block(depth))

    def stmt_atomic(self, depth):
        dtname, size = self.rng.choice(ATOMIC_DTYPES), self.rng.randint(1, 8)
        acc = self.param("acc", dtname, self.values_of(dtname, size))
        index = Expr("bin", ("%", Expr("var", ("gid",), np.dtype("int32")),
                             Expr("lit", (size,), None)), np.dtype("int32"))
        return ("atomic", self.rng.choice(ATOMIC_FNS), acc, index, self.typed(np.dtype(dtname)))

    def stmt_satomic(self, depth):
        dtname, size = self.rng.choice(ATOMIC_DTYPES), self.rng.randint(1, min(8, self.threads))
        tid = Expr("var", ("tid",), np.dtype("int32"))
        init = self.to_type(self.combine("+", tid, Expr("lit", (self.rng.randint(0, 9),), None)),
                            np.dtype(dtname))
        var = self.fresh("v")
        stmt = ("satomic", self.fresh("sa"), dtname, size, init, self.condition(),
                self.rng.choice(ATOMIC_FNS), self.typed(np.dtype(dtname)),
                self.rng.randrange(size), var)
        self.declare(var, np.dtype(dtname))
        return stmt

    def stmt_warp(self, depth):
        full = self.threads % 32 == 0
        kinds = ["shfl", "shfl_up", "ballot", "any", "all", "match_any", "activemask",
                 "reduce_add", "reduce_min", "reduce_max", "reduce_and", "reduce_or",
                 "reduce_xor"] + (["shfl_down", "shfl_xor"] * 2 if full else []) + (
                 ["match_all"] if full or "matchall" in self.features else [])
        kind = self.rng.choice(kinds)
        int32, uint32 = np.dtype("int32"), np.dtype("uint32")
        if kind.startswith("shfl"):
            value = self.expr()
            args = [value, self.shuffle_operand(kind, full)]
            width = 32 if kind == "shfl" and not full else self.rng.choice([32, 32, 16, 8, 4, 2, 1])
            if width != 32 or self.rng.random() < 0.2:
                args.append(width)
            dtype, flags = value.dtype, value.flags
        elif kind in ("ballot", "any", "all"):
            args = [self.condition()]
            dtype, flags = (uint32 if kind == "ballot" else int32), frozenset()
        elif kind in ("match_any", "match_all"):
            args = [self.typed(np.dtype(self.rng.choice(INTS)))]
            if kind == "match_all" and self.rng.random() < 0.5:     # the same in a warp
                args = [self.combine("//", Expr("var", ("tid",), int32), Expr("lit", (32,), None))]
            dtype, flags = uint32, frozenset()
        elif kind == "activemask":
            args, dtype, flags = [], uint32, frozenset()
        else:
            dtype, flags = self.rng.choice([int32, uint32]), frozenset()
            args = [self.typed(dtype)]
        var = self.fresh("v")
        self.declare(var, dtype, flags)
        if kind == "match_all":
            var = (var, self.fresh("v"))
            self.declare(var[1], int32)
        return ("warp", var, kind, args)

    def shuffle_operand(self, kind, full):
        """The source lane, delta or lane mask; in a partial warp only lanes that exist."""
        lit = lambda v: Expr("lit", (v,), None)          # noqa: E731
        var = lambda n: Expr("var", (n,), np.dtype("int32"))  # noqa: E731
        if kind != "shfl":
            return lit(self.rng.randint(0, 33 if kind == "shfl_up" else 31))
        if full:
            src = self.to_type(self.expr(1), np.dtype("int32"))
            return src if src is not None else lit(self.rng.randint(0, 40))
        # (lane + k) % (lanes in this warp); the count is min(32, T - (tid - lane))
        count = Expr("minmax", ("min", lit(32), self.combine("-", lit(self.threads),
                                                             self.combine("-", var("tid"),
                                                                          var("lane")))),
                     np.dtype("int32"))
        return self.combine("%", self.combine("+", var("lane"), lit(self.rng.randint(0, 40))),
                            count)


COLLECTIVES = {"shared", "synccount", "warp", "voteif", "satomic", "uloop", "pwarp"}
FEATURES = frozenset(KINDS | {"graph", "dynamic", "uloop", "weak", "return", "own", "local", "shape2d", "matchall", "cmp64", "call", "shared", "synccount", "warp", "voteif", "satomic", "atomic",
                      "if", "for", "while", "jump"})


def generate(seed, without=()):
    """The program for ``seed``: the same seed gives the same kernel and the same data.
    ``without``: statement kinds (FEATURES) to leave out."""
    g = Generator(seed, FEATURES - set(without))
    for _ in range(g.rng.randint(2, 4)):
        dtname = g.rng.choice(DTYPES)
        g.param("in", dtname, g.values_of(dtname, g.n))
    for _ in range(g.rng.randint(0, 2)):
        dtname = g.rng.choice(DTYPES)
        name = g.param("scalar", dtname, g.values_of(dtname, 1)[0])
        g.readonly.add(name)
    body = g.block(g.rng.randint(4, 10), True, 0)
    names = g.scopes[0]
    for name, dtype, flags in g.rng.sample(names, min(3, len(names))):
        dtname = dtype.name
        arr = g.param("out", dtname, g.values_of(dtname, g.n))
        g.exact[arr] = Expr("var", (name,), dtype, flags).exact
        body.append(("store", arr, Expr("var", (name,), dtype, flags)))
    if not any(p[1] == "out" for p in g.params):
        body.append(g.stmt_store(0))
    program = Program(seed, g.blocks, g.threads, g.params, g.values, body, g.exact, g.functions)
    program.shape, program.laneid = g.shape, g.rng.random() < 0.3
    if "graph" in g.features:
        program.launch_mode = g.rng.choice(["direct"] * 3 + ["capture", "graph"])
    if "simt.shared.dynamic" in program.source():
        program.shared_bytes = 8 * g.threads
    return program
