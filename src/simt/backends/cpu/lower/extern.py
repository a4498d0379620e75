"""Calls of external device code (simt.declare_device) on the CPU device: a declared
function with a fallback runs the fallback (a device call, compiler/codegen.py); one without
is a NotSupportedError naming it and asking for ``fallback=``."""
from ....lang.linking import EXTERN, missing_fallback
from ....lang.registry import lowering
from . import TARGET


@lowering(EXTERN, target=TARGET)
def _extern(em, e):
    missing_fallback(e, "cpu")
