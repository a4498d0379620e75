"""At a checked launch: whether a write-only array's writes are disjoint between threads.

ir/disjoint.py writes, for each global array parameter a kernel only writes, the
indices of its writes as affine forms in the thread and block indices and loop counters
(a *spec*). Here, with the launch's grid, block and arguments: every value on the way
fits its type (nothing wrapped, so the form is the index), the dimensions' indices make
one element number (row-major: each index is in bounds, or the write faults first), and
its terms are a mixed radix: sorted by size, each coefficient is larger than all that
the smaller terms can add up to, so distinct threads (and loop trips) have distinct
numbers. The array's strides must give distinct elements distinct bytes too. Then no
element is written by two threads in this launch (shadow.ShadowMemory.owned_mask).
"""


def disjoint(index, spec, args, grid, block):
    """Whether the writes ``spec`` describes (of parameter ``index``) name distinct
    elements for distinct threads in a launch of ``grid`` x ``block`` with ``args`` (the
    launch's arguments)."""
    try:
        values = _Launch(args, grid, block)
        shape = [values.uniform(("s", index, d)) for d in range(len(spec[0]))]
        return _holds(spec, values, shape)
    except (_No, TypeError, ValueError, IndexError, AttributeError, KeyError):
        return False


def private_mask(groups, block):
    """The state word PRIVATE of a launch with blocks of shape ``block``: bit g for each
    group g of ``groups`` ((spec, shape): checked.private_groups) that is private."""
    mask = 0
    for g, (spec, shape) in enumerate(groups):
        if private_in_block(spec, shape, block):
            mask |= 1 << g
    return mask


def private_in_block(spec, shape, block):
    """Whether the accesses ``spec`` describes (of a shared array of ``shape``, indices
    with constant coefficients and offsets: ir/disjoint.private_shared) name distinct
    elements for distinct threads of a block of shape ``block``."""
    if not constant(spec):
        return False
    try:
        return _holds(spec, _Launch((), (1, 1, 1), block), list(shape))
    except (_No, TypeError, ValueError, IndexError, AttributeError, KeyError):
        return False


def constant(spec):
    """No uniform value but constants in ``spec`` (no blockIdx term: one block's view)."""
    forms, loops, fits = spec
    parts = list(forms) + [f for f, _, _ in fits] + [start for _, (start, _, _) in loops]
    for terms, offset in parts:
        if offset[0] != "c" or any(c[0] != "c" or var[0] == "b" for var, c in terms):
            return False
    return all(stop[0] == step[0] == "c" for _, (_, stop, step) in loops)


def _holds(spec, values, shape):
    forms, loops, fits = spec
    for n, (start, stop, step) in loops:
        values.trips(n, start, values.uniform(stop), values.uniform(step))
    for form, signed, bits in fits:
        lo, hi = values.range(form)
        least, most = (-(1 << bits - 1), (1 << bits - 1) - 1) if signed else (0, (1 << bits) - 1)
        if lo < least or hi > most:
            return False
    return _mixed_radix(values, forms, shape)


class _No(Exception):
    pass


class _Launch:
    """The launch's values of uniform specs, and each variable's count of values."""

    def __init__(self, args, grid, block):
        self.args, self.counts = args, {}
        for axis in range(3):
            self.counts[("t", axis)] = block[axis]
            self.counts[("b", axis)] = grid[axis]
        self.dims = {f"blockDim.{a}": block[k] for k, a in enumerate("xyz")}
        self.dims.update({f"gridDim.{a}": grid[k] for k, a in enumerate("xyz")})

    def uniform(self, u):
        kind = u[0]
        if kind == "c":
            return u[1]
        if kind == "p":
            value = self.args[u[1]]
            if isinstance(value, float) or not hasattr(value, "__index__"):
                raise _No
            return int(value)
        if kind == "s":
            return int(self.args[u[1]].shape[u[2]])
        if kind == "d":
            return self.dims[u[1]]
        if kind == "+":
            return self.uniform(u[1]) + self.uniform(u[2])
        if kind == "*":
            return self.uniform(u[1]) * self.uniform(u[2])
        raise _No

    def terms(self, form):
        terms, offset = form
        return [(var, self.uniform(c)) for var, c in terms], self.uniform(offset)

    def range(self, form):
        """[lo, hi] of the form over every thread and trip."""
        terms, lo = self.terms(form)
        hi = lo
        for var, c in terms:
            reach = c * (max(self.counts[var], 1) - 1)
            lo, hi = lo + min(0, reach), hi + max(0, reach)
        return lo, hi

    def trips(self, n, start, stop, step):
        """The most trips loop ``n`` makes for any thread (its counter's count)."""
        lo, hi = self.range(start)
        if step > 0:
            count = -(-(stop - lo) // step)
        elif step < 0:
            count = -(-(hi - stop) // -step)
        else:
            raise _No
        self.counts[("k", n)] = max(count, 0)


def _mixed_radix(values, forms, shape):
    """The element number's terms (row-major over the dimensions' forms, ``shape`` the
    array's) as a mixed radix in which every thread and block index with more than one
    value takes part."""
    coefficients = {}
    stride = 1
    for d in reversed(range(len(forms))):
        terms, _ = values.terms(forms[d])
        for var, c in terms:
            coefficients[var] = coefficients.get(var, 0) + c * stride
        stride *= shape[d]
    for var in [("t", a) for a in range(3)] + [("b", a) for a in range(3)]:
        if values.counts[var] > 1 and not coefficients.get(var):
            return False           # threads that differ in this index alone: one element
    reach = 0
    for c, count in sorted((abs(c), values.counts[var]) for var, c in coefficients.items()
                           if c and values.counts[var] > 1):
        if c <= reach:
            return False
        reach += c * (count - 1)
    return True


def distinct_bytes(array):
    """Whether distinct elements of ``array`` (a device array) have distinct bytes."""
    dims = sorted((abs(int(st)), int(n)) for st, n in zip(array.strides, array.shape) if n > 1)
    reach = int(array.dtype.itemsize)
    for stride, count in dims:
        if stride < reach:
            return False
        reach = stride * (count - 1) + reach
    return True
