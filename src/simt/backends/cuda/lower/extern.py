"""The GPU's lowering of calls of external device code without a fallback
(simt.declare_device): a call of the symbol (externcall.py), resolved by the link."""
from ....lang.linking import EXTERN
from ....lang.registry import declare_target, lowering
from ..externcall import call_extern
TARGET = declare_target("cuda")


@lowering(EXTERN, target=TARGET)
def _extern(em, e):
    return call_extern(em, e.attrs["extern"], [em.expr(a) for a in e.args])
