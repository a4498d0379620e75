"""The independent evaluator: runs a fuzz program's tree with NumPy scalars, block by block.

NumPy 2 decides every type and every integer result (NEP 50 weak literals, wrapping, Python's
floor division). Collectives sit only at the kernel's top level, so the interpreter runs one
top-level statement for every thread of a block before the next one: barriers need no
scheduling, and a warp function sees the operands of all its lanes at once.

Every float value travels with a first-order error bound ``mag``: each step's rounding (an
ulp in that step's precision) carried through the operations that follow (scaled by the other
operand in a product, by the slope in a math function). Values that are not bit-exact on every
backend (an fma may contract, a math function is not correctly rounded) are compared within a
few of those.
"""
import operator

import numpy as np

BIN = {"**": operator.pow, "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
       "//": operator.floordiv, "%": operator.mod, "&": operator.and_, "|": operator.or_,
       "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift, "<": operator.lt,
       "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
       ">=": operator.ge}
MATH = {"sin": np.sin, "cos": np.cos, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
        "tanh": np.tanh, "atan": np.arctan}


class NotFinite(Exception):
    """A float became inf or NaN: the kernel's float results are not comparable (an fma that
    contracts changes where it overflows, and a NaN through a cast is undefined)."""


def apply_bin(sym, x, y):
    with np.errstate(all="ignore"):
        return BIN[sym](x, y)


def apply_un(sym, x):
    if sym == "not":
        return np.bool_(not x)
    with np.errstate(all="ignore"):
        return {"-": operator.neg, "~": operator.invert, "abs": abs}[sym](x)


def apply_cast(dtname, x):
    with np.errstate(all="ignore"):
        return np.array(x).astype(dtname)[()]


def apply_math(fn, x):
    if not isinstance(x, np.floating):
        x = np.float64(x)
    with np.errstate(all="ignore"):
        return MATH[fn](x)


def apply_minmax(fn, x, y):
    """Python's min/max after NumPy promotion (the kernel's value has one type)."""
    t = np.result_type(x, y)
    x, y = apply_cast(t.name, x), apply_cast(t.name, y)
    if fn == "max":
        return y if y > x else x
    return y if y < x else x


def ulp(v):
    """Half an ulp's worth of rounding of float ``v`` in its own precision (0 for ints);
    raises NotFinite for inf and NaN."""
    if not isinstance(v, np.floating):
        return 0.0
    if not np.isfinite(v):
        raise NotFinite()
    return abs(float(v)) * float(np.finfo(v.dtype).eps)


def bin_error(sym, v, x, y, mx, my):
    """First-order error bound of ``x sym y`` from its operands' bounds and its rounding."""
    if not isinstance(v, np.floating):
        return 0.0
    x, y = abs(float(x)), abs(float(y))
    if sym == "*":
        spread = y * mx + x * my
    elif sym == "/":
        spread = mx / y + x * my / (y * y)
    elif sym == "**":
        spread = 3 * max(1.0, x) ** 2 * mx
    else:
        spread = mx + my
    return spread + ulp(v)


def math_error(fn, v, x, mx):
    """Error bound of a math function: its argument's bound through the slope, plus its
    own last bits."""
    x = abs(float(x))
    if fn == "exp":
        spread = abs(float(v)) * mx
    elif fn == "sqrt":
        spread = mx / (2 * abs(float(v))) if x > mx else mx ** 0.5
    else:                      # sin cos tanh atan: slope <= 1; log(u) with u >= 1: 1/u <= 1
        spread = mx
    return spread + 4 * ulp(v)


class Thread:
    """One thread's variables: name -> (value, mag)."""

    def __init__(self, tid, gid):
        self.env = {"tid": (np.int32(tid), 0.0), "gid": (np.int32(gid), 0.0),
                    "lane": (np.int32(tid % 32), 0.0)}
        self.tid, self.gid, self.done = tid, gid, False


def evaluate(e, th, arrays):
    """(value, mag) of expression ``e`` in thread ``th``."""
    op, a = e.op, e.args
    if op == "lit":
        return a[0], 0.0
    if op == "var":
        return th.env[a[0]]
    if op == "load":
        return arrays[a[0]][(th.gid + a[1]) % a[2]], 0.0
    if op == "bin":
        (x, mx), (y, my) = evaluate(a[1], th, arrays), evaluate(a[2], th, arrays)
        v = apply_bin(a[0], x, y)
        return v, bin_error(a[0], v, x, y, mx, my)
    if op == "un":
        x, mx = evaluate(a[1], th, arrays)
        v = apply_un(a[0], x)
        return v, mx + ulp(v)
    if op == "cast":
        x, mx = evaluate(a[1], th, arrays)
        v = apply_cast(a[0], x)
        return v, mx + ulp(v)
    if op == "math":
        x, mx = evaluate(a[1], th, arrays)
        v = apply_math(a[0], x)
        return v, math_error(a[0], v, x, mx)
    if op == "minmax":
        (x, mx), (y, my) = evaluate(a[1], th, arrays), evaluate(a[2], th, arrays)
        v = apply_minmax(a[0], x, y)
        return v, max(mx, my) + ulp(v)
    if op == "call":
        return call(a[0], [evaluate(x, th, arrays) for x in a[1]], arrays)
    if op == "chain":
        x, op1, y, op2, z = a
        vx, vy = evaluate(x, th, arrays)[0], evaluate(y, th, arrays)[0]
        if not apply_bin(op1, vx, vy):
            return np.bool_(False), 0.0
        return np.bool_(apply_bin(op2, vy, evaluate(z, th, arrays)[0])), 0.0
    if op == "boolop":
        x, _ = evaluate(a[1], th, arrays)
        if (a[0] == "and") != bool(x):
            return x, 0.0
        return evaluate(a[2], th, arrays)
    if op == "sel":
        c, _ = evaluate(a[0], th, arrays)
        return evaluate(a[1] if c else a[2], th, arrays)
    raise ValueError(op)


class Frame:
    """A device function's variables."""

    def __init__(self, env):
        self.env, self.gid = env, None


FUNCTIONS = {}
MORE_LOCAL = []          # evaluators of fuzz_more.py's statement kinds: fn(s, th, ...) -> bool
MORE_COLLECTIVE = []     # and of its collectives: fn(s, threads, ...) -> bool


def call(name, args, arrays):
    _, params, body, ret = FUNCTIONS[name]
    frame = Frame({p: value for (p, _), value in zip(params, args)})
    try:
        for s in body:
            run_local(s, frame, arrays, {})
    except Return as done:
        return done.value
    return evaluate(ret, frame, arrays)


class Return(Exception):
    """``return`` in a kernel (no value) or a device function (``value``)."""

    def __init__(self, value=None):
        self.value = value


class Break(Exception):
    pass


class Continue(Exception):
    pass


def run_block_stmts(stmts, th, arrays, mags):
    """Run non-collective statements for one thread."""
    for s in stmts:
        run_local(s, th, arrays, mags)


def run_local(s, th, arrays, mags):
    tag = s[0]
    if tag in ("assign", "aug"):
        th.env[s[1]] = evaluate(s[2], th, arrays)
    elif tag == "tuple":
        values = [evaluate(e, th, arrays) for e in s[2]]
        th.env.update(zip(s[1], values))
    elif tag == "weak":
        th.env[s[1]] = (apply_cast(s[2], s[3].args[0]), 0.0)
    elif tag == "seq":
        run_block_stmts(s[1], th, arrays, mags)
    elif tag == "store":
        value, mag = evaluate(s[2], th, arrays)
        arr = arrays[s[1]]
        arr[th.gid] = apply_cast(arr.dtype.name, value)
        mags[s[1]][th.gid] = mag
    elif tag == "if":
        for cond, body in s[1]:
            if evaluate(cond, th, arrays)[0]:
                run_block_stmts(body, th, arrays, mags)
                return
        if s[2] is not None:
            run_block_stmts(s[2], th, arrays, mags)
    elif tag == "for":
        bounds = [evaluate(b, th, arrays)[0] for b in s[2]]
        typed = any(isinstance(b, np.generic) for b in bounds)
        loop(range(*[int(b) for b in bounds]), s[1], np.result_type(*bounds) if typed else None,
             s[3], th, arrays, mags)
    elif tag == "while":
        _, counter, limit, cond, body = s
        count = 0
        while count < limit and (cond is None or evaluate(cond, th, arrays)[0]):
            count += 1
            th.env[counter] = (count, 0.0)
            try:
                run_block_stmts(body, th, arrays, mags)
            except Break:
                break
            except Continue:
                continue
    elif tag == "return":
        raise Return(s[1] and evaluate(s[1], th, arrays))
    elif tag == "own":
        _, var, fn, acc, args = s
        values = [evaluate(a, th, arrays)[0] for a in args]
        th.env[var] = (own_atomic(arrays[acc], th.gid, fn, values), 0.0)
    elif tag == "local":
        local_array(s, th, arrays)
    elif tag == "break":
        raise Break()
    elif tag == "continue":
        raise Continue()
    elif tag == "atomic":
        _, fn, acc, index, value = s
        atomic(arrays[acc], int(evaluate(index, th, arrays)[0]), fn,
               evaluate(value, th, arrays)[0])
    elif not any(more(s, th, arrays, mags) for more in MORE_LOCAL):
        raise ValueError(tag)


def local_array(s, th, arrays):
    """Fill a per-thread array, rewrite one element, read one back."""
    _, arr, dtname, size, fill, widx, value, ridx, var = s
    (first, fmag), (second, vmag) = evaluate(fill, th, arrays), evaluate(value, th, arrays)
    local = np.full(size, apply_cast(dtname, first))
    local[evaluate(widx, th, arrays)[0]] = apply_cast(dtname, second)
    th.env[var] = (local[evaluate(ridx, th, arrays)[0]], max(fmag, vmag))


def loop(values, var, dtype, body, th, arrays, mags):
    """A for-range loop; the variable has the promoted type of the bounds (weak if all are)."""
    for i in values:
        th.env[var] = (dtype.type(i) if dtype is not None else i, 0.0)
        try:
            run_block_stmts(body, th, arrays, mags)
        except Break:
            break
        except Continue:
            continue


ATOMIC = {"add": operator.add, "sub": operator.sub, "and_": operator.and_,
          "or_": operator.or_, "xor": operator.xor, "min": min, "max": max}


def own_atomic(arr, index, fn, values):
    """An atomic on an element no other thread touches; returns the old value."""
    old = arr[index]
    kind = arr.dtype.type
    if fn == "cas":
        compare, value = (kind(v) for v in values)
        if old.view(f"u{arr.itemsize}") == compare.view(f"u{arr.itemsize}"):
            arr[index] = value
    elif fn == "exch":
        arr[index] = kind(values[0])
    elif fn == "inc":
        arr[index] = 0 if old >= kind(values[0]) else old + kind(1)
    elif fn == "dec":
        value = kind(values[0])
        arr[index] = value if old == 0 or old > value else old - kind(1)
    else:
        atomic(arr, index, fn, values[0])
    return old


def atomic(arr, index, fn, value):
    with np.errstate(all="ignore"):
        arr[index] = ATOMIC[fn](arr[index], arr.dtype.type(value))


def warp_lanes(threads, tid):
    """(first thread of tid's warp, lanes in that warp)."""
    base = tid - tid % 32
    return base, min(32, threads - base)


def shuffle_source(kind, lane, b, width, count):
    """The lane a shuffle reads (PTX shfl.sync with the clamp CUDA derives from ``width``);
    a source outside the segment gives the caller's own value."""
    seg = (32 - width) & 31
    low = lane & seg
    high = low | (31 & ~seg)
    b = int(b) & 31          # PTX reads b[4:0] in every mode
    if kind == "shfl":
        src = low | (b & ~seg)
    elif kind == "shfl_up":
        src = lane - b if lane - b >= low else lane
    elif kind == "shfl_down":
        src = lane + b if lane + b <= high else lane
    else:
        src = lane ^ b if (lane ^ b) <= high else lane
    assert src < count, "the generator only shuffles from lanes that exist"
    return src


def warp_results(kind, args, threads, arrays):
    """Each thread's result of one warp function; ``args`` are per-thread evaluated operands."""
    results = [None] * len(threads)
    for th in threads:
        base, count = warp_lanes(len(threads), th.tid)
        lanes = threads[base:base + count]
        mine = args[th.tid]
        if kind == "activemask":
            v = np.uint32((1 << count) - 1)
        elif kind.startswith("shfl"):
            width = mine[2] if len(mine) > 2 else 32
            src = shuffle_source(kind, th.tid - base, mine[1][0], width, count)
            v = args[base + src][0]
        elif kind in ("ballot", "any", "all"):
            bits = sum(1 << k for k, t in enumerate(lanes) if args[t.tid][0][0])
            full = (1 << count) - 1
            v = {"ballot": np.uint32(bits), "any": np.int32(bits != 0),
                 "all": np.int32(bits == full)}[kind]
        elif kind == "match_all":
            same = all(args[t.tid][0][0] == mine[0][0] for t in lanes)
            v = (np.uint32((1 << count) - 1 if same else 0), np.int32(same))
        elif kind == "match_any":
            v = np.uint32(sum(1 << k for k, t in enumerate(lanes)
                              if args[t.tid][0][0] == mine[0][0]))
        else:
            values = [args[t.tid][0][0] for t in lanes]
            op = {"reduce_add": operator.add, "reduce_min": min, "reduce_max": max,
                  "reduce_and": operator.and_, "reduce_or": operator.or_,
                  "reduce_xor": operator.xor}[kind]
            acc = values[0]
            with np.errstate(all="ignore"):
                for x in values[1:]:
                    acc = op(acc, x)
            v = acc
        results[th.tid] = v if isinstance(v, tuple) else (v, 0.0)
    return results


def run_collective(s, threads, arrays, mags):
    """One top-level collective statement for every thread of a block; False if not one."""
    tag = s[0]
    if tag in ("shared", "dshared"):
        _, arr, dtname, size, value, offset, var = s
        slots = [apply_cast(dtname, evaluate(value, th, arrays)[0]) for th in threads]
        smag = [evaluate(value, th, arrays)[1] for th in threads]
        for th in threads:
            k = (th.tid + offset) % size
            th.env[var] = (slots[k], smag[k])
    elif tag == "synccount":
        _, kind, var, pred = s
        bits = [bool(evaluate(pred, th, arrays)[0]) for th in threads]
        v = {"count": sum(bits), "and": all(bits), "or": any(bits)}[kind]
        for th in threads:
            th.env[var] = (np.int32(v), 0.0)
    elif tag == "warp":
        _, var, kind, wargs = s
        args = [[evaluate(x, th, arrays) if not isinstance(x, int) else x for x in wargs]
                for th in threads]
        for th, result in zip(threads, warp_results(kind, args, threads, arrays)):
            if kind == "match_all":
                th.env[var[0]], th.env[var[1]] = (result[0], 0.0), (result[1], 0.0)
            else:
                th.env[var] = result
    elif tag == "uloop":
        for _ in range(s[2]):
            run_top(s[3], threads, arrays, mags)
    elif tag == "voteif":
        _, kind, pred, body, orelse = s
        args = [[evaluate(pred, th, arrays)] for th in threads]
        taken = warp_results(kind, args, threads, arrays)
        for th, (flag, _) in zip(threads, taken):
            try:
                run_block_stmts(body if flag else orelse, th, arrays, mags)
            except Return:
                th.done = True
    elif tag == "satomic":
        _, arr, dtname, size, init, pred, fn, value, offset, var = s
        shared = np.zeros(size, dtname)
        for th in threads[:size]:
            shared[th.tid] = apply_cast(dtname, evaluate(init, th, arrays)[0])
        for th in threads:
            if evaluate(pred, th, arrays)[0]:
                atomic(shared, th.tid % size, fn, evaluate(value, th, arrays)[0])
        for th in threads:
            th.env[var] = (shared[(th.tid + offset) % size], 0.0)
    else:
        return any(more(s, threads, arrays, mags) for more in MORE_COLLECTIVE)
    return True


def run_top(stmts, threads, arrays, mags):
    """Top-level statements of a block: each runs for every thread before the next one."""
    for s in stmts:
        if not run_collective(s, threads, arrays, mags):
            for th in threads:
                if not th.done:
                    run_thread(s, th, arrays, mags)


def run_thread(s, th, arrays, mags):
    try:
        run_local(s, th, arrays, mags)
    except Return:
        th.done = True


def reference(program):
    """(arrays, mags, comparable): every argument array after the kernel, the float
    magnitude of each output element, and False when a float went non-finite."""
    arrays = {name: value.copy() for (name, role, _), value in zip(program.params, program.values)
              if isinstance(value, np.ndarray)}
    arrays.update({name: value for (name, role, _), value in zip(program.params, program.values)
                   if not isinstance(value, np.ndarray)})
    mags = {name: np.zeros(len(arrays[name])) for name, role, _ in program.params
            if role == "out"}
    scalars = {name: (value, 0.0) for (name, role, _), value in
               zip(program.params, program.values) if role == "scalar"}
    FUNCTIONS.clear()
    FUNCTIONS.update({f[0]: f for f in program.functions})
    try:
        for block in range(program.blocks):
            threads = [Thread(t, block * program.threads + t) for t in range(program.threads)]
            for th in threads:
                th.env.update(scalars)
            run_top(program.body, threads, arrays, mags)
    except NotFinite:
        return arrays, mags, False
    return arrays, mags, True
