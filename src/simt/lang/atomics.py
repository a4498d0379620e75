"""Atomic read-modify-write operations (guide B.14), returning the old value."""
from ..ir import nodes as ir
from ..ir import types as T
from .registry import Intrinsic, Namespace

_INTS = {"int32", "uint32", "int64", "uint64"}
_FLOATS = {"float32", "float64"}

_DOCS = {
    "add": "old = ary[idx]; ary[idx] = old + val",
    "sub": "old = ary[idx]; ary[idx] = old - val",
    "exch": "old = ary[idx]; ary[idx] = val",
    "min": "old = ary[idx]; ary[idx] = min(old, val)",
    "max": "old = ary[idx]; ary[idx] = max(old, val)",
    "inc": "old = ary[idx]; ary[idx] = 0 if old >= val else old + 1 (unsigned compare)",
    "dec": "old = ary[idx]; ary[idx] = val if old == 0 or old > val else old - 1 (unsigned)",
    "and_": "old = ary[idx]; ary[idx] = old & val",
    "or_": "old = ary[idx]; ary[idx] = old | val",
    "xor": "old = ary[idx]; ary[idx] = old ^ val",
}


def _index_list(fc, array, idx, loc):
    if isinstance(idx.type, T.Tuple):
        items = [ir.TupleGet(t, loc, idx, i) for i, t in enumerate(idx.type.items)]
    else:
        items = [idx]
    if len(items) != array.type.ndim:
        fc.fail(loc, f"atomic on a {array.type.ndim}-d array needs {array.type.ndim} indices, "
                f"got {len(items)}", "pass a tuple with one index per dimension")
    return [fc.index(i, loc) for i in items]


def _check_array(fc, array, name, loc, allowed):
    if not isinstance(array.type, T.Array):
        fc.fail(loc, f"simt.atomic.{name} needs an array as its first argument, got {array.type}")
    if array.type.space in ("const", "copy"):
        what = "constant memory" if array.type.space == "const" else "an array field of a record copy"
        fc.fail(loc, f"simt.atomic.{name} on {what}", "atomics need global or shared arrays")
    if array.type.dtype.name not in allowed:
        fc.fail(loc, f"simt.atomic.{name} is not available for {array.type.dtype.name} arrays",
                f"use an array of {', '.join(sorted(allowed))}")


def _rmw_builder(name, allowed):
    def build(fc, args, kwargs, loc):
        if len(args) != 3:
            fc.fail(loc, f"simt.atomic.{name}(ary, idx, val) takes 3 arguments, got {len(args)}")
        array, idx, val = (fc.expr(a, loc) for a in args)
        _check_array(fc, array, name, loc, allowed)
        elem = array.type.element
        indices = _index_list(fc, array, idx, loc)
        value = fc.cast(val, elem, loc)
        return getattr(atomic, name).node(elem, loc, [array, value] + indices,
                                          {"op": name.rstrip("_"), "label": fc.label_of(args[0])},
                                          op="atomic")
    return build


def _cas_build(fc, args, kwargs, loc):
    if len(args) != 4:
        fc.fail(loc, f"simt.atomic.cas(ary, idx, compare, val) takes 4 arguments, got {len(args)}")
    array, idx, compare, val = (fc.expr(a, loc) for a in args)
    _check_array(fc, array, "cas", loc, _INTS | _FLOATS)
    elem = array.type.element
    indices = _index_list(fc, array, idx, loc)
    return atomic.cas.node(elem, loc, [array, fc.cast(compare, elem, loc),
                                       fc.cast(val, elem, loc)] + indices,
                           {"op": "cas", "label": fc.label_of(args[0])}, op="atomic")


def _make():
    members = {}
    for name, doc in _DOCS.items():
        allowed = _INTS | _FLOATS if name in ("add", "sub", "exch", "min", "max") else _INTS
        members[name] = Intrinsic(f"atomic.{name}", f"simt.atomic.{name}(ary, idx, val): {doc}; "
                                  f"returns old. Types: {', '.join(sorted(allowed))}.",
                                  _rmw_builder(name, allowed))
    members["cas"] = Intrinsic("atomic.cas", "simt.atomic.cas(ary, idx, compare, val): old = "
                               "ary[idx]; if old == compare (bitwise for floats): ary[idx] = val; "
                               "returns old.", _cas_build)
    return Namespace("simt.atomic", "Atomic functions (guide B.14).", **members)


atomic = _make()
