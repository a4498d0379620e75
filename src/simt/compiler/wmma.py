"""What the lowerings of the warp matrix functions (lang/wmma.py) share on every LLVM target:
filling a fragment's local array. The devices' own: backends/cuda/lower/wmma.py (one NVVM
WMMA intrinsic per call) and backends/cpu/lower/wmma.py (the tile in every lane)."""
from ..lang import bfloat16
from .flat import counted_loop
from .lltypes import i64, memory


def fill(em, e, count):
    """Store the value in the fragment's first ``count`` elements."""
    frag, value = e.args
    f = frag.type
    v = em.expr(value)
    if f.kind == "bf16":
        v = bfloat16.narrow(em.builder, v)
    data = em.expr(frag).data
    elem = memory(f.element)
    with counted_loop(em, i64(count)) as i:
        em.builder.store(v, em.builder.gep(data, [i], source_etype=elem))
