"""Loads and stores with cache hints (guide B.10-B.12): ``simt.ldg`` (the read-only
data cache) and ``ldcg/ldca/ldcs/ldlu/ldcv``, ``stwb/stcg/stcs/stwt``.

On the GPU each is one PTX instruction with its cache operator
(``ld.global.nc``, ``ld.global.cg`` ..., ``st.global.wb`` ...); on the CPU they are
plain, bounds-checked loads and stores (backends/*/lower/cachehints.py). They read
and write global memory only.
"""
from ..ir import types as T
from .atomics import index_list
from .registry import Intrinsic

LOADS = {
    "ldg": ("nc", "__ldg: through the read-only data cache (the data must not change during "
                  "the kernel)"),
    "ldcg": ("cg", "__ldcg: cache globally (in L2, not L1)"),
    "ldca": ("ca", "__ldca: cache at all levels (L1 and L2)"),
    "ldcs": ("cs", "__ldcs: cache streaming, likely read once (evict first)"),
    "ldlu": ("lu", "__ldlu: last use (the line may be dropped after the read)"),
    "ldcv": ("cv", "__ldcv: do not cache; fetch again on every read (volatile)"),
}
STORES = {
    "stwb": ("wb", "__stwb: write back through the caches (the default for stores)"),
    "stcg": ("cg", "__stcg: cache globally (in L2, not L1)"),
    "stcs": ("cs", "__stcs: cache streaming, likely written once (evict first)"),
    "stwt": ("wt", "__stwt: write through to system memory"),
}


def _build(name, count):
    python_name = f"simt.{name}"
    shape = "(ary, idx)" if count == 2 else "(ary, idx, val)"

    def build(fc, args, kwargs, loc):
        if kwargs or len(args) != count:
            fc.fail(loc, f"{python_name}{shape} takes {count} positional arguments")
        built = [fc.expr(a, loc) for a in args]
        array = built[0]
        if not isinstance(array.type, T.Array):
            fc.fail(loc, f"{python_name} needs an array as its first argument, got {array.type}")
        if array.type.space != "global":
            fc.fail(loc, f"{python_name} reads and writes global memory; "
                    f"{fc.label_of(args[0])} is a {array.type.space} array",
                    f"use {fc.label_of(args[0])}[...] for {array.type.space} memory")
        if array.type.dtype.kind not in "biuf":
            fc.fail(loc, f"{python_name} is not available for {array.type.dtype.name} arrays",
                    "use an array of ints, floats or bools")
        indices = index_list(fc, array, built[1], python_name, loc)
        attrs = {"label": fc.label_of(args[0])}
        entry = ENTRIES[name]
        if count == 2:
            return entry.node(array.type.element, loc, [array] + indices, attrs)
        value = fc.cast(built[2], array.type.element, loc)
        return entry.node(T.VOID, loc, [array, value] + indices, attrs)
    return build


def _make():
    entries = {}
    for name, (op, doc) in LOADS.items():
        entries[name] = Intrinsic(name, f"simt.{name}(ary, idx): ary[idx] read with {doc}; "
                                  f"PTX ld.global.{op}. A plain read on the CPU.",
                                  _build(name, 2))
    for name, (op, doc) in STORES.items():
        entries[name] = Intrinsic(name, f"simt.{name}(ary, idx, val): ary[idx] = val written "
                                  f"with {doc}; PTX st.global.{op}. A plain write on the CPU.",
                                  _build(name, 3), writes=True)
    return entries


ENTRIES = _make()
ldg, ldcg, ldca, ldcs, ldlu, ldcv = (ENTRIES[n] for n in LOADS)
stwb, stcg, stcs, stwt = (ENTRIES[n] for n in STORES)


def element_address(em, e, first_index, access):
    """The element's address; ``access`` is what checked mode checks it as."""
    array = em.expr(e.args[0])
    indices = [em.expr(i) for i in e.args[first_index:]]
    return em.element_address(array, indices, e.attrs["label"], e.loc, access), e.args[0].type
