"""Arrays each of whose elements only one thread of a launch (or of a block) touches.

A global array parameter that a kernel writes and uses only as ``a[i]``, ``a[i] = v``
and ``a.shape`` (no atomic, view or call takes it) cannot race in a launch when all its
accesses are at one index that no two threads share: each element is one thread's, whose
accesses are ordered among themselves (*owned* arrays). This pass finds the parameters
whose every access has one index *affine* in the thread and block
indices and the counters of the range loops around it (``blockIdx.x * blockDim.x +
threadIdx.x``, ``out[x, y + j]`` in ``for j in range(0, 32, 8)``), with coefficients and
offsets the same for the whole launch (constants, ``blockDim``, ``gridDim``, scalar
parameters, array shapes). Whether such an index takes distinct values for distinct
threads depends on the launch (``blockIdx.x * 32 + threadIdx.x`` does for blocks of up to
32 threads only), so the pass writes each array's indices as a *spec* of plain tuples,
and ``backends/cpu/disjoint.py`` decides at each launch (checked mode then needs no
check of these accesses when the array is fully written: shadow.ShadowMemory.owned_mask).
``private_shared`` does the same for the accesses of a static shared array within each
barrier interval, for one block.

A spec: ``(forms, loops, fits)``. ``forms``: one per dimension, ``(terms, offset)``, the
index as ``offset + sum(coefficient * variable)``; a variable is ``("t", axis)``
(threadIdx), ``("b", axis)`` (blockIdx) or ``("k", n)`` (the trip counter of loop n: its
variable is ``start + step * k``); coefficients and offsets are uniform values:
``("c", v)``, ``("p", index)`` (a scalar parameter), ``("s", index, dim)`` (a parameter's
shape), ``("d", "blockDim.x")``, ``("+", u, v)``, ``("*", u, v)``.
``loops``: n -> (start form, stop, step). ``fits``: (form, signed, bits) of each integer
value computed on the way, which must not wrap for the form to be the value.
Every access of one array must have the same spec (the same dimensions' forms); an
array with any other access is left out.
"""
from . import nodes as ir
from .walk import children as _children
from .walk import fields, walk

_THREAD = {"threadIdx.x": ("t", 0), "threadIdx.y": ("t", 1), "threadIdx.z": ("t", 2),
           "blockIdx.x": ("b", 0), "blockIdx.y": ("b", 1), "blockIdx.z": ("b", 2)}
_LAUNCH = frozenset({"blockDim.x", "blockDim.y", "blockDim.z",
                     "gridDim.x", "gridDim.y", "gridDim.z"})
_UNKNOWN = object()


class _No(Exception):
    """A value that is not affine in the thread variables with launch-wide coefficients."""


class Form:
    """offset + sum(terms[var] * var): terms and offset uniform specs."""

    def __init__(self, terms=None, offset=("c", 0)):
        self.terms, self.offset = dict(terms or {}), offset

    def uniform(self):
        return not self.terms

    def spec(self):
        return (tuple(sorted(self.terms.items())), self.offset)


def _add(u, v):
    if u == ("c", 0):
        return v
    if v == ("c", 0):
        return u
    if u[0] == v[0] == "c":
        return ("c", u[1] + v[1])
    return ("+", u, v)


def _mul(u, v):
    if u == ("c", 1):
        return v
    if v == ("c", 1):
        return u
    if u == ("c", 0) or v == ("c", 0):
        return ("c", 0)
    if u[0] == v[0] == "c":
        return ("c", u[1] * v[1])
    return ("*", u, v)


def _plus(f, g):
    terms = dict(f.terms)
    for var, c in g.terms.items():
        terms[var] = _add(terms[var], c) if var in terms else c
    return Form(terms, _add(f.offset, g.offset))


def _scaled(f, u):
    return Form({var: _mul(c, u) for var, c in f.terms.items()}, _mul(f.offset, u))


def owned_specs(function):
    """((parameter index, spec), ...) of the kernel's global array parameters that it
    writes and uses as ``a[i]``, ``a[i] = v`` and ``a.shape`` only, each access at an
    affine index, all of one array alike (each element is then one thread's)."""
    candidates = _direct_only(function)
    if not candidates:
        return ()
    walker = _Walker(function, candidates)
    walker.stmts(function.body, {})
    found = []
    for index in sorted(candidates):
        specs = walker.sites.get(index)
        if specs and None not in specs and len(set(specs)) == 1:
            forms, fits = specs[0]
            used = _loops_used(forms, fits, walker.loops)
            found.append((index, (forms, tuple((n, walker.loops[n]) for n in sorted(used)),
                                  fits)))
    return tuple(found)


def _direct_only(function):
    """The global array parameters written and used only as the array of ``a[i]``,
    ``a[i] = v`` and ``a.shape``."""
    found = {i for i, (_, t) in enumerate(function.params)
             if getattr(t, "space", None) == "global" and hasattr(t, "ndim") and i < 63}
    stored = set()
    for node in walk(*function.body):
        if isinstance(node, ir.Store) and isinstance(node.array, ir.Param):
            stored.add(node.array.index)
        for name, value in fields(node):
            direct = (isinstance(node, (ir.Store, ir.Load)) and name == "array") or \
                (isinstance(node, ir.ArrayAttr) and name == "array" and node.attr == "shape")
            for item in (value if isinstance(value, list) else [value]):
                if isinstance(item, ir.Param) and not direct:
                    found.discard(item.index)
    return found & stored


def _loops_used(forms, fits, loops):
    """The loop counters the forms name, and those their loops' starts name."""
    used, todo = set(), [f for f in forms] + [f for f, _, _ in fits]
    while todo:
        terms, _ = todo.pop()
        for (kind, n), _ in terms:
            if kind == "k" and n not in used:
                used.add(n)
                todo.append(loops[n][0])
    return used


def private_shared(function):
    """{decl id: (decl, [(spec, ids of its Load and Store nodes)])}: the static shared arrays used
    only as ``s[i]`` and ``s[i] = v`` (and ``s.shape``), and for each, the accesses whose
    barrier intervals (ir/intervals.py) access that array at one index form only: when
    that form takes distinct values for distinct threads of a block (decided with the
    block's shape: backends/cpu/disjoint.private_in_block), no other thread touches an
    element such an access touches in its interval, so it cannot race. ``spec`` as
    owned_specs makes them."""
    from .intervals import _Flow
    graph = _Flow(function.body)
    labels = graph.intervals()
    uses, unfit = {}, set()
    for node, exprs in graph.exprs.items():
        for root in exprs:
            direct = set()
            for e in walk(root):
                if isinstance(e, (ir.Load, ir.Store)) and isinstance(e.array, ir.ArrayRef):
                    direct.add(id(e.array))
                    uses.setdefault(id(e.array.decl), []).append((e, node, e.array.decl))
                elif isinstance(e, ir.ArrayAttr) and isinstance(e.array, ir.ArrayRef):
                    direct.add(id(e.array))
            for e in walk(root):
                if isinstance(e, ir.ArrayRef) and id(e) not in direct:
                    unfit.add(id(e.decl))       # a view, an atomic, a call's argument
    walker = _Walker(function, set())
    walker.shared = True
    walker.stmts(function.body, {})
    found = {}
    for decl_id, sites in uses.items():
        decl = sites[0][2]
        if decl_id in unfit or decl.space != "shared":
            continue
        per_label = {}
        for access, node, _ in sites:
            for label in labels[node]:
                per_label.setdefault(label, set()).add(walker.forms.get(id(access)))
        groups = {}
        for access, node, _ in sites:
            specs = set()
            for label in labels[node]:
                specs |= per_label[label]
            if len(specs) == 1 and None not in specs:
                groups.setdefault(specs.pop(), []).append(id(access))
        if groups:
            found[decl_id] = (decl, [(_with_loops(spec, walker.loops), frozenset(ids))
                                     for spec, ids in groups.items()])
    return found


def _with_loops(site_spec, loops):
    forms, fits = site_spec
    used = _loops_used(forms, fits, loops)
    return forms, tuple((n, loops[n]) for n in sorted(used)), fits


class _Walker:
    """Walks the kernel in order, variables bound to their forms (or _UNKNOWN);
    ``shared``: the forms of shared array accesses too (``forms``: node id -> spec)."""

    def __init__(self, function, candidates):
        self.params = function.params
        self.candidates = candidates
        self.sites = {}            # parameter index -> [(forms, fits) or None]
        self.loops = {}            # n -> (start form spec, stop spec, step spec)
        self.shared, self.forms = False, {}

    def stmts(self, body, env):
        for s in body:
            self.stmt(s, env)

    def access_sites(self, s, env):
        """The forms of the accesses ``s`` makes itself (not in its bodies) of the watched
        arrays: candidate parameters, and shared arrays (``shared``)."""
        roots = [s]
        if ir.child_bodies(s):      # a head: with the names its bodies set unknown
            roots = [e for e in _children(s) if isinstance(e, ir.Expr)]
            env = dict(env)
            for name in _assigned(ir.child_bodies(s)[0] + ir.child_bodies(s)[-1]):
                env[name] = _UNKNOWN
        for root in roots:
            for e in walk(root):
                if not isinstance(e, (ir.Load, ir.Store)):
                    continue
                if isinstance(e.array, ir.ArrayRef) and self.shared:
                    self.forms[id(e)] = self.site(e, env)
                elif isinstance(e.array, ir.Param) and e.array.index in self.candidates:
                    self.sites.setdefault(e.array.index, []).append(self.site(e, env))

    def stmt(self, s, env):
        self.access_sites(s, env)
        if isinstance(s, ir.Assign):
            env[s.name] = self.try_form(s.value, env, [])
        elif isinstance(s, ir.If):
            arms = []
            for arm in (s.then, s.orelse):
                inner = dict(env)
                self.stmts(arm, inner)
                arms.append(inner)
            for name in set(arms[0]) | set(arms[1]):
                a, b = arms[0].get(name, _UNKNOWN), arms[1].get(name, _UNKNOWN)
                env[name] = a if a is b else _UNKNOWN
        elif isinstance(s, ir.ForRange):
            changed = {s.var} | _assigned(s.body)
            start = self.try_form(s.start, env, [])
            stop, step = (self.try_form(e, env, []) for e in (s.stop, s.step))
            for name in changed:             # values from an earlier trip: not followed
                env[name] = _UNKNOWN
            if _UNKNOWN not in (start, stop, step) and stop.uniform() and step.uniform():
                n = len(self.loops)
                self.loops[n] = (start.spec(), stop.offset, step.offset)
                env[s.var] = _plus(start, Form({("k", n): step.offset}))
            self.stmts(s.body, env)
            for name in changed:
                env[name] = _UNKNOWN
        else:
            changed = _assigned([s])
            for name in changed:
                env[name] = _UNKNOWN
            for body in ir.child_bodies(s):
                self.stmts(body, env)
            for name in changed:
                env[name] = _UNKNOWN

    def site(self, s, env):
        fits = []
        try:
            forms = tuple(self.form(i, env, fits).spec() for i in s.indices)
        except _No:
            return None
        return forms, tuple(fits)

    def try_form(self, e, env, fits):
        try:
            return self.form(e, env, fits)
        except _No:
            return _UNKNOWN

    def form(self, e, env, fits):
        """The Form of integer expression ``e``; each value computed on the way that could
        wrap goes into ``fits``."""
        kind = getattr(e.type, "kind", None)
        if kind not in ("i", "u"):
            raise _No
        if isinstance(e, ir.CheckedVar):
            return self.form(e.var, env, fits)
        if isinstance(e, ir.Var):
            found = env.get(e.name, _UNKNOWN)
            if found is _UNKNOWN:
                raise _No
            return found
        if isinstance(e, ir.Const):
            return Form(offset=("c", int(e.value)))
        if isinstance(e, ir.Param):
            return Form(offset=("p", e.index))
        if isinstance(e, ir.ArrayAttr):
            if e.attr != "shape" or not isinstance(e.array, ir.Param):
                raise _No
            return Form(offset=("s", e.array.index, e.dim))
        if isinstance(e, ir.Intrinsic) and not e.args:
            if e.op in _THREAD:
                return Form({_THREAD[e.op]: ("c", 1)})
            if e.op in _LAUNCH:
                return Form(offset=("d", e.op))
            raise _No
        if isinstance(e, ir.Cast):
            if getattr(e.value.type, "kind", None) not in ("i", "u"):
                raise _No
            value = self.form(e.value, env, fits)
        elif isinstance(e, ir.UnaryOp) and e.op == "neg":
            value = _scaled(self.form(e.value, env, fits), ("c", -1))
        elif isinstance(e, ir.BinOp) and e.op in ("add", "sub", "mul"):
            lhs, rhs = self.form(e.lhs, env, fits), self.form(e.rhs, env, fits)
            if e.op == "add":
                value = _plus(lhs, rhs)
            elif e.op == "sub":
                value = _plus(lhs, _scaled(rhs, ("c", -1)))
            elif rhs.uniform():
                value = _scaled(lhs, rhs.offset)
            elif lhs.uniform():
                value = _scaled(rhs, lhs.offset)
            else:
                raise _No
        else:
            raise _No
        fits.append((value.spec(), kind == "i", e.type.dtype.itemsize * 8))
        return value


def _assigned(body):
    """The names the statements of ``body`` (nested ones too) set."""
    names = set()
    for s in ir.walk_stmts(body):
        if isinstance(s, ir.ForRange):
            names.add(s.var)
        name = getattr(s, "name", None)
        if isinstance(name, str) and not isinstance(s, ir.StoreField):
            names.add(name)
    return names
