"""Arrays as sim kernels see them, and the checks every access makes.

A ``SimArray`` is a typed window (offset, shape, element strides) on a flat buffer: a
memoryview of the device memory (host memory, as on the CPU device), or a NumPy array
for the dtypes memoryviews lack (float16, complex). Every access checks each index
against its own dimension; accesses to global, shared and local memory also go through
the ``Shadow`` of their buffer, which keeps, per element, the last write (thread, its
block's barrier count, its warp's sync log position, site, its arrive/wait barrier
releases) and the reads since it, so that an access that conflicts with another
thread's, with no barrier (or, within a warp, no warp sync naming both; or no
arrive/wait barrier phase the other thread arrived on and this one waited for) between
them, is a race; and an element nothing wrote (None) is an uninitialized read.
"""
import ctypes

import numpy as np

from ...ir import types as T
from ...ir.types import float8_storage, is_bfloat16_dtype
from . import ordering, values

INIT = ()              # an element written before this launch (or by an atomic)


class Gone(tuple):
    """An element no thread may access any more: its access is reported as such."""


FREED = Gone(("freed",))      # of a heap block that simt.free released (heap.py)
EXITED = Gone(("exited",))    # of the shared memory of a cluster's block that has exited
_WROTE = {6: "write", 7: "volatile write"}     # a write's record (7: volatile) as reports say
_FORMATS = {"b": "?", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I",
            "i8": "q", "u8": "Q", "f4": "f", "f8": "d"}


def _format(dtype):
    if dtype.kind == "b":
        return "?"
    if float8_storage(dtype) is not None:
        return "B"                          # FP8: its code, as the sim holds the values
    if is_bfloat16_dtype(dtype):
        return "H"                          # bfloat16: its 16 bits, likewise
    return _FORMATS.get(f"{dtype.kind}{dtype.itemsize}")


class _Items:
    """Element access of a NumPy array with Python values (float16, complex)."""

    def __init__(self, array):
        self.array = array

    def __getitem__(self, k):
        if type(k) is slice:
            return [self.array.item(i) for i in range(*k.indices(len(self.array)))]
        return self.array.item(k)

    def __setitem__(self, k, v):
        self.array[k] = v


def flat_buffer(ptr, nbytes, dtype):
    """The elements of dtype in [ptr, ptr + nbytes) as something indexable by element
    (the caller keeps that memory alive)."""
    raw = (ctypes.c_char * max(nbytes, 1)).from_address(ptr)
    return elements(np.frombuffer(raw, dtype, nbytes // dtype.itemsize))


def elements(array):
    """A contiguous NumPy array's elements, indexable by element, keeping it alive."""
    fmt = _format(array.dtype)
    if fmt is not None:
        return memoryview(array.reshape(-1).view(np.uint8)).cast(fmt)
    return _Items(array.reshape(-1))


class Shadow:
    """What each element of one buffer holds for the checks (see the module's doc)."""

    __slots__ = ("w", "r", "reads", "launch", "clocks")

    def __init__(self, launch, count, initialized, reads=True):
        self.launch = launch
        self.clocks = None             # element -> what the atomic write there released
        self.w = [INIT] * count if initialized is True else \
            [None] * count if initialized is False else initialized
        self.r = [None] * count if reads else None
        self.reads = reads

    def read(self, k, site, idx):
        L = self.launch
        th = L.cur
        w = self.w[k]
        if w is None:
            L.uninitialized(site, idx, th)
        elif w is not INIT and (type(w) is Gone or not ordered(w, th)):
            L.race(w, _WROTE.get(len(w)), site, "read", idx, th)
        self.note_read(k, site, th)

    def note_read(self, k, site, th):
        if self.reads:
            rec = (th, th.block, th.block.ep, len(th.warp.log), site, th.rel)
            r = self.r[k]
            if r is None:
                self.r[k] = rec
            elif type(r) is list:
                r.append(rec)
            elif r[0] is not th or r[1] is not th.block:
                self.r[k] = [r, rec]

    def write(self, k, site, idx):
        L = self.launch
        th = L.cur
        w = self.w[k]
        if w is not None and w is not INIT and (type(w) is Gone or not ordered(w, th)):
            L.race(w, _WROTE.get(len(w)), site, "write", idx, th)
        if self.reads:
            r = self.r[k]
            if r is not None:
                for rec in (r if type(r) is list else (r,)):
                    if not ordered(rec, th):
                        L.race(rec, "read", site, "write", idx, th)
                self.r[k] = None
        self.w[k] = (th, th.block, th.block.ep, len(th.warp.log), site, th.rel)

    def volatile_read(self, k, site, idx):
        """A volatile load, a relaxed atomic one of system scope (PTX's ld.volatile): a
        plain write of another thread not ordered before it races, and so does a
        volatile one that released nothing to this thread (the guide's flag is written
        after a fence); what it reads, a later fence acquires (ordering.py)."""
        L = self.launch
        th = L.cur
        w = self.w[k]
        if w is None:
            L.uninitialized(site, idx, th)
        elif type(w) is Gone or w is not INIT and not ordered(w, th) and \
                (len(w) == 6 or not self._released(k, th)):
            L.race(w, _WROTE.get(len(w)), site, "volatile read", idx, th)
        self.note_read(k, site, th)
        if self.clocks is not None:
            ordering.atomic(th, self.clocks, k, "load", L.sites[site])

    def _released(self, k, th):
        release = self.clocks.get(k) if self.clocks is not None else None
        return release is not None and release.seen_by(th, True) is not None

    def volatile_write(self, k, site, idx):
        """A volatile store, a relaxed atomic one of system scope: it races with another
        thread's plain write not ordered before it, not with reads (as an atomic store),
        and releases what came before a fence of its thread (ordering.py)."""
        L = self.launch
        th = L.cur
        w = self.w[k]
        if type(w) is Gone or w is not None and w is not INIT and len(w) == 6 and \
                not ordered(w, th):
            L.race(w, "write", site, "volatile write", idx, th)
        self.w[k] = (th, th.block, th.block.ep, len(th.warp.log), site, th.rel, True)
        if self.clocks is None:
            self.clocks = {}
        ordering.atomic(th, self.clocks, k, "store", L.sites[site])

    def atomic(self, k, site, idx, kind):
        """Atomics do not race with each other (nor with volatile writes): only a plain
        write of another thread races; what they order, ordering.py follows."""
        L = self.launch
        th = L.cur
        w = self.w[k]
        if w is None:
            L.uninitialized(site, idx, th)
        elif type(w) is Gone or w is not INIT and len(w) == 6 and not ordered(w, th):
            L.race(w, "write", site, "atomic update", idx, th)
        if self.clocks is None:
            self.clocks = {}
        ordering.atomic(th, self.clocks, k, kind, L.sites[site])
        self.w[k] = INIT


def ordered(rec, th):
    """Whether the access ``rec`` (thread, block, barrier count, warp log position, site,
    the thread's releases then) happens before thread ``th``'s next one: it is th's own, or
    a barrier of their block (of another block: a grid.sync()) came since, or th acquired a later release of that thread (an
    arrive/wait barrier's phase: mbarrier.py), or a warp sync naming both lanes."""
    block = th.block
    if rec[1] is not block:        # a grid.sync() since (cooperative launches), or acquired
        return rec[2] < rec[1].gsync or ordering.acquired(rec, th)
    other = rec[0]
    if other is th or rec[2] != block.ep:
        return True
    vc = th.vc
    if vc is not None and (vc.get(other, 0) > rec[5] or ordering.acquired(rec, th)):
        return True
    if other.warp is not th.warp:
        return False
    a, b = other.lane, th.lane
    return any(m >> a & 1 and m >> b & 1 for m in th.warp.log[rec[3]:])


class SimArray:
    """An array argument, view or static array of a sim launch (module doc)."""

    __slots__ = ("data", "off", "shape", "est", "dtype", "label", "shadow", "launch",
                 "plus", "strides")

    def __new__(cls, launch, data, off, shape, est, *rest):
        return object.__new__(Array1 if len(shape) == 1 and cls is SimArray else cls)

    def __init__(self, launch, data, off, shape, est, dtype, label, shadow, plus):
        self.launch, self.data, self.off, self.shape, self.est = launch, data, off, shape, est
        self.dtype, self.label, self.shadow, self.plus = dtype, label, shadow, plus
        self.strides = tuple(s * dtype.itemsize for s in est)

    def _flat(self, site, idx):
        k = self.off
        for d, (i, n, s) in enumerate(zip(idx, self.shape, self.est)):
            if not 0 <= i < n:
                self.launch.out_of_bounds(site, i, d, n, self)
            k += i * s
        return k

    def ld(self, site, *idx):
        k = self._flat(site, idx)
        if self.shadow is not None:
            self.shadow.read(k, site, idx)
        return self.data[k]

    def st(self, site, value, *idx):
        k = self._flat(site, idx)
        if self.shadow is not None:
            self.shadow.write(k, site, idx)
        self.data[k] = value

    def vld(self, site, *idx):
        """simt.volatile_load (shadow.volatile_read)."""
        k = self._flat(site, idx)
        if self.shadow is not None:
            self.shadow.volatile_read(k, site, idx)
        return self.data[k]

    def vst(self, site, value, *idx):
        """simt.volatile_store (shadow.volatile_write)."""
        k = self._flat(site, idx)
        if self.shadow is not None:
            self.shadow.volatile_write(k, site, idx)
        self.data[k] = value

    def atomic(self, site, kind, values, *idx):
        k = self._flat(site, idx)
        if self.shadow is not None:
            self.shadow.atomic(k, site, idx, kind)
        old = self.data[k]
        new = _ATOMICS[kind](old, values, self)
        if new is not None:
            self.data[k] = new
        return old

    def view(self, site, parts):
        off, shape, est = self.off, [], []
        for d, part in enumerate(parts):
            n, s = self.shape[d], self.est[d]
            if isinstance(part, slice):
                start, stop, step = part.indices(n)
                shape.append(len(range(start, stop, step)))
                est.append(s * step)
                off += start * s
            else:
                if not 0 <= part < n:
                    self.launch.out_of_bounds(site, part, d, n, self)
                off += part * s
        shape += self.shape[len(parts):]
        est += self.est[len(parts):]
        return self.reshaped(off, tuple(shape), tuple(est))

    def reshaped(self, off, shape, est):
        """This array's memory as another window (offset, shape, strides in its units)."""
        return SimArray(self.launch, self.data, off, shape, est, self.dtype, self.label,
                        self.shadow, self.plus)

    def __repr__(self):
        values = [self.data[self.off + i * self.est[0]] for i in range(min(self.shape[0], 8))] \
            if len(self.shape) == 1 else "..."
        return f"<sim array {self.label} {self.dtype.name}{list(self.shape)}: {values}>"


class Array1(SimArray):
    """A one-dimensional SimArray: the common case, without the loop over dimensions
    (its extent ``n`` and stride ``step`` kept apart: the accesses read them first)."""

    __slots__ = ("n", "step")

    def __init__(self, launch, data, off, shape, est, dtype, label, shadow, plus):
        super().__init__(launch, data, off, shape, est, dtype, label, shadow, plus)
        self.n, self.step = shape[0], est[0]

    def ld(self, site, i):
        if not 0 <= i < self.n:
            self.launch.out_of_bounds(site, i, 0, self.n, self)
        k = self.off + i * self.step
        shadow = self.shadow
        if shadow is not None and (shadow.reads or shadow.w[k] is not INIT):
            shadow.read(k, site, i)
        return self.data[k]

    def st(self, site, value, i):
        if not 0 <= i < self.n:
            self.launch.out_of_bounds(site, i, 0, self.n, self)
        k = self.off + i * self.step
        shadow = self.shadow
        if shadow is not None:
            w = shadow.w[k]
            if (w is INIT or w is None) and (not shadow.reads or shadow.r[k] is None):
                th = self.launch.cur
                block = th.block
                shadow.w[k] = (th, block, block.ep, len(th.warp.log), site, th.rel)
            else:
                shadow.write(k, site, i)
        self.data[k] = value


class VecArray(SimArray):
    """An array of a vector type (float4, half2 ...) over the buffer of its components:
    offset and strides count components, an element is the tuple of its ``n`` components
    from there, and the checks track each component (its shadow is the component type's),
    so that threads writing the x and y of one element do not race."""

    __slots__ = ("n",)

    def __init__(self, launch, data, off, shape, est, dtype, label, shadow, plus, n):
        super().__init__(launch, data, off, shape, est, dtype, label, shadow, plus)
        self.n = n
        self.strides = tuple(s * (dtype.itemsize // n) for s in est)

    def reshaped(self, off, shape, est):
        return VecArray(self.launch, self.data, off, shape, est, self.dtype, self.label,
                        self.shadow, self.plus, self.n)

    def ld(self, site, *idx):
        k = self._flat(site, idx)
        if self.shadow is not None:
            for j in range(self.n):
                self.shadow.read(k + j, site, idx)
        return tuple(self.data[k:k + self.n])

    def st(self, site, value, *idx):
        k = self._flat(site, idx)
        shadow, data = self.shadow, self.data
        for j, x in enumerate(value):
            if shadow is not None:
                shadow.write(k + j, site, idx)
            data[k + j] = x

    def ld_part(self, site, j, *idx):
        """Component j of an element alone (``a[i].x``, ``a[i]['y']``)."""
        k = self._flat(site, idx) + j
        if self.shadow is not None:
            self.shadow.read(k, site, idx)
        return self.data[k]

    def st_part(self, site, j, value, *idx):
        """Component j of an element alone (``a[i].x = v``)."""
        k = self._flat(site, idx) + j
        if self.shadow is not None:
            self.shadow.write(k, site, idx)
        self.data[k] = value

    def atomic(self, site, kind, values, *idx):
        k = self._flat(site, idx)
        if self.shadow is not None:
            for j in range(self.n):
                self.shadow.atomic(k + j, site, idx, kind)
        old = tuple(self.data[k:k + self.n])
        new = _ATOMICS[kind](old, values, self)
        if new is not None:
            for j, x in enumerate(new):
                self.data[k + j] = x
        return old


def _cas(old, values, a):
    compare, value = values
    if a.dtype.kind == "f":
        same = np.array(old, a.dtype).tobytes() == np.array(compare, a.dtype).tobytes()
    else:
        same = old == compare
    return value if same else None


def _inc(old, values, a):
    return 0 if old >= values[0] else old + 1


def _dec(old, values, a):
    return values[0] if old == 0 or old > values[0] else old - 1


_ATOMICS = {
    "add": lambda old, v, a: a.plus(old, v[0]), "sub": lambda old, v, a: a.plus(old, -v[0]),
    "exch": lambda old, v, a: v[0], "min": lambda old, v, a: min(old, v[0]),
    "max": lambda old, v, a: max(old, v[0]), "inc": _inc, "dec": _dec,
    "and": lambda old, v, a: old & v[0], "or": lambda old, v, a: old | v[0],
    "xor": lambda old, v, a: old ^ v[0], "cas": _cas,
    "load": lambda old, v, a: None, "store": lambda old, v, a: v[0],
}


def adder(dtype):
    """``old + value`` in ``dtype`` as an atomic add computes it: integers wrap, floats
    round, bfloat16 adds in float32 and rounds once, a vector adds component-wise."""
    element = T.element_type(dtype)
    if isinstance(element, T.Vector):
        add = adder(element.dtype)
        return lambda old, value: tuple(map(add, old, value))
    if isinstance(element, T.Scalar) and element.is_bfloat16:
        return lambda old, value: values.bf16_encode(
            values.f32(values.bf16_decode(old) + values.bf16_decode(value)))
    if dtype.kind in "iu":
        wrap = values.wrapper(dtype)
        return lambda old, value: wrap(old + value)
    rounding = values.ROUND.get(dtype.name, lambda x: x)
    return lambda old, value: rounding(old + value)
