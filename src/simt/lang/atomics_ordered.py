"""Memory-ordered loads and stores (``cuda::atomic_ref``'s load and store) and
volatile accesses: entries, typing and lowerings.

``simt.atomic.load(a, i, order=, scope=)`` and ``simt.atomic.store(a, i, v,
order=, scope=)`` are LLVM atomic loads and stores with a sync scope; LLVM's
NVPTX back end makes them ``ld.acquire.gpu``, ``st.release.cta``, and for
seq_cst ``fence.sc`` then the acquire/release form. ``simt.volatile_load`` /
``simt.volatile_store`` are LLVM volatile accesses (PTX ``ld.volatile`` /
``st.volatile``): never cached in registers, merged or removed.
"""
from ..ir import types as T
from .atomics import atomic, check_array, index_list, memory_keywords
from .registry import Intrinsic, lazy_module

ll = lazy_module("llvmlite.ir")
LOAD_ORDERS = ("relaxed", "acquire", "seq_cst")
STORE_ORDERS = ("relaxed", "release", "seq_cst")


def _access(fc, args, count, name, loc):
    """(array, indices, value or None) of a load (2 arguments) or store (3)."""
    shape = "(ary, idx)" if count == 2 else "(ary, idx, val)"
    if len(args) != count:
        fc.fail(loc, f"{name}{shape} takes {count} arguments, got {len(args)}")
    built = [fc.expr(a, loc) for a in args]
    array = built[0]
    check_array(fc, array, name, loc)
    if array.type.dtype.kind not in "biuf":
        fc.fail(loc, f"{name} is not available for {array.type.dtype.name} arrays",
                "use an array of ints, floats or bools")
    indices = index_list(fc, array, built[1], name, loc)
    value = fc.cast(built[2], array.type.element, loc) if count == 3 else None
    return array, indices, value


def _load_build(fc, args, kwargs, loc):
    array, indices, _ = _access(fc, args, 2, "simt.atomic.load", loc)
    scope, order = memory_keywords(fc, kwargs, "simt.atomic.load", loc, LOAD_ORDERS)
    attrs = {"label": fc.label_of(args[0]), "scope": scope, "order": order}
    return load.node(array.type.element, loc, [array] + indices, attrs)


def _store_build(fc, args, kwargs, loc):
    array, indices, value = _access(fc, args, 3, "simt.atomic.store", loc)
    scope, order = memory_keywords(fc, kwargs, "simt.atomic.store", loc, STORE_ORDERS)
    attrs = {"label": fc.label_of(args[0]), "scope": scope, "order": order}
    return store.node(T.VOID, loc, [array, value] + indices, attrs)


def _volatile_build(count, name):
    def build(fc, args, kwargs, loc):
        if kwargs:
            fc.fail(loc, f"{name} takes no keywords")
        array, indices, value = _access(fc, args, count, name, loc)
        attrs = {"label": fc.label_of(args[0])}
        if value is None:
            return volatile_load.node(array.type.element, loc, [array] + indices, attrs)
        return volatile_store.node(T.VOID, loc, [array, value] + indices, attrs)
    return build


load = Intrinsic("atomic.load", "simt.atomic.load(ary, idx, order='relaxed', scope='device'): "
                 "an atomic load of ary[idx] (cuda::atomic_ref<T, scope>::load(order)). order: "
                 "'relaxed', 'acquire' (later accesses stay after it) or 'seq_cst'; scope: "
                 "'block', 'device' or 'system' (the same on the CPU). Ints, floats, bools.",
                 _load_build)
store = Intrinsic("atomic.store", "simt.atomic.store(ary, idx, val, order='relaxed', "
                  "scope='device'): an atomic store of val into ary[idx] "
                  "(cuda::atomic_ref<T, scope>::store(val, order)). order: 'relaxed', 'release' "
                  "(earlier accesses stay before it) or 'seq_cst'; scope as simt.atomic.load.",
                  _store_build, writes=True)
volatile_load = Intrinsic("volatile_load", "simt.volatile_load(ary, idx): ary[idx] read "
                          "through a volatile pointer (CUDA's volatile qualifier): the read "
                          "always happens, is never cached in a register or merged with "
                          "another (PTX ld.volatile).", _volatile_build(2, "simt.volatile_load"))
volatile_store = Intrinsic("volatile_store", "simt.volatile_store(ary, idx, val): ary[idx] = "
                           "val through a volatile pointer: the write always happens, in "
                           "program order with other volatile accesses (PTX st.volatile).",
                           _volatile_build(3, "simt.volatile_store"), writes=True)
atomic.load = load           # cuda::atomic_ref's members sit with the other atomics
atomic.store = store


def _address(em, e, first_index, access):
    """The element's address; ``access`` is what checked mode checks it as (with the
    node's memory order, for its model of what atomics order)."""
    array = em.expr(e.args[0])
    indices = [em.expr(i) for i in e.args[first_index:]]
    return em.element_address(array, indices, e.attrs["label"], e.loc, access,
                              order=e.attrs.get("order", "relaxed"),
                              scope=e.attrs.get("scope", "device")), e.args[0].type


def _memory_type(t):
    """The LLVM type of an element in memory (a bool is a byte)."""
    return ll.IntType(8) if t.kind == "b" else ll.IntType(t.bits) if t.kind in "iu" else \
        {16: ll.HalfType(), 32: ll.FloatType(), 64: ll.DoubleType()}[t.bits]


def _from_memory(em, value, t):
    return em.builder.trunc(value, ll.IntType(1)) if t.kind == "b" else value


def _to_memory(em, value, t):
    return em.builder.zext(value, ll.IntType(8)) if t.kind == "b" else value


@load.lowering()
def _load(em, e):
    address, array_type = _address(em, e, 1, "atomic_load")
    t = array_type.element
    value = em.builder.load_atomic(address, em.target.ordering(e.attrs["order"], e.attrs["scope"]),
                                   array_type.dtype.itemsize, typ=_memory_type(t))
    return _from_memory(em, value, t)


@store.lowering()
def _store(em, e):
    address, array_type = _address(em, e, 2, "atomic_store")
    t = array_type.element
    b = em.builder
    # IRBuilder.store_atomic reads the pointee type, which opaque pointers lack
    b._insert(ll.instructions.StoreAtomicInstr(
        b.block, _to_memory(em, em.expr(e.args[1]), t), address,
        em.target.ordering(e.attrs["order"], e.attrs["scope"]), array_type.dtype.itemsize))


def _volatile(instr):
    """Make a load or store volatile: llvmlite's builder has no flag for it."""
    plain = instr.descr

    def descr(buf):
        parts = []
        plain(parts)
        buf.append(parts[0].replace(instr.opname, instr.opname + " volatile", 1))
    instr.descr = descr
    return instr


@volatile_load.lowering()
def _volatile_load(em, e):
    address, array_type = _address(em, e, 1, "volatile_load")
    t = array_type.element
    value = _volatile(em.builder.load(address, typ=_memory_type(t),
                                      align=array_type.dtype.itemsize))
    return _from_memory(em, value, t)


@volatile_store.lowering()
def _volatile_store(em, e):
    address, array_type = _address(em, e, 2, "volatile_store")
    t = array_type.element
    _volatile(em.builder.store(_to_memory(em, em.expr(e.args[1]), t), address,
                               align=array_type.dtype.itemsize))
