"""Cache-hinted loads and stores (lang/cachehints.py) on the CPU: plain, bounds-checked
accesses (a CPU has no cache operators to ask for)."""
from ....lang.cachehints import ENTRIES, LOADS as LOAD_NAMES, STORES as STORE_NAMES, \
    element_address
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cpu")

LOADS = [ENTRIES[n] for n in LOAD_NAMES]
STORES = [ENTRIES[n] for n in STORE_NAMES]


@lowering(*LOADS, target=TARGET)
def _load_cpu(em, e):
    address, array_type = element_address(em, e, 1, "read")
    return em.load_element(address, array_type)


@lowering(*STORES, target=TARGET)
def _store_cpu(em, e):
    address, array_type = element_address(em, e, 2, "write")
    em.store_element(address, em.expr(e.args[1]), array_type)
