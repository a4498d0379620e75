"""Atomic read-modify-write operations (guide B.14), returning the old value.

Every atomic takes ``scope=`` (which threads it is atomic and ordered with
respect to: 'block', 'device' (default) or 'system'; CUDA's ``atomicAdd_block``
and ``atomicAdd_system``) and ``order=`` (the memory order of
``cuda::atomic_ref``: 'relaxed' (default, as CUDA's atomic functions),
'acquire', 'release', 'acq_rel' or 'seq_cst'). Ordered loads and stores are in
atomics_ordered.py.
"""
from ..ir import nodes as ir
from ..ir import types as T
from .registry import Intrinsic, Namespace, Static

_INTS = {"int32", "uint32", "int64", "uint64"}
_FLOATS = {"float32", "float64"}
_SHORTS = {"int16", "uint16", "float16"}          # cas only (sm_70's atom.cas.b16)
_HALVES = {"float16", "bfloat16", "half2", "bfloat162"}      # add only (lang/half.py)

SCOPES = ("block", "device", "system")
RMW_ORDERS = ("relaxed", "acquire", "release", "acq_rel", "seq_cst")

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
_ALLOWED = {"add": _INTS | _FLOATS | _HALVES, "sub": _INTS | _FLOATS,
            "exch": _INTS | _FLOATS, "min": _INTS | _FLOATS, "max": _INTS | _FLOATS,
            "cas": _INTS | _FLOATS | _SHORTS}
_KEYWORDS = (" Keywords: scope='device' (or 'block', 'system'; the same on the CPU), "
             "order='relaxed' (or 'acquire', 'release', 'acq_rel', 'seq_cst').")


def index_list(fc, array, idx, name, loc):
    """The int64 indices of ``idx`` (an int or a tuple) into ``array``."""
    if isinstance(idx.type, T.Tuple):
        items = [ir.TupleGet(t, loc, idx, i) for i, t in enumerate(idx.type.items)]
    else:
        items = [idx]
    if len(items) != array.type.ndim:
        fc.fail(loc, f"{name} on a {array.type.ndim}-d array needs {array.type.ndim} indices, "
                f"got {len(items)}", "pass a tuple with one index per dimension")
    return fc.wrap_indices(array, [fc.index(i, loc) for i in items], loc)


def check_array(fc, array, name, loc, allowed=None):
    if not isinstance(array.type, T.Array):
        fc.fail(loc, f"{name} needs an array as its first argument, got {array.type}")
    if array.type.space in ("const", "copy"):
        what = "constant memory" if array.type.space == "const" else "an array field of a record copy"
        fc.fail(loc, f"{name} on {what}", "atomics need global or shared arrays")
    if allowed is not None and repr(array.type.element) not in allowed:
        fc.fail(loc, f"{name} is not available for {array.type.element!r} arrays",
                f"use an array of {', '.join(sorted(allowed))}")


def memory_keywords(fc, kwargs, name, loc, orders):
    """(scope, order) from a call's ``scope=`` and ``order=`` keywords, checked."""
    unknown = sorted(set(kwargs) - {"scope", "order"})
    if unknown:
        fc.fail(loc, f"{name} got an unexpected keyword {unknown[0]!r}",
                "its keywords are scope= and order=")
    chosen = []
    for key, allowed, default in (("scope", SCOPES, "device"), ("order", orders, "relaxed")):
        value = kwargs.get(key)
        if value is None:
            chosen.append(default)
            continue
        if not isinstance(value, Static) or value.value not in allowed:
            shown = repr(value.value) if isinstance(value, Static) else "a run-time value"
            fc.fail(loc, f"{name}: {key}={shown} is not one of "
                    f"{', '.join(repr(a) for a in allowed)}",
                    f"{key} must be a string literal")
        chosen.append(value.value)
    return tuple(chosen)


def _attrs(fc, op, label_arg, kwargs, name, loc):
    """The node's attributes; scope and order only where they are not the defaults
    (device, relaxed), so IR dumps of plain atomics stay as they were."""
    scope, order = memory_keywords(fc, kwargs, name, loc, RMW_ORDERS)
    attrs = {"op": op, "label": fc.label_of(label_arg)}
    if (scope, order) != ("device", "relaxed"):
        attrs.update(scope=scope, order=order)
    return attrs


def _rmw_builder(name, allowed):
    python_name = f"simt.atomic.{name}"

    def build(fc, args, kwargs, loc):
        if len(args) != 3:
            fc.fail(loc, f"{python_name}(ary, idx, val) takes 3 arguments, got {len(args)}")
        array, idx, val = (fc.expr(a, loc) for a in args)
        check_array(fc, array, python_name, loc, allowed)
        elem = array.type.element
        indices = index_list(fc, array, idx, python_name, loc)
        value = fc.cast(val, elem, loc)
        attrs = _attrs(fc, name.rstrip("_"), args[0], kwargs, python_name, loc)
        return getattr(atomic, name).node(elem, loc, [array, value] + indices, attrs, op="atomic")
    return build


def _cas_build(fc, args, kwargs, loc):
    if len(args) != 4:
        fc.fail(loc, f"simt.atomic.cas(ary, idx, compare, val) takes 4 arguments, got {len(args)}")
    array, idx, compare, val = (fc.expr(a, loc) for a in args)
    check_array(fc, array, "simt.atomic.cas", loc, _ALLOWED["cas"])
    elem = array.type.element
    indices = index_list(fc, array, idx, "simt.atomic.cas", loc)
    attrs = _attrs(fc, "cas", args[0], kwargs, "simt.atomic.cas", loc)
    return atomic.cas.node(elem, loc, [array, fc.cast(compare, elem, loc),
                                       fc.cast(val, elem, loc)] + indices, attrs, op="atomic")


def _make():
    members = {}
    for name, doc in _DOCS.items():
        allowed = _ALLOWED.get(name, _INTS)
        members[name] = Intrinsic(f"atomic.{name}", f"simt.atomic.{name}(ary, idx, val): {doc}; "
                                  f"returns old. Types: {', '.join(sorted(allowed))}."
                                  + _KEYWORDS, _rmw_builder(name, allowed), writes=True)
    members["cas"] = Intrinsic("atomic.cas", "simt.atomic.cas(ary, idx, compare, val): old = "
                               "ary[idx]; if old == compare (bitwise for floats): ary[idx] = val; "
                               "returns old. Types: "
                               f"{', '.join(sorted(_ALLOWED['cas']))} (16-bit: compute "
                               "capability 7.0)." + _KEYWORDS, _cas_build,
                               writes=True)
    return Namespace("simt.atomic", "Atomic functions (guide B.14) and cuda::atomic_ref's "
                     "ordered loads and stores.", **members)


atomic = _make()
RMW_ENTRIES = tuple(atomic.entries())     # before atomics_ordered adds load and store
