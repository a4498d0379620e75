"""Records (NumPy structured dtypes, ``@simt.struct`` values) on the sim device.

A record value is the flat tuple of its leaves: every scalar it holds, in address order
(a vector field's components, each element of an array field, a nested record's leaves),
each held as the sim holds a scalar of its dtype (values.py). A field of a value is a
slice of that tuple (``Layout.fields``).

A ``RecArray`` is an array whose elements are records (or, as the view of an array field,
scalars, vectors or records inside a record's bytes) over the raw bytes of its buffer:
offset and strides count bytes, and each leaf is read and written by its byte offset with
``struct``. Its ``Shadow`` is byte-granular (one entry per byte of the buffer): a leaf's
accesses are checked at its first byte, so threads that write different fields of one
record do not race, and reading a field checks that field alone. A write marks every byte
of the leaf (the device's record of initialized memory is by byte).
"""
import struct

import numpy as np

from ...ir import records
from ...ir import types as T
from .memory import SimArray, _ATOMICS, _format, adder


class Layout:
    """The leaves of a dtype (byte offset, size, Struct, complex?) and, for a record, its
    fields: name -> (first leaf, leaf count, byte offset, field dtype)."""

    _cache = {}

    def __new__(cls, dtype):
        dtype = np.dtype(dtype)
        t = T.element_type(dtype) if dtype.subdtype is None else None
        key = (repr(dtype), dtype.itemsize, type(t), getattr(t, "token", None))
        layout = cls._cache.get(key)
        if layout is None:
            layout = cls._cache[key] = object.__new__(cls)
            layout._build(dtype)
        return layout

    def _build(self, dtype):
        self.dtype = dtype
        self.leaves = []
        _flatten(dtype, 0, self.leaves)
        self.n = len(self.leaves)
        t = T.element_type(dtype) if dtype.subdtype is None else None
        self.kind = "scalar" if isinstance(t, T.Scalar) else "tuple"
        self.fields = {}
        if dtype.names and isinstance(t, T.Record):
            for name, fdt, off in records.fields(dtype):
                start = sum(1 for leaf in self.leaves if leaf[0] < off)
                count = len(Layout(fdt).leaves)
                self.fields[name] = (start, count, off, fdt)

    def decode(self, buf, pos):
        out = tuple(_get(leaf, buf, pos) for leaf in self.leaves)
        return out[0] if self.kind == "scalar" else out

    def encode(self, buf, pos, value):
        if self.kind == "scalar":
            value = (value,)
        for leaf, v in zip(self.leaves, value):
            _put(leaf, buf, pos, v)

    def from_host(self, value):
        """A host value (a NumPy record, a tuple, a @simt.struct instance) as a value."""
        data = bytearray(np.asarray(value, dtype=self.dtype).tobytes())
        return self.decode(memoryview(data), 0)


def _flatten(dtype, base, out):
    if dtype.subdtype is not None:
        sub, shape = dtype.subdtype
        for k in range(int(np.prod(shape, dtype=np.int64))):
            _flatten(sub, base + k * sub.itemsize, out)
        return
    t = T.element_type(dtype)
    if isinstance(t, T.Scalar):
        out.append(_leaf(dtype, base))
    elif isinstance(t, T.Vector):
        for j in range(t.n):
            out.append(_leaf(t.dtype, base + j * t.dtype.itemsize))
    else:
        for _, fdt, off in records.fields(dtype):
            _flatten(fdt, base + off, out)


def _leaf(dtype, offset):
    if dtype.kind == "c":
        half = "f" if dtype.itemsize == 8 else "d"
        return (offset, dtype.itemsize, struct.Struct("<" + half * 2), True)
    fmt = "e" if dtype.kind == "f" and dtype.itemsize == 2 else _format(dtype)
    return (offset, dtype.itemsize, struct.Struct("<" + fmt), False)


def _get(leaf, buf, pos):
    offset, _, codec, pair = leaf
    if pair:
        return complex(*codec.unpack_from(buf, pos + offset))
    return codec.unpack_from(buf, pos + offset)[0]


def _put(leaf, buf, pos, v):
    offset, _, codec, pair = leaf
    if pair:
        codec.pack_into(buf, pos + offset, v.real, v.imag)
    else:
        codec.pack_into(buf, pos + offset, v)


# ---------------------------------------------------------------- values
def field(value, layout, name):
    """Field ``name`` of a record value (a scalar, or the tuple of a vector or record)."""
    start, count, _, fdt = layout.fields[name]
    if Layout(fdt).kind == "scalar":
        return value[start]
    return value[start:start + count]


def replace(value, layout, name, new, index=None, fault=None):
    """The record value with field ``name`` (element ``index`` of an array field) set
    (``fault(i, d, n)``: an index outside its dimension)."""
    start, count, _, fdt = layout.fields[name]
    if index is not None:
        base, shape = fdt.subdtype
        k = 0
        for d, (i, n) in enumerate(zip(index, shape)):
            if not 0 <= i < n:
                fault(i, d, n)
            k = k * n + i
        count = Layout(base).n
        start += k * count
    part = (new,) if count == 1 and not isinstance(new, tuple) else tuple(new)
    return value[:start] + part + value[start + count:]


def make(layout, items):
    """A record from its items (ir.MakeRecord: per field in the dtype's order, one per
    element of an array field; each a scalar, or a vector's or record's tuple), its
    leaves put in address order."""
    parts = {}
    for (name, _, _), item in zip(records.slots(layout.dtype), items):
        parts[name] = parts.get(name, ()) + (item if isinstance(item, tuple) else (item,))
    out = ()
    for name, _, _ in records.fields(layout.dtype):
        out += parts[name]
    return out


# ---------------------------------------------------------------- memory
class RecArray(SimArray):
    """An array of records (or of an array field's elements) over raw bytes: module doc."""

    __slots__ = ("layout",)

    def __init__(self, launch, data, off, shape, est, dtype, label, shadow, plus):
        super().__init__(launch, data, off, shape, est, dtype, label, shadow, plus)
        self.layout = Layout(dtype)
        self.strides = tuple(est)

    def reshaped(self, off, shape, est):
        return RecArray(self.launch, self.data, off, shape, est, self.dtype, self.label,
                        self.shadow, self.plus)

    def _check(self, site, idx, pos, leaves, write):
        shadow = self.shadow
        if shadow is None:
            return
        if not write:
            for offset, *_ in leaves:
                shadow.read(pos + offset, site, idx)
            return
        w = shadow.w
        for offset, size, *_ in leaves:
            k = pos + offset
            shadow.write(k, site, idx)
            for j in range(1, size):
                w[k + j] = w[k]

    def ld(self, site, *idx):
        pos = self._flat(site, idx)
        self._check(site, idx, pos, self.layout.leaves, False)
        return self.layout.decode(self.data, pos)

    def st(self, site, value, *idx):
        pos = self._flat(site, idx)
        self._check(site, idx, pos, self.layout.leaves, True)
        self.layout.encode(self.data, pos, value)

    def ld_field(self, site, path, *idx):
        """A field (``path``: names, through nested records and vectors) of an element."""
        pos, layout = self._field(site, path, idx)
        self._check(site, idx, pos, layout.leaves, False)
        return layout.decode(self.data, pos)

    def st_field(self, site, path, value, *idx):
        pos, layout = self._field(site, path, idx)
        self._check(site, idx, pos, layout.leaves, True)
        layout.encode(self.data, pos, value)

    def ld_part(self, site, j, *idx):
        """Component j of a vector element (``a[i].v[k].x``)."""
        return self.ld_field(site, ("xyzw"[j],), *idx)

    def st_part(self, site, j, value, *idx):
        self.st_field(site, ("xyzw"[j],), value, *idx)

    def field_view(self, site, path, *idx):
        """An array field of an element (through ``path``), as an array over its bytes."""
        pos, layout = self._field(site, path[:-1], idx)
        _, _, off, fdt = layout.fields[path[-1]]
        base, shape = fdt.subdtype
        est = tuple(int(np.prod(shape[d + 1:], dtype=np.int64)) * base.itemsize
                    for d in range(len(shape)))
        return RecArray(self.launch, self.data, pos + off, tuple(shape), est, base,
                        f"{self.label}.{'.'.join(path)}", self.shadow, adder(base))

    def _field(self, site, path, idx):
        pos, layout = self._flat(site, idx), self.layout
        for name in path:
            if name in "xyzw" and not layout.fields:        # a vector's component
                j = "xyzw".index(name)
                offset = layout.leaves[j][0]
                layout = Layout(layout.dtype.fields[name][0]) if layout.dtype.names else \
                    Layout(T.element_type(layout.dtype).dtype)
                pos += offset
                continue
            _, _, off, fdt = layout.fields[name]
            pos += off
            layout = Layout(fdt)
        return pos, layout

    def atomic(self, site, kind, values, *idx):
        pos = self._flat(site, idx)
        if self.shadow is not None:
            for offset, *_ in self.layout.leaves:
                self.shadow.atomic(pos + offset, site, idx, kind)
        old = self.layout.decode(self.data, pos)
        new = _ATOMICS[kind](old, values, self)
        if new is not None:
            self.layout.encode(self.data, pos, new)
        return old

    def __repr__(self):
        return f"<sim array {self.label} {self.dtype}{list(self.shape)}>"


def value_view(launch, value, layout, name, label):
    """An array field of a record value: a view of a copy of it (read only here: writes
    through it assign the record, ir.Replace)."""
    data = memoryview(bytearray(layout.dtype.itemsize))
    layout.encode(data, 0, value)
    _, _, off, fdt = layout.fields[name]
    base, shape = fdt.subdtype
    est = tuple(int(np.prod(shape[d + 1:], dtype=np.int64)) * base.itemsize
                for d in range(len(shape)))
    return RecArray(launch, data, off, tuple(shape), est, base, label, None, None)


def is_record(dtype):
    """Whether arrays of ``dtype`` are RecArrays here (records and structs)."""
    return isinstance(T.element_type(dtype), T.Record)
