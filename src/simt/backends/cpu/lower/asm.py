"""simt.asm (lang/inline_asm.py) on the CPU device: its fallback call, the asm's last
argument; without one, a CompileError at the line (PTX runs on GPUs only)."""
from ....compiler.errors import fail_at
from ....lang.inline_asm import asm, no_fallback
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cpu")


@lowering(asm, target=TARGET)
def _asm_cpu(em, e):
    if not e.attrs["fallback"]:
        fail_at(e.loc, *no_fallback("cpu"))
    value = em.expr(e.args[-1])
    return None if e.attrs["outputs"] == 0 else value
