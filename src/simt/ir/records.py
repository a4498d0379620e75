"""Records (C structs) as NumPy structured dtypes: which dtypes kernels take, and the
alignment C would give them.

A record's bytes are exactly its dtype's (offsets, padding and itemsize as NumPy has
them), so a structured array is passed to a kernel as it is. What the generated code may
assume about addresses is the dtype's C alignment when its layout is one a C compiler
makes (every field on a multiple of its own alignment, the size a multiple of the
largest); a packed dtype that breaks that is accessed with no alignment assumed.
"""
import numpy as np

_KINDS = "biufc"
BF16_FIELDS = ("bfloat16",)     # simt's bfloat16 storage struct (ir/types.py): one scalar


def check(dtype):
    """``dtype`` if kernels can use it as a record, else TypeError naming the field."""
    _check(dtype, "")
    return dtype


def _check(dtype, where):
    if dtype.subdtype is not None:
        _check(dtype.subdtype[0], where)
        return
    if dtype.names is None:
        if dtype.kind not in _KINDS and dtype.name != "bfloat16":       # ml_dtypes' bfloat16
            raise TypeError(f"record field {where or '?'} has dtype {dtype}: record fields "
                            "hold bool, integer, floating or complex values, records, or "
                            "fixed-size arrays of them")
        return
    if not dtype.names:
        field = f" (field {where})" if where else ""
        raise TypeError(f"the record dtype {dtype}{field} has no fields: kernels take records "
                        "of at least one field; give the dtype a field")
    spans = []
    for name in dtype.names:
        fdt, offset = dtype.fields[name][:2]
        path = f"{where}.{name}" if where else f"'{name}'"
        _check(fdt, path)
        spans.append((offset, offset + fdt.itemsize, path))
    spans.sort()
    for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
        if start < end:
            raise TypeError(f"record fields {a} and {b} overlap (a union): kernels take "
                            "records whose fields do not share bytes")


def natural_alignment(dtype):
    """C's alignment of ``dtype`` if it is laid out as a C compiler would lay it out,
    else None."""
    if dtype.subdtype is not None:
        return natural_alignment(dtype.subdtype[0])
    if dtype.names is None:
        return dtype.alignment
    align = 1
    for name in dtype.names:
        fdt, offset = dtype.fields[name][:2]
        field = natural_alignment(fdt)
        if field is None or offset % field:
            return None
        align = max(align, field)
    return align if dtype.itemsize % align == 0 else None


def fields(dtype):
    """(name, dtype, offset) of each field, in address order."""
    out = [(name,) + tuple(dtype.fields[name][:2]) for name in dtype.names]
    return sorted(out, key=lambda f: f[2])


def access_align(base_align, offset):
    """The alignment an access at ``offset`` bytes from a ``base_align``-aligned address
    may assume."""
    return base_align if offset == 0 else min(base_align, offset & -offset)


def slots(dtype):
    """(field name, flat element index or None, element dtype) of each value a record is
    built from (ir.MakeRecord): one per field, one per element of an array field."""
    out = []
    for name in dtype.names:
        fdt = dtype.fields[name][0]
        if fdt.subdtype is None:
            out.append((name, None, fdt))
        else:
            base, shape = fdt.subdtype
            out += [(name, k, base) for k in range(int(np.prod(shape, dtype=np.int64)))]
    return out


def leaves(dtype, path=()):
    """(path, scalar dtype) of every scalar in a record, in address order: a path is
    field names and, inside a fixed-size array field, flat element indices."""
    out = []
    for name, fdt, _ in fields(dtype):
        base, shape = fdt.subdtype if fdt.subdtype is not None else (fdt, ())
        for k in range(int(np.prod(shape, dtype=np.int64))):
            step = path + ((name, k) if shape else (name,))
            if base.names is not None and base.names != BF16_FIELDS:
                out += leaves(base, step)
            else:
                out.append((step, base))
    return out


STRUCT_STEP = "struct:"   # the disk cache's name for a step into a struct method (lang/structs)
