"""The fuzzer's program tree: expressions and statements, and their rendering as kernel source.

One tree feeds two readers: ``render`` writes the simt kernel, ``fuzz_ref`` interprets it with
NumPy scalars. Nodes are plain tuples so that a program prints and compares easily.
"""
import numpy as np

FULL = 0xFFFFFFFF
FLOATS = ("float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


class Expr:
    """An expression: ``op`` names the node, ``args`` its parts, ``dtype`` its NumPy dtype
    (None for a weak Python literal), ``flags`` how its float value was made:
    'mul' and 'add' (an fma may contract the pair), 'inx' (a math function, not correctly
    rounded)."""

    __slots__ = ("op", "args", "dtype", "flags")

    def __init__(self, op, args, dtype, flags=frozenset()):
        self.op, self.args, self.dtype, self.flags = op, args, dtype, flags

    @property
    def is_float(self):
        return self.dtype is not None and self.dtype.kind == "f"

    @property
    def exact(self):
        """True where every backend must give this value bit for bit."""
        if not self.is_float:
            return True
        return "inx" not in self.flags and not {"mul", "add"} <= self.flags


def np_name(dtname):
    """The NumPy attribute for a dtype name ('bool' is np.bool_)."""
    return "bool_" if dtname == "bool" else dtname


def render_expr(e):
    op, a = e.op, e.args
    if op == "lit":
        return repr(a[0]) if a[0] >= 0 else f"({a[0]!r})"
    if op == "var":
        return a[0]
    if op == "load":
        return f"{a[0]}[(gid + {a[1]}) % {a[2]}]"
    if op == "bin":
        return f"({render_expr(a[1])} {a[0]} {render_expr(a[2])})"
    if op == "un":
        inner = render_expr(a[1])
        return {"-": f"(-{inner})", "~": f"(~{inner})", "abs": f"abs({inner})",
                "not": f"(not {inner})"}[a[0]]
    if op == "cast":
        return f"np.{np_name(a[0])}({render_expr(a[1])})"
    if op == "math":
        return f"math.{a[0]}({render_expr(a[1])})"
    if op == "minmax":
        return f"{a[0]}({render_expr(a[1])}, {render_expr(a[2])})"
    if op == "call":
        return f"{a[0]}({', '.join(render_expr(x) for x in a[1])})"
    if op == "chain":
        x, op1, y, op2, z = a
        return f"({render_expr(x)} {op1} {render_expr(y)} {op2} {render_expr(z)})"
    if op == "boolop":
        return f"({render_expr(a[1])} {a[0]} {render_expr(a[2])})"
    if op == "sel":
        return f"({render_expr(a[1])} if {render_expr(a[0])} else {render_expr(a[2])})"
    raise ValueError(op)


WARP_CALLS = {"match_all": "match_all_sync", "shfl": "shfl_sync", "shfl_up": "shfl_up_sync", "shfl_down": "shfl_down_sync",
              "shfl_xor": "shfl_xor_sync", "ballot": "ballot_sync", "any": "any_sync",
              "all": "all_sync", "match_any": "match_any_sync"}


def render_warp(kind, args):
    """The call for a warp statement ('warp', var, kind, args)."""
    if kind == "activemask":
        # which lanes activemask() returns is the device's choice (CUDA: threads on one path
        # may diverge; the H100 does); with a ballot of every lane the result is defined
        return f"(simt.activemask() | simt.ballot_sync({FULL:#x}, True))"
    if kind.startswith("reduce_"):
        return f"simt.{kind}_sync({FULL:#x}, {render_expr(args[0])})"
    parts = [f"{FULL:#x}"] + [render_expr(x) if isinstance(x, Expr) else repr(x) for x in args]
    return f"simt.{WARP_CALLS[kind]}({', '.join(parts)})"


def render_block(stmts, indent):
    out = []
    for s in stmts:
        out.extend(render_stmt(s, indent))
    return out or [" " * indent + "pass"]


def _assign(s, pad, ind):
    return [f"{pad}{s[1]} = {render_expr(s[2])}"]


def _weak(s, pad, ind):
    return [f"{pad}{s[1]} = {render_expr(s[3])}"]


def _seq(s, pad, ind):
    return render_block(s[1], ind)


def _aug(s, pad, ind):
    sym, _, operand = s[2].args
    return [f"{pad}{s[1]} {sym}= {render_expr(operand)}"]


def _store(s, pad, ind):
    return [f"{pad}{s[1]}[gid] = {render_expr(s[2])}"]


def _if(s, pad, ind):
    lines = []
    for k, (cond, body) in enumerate(s[1]):
        lines.append(f"{pad}{'if' if k == 0 else 'elif'} {render_expr(cond)}:")
        lines += render_block(body, ind + 4)
    if s[2] is not None:
        lines.append(f"{pad}else:")
        lines += render_block(s[2], ind + 4)
    return lines


def _for(s, pad, ind):
    bounds = ", ".join(render_expr(b) for b in s[2])
    return [f"{pad}for {s[1]} in range({bounds}):"] + render_block(s[3], ind + 4)


def _tuple(s, pad, ind):
    values = ", ".join(render_expr(e) for e in s[2])
    return [f"{pad}{', '.join(s[1])} = {values}"]


def _while(s, pad, ind):
    _, counter, limit, cond, body = s
    more = f" and {render_expr(cond)}" if cond is not None else ""
    return ([f"{pad}{counter} = 0", f"{pad}while {counter} < {limit}{more}:",
             f"{pad}    {counter} += 1"] + render_block(body, ind + 4))


def _jump(s, pad, ind):
    return [pad + s[0]]


def _return(s, pad, ind):
    return [pad + "return" + (f" {render_expr(s[1])}" if s[1] is not None else "")]


def _own(s, pad, ind):
    _, var, fn, acc, args = s
    values = ", ".join(render_expr(a) for a in args)
    return [f"{pad}{var} = simt.atomic.{fn}({acc}, gid, {values})"]


def _local(s, pad, ind):
    _, arr, dtname, size, fill, widx, value, ridx, var = s
    return [f"{pad}{arr} = simt.local.array({size}, np.{np_name(dtname)})",
            f"{pad}for k in range({size}):",
            f"{pad}    {arr}[k] = {render_expr(fill)}",
            f"{pad}{arr}[{render_expr(widx)}] = {render_expr(value)}",
            f"{pad}{var} = {arr}[{render_expr(ridx)}]"]


def _shared(s, pad, ind):
    _, arr, dtname, size, value, offset, var = s
    make = (f"simt.shared.dynamic(np.{np_name(dtname)})" if s[0] == "dshared" else
            f"simt.shared.array({size}, np.{np_name(dtname)})")
    return [f"{pad}{arr} = {make}",
            f"{pad}{arr}[tid] = {render_expr(value)}",
            f"{pad}simt.syncthreads()",
            f"{pad}{var} = {arr}[(tid + {offset}) % {size}]",
            f"{pad}simt.syncthreads()"]


def _uloop(s, pad, ind):
    return [f"{pad}for {s[1]} in range({s[2]}):"] + render_block(s[3], ind + 4)


def _synccount(s, pad, ind):
    return [f"{pad}{s[2]} = simt.syncthreads_{s[1]}({render_expr(s[3])})"]


def _warp(s, pad, ind):
    target = ", ".join(s[1]) if isinstance(s[1], tuple) else s[1]
    return [f"{pad}{target} = {render_warp(s[2], s[3])}"]


def _voteif(s, pad, ind):
    _, kind, pred, body, orelse = s
    return ([f"{pad}if simt.{kind}_sync({FULL:#x}, {render_expr(pred)}):"]
            + render_block(body, ind + 4) + [f"{pad}else:"] + render_block(orelse, ind + 4))


def _atomic(s, pad, ind):
    _, fn, acc, index, value = s
    return [f"{pad}simt.atomic.{fn}({acc}, {render_expr(index)}, {render_expr(value)})"]


def _satomic(s, pad, ind):
    _, arr, dtname, size, init, pred, fn, value, offset, var = s
    return [f"{pad}{arr} = simt.shared.array({size}, np.{dtname})",
            f"{pad}if tid < {size}:",
            f"{pad}    {arr}[tid] = {render_expr(init)}",
            f"{pad}simt.syncthreads()",
            f"{pad}if {render_expr(pred)}:",
            f"{pad}    simt.atomic.{fn}({arr}, tid % {size}, {render_expr(value)})",
            f"{pad}simt.syncthreads()",
            f"{pad}{var} = {arr}[(tid + {offset}) % {size}]",
            f"{pad}simt.syncthreads()"]


# statement tag -> renderer (the evaluator's fuzz_ref.run_local reads the same tags)
RENDER = {
    "assign": _assign, "weak": _weak, "seq": _seq, "aug": _aug, "store": _store, "if": _if,
    "for": _for, "tuple": _tuple, "while": _while, "break": _jump, "continue": _jump,
    "return": _return, "own": _own, "local": _local, "shared": _shared, "dshared": _shared,
    "uloop": _uloop, "synccount": _synccount, "warp": _warp, "voteif": _voteif,
    "atomic": _atomic, "satomic": _satomic}


def render_stmt(s, ind):
    return RENDER[s[0]](s, " " * ind, ind)


class Program:
    """A generated kernel with its launch and its arguments.

    ``params``: (name, role, dtype name) with role 'in' (array read), 'scalar', 'out' (array
    written at [gid]) or 'acc' (array updated by atomics); ``values``: the host value of each.
    """

    shape = None          # the block's shape when 2-D (threads = x * y)
    laneid = False        # lane from simt.laneid() rather than tid % 32
    shared_bytes = 0      # the launch's dynamic shared memory
    launch_mode = "direct"  # or 'capture' (a stream capture) or 'graph' (Graph.add_kernel)

    def __init__(self, seed, blocks, threads, params, values, body, exact, functions=()):
        self.seed, self.blocks, self.threads = seed, blocks, threads
        self.params, self.values, self.body = params, values, body
        self.exact = exact      # output array -> its float values must match bit for bit
        self.functions = list(functions)     # (name, [(param, dtype)], [assign], return expr)

    @property
    def n(self):
        return self.blocks * self.threads

    def source(self, name="kernel"):
        args = ", ".join(p[0] for p in self.params)
        head = [f"# generated by tools/fuzz.py: seed {self.seed}, "
                f"launch [{self.blocks}, {self.block}]"
                + (f" ({self.launch_mode})" if self.launch_mode != "direct" else ""),
                "import math", "", "import numpy as np", "", "import simt",
                "from simt import blockDim, blockIdx, threadIdx", "", ""]
        for fname, fparams, fbody, ret in self.called():
            head += ["@simt.device", f"def {fname}({', '.join(p for p, _ in fparams)}):"]
            head += render_block(fbody, 4) if fbody else []
            head += [f"    return {render_expr(ret)}", "", ""]
        head += ["@simt.kernel", f"def {name}({args}):",
                ] + self.indices()
        return "\n".join(head + render_block(self.body, 4)) + "\n"

    def called(self):
        """The device functions the kernel reaches (a reduced program may drop some calls);
        a function only calls ones made before it."""
        text, keep = "\n".join(render_block(self.body, 4)), []
        for function in reversed(self.functions):
            if function[0] + "(" in text:
                keep.insert(0, function)
                text += "\n".join(render_block(function[2], 4)) + render_expr(function[3])
        return keep

    @property
    def block(self):
        """The launch's block: an int, or (x, y) for a 2-D block."""
        return tuple(self.shape) if self.shape and len(self.shape) == 2 else self.threads

    def indices(self):
        """The kernel's first lines: tid (linear in the block), gid and lane."""
        if isinstance(self.block, tuple):
            lines = ["    tid = threadIdx.x + threadIdx.y * blockDim.x",
                     "    gid = blockIdx.x * (blockDim.x * blockDim.y) + tid"]
        else:
            lines = ["    tid = threadIdx.x", "    gid = blockIdx.x * blockDim.x + threadIdx.x"]
        return lines + ["    lane = simt.laneid()" if self.laneid else "    lane = tid % 32"]

    def arguments(self):
        """Fresh copies of the host arguments, in parameter order."""
        return [v.copy() if isinstance(v, np.ndarray) else v for v in self.values]
